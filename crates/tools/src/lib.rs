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
//! Every tool's input and output are public types in its module (`notes::read_note::{Input, Output}`), and
//! [`builtin`] names each tool as a type: [`ToolRegistry::call_typed`] takes an input struct and returns the output
//! struct or a [`ToolError`], whose [`ToolErrorKind`] (not found, invalid, protected, conflict, ...) is what a Rust
//! caller branches on; the message is for people and models.
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
mod actor;
mod args;
mod budget;
pub use budget::estimate_tokens;
mod catalog;
pub mod context;
mod error;
mod filter;
mod page;
mod plugin;
mod plugin_run;
mod prelude;
pub mod prompts;
mod registry;
mod result;
mod schema;
pub mod types;

pub mod attachments;
pub mod attributes;
pub mod history;
pub mod notebooks;
pub mod notes;
pub mod structure;
pub mod tags;

/// Every built-in tool as a type, for typed calls from Rust ([`ToolRegistry::call_typed`],
/// [`ToolRegistry::read_as_user_typed`]). Each tool's input and output types are in its module
/// (`quire_tools::notes::read_note::{Input, Output}`).
pub mod builtin {
    pub use crate::attachments::read_attachment::Tool as ReadAttachment;
    pub use crate::attributes::delete_attribute::Tool as DeleteAttribute;
    pub use crate::attributes::get_attributes::Tool as GetAttributes;
    pub use crate::attributes::get_backlinks::Tool as GetBacklinks;
    pub use crate::attributes::set_attribute::Tool as SetAttribute;
    pub use crate::history::recent_changes::Tool as RecentChanges;
    pub use crate::notebooks::create_notebook::Tool as CreateNotebook;
    pub use crate::notebooks::list_notebooks::Tool as ListNotebooks;
    pub use crate::notebooks::move_notebook::Tool as MoveNotebook;
    pub use crate::notebooks::rename_notebook::Tool as RenameNotebook;
    pub use crate::notes::create_note::Tool as CreateNote;
    pub use crate::notes::delete_note::Tool as DeleteNote;
    pub use crate::notes::list_notes::Tool as ListNotes;
    pub use crate::notes::move_note::Tool as MoveNote;
    pub use crate::notes::read_note::Tool as ReadNote;
    pub use crate::notes::restore_note::Tool as RestoreNote;
    pub use crate::notes::search_notes::Tool as SearchNotes;
    pub use crate::notes::semantic_search_notes::Tool as SemanticSearchNotes;
    pub use crate::notes::update_note::Tool as UpdateNote;
    pub use crate::structure::complete_task::Tool as CompleteTask;
    pub use crate::structure::list_tasks::Tool as ListTasks;
    pub use crate::structure::query_notes::Tool as QueryNotes;
    pub use crate::tags::list_tags::Tool as ListTags;
    pub use crate::tags::manage_tags::Tool as ManageTags;
}

pub use actor::ToolActor;
pub use args::parse as parse_arguments;
pub use context::{
    BoxFuture, CallContext, ClientError, ClientKind, ClientReply, ClientRequest, Elicited, LogLevel, Progress, Root,
    SampleMessage,
};
pub use declare::{Effect, TypedTool};
pub use error::{Error, ToolError, ToolErrorKind};
pub use filter::ToolFilter;

/// Whether a built-in tool is one quire's agent may load on request (see [`ToolInfo::on_request`]).
pub fn catalog_on_request(name: &str) -> bool {
    catalog::ON_REQUEST.contains(&name)
}
pub use page::{Listed, Page};
pub use plugin::{
    ContentItem, Exposure, ListItem, PageFuture, PluginCall, PluginFuture, PluginOutput, PluginTool, Reads, RenderSpec,
    Writes,
};
pub use prompts::{Completes, Prompt, PromptArgument, PromptError, PromptMessage, PromptOutput, PromptRegistry};
pub use registry::{Arriving, ToolInfo, ToolOrigin, ToolRegistry, ToolResult, UserRead};
pub use schema::{STANDARD_FORMATS, check_portable_schema, output_schema_for, portable_schema_for};
