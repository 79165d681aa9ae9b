//! quire-tools: the one place where quire's AI tools are declared.
//!
//! It will hold the declaration macro (each tool states its name, title, description, input and output types,
//! and whether it is read-only, mutating or destructive), the `ToolRegistry` with its dispatch, the workspace
//! tool catalog, and the plugin tool API. Both consumers, the in-app agent and the MCP server, read tools from here.
//!
//! It depends on `quire-core` only. It must not depend on `rusqlite`, `r2d2`, `rmcp`, `reqwest`, `axum`,
//! or on any crate above it: it knows nothing about MCP, HTTP or model providers.
