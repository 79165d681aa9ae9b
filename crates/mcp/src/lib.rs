//! quire-mcp: the MCP server over quire's tool registry.
//!
//! [`QuireServer`] implements rmcp's `ServerHandler` on top of a [`quire_tools::ToolRegistry`]: `tools/list` is
//! the registry's list (with titles, annotations from each tool's effect, input and output schemas, paged with
//! opaque cursors), `tools/call` is [`quire_tools::ToolRegistry::call_async`] with the actor `Mcp { client }`, and
//! every note is a resource `quire://note/{id}`. Both protocol eras are served: `2025-11-25` (with `initialize`,
//! sessions on HTTP) and the stateless `2026-07-28` (`server/discover`, `subscriptions/listen`). Plugin tools that
//! join or leave the registry are announced to clients of both eras.
//!
//! [`serve_stdio`] runs it over standard input and output (nothing but protocol messages on stdout);
//! [`http::serve`] runs it over Streamable HTTP on loopback, behind a bearer token, with `Origin` and `Host`
//! validation and a body-size limit.
//!
//! It depends on `quire-tools` and `quire-core` only. It must not depend on `quire-agent` or the app, nor on
//! `rusqlite`, `r2d2` or `reqwest`. It is the only library crate that may use `rmcp` (besides the client of the
//! shared test helpers).

mod content;
mod context;
mod events;
mod handler;
pub mod http;
pub mod oauth;
mod plugin_tools;
mod prompts;
pub mod resources;
mod review_app;
mod server;
mod stdio;
mod subscriptions;
mod tokens;
mod tools;
mod workspace_resources;

pub use server::{ConfirmDestructive, Grant, INSTRUCTIONS, QuireServer, ServerOptions, WritePolicy};
pub use stdio::serve_stdio;

/// What can go wrong when serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport failed or the peer broke the protocol.
    #[error("MCP transport: {0}")]
    Transport(String),
    /// Binding or serving the HTTP listener failed.
    #[error("HTTP server: {0}")]
    Http(#[from] std::io::Error),
}
