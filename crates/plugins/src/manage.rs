//! The plugins of one running quire as a person manages them (the web app's Settings, `quire plugin`): the host of
//! the running plugins, the registry their tools are in, and config.toml, which keeps what is added. One add or
//! remove at a time, whoever asks.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use quire_tools::{Effect, ToolRegistry};
use serde::{Deserialize, Serialize};

use crate::config::{PluginConfig, read_entries, remove_entry, resolve, write_entry};
use crate::error::PluginError;
use crate::grants::{GrantTokens, drop_grant, usable_specs};
use crate::{PluginHost, PluginStatus, PluginTransport};

/// A plugin and its tools, as a person sees it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PluginView {
    /// Its name (the prefix of its tools').
    pub name: String,
    /// `starting`, `running`, `stopped`, `failed` or `disabled`.
    pub state: String,
    /// What went wrong last.
    pub error: Option<String>,
    /// The last lines it wrote to standard error.
    pub stderr: Vec<String>,
    /// How it is started (its command line) or reached (its URL).
    pub launch: String,
    /// How many times it was started again after a failure.
    pub restarts: u32,
    /// Its tools are offered to quire's own agent only, not to MCP clients of `quire mcp` (`expose = "sidebar"`).
    #[serde(default)]
    pub sidebar_only: bool,
    /// Its tools.
    pub tools: Vec<PluginToolView>,
}

/// One tool of a plugin.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PluginToolView {
    /// The name the agent calls.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Its description.
    pub description: String,
    /// `read_only`, `mutating` or `destructive`.
    pub effect: String,
    /// Whether a call waits for the user's approval.
    pub needs_approval: bool,
    /// Whether its results come with an interactive view (MCP Apps).
    pub has_view: bool,
}

/// A plugin a person adds: a command (stdio) or a URL (Streamable HTTP).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPlugin {
    /// Its name: a-z 0-9 -, starting with a letter.
    pub name: String,
    /// The program, for a stdio plugin.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The URL, for an HTTP plugin.
    #[serde(default)]
    pub url: Option<String>,
    /// Variables of its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Ask before every call that writes, not only destructive ones.
    #[serde(default)]
    pub ask_before_writes: bool,
    /// Offer its tools to quire's own agent only, not to MCP clients.
    #[serde(default)]
    pub sidebar_only: bool,
}

impl NewPlugin {
    /// The `[[plugins]]` entry it becomes.
    pub fn entry(self) -> PluginConfig {
        PluginConfig {
            name: self.name,
            command: self.command.filter(|c| !c.trim().is_empty()),
            args: self.args,
            url: self.url.filter(|u| !u.trim().is_empty()),
            env: self.env,
            approve: self.ask_before_writes.then(|| "writes".to_owned()),
            expose: self.sidebar_only.then(|| "sidebar".to_owned()),
            ..PluginConfig::default()
        }
    }
}

/// The running plugins of a process and the configuration that keeps them.
pub struct Plugins {
    host: Arc<PluginHost>,
    registry: Arc<ToolRegistry>,
    dir: PathBuf,
    grants: Option<Arc<dyn GrantTokens>>,
    /// One add or remove at a time: two pages adding the same name get one plugin and one refusal.
    changing: tokio::sync::Mutex<()>,
    /// Only the plugins offered to MCP clients run here (`quire mcp`: a sidebar-only plugin would have no use).
    for_clients: bool,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Plugins {
    /// The plugins of `host`, whose tools are in `registry`, kept in `dir`'s config.toml; `grants` revokes a removed
    /// plugin's MCP token.
    pub fn new(
        host: Arc<PluginHost>,
        registry: Arc<ToolRegistry>,
        dir: PathBuf,
        grants: Option<Arc<dyn GrantTokens>>,
    ) -> Plugins {
        Plugins {
            host,
            registry,
            dir,
            grants,
            changing: tokio::sync::Mutex::new(()),
            for_clients: false,
        }
    }

    /// The same, running only the plugins offered to MCP clients (for `quire mcp`).
    pub fn for_clients(mut self) -> Plugins {
        self.for_clients = true;
        self
    }

    /// The host that runs them.
    pub fn host(&self) -> &Arc<PluginHost> {
        &self.host
    }

    /// Every plugin with its state and tools, by name.
    pub fn list(&self) -> Vec<PluginView> {
        let launches = self.launches();
        self.host
            .statuses()
            .into_iter()
            .map(|status| {
                let launch = launches.get(&status.name).cloned().unwrap_or_default();
                view(status, launch)
            })
            .collect()
    }

    /// How each configured plugin is started or reached.
    fn launches(&self) -> BTreeMap<String, String> {
        let Ok((specs, _)) = usable_specs(&self.dir) else {
            return BTreeMap::new();
        };
        specs
            .into_iter()
            .map(|spec| (spec.name.clone(), launch_of(&spec.transport)))
            .collect()
    }

    /// Keeps a new plugin in the configuration, starts it and offers its tools. A plugin that does not start is kept
    /// all the same: its error shows in the list, to fix or remove.
    pub async fn add(&self, plugin: NewPlugin) -> Result<PluginView, PluginError> {
        let entry = plugin.entry();
        let spec = resolve(&entry, None)?;
        let _one = self.changing.lock().await;
        if read_entries(&self.dir)?.iter().any(|p| p.name == entry.name) {
            return Err(PluginError::Exists(entry.name));
        }
        write_entry(&self.dir, &entry)?;
        let launch = launch_of(&spec.transport);
        let _ = self.host.add(spec, &self.registry).await;
        let status = self
            .host
            .statuses()
            .into_iter()
            .find(|s| s.name == entry.name)
            .ok_or_else(|| PluginError::Start("the plugin was not kept".into()))?;
        Ok(view(status, launch))
    }

    /// Takes in what changed in config.toml since the plugins were started (`quire plugin add` or `remove` in a
    /// terminal, an entry edited by hand): a new entry starts, a removed one stops, a changed one starts again.
    /// Whether anything changed.
    pub async fn reconcile(&self) -> Result<bool, PluginError> {
        let _one = self.changing.lock().await;
        let (mut specs, _) = usable_specs(&self.dir)?;
        if self.for_clients {
            specs.retain(|s| s.exposure == quire_tools::Exposure::All);
        }
        let held = self.host.specs();
        let mut changed = false;
        for spec in &specs {
            if held.get(&spec.name) != Some(spec) {
                // A plugin that does not start is kept with its error, as one added in Settings is.
                let _ = self.host.add(spec.clone(), &self.registry).await;
                changed = true;
            }
        }
        for name in held.keys() {
            if !specs.iter().any(|s| s.name == *name) {
                self.host.remove(name, &self.registry).await;
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Follows config.toml while `self` lives: looked at every `every` (its size and time), and taken in
    /// ([`Plugins::reconcile`]) when it changed, so that a plugin added in a terminal reaches a running server.
    pub fn follow_config(self: &Arc<Self>, every: std::time::Duration) {
        let plugins = Arc::downgrade(self);
        let file = self.dir.join(crate::config::CONFIG_FILE);
        let seen = |file: &std::path::Path| std::fs::metadata(file).ok().map(|m| (m.len(), m.modified().ok()));
        let mut last = seen(&file);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(plugins) = plugins.upgrade() else { return };
                let now = seen(&file);
                if now == last {
                    continue;
                }
                last = now;
                match plugins.reconcile().await {
                    Ok(_) => {}
                    Err(e) => tracing::warn!(target: "quire::plugin", "config.toml changed but could not be read: {e}"),
                }
            }
        });
    }

    /// Stops a plugin, takes its tools away, drops it from the configuration and revokes its grant's token.
    pub async fn remove(&self, name: &str) -> Result<(), PluginError> {
        let _one = self.changing.lock().await;
        let running = self.host.remove(name, &self.registry).await;
        let configured = remove_entry(&self.dir, name)?;
        if !running && !configured {
            return Err(PluginError::Unknown(name.to_owned()));
        }
        drop_grant(&self.dir, name, self.grants.as_deref())?;
        let _ = std::fs::remove_dir_all(crate::config::plugin_dir(name));
        Ok(())
    }
}

/// How a plugin is started (its command line) or reached (its URL).
pub fn launch_of(transport: &PluginTransport) -> String {
    match transport {
        PluginTransport::Stdio { command, args, .. } => std::iter::once(command.as_str())
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        PluginTransport::Http { url, .. } => url.clone(),
    }
}

/// A status as people see it.
pub fn view(status: PluginStatus, launch: String) -> PluginView {
    PluginView {
        name: status.name,
        state: status.state.to_owned(),
        error: status.error,
        stderr: status.stderr,
        launch,
        restarts: status.restarts,
        sidebar_only: status.sidebar_only,
        tools: status
            .tools
            .into_iter()
            .map(|t| PluginToolView {
                name: t.name,
                title: t.title,
                description: t.description,
                effect: effect_name(t.effect).to_owned(),
                needs_approval: t.needs_approval,
                has_view: t.ui.is_some(),
            })
            .collect(),
    }
}

/// An effect as the configuration and the page write it.
pub fn effect_name(effect: Effect) -> &'static str {
    match effect {
        Effect::ReadOnly => "read_only",
        Effect::Mutating => "mutating",
        Effect::Destructive => "destructive",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ux-2 #4: config.toml changed in a terminal is taken in by a running server; a plugin added here is not
    /// started again by it (its entry, read back, is the same plugin).
    #[tokio::test]
    async fn the_configuration_changed_elsewhere_is_taken_in_and_a_plugin_added_here_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Arc::new(ToolRegistry::builtin());
        let plugins = Plugins::new(PluginHost::new(None), registry, dir.path().to_owned(), None);
        let added = plugins
            .add(NewPlugin {
                name: "here".into(),
                command: Some("/nonexistent/quire-test-plugin".into()),
                args: Vec::new(),
                url: None,
                env: BTreeMap::new(),
                ask_before_writes: false,
                sidebar_only: false,
            })
            .await
            .unwrap();
        assert_eq!(added.name, "here");
        assert!(
            !plugins.reconcile().await.unwrap(),
            "a plugin added here was started again"
        );

        let file = dir.path().join(crate::config::CONFIG_FILE);
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str("\n[[plugins]]\nname = \"there\"\ncommand = \"/nonexistent/other\"\n");
        std::fs::write(&file, &text).unwrap();
        assert!(plugins.reconcile().await.unwrap());
        let names: Vec<String> = plugins.list().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["here", "there"]);

        remove_entry(dir.path(), "here").unwrap();
        assert!(plugins.reconcile().await.unwrap());
        let names: Vec<String> = plugins.list().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["there"]);
        plugins.host().shutdown().await;
    }
}
