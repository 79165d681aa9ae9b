//! The `quire` binary: parses the command line, opens the workspace and runs one command.
//!
//! It holds no logic of its own: storage and search are quire-core's, and this crate only turns them into
//! a command line. It may depend on every quire crate; it must not use `rusqlite` or `r2d2` directly.

mod agents;
mod automations;
mod capture;
mod chat;
mod cli;
mod cli_plugins;
mod commands;
mod device;
mod history;
mod index;
mod lock;
mod lookup;
mod mcp;
mod model;
mod notebooks;
mod output;
mod plugins;
mod query;
mod review;
mod serve;
mod sync;
mod transfer;
mod unlock;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_logging();
    quire_host::settings::keep_sync_credentials();
    let json = cli.json;
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One clear line on stderr; the causes, if any, joined after it (each once).
            let mut causes: Vec<String> = Vec::new();
            for cause in e.chain().map(ToString::to_string) {
                if !causes.iter().any(|c| c.contains(&cause)) {
                    causes.push(cause);
                }
            }
            let message = causes.join(": ");
            let _ = writeln!(std::io::stderr(), "error: {message}");
            if json {
                // Scripts reading --json get the failure as JSON too.
                let _ = writeln!(std::io::stdout(), "{}", serde_json::json!({ "error": message }));
            }
            // Unusable arguments, and a passphrase or recovery key refused: 2 (nothing changed).
            if e.downcast_ref::<chat::UsageError>().is_some() || e.downcast_ref::<unlock::Refused>().is_some() {
                ExitCode::from(chat::EXIT_USAGE)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn init_logging() {
    // rmcp logs every JSON-RPC error it answers as a warning; they are answers, not problems of quire.
    let filter = tracing_subscriber::EnvFilter::try_from_env("QUIRE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=error"));
    // Logs go to stderr, always: on `quire mcp` stdout carries nothing but protocol messages.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(filter)
        .with_target(false)
        .init();
}
