//! quire-tools: the one place where quire's AI tools are declared, and the registry both consumers call.
//!
//! Each built-in tool is one file (`notes/create_note.rs`, ...) declared with the crate's `tool!` macro: a `snake_case` name, an
//! imperative title, a description for the model (the doc comment), typed input and output, and an effect:
//! `read_only`, `mutating` or `destructive`. The effect decides the handler's signature: a read-only handler gets a
//! [`quire_core::Reader`] (which has no write methods), the others get the write transaction
//! ([`quire_core::Writer`]), so a writing tool that forgot to say so does not compile. Handlers are synchronous: no
//! `await` can run inside a transaction.
//!
//! [`ToolRegistry`] is the single wiring point. [`ToolRegistry::call`] parses the arguments (naming the bad field),
//! runs the handler in the transaction its effect asks for, turns a panic into an error with everything rolled back,
//! and returns either the output or `{"error": "..."}`, never both. The caller is a [`ToolActor`], which cannot be
//! the user, so quire-core's guards always apply. Plugin tools join at run time with [`ToolRegistry::register`].
//!
//! This crate depends on `quire-core` only. It must not depend on `rusqlite`, `r2d2`, `rmcp`, `reqwest`, `axum`,
//! or on any crate above it: it knows nothing about MCP, HTTP or model providers.
//!
//! ```
//! use quire_core::Workspace;
//! use quire_tools::{ToolActor, ToolRegistry};
//! use serde_json::json;
//!
//! let ws = Workspace::open_in_memory()?;
//! let tools = ToolRegistry::builtin();
//! let actor = ToolActor::mcp("example");
//! let created = tools.call(&ws, &actor, "create_note", json!({"title": "Ideas", "body": "- tea"}))?;
//! assert!(!created.is_error);
//! let missing = tools.call(&ws, &actor, "read_note", json!({"note_id": "nope"}))?;
//! assert_eq!(missing.value, json!({"error": "Note not found"}));
//! # Ok::<(), quire_tools::Error>(())
//! ```

#[macro_use]
mod declare;
mod args;
mod budget;
mod catalog;
pub mod context;
mod error;
mod filter;
mod plugin;
mod prelude;
pub mod prompts;
mod registry;
mod schema;
mod types;

mod attachments;
mod attributes;
mod history;
mod notebooks;
mod notes;
mod tags;

pub use args::parse as parse_arguments;
pub use context::{
    BoxFuture, CallContext, ClientError, ClientKind, ClientReply, ClientRequest, Elicited, LogLevel, Root,
    SampleMessage,
};
pub use declare::Effect;
pub use error::{Error, ToolError};
pub use filter::ToolFilter;
pub use plugin::{
    ContentItem, ListItem, PluginCall, PluginFuture, PluginOutput, PluginTool, Progress, Reads, RenderSpec, Writes,
};
pub use prompts::{Completes, Prompt, PromptArgument, PromptError, PromptMessage, PromptOutput, PromptRegistry};
pub use registry::{ToolActor, ToolInfo, ToolOrigin, ToolRegistry, ToolResult};
pub use schema::{STANDARD_FORMATS, check_portable_schema, output_schema_for, portable_schema_for};
