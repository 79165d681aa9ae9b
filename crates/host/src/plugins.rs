//! Plugins in the binary: quire-plugins' host started with quire's HTTP client (its TLS) for the agent of `quire chat`
//! and `quire serve`, and grants whose MCP tokens are kept in quire's token file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use quire_core::Workspace;
use quire_plugins::grants::{GrantError, GrantTokens, keep_grants, usable_specs};
use quire_plugins::{PluginHost, PluginSpec, Plugins};
use quire_tools::ToolRegistry;

use crate::settings::config_dir;

/// Grants' tokens, kept in quire's MCP token file (named `plugin-NAME`).
pub struct FileGrants {
    /// The workspace whose notebooks a grant names.
    pub ws: Workspace,
    /// The configuration directory.
    pub dir: PathBuf,
}

impl GrantTokens for FileGrants {
    fn mint(&self, name: &str, notebooks: &[String], read_only: bool) -> Result<String, GrantError> {
        crate::mcp::plugin_token(&self.ws, &self.dir, name, notebooks, read_only).map_err(Into::into)
    }

    fn revoke(&self, name: &str) -> Result<bool, GrantError> {
        crate::mcp::revoke_token(&self.dir, name).map_err(Into::into)
    }
}

/// Revokes named tokens only (removing a plugin from the command line needs no workspace).
pub struct Revoker {
    /// The configuration directory.
    pub dir: PathBuf,
}

impl GrantTokens for Revoker {
    fn mint(&self, name: &str, _: &[String], _: bool) -> Result<String, GrantError> {
        Err(format!("no workspace to make the token '{name}' in").into())
    }

    fn revoke(&self, name: &str) -> Result<bool, GrantError> {
        crate::mcp::revoke_token(&self.dir, name).map_err(Into::into)
    }
}

/// A host for plugins, reaching HTTP ones with quire's HTTP client (its TLS).
pub fn new_host() -> Arc<PluginHost> {
    PluginHost::new(
        quire_embed::http::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .ok(),
    )
}

/// Starts the configured plugins and registers their tools in `registry`. A plugin that cannot start is reported
/// on standard error and in its status; the others go on.
pub async fn start(ws: &Workspace, registry: &Arc<ToolRegistry>) -> anyhow::Result<Arc<PluginHost>> {
    let host = new_host();
    let specs = prepared_specs(ws)?;
    host.add_all(specs, registry).await;
    Ok(host)
}

/// The usable plugins, their grants' tokens made; each entry that cannot be used is said on standard error.
fn prepared_specs(ws: &Workspace) -> anyhow::Result<Vec<PluginSpec>> {
    let dir = config_dir()?;
    let grants = FileGrants {
        ws: ws.clone(),
        dir: dir.clone(),
    };
    if let Err(e) = keep_grants(&dir, &grants) {
        eprintln!("warning: {e:#}");
    }
    let (specs, problems) = usable_specs(&dir)?;
    for problem in problems {
        eprintln!("warning: {problem}; this plugin is not started");
    }
    Ok(specs)
}

/// Like [`start`], without waiting for the plugins: `quire serve` answers at once, and each plugin's tools join the
/// registry as it comes up (a configuration that cannot be read is an error now). With how many are configured.
pub fn start_in_background(
    runtime: &tokio::runtime::Handle,
    ws: &Workspace,
    registry: &Arc<ToolRegistry>,
    for_clients: bool,
) -> anyhow::Result<(Arc<PluginHost>, usize)> {
    let host = new_host();
    let mut specs = prepared_specs(ws)?;
    // For MCP clients only (`quire mcp`): a plugin kept to quire's own agent is not started there.
    if for_clients {
        specs.retain(|s| s.exposure == quire_tools::Exposure::All);
    }
    let configured = specs.len();
    let (starting, registry) = (host.clone(), registry.clone());
    // Taken now, so that a client listing tools before the task runs waits for the plugins too.
    let arriving = registry.arriving();
    runtime.spawn(async move {
        starting.add_all(specs, &registry).await;
        drop(arriving);
    });
    Ok((host, configured))
}

/// The plugins of `quire serve`, as the web app's Settings screen manages them.
pub fn managed(ws: &Workspace, host: Arc<PluginHost>, registry: Arc<ToolRegistry>) -> anyhow::Result<Plugins> {
    let dir = config_dir()?;
    let grants = Arc::new(FileGrants {
        ws: ws.clone(),
        dir: dir.clone(),
    });
    Ok(Plugins::new(host, registry, dir, Some(grants)))
}
