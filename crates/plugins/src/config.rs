//! The `[[plugins]]` entries of config.toml: what they may say, how one becomes a [`PluginSpec`] (the environment a
//! stdio plugin gets, the folder it runs in, its limits and overrides), and adding or removing an entry in the file.
//!
//! A stdio plugin gets only the environment its entry names: `env` (set), and `inherit_env`, variables passed on
//! from quire's own environment (default [`DEFAULT_INHERIT`]: none of them holds a key), and `HOME` set to the folder
//! of its own it runs in (under the cache directory), unless the entry names `HOME` itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::PluginError;
use crate::spec::{PluginSpec, PluginTransport, parse_effect};

/// What a plugin inherits of quire's environment unless its entry says otherwise: what programs need to start,
/// never a key.
pub const DEFAULT_INHERIT: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"];

/// The file, in quire's configuration directory, that holds the entries.
pub const CONFIG_FILE: &str = "config.toml";

/// One `[[plugins]]` entry as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginConfig {
    /// 1 to 32 of `a-z 0-9 -`: the prefix of its tools' names (`NAME__tool`).
    pub name: String,
    /// The program of a stdio plugin.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set in its environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables passed on from quire's environment (default: [`DEFAULT_INHERIT`]).
    pub inherit_env: Option<Vec<String>>,
    /// The MCP endpoint of an HTTP plugin.
    pub url: Option<String>,
    /// Headers sent to an HTTP plugin.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The longest a call may take: `"30s"`, `"2m"` or seconds (default 60 s).
    pub timeout: Option<toml::Value>,
    /// The most bytes of an answer passed on (default 1 MiB).
    pub max_output: Option<u64>,
    /// Effects replacing the annotations', by the plugin's tool name: `read_only`, `mutating`, `destructive`.
    #[serde(default)]
    pub effects: BTreeMap<String, String>,
    /// `"destructive"` (default): ask before destructive calls; `"writes"`: before every call that writes.
    pub approve: Option<String>,
    /// Whether its tools are offered (default true).
    pub enabled: Option<bool>,
    /// Who its tools are offered to: `"all"` (default: the sidebar's agent and quire's MCP clients) or `"sidebar"`
    /// (quire's own agent only).
    pub expose: Option<String>,
    /// Access to quire's own MCP server.
    pub grant: Option<GrantConfig>,
}

/// `grant`: a named MCP token for the plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantConfig {
    /// The notebooks it reaches (titles or paths); none: the whole workspace (protected notes never).
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// Whether it may only read.
    #[serde(default)]
    pub read_only: bool,
    /// The address of `quire mcp --http`, passed on as `QUIRE_MCP_URL`.
    pub url: Option<String>,
}

/// Only the `[[plugins]]` of config.toml (the rest of the file is quire-host's).
#[derive(Debug, Default, Deserialize)]
struct PluginsOnly {
    #[serde(default)]
    plugins: Vec<PluginConfig>,
}

/// The entries of the configuration directory's config.toml (none when there is no file).
pub fn read_entries(dir: &Path) -> Result<Vec<PluginConfig>, PluginError> {
    let path = dir.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PluginError::io("read", &path, e)),
    };
    let read: PluginsOnly = toml::from_str(&text).map_err(|e| PluginError::config(&path, e.to_string()))?;
    Ok(read.plugins)
}

/// A configuration value as it is written in config.toml (`"abc"`, `5`), for a message about it.
pub fn shown_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        _ => "that value".to_owned(),
    }
}

/// A duration setting in seconds: a number (of `unit` seconds), or text with a unit (`"30s"`, `"10m"`, `"1h"`; a
/// bare number of text is in `unit`). The one reading of durations in config.toml.
pub fn seconds_of(value: &toml::Value, unit: u64) -> Option<u64> {
    match value {
        toml::Value::Integer(n) => u64::try_from(*n).ok().and_then(|n| n.checked_mul(unit)),
        toml::Value::Float(n) if n.is_finite() && *n >= 0.0 => Some((n * unit as f64).round() as u64),
        toml::Value::String(text) => {
            let text = text.trim();
            let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
            let (number, suffix) = text.split_at(split);
            let unit = match suffix.trim() {
                "s" | "sec" | "secs" | "second" | "seconds" => Some(1),
                "m" | "min" | "mins" | "minute" | "minutes" => Some(60),
                "h" | "hour" | "hours" => Some(3600),
                "" => Some(unit),
                _ => None,
            };
            number
                .parse::<u64>()
                .ok()
                .zip(unit)
                .and_then(|(n, unit)| n.checked_mul(unit))
        }
        _ => None,
    }
}

/// The folder a stdio plugin runs in (and its `HOME`): its own, under the cache directory.
pub fn plugin_dir(name: &str) -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("plugins")
        .join(name)
}

/// The spec an entry describes; `token` is its grant's MCP token, when it has one.
pub fn resolve(entry: &PluginConfig, token: Option<&str>) -> Result<PluginSpec, PluginError> {
    PluginSpec::check_name(&entry.name)?;
    let invalid = |message: String| Err(PluginError::Invalid(message));
    let transport = match (&entry.command, &entry.url) {
        (Some(command), None) => PluginTransport::Stdio {
            command: command.clone(),
            args: entry.args.clone(),
            env: environment(entry, token),
            cwd: plugin_dir(&entry.name),
        },
        (None, Some(url)) => {
            if entry.grant.is_some() {
                return invalid(
                    "`grant` gives a token through the environment of a plugin quire starts (`command`), not to a `url`"
                        .into(),
                );
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return invalid(format!("url = {url:?} is not an http:// or https:// address"));
            }
            PluginTransport::Http {
                url: url.clone(),
                headers: entry.headers.clone(),
            }
        }
        _ => {
            return invalid(
                "give either `command` (a program speaking MCP on stdio) or `url` (a Streamable HTTP server)".into(),
            );
        }
    };
    let mut spec = PluginSpec::new(entry.name.clone(), transport);
    if let Some(value) = &entry.timeout {
        match seconds_of(value, 1) {
            Some(seconds) if (1..=3600).contains(&seconds) => spec.timeout = Duration::from_secs(seconds),
            _ => {
                return invalid(format!(
                    "timeout = {} is not a duration quire reads: write \"30s\", \"2m\" or seconds (1 s to 1 h)",
                    shown_value(value)
                ));
            }
        }
    }
    if let Some(bytes) = entry.max_output {
        if !(1024..=64 << 20).contains(&bytes) {
            return invalid(format!(
                "max_output = {bytes}: give a number of bytes from 1024 to 67108864"
            ));
        }
        spec.max_output = bytes as usize;
    }
    for (tool, effect) in &entry.effects {
        let Some(effect) = parse_effect(effect) else {
            return invalid(format!(
                "effects.{tool} = {effect:?}: write read_only, mutating or destructive"
            ));
        };
        spec.effects.insert(tool.clone(), effect);
    }
    spec.ask_before_writes = match entry.approve.as_deref() {
        None | Some("destructive") => false,
        Some("writes") => true,
        Some(other) => return invalid(format!("approve = {other:?}: write \"destructive\" or \"writes\"")),
    };
    spec.enabled = entry.enabled.unwrap_or(true);
    spec.writes_back = token.is_some();
    spec.exposure = match entry.expose.as_deref() {
        None | Some("all") => quire_tools::Exposure::All,
        Some("sidebar") => quire_tools::Exposure::Sidebar,
        Some(other) => return invalid(format!("expose = {other:?}: write \"all\" or \"sidebar\"")),
    };
    Ok(spec)
}

/// A stdio plugin's whole environment.
fn environment(entry: &PluginConfig, token: Option<&str>) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let inherit: Vec<String> = match &entry.inherit_env {
        Some(names) => names.clone(),
        None => DEFAULT_INHERIT.iter().map(|s| (*s).to_owned()).collect(),
    };
    for name in inherit {
        if let Ok(value) = std::env::var(&name) {
            env.insert(name, value);
        }
    }
    // Its own folder as its home, unless the entry says otherwise: what it keeps stays there, and quire's
    // configuration (with model keys) and data are not where it looks first.
    env.insert("HOME".into(), plugin_dir(&entry.name).display().to_string());
    if entry
        .inherit_env
        .as_ref()
        .is_some_and(|names| names.iter().any(|n| n == "HOME"))
        && let Ok(home) = std::env::var("HOME")
    {
        env.insert("HOME".into(), home);
    }
    env.extend(entry.env.clone());
    if let Some(token) = token {
        env.insert("QUIRE_MCP_TOKEN".into(), token.to_owned());
        if let Some(url) = entry.grant.as_ref().and_then(|g| g.url.clone()) {
            env.insert("QUIRE_MCP_URL".into(), url);
        }
    }
    env
}

/// The entry as a `[[plugins]]` table.
fn table_of(entry: &PluginConfig) -> toml_edit::Table {
    use toml_edit::{InlineTable, Table, value};
    let mut table = Table::new();
    table.insert("name", value(entry.name.as_str()));
    if let Some(command) = &entry.command {
        table.insert("command", value(command.as_str()));
        let mut args = toml_edit::Array::new();
        args.extend(entry.args.iter().map(String::as_str));
        table.insert("args", value(args));
    }
    if let Some(url) = &entry.url {
        table.insert("url", value(url.as_str()));
    }
    let inline = |map: &BTreeMap<String, String>| {
        let mut t = InlineTable::new();
        for (k, v) in map {
            t.insert(k, v.as_str().into());
        }
        t
    };
    if !entry.headers.is_empty() {
        table.insert("headers", value(inline(&entry.headers)));
    }
    if !entry.env.is_empty() {
        table.insert("env", value(inline(&entry.env)));
    }
    if let Some(toml::Value::String(timeout)) = &entry.timeout {
        table.insert("timeout", value(timeout.as_str()));
    }
    if let Some(approve) = &entry.approve {
        table.insert("approve", value(approve.as_str()));
    }
    if let Some(expose) = &entry.expose {
        table.insert("expose", value(expose.as_str()));
    }
    if let Some(grant) = &entry.grant {
        let mut t = InlineTable::new();
        let mut notebooks = toml_edit::Array::new();
        notebooks.extend(grant.notebooks.iter().map(String::as_str));
        t.insert("notebooks", notebooks.into());
        t.insert("read_only", grant.read_only.into());
        if let Some(url) = &grant.url {
            t.insert("url", url.as_str().into());
        }
        table.insert("grant", value(t));
    }
    table
}

/// Adds an entry to config.toml, keeping the rest of the file as it was; refused when an entry has its name (checked
/// on the file as it is written, not as it was read before).
pub fn write_entry(dir: &Path, entry: &PluginConfig) -> Result<(), PluginError> {
    let table = table_of(entry);
    edit(dir, |list| {
        if list
            .iter()
            .any(|t| t.get("name").and_then(|n| n.as_str()) == Some(entry.name.as_str()))
        {
            return Err(PluginError::Exists(entry.name.clone()));
        }
        list.push(table);
        Ok(())
    })
}

/// Drops the entry named `name` from config.toml; returns whether there was one.
pub fn remove_entry(dir: &Path, name: &str) -> Result<bool, PluginError> {
    let mut removed = false;
    edit(dir, |list| {
        let before = list.len();
        list.retain(|t| t.get("name").and_then(|n| n.as_str()) != Some(name));
        removed = list.len() < before;
        Ok(())
    })?;
    Ok(removed)
}

/// Edits the `[[plugins]]` list of config.toml in place, keeping what it does not touch, comments included. The list
/// must still read as valid entries; the file is replaced in one rename, readable by its owner only (it may hold keys).
fn edit(
    dir: &Path,
    change: impl FnOnce(&mut toml_edit::ArrayOfTables) -> Result<(), PluginError>,
) -> Result<(), PluginError> {
    let path = dir.join(CONFIG_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(PluginError::io("read", &path, e)),
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e| PluginError::config(&path, format!("{e}")))?;
    let list = doc
        .entry("plugins")
        .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
        .as_array_of_tables_mut()
        .ok_or_else(|| PluginError::config(&path, "`plugins` is not a list of [[plugins]] entries".into()))?;
    change(list)?;
    let text = doc.to_string();
    toml::from_str::<PluginsOnly>(&text).map_err(|e| PluginError::config(&path, format!("would not be valid: {e}")))?;
    std::fs::create_dir_all(dir).map_err(|e| PluginError::io("create", dir, e))?;
    quire_loopback::write_private(&path, &text).map_err(|e| PluginError::io("write", &path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_added_and_removed_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("not-yet");
        write_entry(
            &fresh,
            &PluginConfig {
                name: "first".into(),
                url: Some("http://x".into()),
                ..Default::default()
            },
        )
        .expect("the folder is made on first write");
        let file = dir.path().join(CONFIG_FILE);
        std::fs::write(&file, "# mine\n[chat]\nmodel = \"m\"\n").unwrap();
        let entry = PluginConfig {
            name: "notes".into(),
            command: Some("python3".into()),
            args: vec!["server.py".into()],
            grant: Some(GrantConfig {
                notebooks: vec!["Work".into()],
                read_only: true,
                url: None,
            }),
            ..PluginConfig::default()
        };
        write_entry(dir.path(), &entry).unwrap();
        assert!(matches!(write_entry(dir.path(), &entry), Err(PluginError::Exists(name)) if name == "notes"));
        let read = read_entries(dir.path()).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].grant.as_ref().map(|g| g.read_only), Some(true));
        assert!(std::fs::read_to_string(&file).unwrap().starts_with("# mine\n[chat]"));
        assert!(remove_entry(dir.path(), "notes").unwrap());
        assert!(!remove_entry(dir.path(), "notes").unwrap());
        assert!(read_entries(dir.path()).unwrap().is_empty());
        assert!(std::fs::read_to_string(&file).unwrap().contains("model = \"m\""));
    }

    #[test]
    fn a_stdio_plugin_gets_only_what_its_entry_names() {
        let entry = PluginConfig {
            name: "env".into(),
            command: Some("run".into()),
            env: BTreeMap::from([("KEY".into(), "v".into())]),
            inherit_env: Some(vec![]),
            ..PluginConfig::default()
        };
        let spec = resolve(&entry, Some("token")).unwrap();
        let PluginTransport::Stdio { env, cwd, .. } = spec.transport else {
            panic!("stdio")
        };
        assert_eq!(
            env.keys().collect::<Vec<_>>(),
            ["HOME", "KEY", "QUIRE_MCP_TOKEN"],
            "nothing inherited, its own home, its variable and its token"
        );
        assert_eq!(env["HOME"], cwd.display().to_string());
    }

    #[test]
    fn bad_entries_are_refused_with_what_to_write() {
        let bad = |entry: PluginConfig| resolve(&entry, None).unwrap_err().to_string();
        let base = PluginConfig {
            name: "p".into(),
            command: Some("x".into()),
            ..PluginConfig::default()
        };
        assert!(
            bad(PluginConfig {
                name: "Bad".into(),
                ..base.clone()
            })
            .contains("not a valid plugin name")
        );
        assert!(
            bad(PluginConfig {
                url: Some("ftp://x".into()),
                command: None,
                ..base.clone()
            })
            .contains("http://")
        );
        assert!(
            bad(PluginConfig {
                timeout: Some(toml::Value::String("ever".into())),
                ..base.clone()
            })
            .contains("\"30s\"")
        );
        assert!(
            bad(PluginConfig {
                approve: Some("all".into()),
                ..base.clone()
            })
            .contains("\"writes\"")
        );
        assert!(
            bad(PluginConfig {
                effects: BTreeMap::from([("t".into(), "wild".into())]),
                ..base.clone()
            })
            .contains("read_only")
        );
        assert!(bad(PluginConfig { command: None, ..base }).contains("either `command`"));
    }

    #[test]
    fn durations_read_with_or_without_a_unit() {
        let s = |text: &str| seconds_of(&toml::Value::String(text.into()), 60);
        assert_eq!(s("30s"), Some(30));
        assert_eq!(s("2m"), Some(120));
        assert_eq!(s("1 h"), Some(3600));
        assert_eq!(s("5"), Some(300));
        assert_eq!(s("soon"), None);
        assert_eq!(seconds_of(&toml::Value::Integer(2), 60), Some(120));
        assert_eq!(seconds_of(&toml::Value::Integer(-1), 60), None);
    }
}
