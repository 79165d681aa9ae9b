//! `ToolFilter`: which tools a consumer offers (read-only only, some disabled), one rule for the agent and MCP.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::declare::Effect;
use crate::registry::{ToolInfo, ToolRegistry};

/// Which tools of the registry a consumer offers. The agent's `ToolPolicy` and the MCP server's options both hold
/// one, so "read-only" and "disabled" mean the same in the sidebar and over MCP.
///
/// ```
/// use quire_tools::{ToolFilter, ToolRegistry};
///
/// let tools = ToolRegistry::builtin();
/// let filter = ToolFilter { read_only: true, ..ToolFilter::default() };
/// assert!(filter.allows(&tools.get("search_notes").unwrap()));
/// assert!(!filter.allows(&tools.get("delete_note").unwrap()));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolFilter {
    /// Offer only read-only tools.
    pub read_only: bool,
    /// Tools never to offer, by name.
    pub disabled: BTreeSet<String>,
    /// The plugins whose tools may be offered, by plugin name; `None`: every plugin. Tools that belong to no plugin
    /// (built-in ones, an embedder's) are not affected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<BTreeSet<String>>,
}

impl ToolFilter {
    /// Whether a tool is offered.
    pub fn allows(&self, tool: &ToolInfo) -> bool {
        let hidden_as_writing = self.read_only && tool.effect != Effect::ReadOnly;
        let plugin_left_out = match (&self.plugins, &tool.plugin) {
            (Some(allowed), Some(plugin)) => !allowed.contains(plugin),
            _ => false,
        };
        !hidden_as_writing && !plugin_left_out && !self.disabled.contains(&tool.name)
    }

    /// The offered tools of a registry, sorted by name.
    pub fn offered(&self, registry: &ToolRegistry) -> Vec<ToolInfo> {
        registry.list().into_iter().filter(|t| self.allows(t)).collect()
    }

    /// Narrows the plugins offered to those also in `allowed` (`None` leaves them as they are).
    pub fn limit_plugins(&mut self, allowed: Option<&BTreeSet<String>>) {
        let Some(allowed) = allowed else { return };
        self.plugins = Some(match self.plugins.take() {
            Some(current) => current.intersection(allowed).cloned().collect(),
            None => allowed.clone(),
        });
    }

    /// The disabled names that are no tool of the registry (a typo in a configuration), sorted. A plugin tool's name
    /// (`PLUGIN__tool`) is never unknown: its plugin may not have started yet.
    pub fn unknown_names(&self, registry: &ToolRegistry) -> Vec<String> {
        self.disabled
            .iter()
            .filter(|name| !name.contains("__") && registry.get(name).is_none())
            .cloned()
            .collect()
    }
}
