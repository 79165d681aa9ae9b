//! `quire mcp`: configuration (file, flags, token) and starting the MCP server of quire-mcp on stdio or HTTP.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::{ToolFilter, ToolRegistry};

use crate::cli::{McpArgs, McpCommand};
use crate::config::{config_dir, read_config};

/// The HTTP bearer token, created (mode 0600) on first use or when rotated.
pub(crate) fn token(dir: &Path, rotate: bool) -> anyhow::Result<String> {
    secret(dir, "mcp-token", rotate)
}

/// A secret kept in the configuration directory (mode 0600), created on first use or when rotated.
pub(crate) fn secret(dir: &Path, name: &str, rotate: bool) -> anyhow::Result<String> {
    let path = dir.join(name);
    if !rotate && let Ok(existing) = std::fs::read_to_string(&path) {
        let existing = existing.trim();
        if existing.len() >= 32 {
            return Ok(existing.to_owned());
        }
    }
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("cannot get random bytes for a token: {e}"))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_private(&path, &token)?;
    Ok(token)
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.write_all(contents.as_bytes())?;
    // An existing file keeps its mode on open; make sure it is private.
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    Ok(())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn token_command(rotate: bool) -> anyhow::Result<()> {
    let token = token(&config_dir()?, rotate)?;
    crate::output::line(&token)
}

pub(crate) fn run(ws: Workspace, args: McpArgs) -> anyhow::Result<()> {
    if let Some(McpCommand::Token { rotate }) = args.command {
        return token_command(rotate);
    }
    let dir = config_dir()?;
    let config = read_config(&dir)?;
    let tools = Arc::new(ToolRegistry::builtin());
    let mut disabled: BTreeSet<String> = config.mcp.disabled_tools.into_iter().collect();
    disabled.extend(args.disabled_tools);
    let filter = ToolFilter {
        read_only: args.read_only || config.mcp.read_only,
        disabled,
    };
    if let Some(unknown) = filter.unknown_names(&tools).first() {
        bail!("--disable-tool {unknown}: there is no such tool (see `quire tools list`)");
    }
    let options = ServerOptions {
        filter,
        confirm_destructive: config.mcp.confirm_destructive.policy(),
        ..ServerOptions::default()
    };
    // Keeps the semantic index caught up while the server runs; stops with it.
    let _indexer = ws.spawn_indexer(std::time::Duration::from_millis(500));
    let server = QuireServer::new(ws, tools, options);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match args.http {
        None => runtime.block_on(quire_mcp::serve_stdio(server)).map_err(Into::into),
        Some(addr) => {
            if !quire_mcp::http::is_loopback(&addr) && !args.allow_remote {
                bail!("{addr} is reachable from other machines; pass --allow-remote if that is what you want");
            }
            let token = Some(token(&dir, false)?);
            runtime.block_on(async move {
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
                let options = quire_mcp::http::HttpOptions { token, allow_remote: args.allow_remote, ..Default::default() };
                let shutdown = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                quire_mcp::http::serve(listener, server, options, shutdown).await.map_err(anyhow::Error::from)
            })
        }
    }
}
