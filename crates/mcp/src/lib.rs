//! quire-mcp: the MCP server over quire's tool registry.
//!
//! It will serve the registry's tools and the workspace's notes over stdio and Streamable HTTP with `rmcp`,
//! and wrap out-of-process MCP servers as plugin tools.
//!
//! It depends on `quire-tools` and `quire-core` only. It must not depend on `quire-agent` or the app,
//! nor on `rusqlite`, `r2d2` or `reqwest`. It is the only crate that may use `rmcp`.
