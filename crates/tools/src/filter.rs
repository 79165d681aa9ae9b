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
}

impl ToolFilter {
    /// Whether a tool is offered.
    pub fn allows(&self, tool: &ToolInfo) -> bool {
        let hidden_as_writing = self.read_only && tool.effect != Effect::ReadOnly;
        !hidden_as_writing && !self.disabled.contains(&tool.name)
    }

    /// The offered tools of a registry, sorted by name.
    pub fn offered(&self, registry: &ToolRegistry) -> Vec<ToolInfo> {
        registry.list().into_iter().filter(|t| self.allows(t)).collect()
    }

    /// The disabled names that are no tool of the registry (a typo in a configuration), sorted.
    pub fn unknown_names(&self, registry: &ToolRegistry) -> Vec<String> {
        self.disabled
            .iter()
            .filter(|name| registry.get(name).is_none())
            .cloned()
            .collect()
    }
}
