//! quire-plugins: MCP servers the user adds, in any language, whose tools join the agent's registry.
//!
//! quire is their client. A stdio plugin is a child process started with only the environment its configuration
//! names, in a folder of its own, with nothing of the workspace: it sees the arguments the model sends and nothing
//! else. An HTTP plugin is reached at its URL with the headers its configuration names. Each tool is registered as
//! `PLUGIN__tool` (a separator no plugin name and no built-in tool has; providers accept no dot in a tool name), with
//! the effect its annotations give (`readOnlyHint`, `destructiveHint`; none: mutating) unless the configuration says
//! otherwise. Every call has a time limit and an output cap; a plugin that crashes or does not answer in time is
//! stopped, the call becomes a tool error the model reads, and the plugin is started again at its next call, after a
//! pause that doubles with each failure in a row (1 s up to 60 s). Its standard error goes to quire's log.
//!
//! The policy is here too: what a `[[plugins]]` entry may say and the environment and folder it becomes
//! ([`config`]), grants of quire's own MCP server ([`grants`]), and the plugins of a running quire as a person
//! manages them ([`Plugins`]: list, add, remove), which the web app's Settings and `quire plugin` share.

mod call;
pub mod config;
mod error;
pub mod grants;
mod manage;
mod process;
mod relay;
mod result;
pub mod running;
mod session;
mod spec;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quire_tools::{Effect, ToolRegistry};
use serde::Serialize;

pub use error::PluginError;
pub use grants::{GrantError, GrantTokens};
pub use manage::{NewPlugin, PluginToolView, PluginView, Plugins, effect_name, launch_of, view};
pub use result::APP_MIME_TYPE;
pub use spec::{PluginSpec, PluginTransport, parse_effect};

use call::Plugin;

/// The separator between a plugin's name and its tool's in the registry.
pub const SEPARATOR: &str = "__";

/// How long a plugin may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A plugin's state, as `quire plugin list` and the web app's Settings show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PluginStatus {
    /// The plugin's name.
    pub name: String,
    /// `starting`, `running`, `stopped` (not started yet, or disabled), `failed` (it could not start or stopped
    /// unexpectedly).
    pub state: &'static str,
    /// What went wrong last, when something did.
    pub error: Option<String>,
    /// The last lines it wrote to standard error.
    pub stderr: Vec<String>,
    /// Its tools as the agent is offered them.
    pub tools: Vec<PluginToolStatus>,
    /// How many times it was started again after a failure.
    pub restarts: u32,
    /// Its process, while a stdio plugin runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Its tools are offered to quire's own agent only (`expose = "sidebar"`).
    pub sidebar_only: bool,
}

/// One tool of a plugin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PluginToolStatus {
    /// The name the agent calls (`PLUGIN__tool`).
    pub name: String,
    /// The name the plugin gave it.
    pub tool: String,
    /// Its title or name, for people.
    pub title: String,
    /// Its description.
    pub description: String,
    /// Its effect, after the configuration's override.
    pub effect: Effect,
    /// Whether a call waits for the user's approval.
    pub needs_approval: bool,
    /// The `ui://` resource an MCP Apps host shows with its results.
    pub ui: Option<String>,
}

/// The plugins of one process, started on demand and registered in one registry.
#[derive(Default)]
pub struct PluginHost {
    plugins: Mutex<BTreeMap<String, Arc<Plugin>>>,
    /// The HTTP client of HTTP plugins (the app's, with its TLS set up); reqwest's default when absent.
    http: Option<reqwest::Client>,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost").finish_non_exhaustive()
    }
}

impl PluginHost {
    /// A host with no plugins, reaching HTTP plugins with `http` (reqwest's default client when `None`).
    pub fn new(http: Option<reqwest::Client>) -> Arc<PluginHost> {
        Arc::new(PluginHost {
            plugins: Mutex::default(),
            http,
        })
    }

    /// Starts `spec` (an enabled plugin), lists its tools and registers them in `registry`, replacing the tools of
    /// a plugin of the same name. A plugin that cannot start is kept, with its error in its status, and is tried
    /// again in the background, with the same pauses as after a crash, until it starts (its tools are registered
    /// then) or is removed; the first error is returned.
    pub async fn add(
        self: &Arc<Self>,
        spec: PluginSpec,
        registry: &Arc<ToolRegistry>,
    ) -> Result<PluginStatus, PluginError> {
        self.remove(&spec.name, registry).await;
        let plugin = self.keep(spec);
        self.follow(&plugin, registry);
        let started = plugin.start_listed().await;
        match &started {
            Ok(()) => self.register(&plugin, registry),
            Err(_) => {
                let (host, plugin, registry) = (Arc::downgrade(self), plugin.clone(), registry.clone());
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(plugin.retry_wait().await.max(Duration::from_millis(100))).await;
                        let Some(host) = host.upgrade() else { return };
                        if plugin.is_stopped() || !host.holds(&plugin) {
                            return;
                        }
                        if plugin.start_listed().await.is_ok() {
                            host.register(&plugin, &registry);
                            return;
                        }
                    }
                });
            }
        }
        let status = plugin.status();
        started.map(|()| status).map_err(PluginError::Start)
    }

    /// Follows the plugin's `notifications/tools/list_changed`: its tools are listed again and the registry's
    /// replaced (the agent's next turn offers the new list), for as long as the plugin is this host's.
    fn follow(self: &Arc<Self>, plugin: &Arc<Plugin>, registry: &Arc<ToolRegistry>) {
        let (host, plugin, registry) = (Arc::downgrade(self), plugin.clone(), registry.clone());
        tokio::spawn(async move {
            loop {
                plugin.changed.notified().await;
                let Some(host) = host.upgrade() else { return };
                if plugin.is_stopped() || !host.holds(&plugin) {
                    return;
                }
                if let Some(before) = plugin.relist().await {
                    for name in before {
                        registry.unregister(&name);
                    }
                    host.register(&plugin, &registry);
                }
            }
        });
    }

    /// Keeps a plugin (not started) under its name.
    fn keep(&self, spec: PluginSpec) -> Arc<Plugin> {
        let plugin = Arc::new(Plugin::new(spec, self.http.clone()));
        self.plugins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(plugin.spec.name.clone(), plugin.clone());
        plugin
    }

    /// Whether `plugin` is (still) this host's.
    fn holds(&self, plugin: &Arc<Plugin>) -> bool {
        self.plugins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&plugin.spec.name)
            .is_some_and(|p| Arc::ptr_eq(p, plugin))
    }

    /// Registers a started plugin's tools, unless it was removed meanwhile; a tool the registry refuses is said in
    /// the plugin's status.
    fn register(&self, plugin: &Arc<Plugin>, registry: &ToolRegistry) {
        if plugin.is_stopped() || !self.holds(plugin) {
            return;
        }
        let mut registered = Vec::new();
        for tool in plugin.registry_tools() {
            let name = tool.name().to_owned();
            match registry.register(tool) {
                Ok(()) => registered.push(name),
                Err(e) => {
                    tracing::warn!(plugin = %plugin.spec.name, error = %e, "a plugin tool was not registered");
                    plugin.refused(format!("{name}: {e}"));
                }
            }
        }
        // Removed while its tools were being registered: they go too.
        if plugin.is_stopped() {
            for name in registered {
                registry.unregister(&name);
            }
        }
    }

    /// Starts every spec at once (enabled ones; disabled ones are only listed) and registers their tools. Problems
    /// are in each plugin's status.
    pub async fn add_all(self: &Arc<Self>, specs: Vec<PluginSpec>, registry: &Arc<ToolRegistry>) {
        // A consumer listing tools meanwhile (an MCP client at its start) waits for these.
        let _arriving = registry.arriving();
        let starts = specs.into_iter().map(|spec| async move {
            if spec.enabled {
                let name = spec.name.clone();
                if let Err(e) = self.add(spec, registry).await {
                    tracing::warn!(plugin = %name, "the plugin did not start: {e}");
                }
            } else {
                self.keep(spec);
            }
        });
        futures::future::join_all(starts).await;
    }

    /// Stops a plugin and takes its tools out of `registry`; returns whether it was there.
    pub async fn remove(&self, name: &str, registry: &ToolRegistry) -> bool {
        let plugin = self.plugins.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
        let Some(plugin) = plugin else { return false };
        // Marked first, so that a start finishing meanwhile registers nothing (see `register`).
        plugin.mark_stopped();
        for tool in plugin.tool_names() {
            registry.unregister(&tool);
        }
        plugin.stop().await;
        true
    }

    /// The spec of every plugin held, by name.
    pub fn specs(&self) -> BTreeMap<String, PluginSpec> {
        self.plugins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(name, plugin)| (name.clone(), plugin.spec.clone()))
            .collect()
    }

    /// Every plugin's status, by name.
    pub fn statuses(&self) -> Vec<PluginStatus> {
        let plugins: Vec<Arc<Plugin>> = self
            .plugins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        plugins.iter().map(|p| p.status()).collect()
    }

    /// Stops every plugin (their processes end).
    pub async fn shutdown(&self) {
        running::withdraw();
        let plugins: Vec<Arc<Plugin>> = std::mem::take(&mut *self.plugins.lock().unwrap_or_else(|e| e.into_inner()))
            .into_values()
            .collect();
        // All marked first, then stopped together: one starting slowly holds up no other.
        for plugin in &plugins {
            plugin.mark_stopped();
        }
        futures::future::join_all(plugins.iter().map(|p| p.stop())).await;
    }
}
