//! The MCP server's tests, one program with one module per area (one program links the crate's dependencies once):
//! in process through rmcp's client over an in-memory pipe, in both protocol eras (tools, confirmations of
//! destructive calls, resources, prompts and completions, subscriptions and logs, review); the protected-note guard
//! as a property over every read; and over real HTTP on loopback (connections, OAuth).
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests stop where they fail")]

mod confirmation;
mod connections;
mod oauth;
mod prompts;
mod protection;
mod resources;
mod review;
mod subscriptions;
mod tools;

use std::sync::Arc;

use quire_core::{Actor, Workspace, testing};
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::ToolRegistry;

/// A server over a fresh in-memory workspace with the built-in tools, and both, to change them under it.
fn server(options: ServerOptions) -> (QuireServer, Arc<ToolRegistry>, Workspace) {
    let ws = Workspace::open_in_memory().unwrap();
    let tools = Arc::new(ToolRegistry::builtin());
    (QuireServer::new(ws.clone(), tools.clone(), options), tools, ws)
}

/// A note made by the user; its id.
fn note(ws: &Workspace, title: &str, body: &str) -> String {
    testing::note(title, body).create_in(ws).unwrap()
}

/// Whether the note is gone or in the trash.
fn is_trashed(ws: &Workspace, id: &str) -> bool {
    ws.read(&Actor::User, |r| r.note_summary(id)).is_err()
        || ws
            .read(&Actor::User, |r| r.trashed_notes(quire_core::Page::first(100)))
            .unwrap()
            .items
            .iter()
            .any(|n| n.id == id)
}
