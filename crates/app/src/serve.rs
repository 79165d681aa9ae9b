//! `quire serve`: the web app of quire-web on loopback, with a key of its own in the address it prints.

use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_tools::ToolRegistry;

use crate::cli::ServeArgs;
use crate::config::config_dir;

pub(crate) fn run(ws: Workspace, args: ServeArgs) -> anyhow::Result<()> {
    if !is_loopback(&args.addr) && !args.allow_remote {
        bail!(
            "{} is reachable from other machines; pass --allow-remote if that is what you want",
            args.addr
        );
    }
    // Separate from the MCP token: a web session and an MCP client are different doors.
    let key = crate::mcp::secret(&config_dir()?, "web-key", args.rotate_key)?;
    let models = web_models()?;
    let app = quire_web::WebApp::new(
        ws.clone(),
        Arc::new(ToolRegistry::builtin()),
        quire_web::WebOptions {
            token: key.clone(),
            allow_remote: args.allow_remote,
        },
        models,
    );
    let _indexer = ws.spawn_indexer(std::time::Duration::from_millis(500));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        let bound = listener.local_addr()?;
        let host = if bound.ip().is_loopback() {
            format!("127.0.0.1:{}", bound.port())
        } else {
            bound.to_string()
        };
        let address = format!("http://{host}/?token={key}");
        crate::output::line(&format!("quire is at {address}"))?;
        if args.open
            && let Err(e) = open::that_detached(&address)
        {
            eprintln!("Could not open a browser ({e}); open the address above yourself.");
        }
        eprintln!("Open the address above in your browser (it starts a session); Ctrl+C stops the server.");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        quire_web::serve(listener, app, shutdown).await?;
        Ok(())
    })
}

/// The chat models as `quire chat` finds them (flags aside), the default first; one that cannot be used (a missing
/// key) is left out and said why, on the terminal and in the sidebar's setup hint.
fn web_models() -> anyhow::Result<quire_web::WebModels> {
    let mut models = quire_web::WebModels::default();
    let mut problems = Vec::new();
    for choice in crate::chat::configured_models(None, None)? {
        match crate::chat::build_model(&choice) {
            Ok(chat) => models.models.push(quire_web::WebModel {
                name: choice.name,
                model: choice.settings.model,
                base_url: choice.settings.base_url,
                chat: Arc::from(chat),
            }),
            Err(e) => {
                eprintln!("The model {} cannot be used: {e}", choice.name);
                problems.push(format!("{}: {e}.", choice.name));
            }
        }
    }
    problems.push(quire_agent::HOW_TO_CONFIGURE.to_owned());
    models.setup_hint = format!("No model is configured for the assistant. {}", problems.join(" "));
    Ok(models)
}

fn is_loopback(addr: &std::net::SocketAddr) -> bool {
    addr.ip().is_loopback()
}
