//! What a plugin is: how to reach it, and the limits and overrides its calls run under.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use quire_tools::{Effect, Exposure};

/// How quire reaches a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginTransport {
    /// A program speaking MCP on its standard input and output.
    Stdio {
        /// The program (a path, or a name looked up in the `PATH` of `env`, then quire's own).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment: nothing else is passed on.
        env: BTreeMap<String, String>,
        /// The folder it runs in (made when missing): its own, never the workspace's.
        cwd: PathBuf,
    },
    /// A server speaking Streamable HTTP.
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Headers sent with every request (`Authorization`, …).
        headers: BTreeMap<String, String>,
    },
}

/// One plugin, resolved from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginSpec {
    /// Its name: 1 to 32 of `a-z 0-9 -`, starting with a letter (the prefix of its tools' names).
    pub name: String,
    /// How to reach it.
    pub transport: PluginTransport,
    /// The longest a call may take before the plugin is stopped and the call fails.
    pub timeout: Duration,
    /// The most bytes of an answer (text and media) the agent receives; the rest is cut, and the model told.
    pub max_output: usize,
    /// Effects that replace what the plugin's annotations say, by the plugin's tool name.
    pub effects: BTreeMap<String, Effect>,
    /// Ask the user before every call of a tool that writes (destructive ones always ask).
    pub ask_before_writes: bool,
    /// Whether its tools are offered at all.
    pub enabled: bool,
    /// Who its tools are offered to: the sidebar's agent and MCP clients (default), or the agent only.
    pub exposure: Exposure,
    /// It has a grant: it may write into the workspace through quire's MCP server while a call runs.
    pub writes_back: bool,
}

impl PluginSpec {
    /// The default time limit of a call.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
    /// The default output cap: 1 MiB.
    pub const DEFAULT_MAX_OUTPUT: usize = 1 << 20;

    /// A spec with the default limits.
    pub fn new(name: impl Into<String>, transport: PluginTransport) -> PluginSpec {
        PluginSpec {
            name: name.into(),
            transport,
            timeout: PluginSpec::DEFAULT_TIMEOUT,
            max_output: PluginSpec::DEFAULT_MAX_OUTPUT,
            effects: BTreeMap::new(),
            ask_before_writes: false,
            enabled: true,
            exposure: Exposure::All,
            writes_back: false,
        }
    }

    /// Whether `name` can name a plugin, with the reason when it cannot.
    pub fn check_name(name: &str) -> Result<(), crate::PluginError> {
        let valid = (1..=32).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !name.ends_with('-');
        if valid {
            Ok(())
        } else {
            Err(crate::PluginError::Invalid(format!(
                "'{name}' is not a valid plugin name: use 1 to 32 of a-z 0-9 -, starting with a letter"
            )))
        }
    }
}

/// An effect as the configuration writes it: `read_only`, `mutating` or `destructive`.
pub fn parse_effect(text: &str) -> Option<Effect> {
    match text.trim().replace('-', "_").as_str() {
        "read_only" | "readonly" => Some(Effect::ReadOnly),
        "mutating" => Some(Effect::Mutating),
        "destructive" => Some(Effect::Destructive),
        _ => None,
    }
}
