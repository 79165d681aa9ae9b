//! quire-mcp in your own program: serve a workspace, with your registry (built-in tools plus any of your own), to
//! an MCP client over stdio. Read-only here, so a client can search and read but never write.
//!
//! `cargo run -p quire-mcp --example stdio_server` (then speak JSON-RPC on stdin, or point an MCP client at it;
//! it exits when its input ends).

use std::sync::Arc;

use quire_core::{Actor, NewNote, Workspace};
use quire_mcp::{QuireServer, ServerOptions, serve_stdio};
use quire_tools::{ToolFilter, ToolRegistry};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    ws.write(&Actor::User, |w| {
        w.create_note(NewNote::new("Hello", "Served over MCP."))
    })?;
    let options = ServerOptions {
        filter: ToolFilter {
            read_only: true,
            ..ToolFilter::default()
        },
        ..ServerOptions::default()
    };
    let server = QuireServer::new(ws, Arc::new(ToolRegistry::builtin()), options);
    // Logs, if any, go to stderr: stdout carries protocol messages only.
    eprintln!("serving one workspace over stdio, read-only");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve_stdio(server))?;
    Ok(())
}
