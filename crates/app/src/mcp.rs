//! `quire mcp`: its token subcommands, and serving the MCP server quire-host builds on stdio or HTTP.

use anyhow::{Context, bail};
use quire_core::{Actor, Timestamp, Workspace};
use quire_host::mcp::{McpFlags, build_server, http_options, read_tokens, token};
use quire_host::settings::config_dir;

use quire_tools::ToolRegistry;

use crate::cli::{McpArgs, TokenAction};
use crate::lookup::path_of;

pub(crate) fn token_action(ws: &Workspace, action: TokenAction, json: bool) -> anyhow::Result<()> {
    let dir = config_dir()?;
    let mut file = read_tokens(&dir)?;
    match action {
        TokenAction::Add {
            name,
            notebooks,
            read_only,
            disabled_tools,
            review,
            plugins,
            no_plugins,
        } => {
            let token = quire_host::mcp::add_token(
                ws,
                &dir,
                quire_host::mcp::NewToken {
                    name: name.clone(),
                    notebooks,
                    read_only,
                    disabled_tools,
                    review,
                    plugins: quire_host::mcp::plugin_limit(&dir, plugins, no_plugins)?,
                },
            )?;
            if json {
                return crate::output::line(&serde_json::json!({"name": name, "token": token}).to_string());
            }
            crate::output::line(&token)?;
            eprintln!("This is the only time the token '{name}' is shown: copy it into the client's settings now.");
            Ok(())
        }
        TokenAction::List => {
            // Paths as they are now (the scope follows a notebook by id through renames and moves).
            for token in &mut file.tokens {
                for notebook in &mut token.notebooks {
                    notebook.path = match ws.read(&Actor::User, |r| path_of(r, &notebook.id)) {
                        Ok(path) => path,
                        Err(_) => format!("{} (deleted)", notebook.path),
                    };
                }
            }
            let path = |id: &String| {
                ws.read(&Actor::User, |r| path_of(r, id))
                    .unwrap_or_else(|_| format!("{id} (deleted)"))
            };
            if json {
                let mut list: Vec<serde_json::Value> = file
                    .tokens
                    .iter()
                    .map(|t| {
                        serde_json::json!({
                            "name": t.name, "notebooks": t.notebooks.iter().map(|n| &n.path).collect::<Vec<_>>(),
                            "read_only": t.read_only, "disabled_tools": t.disabled_tools, "review": t.review,
                            "plugins": t.plugins, "created": t.created
                        })
                    })
                    .collect();
                list.extend(file.oauth_grants.iter().map(|g| {
                    serde_json::json!({
                        "name": g.name, "oauth_client": g.client_name, "notebooks": g.notebooks.iter().map(path).collect::<Vec<_>>(),
                        "read_only": g.read_only, "review": g.review, "plugins": g.plugins,
                        "created": Timestamp(g.created * 1000).to_rfc3339()
                    })
                }));
                return crate::output::line(&serde_json::to_string_pretty(&list)?);
            }
            for g in &file.oauth_grants {
                let reach = if g.notebooks.is_empty() {
                    "the whole workspace".to_owned()
                } else {
                    g.notebooks.iter().map(path).collect::<Vec<_>>().join(", ")
                };
                let mut line = format!("{}  OAuth grant to {}, reaches {reach}", g.name, g.client_name);
                if g.read_only {
                    line.push_str(", read-only");
                }
                if g.review {
                    line.push_str(", writes staged for review");
                }
                line.push_str(&quire_host::mcp::plugins_said(g.plugins.as_deref()));
                line.push_str(&format!("  (granted {})", Timestamp(g.created * 1000).to_rfc3339()));
                crate::output::line(&line)?;
            }
            if file.tokens.is_empty() && !file.oauth_grants.is_empty() {
                return Ok(());
            }
            if file.tokens.is_empty() {
                return crate::output::line("No named tokens. `quire mcp token add NAME --notebook Work` makes one.");
            }
            for t in &file.tokens {
                let reach = if t.notebooks.is_empty() {
                    "the whole workspace".to_owned()
                } else {
                    t.notebooks
                        .iter()
                        .map(|n| n.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let mut line = format!("{}  reaches {reach}", t.name);
                if t.read_only {
                    line.push_str(", read-only");
                }
                if t.review {
                    line.push_str(", writes staged for review");
                }
                if !t.disabled_tools.is_empty() {
                    line.push_str(&format!(", without {}", t.disabled_tools.join(", ")));
                }
                line.push_str(&quire_host::mcp::plugins_said(t.plugins.as_deref()));
                line.push_str(&format!("  (created {})", t.created));
                crate::output::line(&line)?;
            }
            Ok(())
        }
        TokenAction::Revoke { name } => {
            quire_host::mcp::revoke_named(&dir, &name)?;
            crate::output::line(&format!("Revoked '{name}'."))
        }
    }
}

pub(crate) fn token_command(rotate: bool) -> anyhow::Result<()> {
    let token = token(&config_dir()?, rotate)?;
    crate::output::line(&token)
}

impl McpArgs {
    /// What the flags add to `[mcp]`.
    pub(crate) fn flags(&self) -> McpFlags {
        McpFlags {
            notebooks: self.notebooks.clone(),
            disabled_tools: self.disabled_tools.clone(),
            read_only: self.read_only,
            review: self.review,
            client_name: self.client_name.clone(),
        }
    }
}

/// `quire mcp`: serves MCP over stdio or HTTP (its `token` subcommands are dispatched before, by
/// [`crate::commands::run`]).
pub(crate) fn run(ws: Workspace, args: McpArgs) -> anyhow::Result<()> {
    // Checked before anything starts. `--addr ADDR` names the address as `quire serve` takes it; with `--http` alone, that flag's default.
    if let (Some(http), Some(addr)) = (args.http, args.addr)
        && http != addr
        && http.to_string() != DEFAULT_HTTP
    {
        bail!("--http {http} and --addr {addr} name two addresses; give one");
    }
    // The plugins' tools join the built-in ones as each plugin comes up (clients hear `tools/list_changed`).
    let tools = std::sync::Arc::new(ToolRegistry::builtin());
    let server = build_server(&ws, &args.flags(), tools.clone())?;
    // Keeps the semantic index caught up while the server runs; stops with it.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // The indexer, the sync loop and the plugins, started beside the server; stopped with it.
    let beside = quire_host::background::BesideMcp::start(&ws, &tools, runtime.handle(), args.client_name.is_none())?;
    // On standard error, which an MCP client shows as the server's log: what runs beside it, and when sync fails.
    // Not for an agent's session: its standard error is the agent's, which quire keeps to say why an agent failed.
    let _reporting = args
        .client_name
        .is_none()
        .then(|| beside.background.report_changes(runtime.handle().clone()));
    let served = serve(&runtime, server, &args);
    runtime.block_on(beside.stop());
    // No automation's agent outlives the server in its own process group.
    quire_agent::acp::end_all();
    served
}

/// Serves on standard input and output, or over HTTP, until the client leaves or Ctrl+C.
fn serve(runtime: &tokio::runtime::Runtime, server: quire_mcp::QuireServer, args: &McpArgs) -> anyhow::Result<()> {
    match args.addr.or(args.http) {
        None => runtime.block_on(quire_mcp::serve_stdio(server)).map_err(Into::into),
        Some(addr) => {
            if !quire_mcp::http::is_loopback(&addr) && !args.allow_remote {
                bail!("{addr} is reachable from other machines; pass --allow-remote if that is what you want");
            }
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
                let bound = listener.local_addr()?;
                if !quire_mcp::http::is_loopback(&bound) {
                    tracing::warn!("serving on {bound}, reachable from other machines; every request still needs the token");
                    eprintln!("warning: quire MCP is reachable from other machines at http://{bound}{}", quire_mcp::http::ENDPOINT);
                }
                eprintln!(
                    "quire MCP server on http://{bound}{} (send Authorization: Bearer <token>; `quire mcp token` prints it)",
                    quire_mcp::http::ENDPOINT
                );
                let options = http_options(args.public_url.as_deref(), args.allow_remote)?;
                let shutdown = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                quire_mcp::http::serve(listener, server, options, shutdown).await.map_err(anyhow::Error::from)
            })
        }
    }
}

/// Where `quire mcp --http` listens when given no address (clap's default for the flag without a value).
const DEFAULT_HTTP: &str = "127.0.0.1:8848";
