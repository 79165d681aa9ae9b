//! quire-agent: the brain of the chat sidebar.
//!
//! It will hold the model clients behind a `ChatModel` trait (OpenAI-compatible and Anthropic), the note context,
//! the session tools that edit the focused note's text, `build_tool_list`, and the loop `run_note_chat`.
//!
//! It depends on `quire-tools` and `quire-core` only. It must not depend on `quire-mcp` or the app,
//! nor on `rusqlite`, `r2d2`, `rmcp` or `axum`.
