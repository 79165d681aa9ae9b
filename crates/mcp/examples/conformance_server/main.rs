//! The server the official MCP conformance suite tests (`cargo xtask conformance`): quire's production MCP server
//! over Streamable HTTP on loopback, with the suite's fixture tools registered through the public plugin API, so the
//! protocol layer under test is the shipped one while the fixtures stay out of the `quire` binary.
//!
//! `cargo run -p quire-mcp --example conformance_server` prints `listening on http://127.0.0.1:PORT/mcp` on stderr
//! and serves, without a bearer token (the suite cannot send one), until its standard input ends.
#![expect(clippy::print_stderr, reason = "the harness reads the address from stderr")]

mod asking;
mod client_tools;
mod media;
mod prompts;
mod resources;
mod tools;

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use quire_core::Workspace;
use quire_mcp::http::{ENDPOINT, HttpOptions};
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::{PromptRegistry, ToolRegistry};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    let tools = Arc::new(ToolRegistry::builtin());
    let prompts = Arc::new(PromptRegistry::builtin());
    tools::register(&tools)?;
    client_tools::register(&tools, &prompts)?;
    prompts::register(&prompts)?;
    let server = QuireServer::new(ws, tools, ServerOptions::default()).with_prompts(prompts);
    resources::register(&server);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        eprintln!("listening on http://{}{ENDPOINT}", listener.local_addr()?);
        // Serve until standard input ends: the harness keeps it open while the suite runs.
        let (done, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            let _ = done.send(());
        });
        // Streams of calls still running after a moment are closed, so the suite can check SSE polling and
        // resumption with `Last-Event-ID`.
        let options = HttpOptions {
            close_streams_after: Some(Duration::from_millis(300)),
            ..HttpOptions::default()
        };
        quire_mcp::http::serve(listener, server, options, async move {
            let _ = stopped.await;
        })
        .await?;
        Ok(())
    })
}
