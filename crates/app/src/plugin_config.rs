//! `[[plugins]]` entries of config.toml as written (crate::plugins resolves and starts them).

use std::collections::BTreeMap;

use serde::Deserialize;

/// One `[[plugins]]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PluginConfig {
    /// 1 to 32 of `a-z 0-9 -`: the prefix of its tools' names (`NAME__tool`).
    pub(crate) name: String,
    /// The program of a stdio plugin.
    pub(crate) command: Option<String>,
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// Variables set in its environment.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// Variables passed on from quire's environment (default: `crate::plugins::DEFAULT_INHERIT`).
    pub(crate) inherit_env: Option<Vec<String>>,
    /// The MCP endpoint of an HTTP plugin.
    pub(crate) url: Option<String>,
    /// Headers sent to an HTTP plugin.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// The longest a call may take: `"30s"`, `"2m"` or seconds (default 60 s).
    pub(crate) timeout: Option<toml::Value>,
    /// The most bytes of an answer passed on (default 1 MiB).
    pub(crate) max_output: Option<u64>,
    /// Effects replacing the annotations', by the plugin's tool name: `read_only`, `mutating`, `destructive`.
    #[serde(default)]
    pub(crate) effects: BTreeMap<String, String>,
    /// `"destructive"` (default): ask before destructive calls; `"writes"`: before every call that writes.
    pub(crate) approve: Option<String>,
    /// Whether its tools are offered (default true).
    pub(crate) enabled: Option<bool>,
    /// Access to quire's own MCP server.
    pub(crate) grant: Option<GrantConfig>,
}

/// `grant`: a named MCP token for the plugin.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrantConfig {
    /// The notebooks it reaches (titles or paths); none: the whole workspace (protected notes never).
    #[serde(default)]
    pub(crate) notebooks: Vec<String>,
    #[serde(default)]
    pub(crate) read_only: bool,
    /// The address of `quire mcp --http`, passed on as `QUIRE_MCP_URL`.
    pub(crate) url: Option<String>,
}
