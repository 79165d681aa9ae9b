//! Plugins: `[[plugins]]` in config.toml (any MCP server, over stdio or HTTP), resolved into quire-mcp's specs and
//! started for the agent of `quire chat` and `quire serve`; and `quire plugin add | list | remove | test`.
//!
//! A stdio plugin gets only the environment its entry names: `env` (set), and `inherit_env`, variables passed on
//! from quire's own environment (default [`DEFAULT_INHERIT`]: none of them holds a key), and `HOME` set to the folder
//! of its own it runs in (under the cache directory), unless the entry names `HOME` itself. It runs in that folder
//! own under the cache directory. A `grant` gives it a named MCP token (`plugin-NAME`), made and revoked with it,
//! limited to the notebooks chosen, in `QUIRE_MCP_TOKEN` (and `QUIRE_MCP_URL` when the entry names the server).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_mcp::plugin::{PluginHost, PluginSpec, PluginStatus, PluginTransport, parse_effect};
use quire_tools::{Effect, ToolRegistry};

use crate::cli::PluginCommand;
pub(crate) use crate::plugin_config::{GrantConfig, PluginConfig};
use crate::settings::{config_dir, edit_config, read_config, seconds_of};

/// What a plugin inherits of quire's environment unless its entry says otherwise: what programs need to start,
/// never a key.
pub(crate) const DEFAULT_INHERIT: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ", "TMPDIR"];

/// Where the tokens of granted plugins are kept (mode 0600), by plugin name.
const TOKENS_FILE: &str = "plugin-tokens.json";

/// A granted plugin's MCP token, with the grant it was made for (a changed grant makes a new token).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct StoredGrant {
    token: String,
    notebooks: Vec<String>,
    read_only: bool,
}

/// The entries that can be used, and a sentence for each that cannot (a bad entry stops no other plugin, nor quire).
fn usable_specs(dir: &Path) -> anyhow::Result<(Vec<PluginSpec>, Vec<String>)> {
    let config = read_config(dir)?;
    let tokens = read_tokens(dir)?;
    let mut names = std::collections::BTreeSet::new();
    let (mut specs, mut problems) = (Vec::new(), Vec::new());
    let file = dir.join("config.toml");
    for entry in &config.plugins {
        if !names.insert(entry.name.clone()) {
            problems.push(format!(
                "{}: two [[plugins]] are named '{}'; the second is left out",
                file.display(),
                entry.name
            ));
            continue;
        }
        let token = tokens
            .get(&entry.name)
            .filter(|t| grant_matches(entry, t))
            .map(|t| t.token.as_str());
        match resolve(entry, token) {
            Ok(spec) => specs.push(spec),
            Err(e) => problems.push(format!("{}: [[plugins]] '{}': {e:#}", file.display(), entry.name)),
        }
    }
    Ok((specs, problems))
}

/// Whether a stored token was made for the entry's grant as it is now.
fn grant_matches(entry: &PluginConfig, stored: &StoredGrant) -> bool {
    entry
        .grant
        .as_ref()
        .is_some_and(|g| g.notebooks == stored.notebooks && g.read_only == stored.read_only)
}

/// Makes the MCP token of every granted plugin that has none for its grant as it is now (an entry written by hand,
/// or whose grant changed: the old token is replaced, so it stops working), and revokes those of plugins whose entry
/// has no grant any more.
fn keep_grants(ws: &Workspace, dir: &Path) -> anyhow::Result<()> {
    let config = read_config(dir)?;
    let mut tokens = read_tokens(dir)?;
    let before = tokens.clone();
    for entry in &config.plugins {
        match &entry.grant {
            Some(grant) if entry.command.is_some() => {
                if tokens.get(&entry.name).is_some_and(|t| grant_matches(entry, t)) {
                    continue;
                }
                let token =
                    crate::mcp::plugin_token(ws, dir, &token_name(&entry.name), &grant.notebooks, grant.read_only)
                        .with_context(|| format!("the grant of the plugin '{}'", entry.name))?;
                tokens.insert(
                    entry.name.clone(),
                    StoredGrant {
                        token,
                        notebooks: grant.notebooks.clone(),
                        read_only: grant.read_only,
                    },
                );
            }
            _ => {
                if tokens.remove(&entry.name).is_some() {
                    crate::mcp::revoke_token(dir, &token_name(&entry.name))?;
                }
            }
        }
    }
    if tokens != before {
        write_tokens(dir, &tokens)?;
    }
    Ok(())
}

fn resolve(entry: &PluginConfig, token: Option<&str>) -> anyhow::Result<PluginSpec> {
    PluginSpec::check_name(&entry.name).map_err(anyhow::Error::msg)?;
    let transport = match (&entry.command, &entry.url) {
        (Some(command), None) => {
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
            // Its own folder as its home, unless the entry says otherwise: what it keeps stays there, and
            // quire's configuration (with model keys) and data are not where it looks first.
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
            PluginTransport::Stdio {
                command: command.clone(),
                args: entry.args.clone(),
                env,
                cwd: plugin_dir(&entry.name),
            }
        }
        (None, Some(url)) => {
            if entry.grant.is_some() {
                bail!(
                    "`grant` gives a token through the environment of a plugin quire starts (`command`), not to a `url`"
                );
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("url = {url:?} is not an http:// or https:// address");
            }
            PluginTransport::Http {
                url: url.clone(),
                headers: entry.headers.clone(),
            }
        }
        _ => bail!("give either `command` (a program speaking MCP on stdio) or `url` (a Streamable HTTP server)"),
    };
    let mut spec = PluginSpec::new(entry.name.clone(), transport);
    if let Some(value) = &entry.timeout {
        match seconds_of(value, 1) {
            Some(seconds) if (1..=3600).contains(&seconds) => spec.timeout = Duration::from_secs(seconds),
            _ => bail!(
                "timeout = {value:?} is not a duration quire reads: write \"30s\", \"2m\" or seconds (1 s to 1 h)"
            ),
        }
    }
    if let Some(bytes) = entry.max_output {
        if !(1024..=64 << 20).contains(&bytes) {
            bail!("max_output = {bytes}: give a number of bytes from 1024 to 67108864");
        }
        spec.max_output = bytes as usize;
    }
    for (tool, effect) in &entry.effects {
        let Some(effect) = parse_effect(effect) else {
            bail!("effects.{tool} = {effect:?}: write read_only, mutating or destructive");
        };
        spec.effects.insert(tool.clone(), effect);
    }
    spec.ask_before_writes = match entry.approve.as_deref() {
        None | Some("destructive") => false,
        Some("writes") => true,
        Some(other) => bail!("approve = {other:?}: write \"destructive\" or \"writes\""),
    };
    spec.enabled = entry.enabled.unwrap_or(true);
    Ok(spec)
}

/// The folder a stdio plugin runs in.
fn plugin_dir(name: &str) -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("plugins")
        .join(name)
}

fn read_tokens(dir: &Path) -> anyhow::Result<BTreeMap<String, StoredGrant>> {
    let path = dir.join(TOKENS_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn write_tokens(dir: &Path, tokens: &BTreeMap<String, StoredGrant>) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    crate::secrets::write_private(&dir.join(TOKENS_FILE), &serde_json::to_string_pretty(tokens)?)
}

/// A host for plugins, reaching HTTP ones with quire's HTTP client (its TLS).
fn new_host() -> Arc<PluginHost> {
    PluginHost::new(
        quire_embed::http::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .ok(),
    )
}

/// Starts the configured plugins and registers their tools in `registry`. A plugin that cannot start is reported
/// on standard error and in its status; the others go on.
pub(crate) async fn start(ws: &Workspace, registry: &Arc<ToolRegistry>) -> anyhow::Result<Arc<PluginHost>> {
    let host = new_host();
    let specs = prepared_specs(ws)?;
    host.add_all(specs, registry).await;
    Ok(host)
}

/// The usable plugins, their grants' tokens made; each entry that cannot be used is said on standard error.
fn prepared_specs(ws: &Workspace) -> anyhow::Result<Vec<PluginSpec>> {
    let dir = config_dir()?;
    if let Err(e) = keep_grants(ws, &dir) {
        eprintln!("warning: {e:#}");
    }
    let (specs, problems) = usable_specs(&dir)?;
    for problem in problems {
        eprintln!("warning: {problem}; this plugin is not started");
    }
    Ok(specs)
}

/// Like [`start`], without waiting for the plugins: `quire serve` answers at once, and each plugin's tools join the
/// registry as it comes up (a configuration that cannot be read is an error now).
pub(crate) fn start_in_background(
    runtime: &tokio::runtime::Runtime,
    ws: &Workspace,
    registry: &Arc<ToolRegistry>,
) -> anyhow::Result<Arc<PluginHost>> {
    let host = new_host();
    let specs = prepared_specs(ws)?;
    let (starting, registry) = (host.clone(), registry.clone());
    runtime.spawn(async move { starting.add_all(specs, &registry).await });
    Ok(host)
}

/// The plugins of `quire serve`, as the web app's Settings screen manages them: the host of the running plugins, the
/// registry their tools are in, and config.toml, which keeps what the page adds.
#[derive(Debug)]
pub(crate) struct WebPlugins {
    pub(crate) host: Arc<PluginHost>,
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) dir: PathBuf,
    /// One add or remove at a time: two pages adding the same name get one plugin and one refusal.
    pub(crate) changing: tokio::sync::Mutex<()>,
}

impl WebPlugins {
    fn view(&self, status: PluginStatus) -> quire_web::PluginView {
        let launch = usable_specs(&self.dir)
            .ok()
            .and_then(|(specs, _)| specs.into_iter().find(|s| s.name == status.name))
            .map(|spec| match spec.transport {
                PluginTransport::Stdio { command, args, .. } => {
                    std::iter::once(command).chain(args).collect::<Vec<_>>().join(" ")
                }
                PluginTransport::Http { url, .. } => url,
            })
            .unwrap_or_default();
        quire_web::PluginView {
            name: status.name,
            state: status.state.to_owned(),
            error: status.error,
            stderr: status.stderr,
            launch,
            restarts: status.restarts,
            tools: status
                .tools
                .into_iter()
                .map(|t| quire_web::PluginToolView {
                    name: t.name,
                    title: t.title,
                    description: t.description,
                    effect: match t.effect {
                        Effect::ReadOnly => "read_only",
                        Effect::Mutating => "mutating",
                        Effect::Destructive => "destructive",
                    }
                    .to_owned(),
                    needs_approval: t.needs_approval,
                    has_view: t.ui.is_some(),
                })
                .collect(),
        }
    }
}

impl quire_web::PluginControl for WebPlugins {
    fn list(&self) -> quire_web::PluginFuture<'_, Vec<quire_web::PluginView>> {
        Box::pin(async move { self.host.statuses().into_iter().map(|s| self.view(s)).collect() })
    }

    fn add(&self, plugin: quire_web::NewPlugin) -> quire_web::PluginFuture<'_, Result<quire_web::PluginView, String>> {
        Box::pin(async move {
            let entry = PluginConfig {
                name: plugin.name.clone(),
                command: plugin.command.filter(|c| !c.trim().is_empty()),
                args: plugin.args,
                url: plugin.url.filter(|u| !u.trim().is_empty()),
                env: plugin.env,
                approve: plugin.ask_before_writes.then(|| "writes".to_owned()),
                ..PluginConfig::default()
            };
            let spec = resolve(&entry, None).map_err(|e| format!("{e:#}"))?;
            let _one = self.changing.lock().await;
            let exists = read_config(&self.dir)
                .map_err(|e| format!("{e:#}"))?
                .plugins
                .iter()
                .any(|p| p.name == entry.name);
            if exists {
                return Err(format!("A plugin named '{}' exists already.", entry.name));
            }
            write_entry(&self.dir, &entry).map_err(|e| format!("{e:#}"))?;
            // Kept even when it does not start: its error shows in the list, to fix or remove.
            let _ = self.host.add(spec, &self.registry).await;
            let status = self
                .host
                .statuses()
                .into_iter()
                .find(|s| s.name == entry.name)
                .ok_or_else(|| "The plugin was not kept.".to_owned())?;
            Ok(self.view(status))
        })
    }

    fn remove<'a>(&'a self, name: &'a str) -> quire_web::PluginFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let _one = self.changing.lock().await;
            self.host.remove(name, &self.registry).await;
            remove_entry(&self.dir, name).map(|_| ()).map_err(|e| format!("{e:#}"))
        })
    }
}

/// Drops a plugin's entry, its token (revoked) and its folder; an error when there was no such plugin.
fn remove_entry(dir: &Path, name: &str) -> anyhow::Result<bool> {
    let mut removed = false;
    edit_config(dir, |doc, _| {
        if let Some(list) = doc.get_mut("plugins").and_then(|p| p.as_array_of_tables_mut()) {
            let before = list.len();
            list.retain(|t| t.get("name").and_then(|n| n.as_str()) != Some(name));
            removed = list.len() < before;
        }
        Ok(())
    })?;
    if !removed {
        bail!("there is no plugin named '{name}' (see `quire plugin list`)");
    }
    let mut tokens = read_tokens(dir)?;
    if tokens.remove(name).is_some() {
        write_tokens(dir, &tokens)?;
    }
    let revoked = crate::mcp::revoke_token(dir, &token_name(name))?;
    let _ = std::fs::remove_dir_all(plugin_dir(name));
    Ok(revoked)
}

/// `quire plugin ...`.
pub(crate) fn run(
    ws: impl FnOnce() -> anyhow::Result<Workspace>,
    command: PluginCommand,
    json: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let dir = config_dir()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    match command {
        PluginCommand::Add(args) => {
            let entry = args.entry()?;
            resolve(&entry, None)?;
            if read_config(&dir)?.plugins.iter().any(|p| p.name == entry.name) {
                bail!(
                    "a plugin named '{}' exists already; remove it first (`quire plugin remove {}`)",
                    entry.name,
                    entry.name
                );
            }
            write_entry(&dir, &entry)?;
            // Its token, made as quire makes it at start; a grant that cannot be made takes the entry back out.
            if entry.grant.is_some()
                && let Err(e) = ws().and_then(|ws| keep_grants(&ws, &dir))
            {
                let _ = remove_entry(&dir, &entry.name);
                return Err(e);
            }
            if !json {
                crate::output::line(&format!(
                    "Added the plugin '{}' to {}.",
                    entry.name,
                    dir.join("config.toml").display()
                ))?;
            }
            test(&runtime, &dir, &entry.name, json)
        }
        PluginCommand::Remove { name } => {
            let revoked = remove_entry(&dir, &name)?;
            crate::output::line(&if revoked {
                format!("Removed the plugin '{name}' and revoked its MCP token.")
            } else {
                format!("Removed the plugin '{name}'.")
            })?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        PluginCommand::List => {
            let statuses = runtime.block_on(statuses(&dir))?;
            if json {
                crate::output::json_value(&serde_json::to_value(&statuses)?)?;
            } else if statuses.is_empty() {
                crate::output::line("No plugins. `quire plugin add NAME -- COMMAND ARGS...` adds one.")?;
            } else {
                for status in &statuses {
                    crate::output::text(&describe(status))?;
                }
            }
            Ok(std::process::ExitCode::SUCCESS)
        }
        PluginCommand::Test { name } => test(&runtime, &dir, &name, json),
    }
}

impl crate::cli::PluginAddArgs {
    /// The `[[plugins]]` entry these flags describe.
    fn entry(&self) -> anyhow::Result<PluginConfig> {
        let mut entry = PluginConfig {
            name: self.name.clone(),
            url: self.url.clone(),
            ..PluginConfig::default()
        };
        match (self.command.split_first(), &self.url) {
            (Some((program, args)), None) => {
                entry.command = Some(program.clone());
                entry.args = args.to_vec();
            }
            (None, Some(_)) => {}
            (Some(_), Some(_)) => bail!("give --url or a command after --, not both"),
            (None, None) => {
                bail!("give the plugin's command after -- (quire plugin add NAME -- COMMAND ARGS...) or --url URL")
            }
        }
        for header in &self.headers {
            let Some((name, value)) = header.split_once(':') else {
                bail!("--header {header:?}: write it as 'Name: value'");
            };
            entry.headers.insert(name.trim().to_owned(), value.trim().to_owned());
        }
        for var in &self.env {
            let Some((name, value)) = var.split_once('=') else {
                bail!("--env {var:?}: write it as NAME=value");
            };
            entry.env.insert(name.to_owned(), value.to_owned());
        }
        entry.timeout = self.timeout.clone().map(toml::Value::String);
        if self.ask_before_writes {
            entry.approve = Some("writes".into());
        }
        if !self.grant_notebooks.is_empty() || self.grant_read_only || self.grant_url.is_some() {
            entry.grant = Some(GrantConfig {
                notebooks: self.grant_notebooks.clone(),
                read_only: self.grant_read_only,
                url: self.grant_url.clone(),
            });
        }
        Ok(entry)
    }
}

/// The named MCP token of a plugin.
fn token_name(plugin: &str) -> String {
    format!("plugin-{plugin}")
}

fn write_entry(dir: &Path, entry: &PluginConfig) -> anyhow::Result<()> {
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
    edit_config(dir, |doc, path| {
        let list = doc
            .entry("plugins")
            .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .with_context(|| format!("{}: `plugins` is not a list of [[plugins]] entries", path.display()))?;
        // Checked on the file as it is written, not as it was read before.
        if list
            .iter()
            .any(|t| t.get("name").and_then(|n| n.as_str()) == Some(entry.name.as_str()))
        {
            bail!(
                "a plugin named '{}' exists already; remove it first (`quire plugin remove {}`)",
                entry.name,
                entry.name
            );
        }
        list.push(table);
        Ok(())
    })
}

/// Starts every configured plugin (enabled or not: this is to look at them), lists its tools, stops it.
async fn statuses(dir: &Path) -> anyhow::Result<Vec<PluginStatus>> {
    let registry = Arc::new(ToolRegistry::empty());
    let host = new_host();
    let (specs, problems) = usable_specs(dir)?;
    for problem in problems {
        eprintln!("warning: {problem}");
    }
    let enabled: BTreeMap<String, bool> = specs.iter().map(|s| (s.name.clone(), s.enabled)).collect();
    let all = specs.into_iter().map(|s| PluginSpec { enabled: true, ..s }).collect();
    host.add_all(all, &registry).await;
    let mut statuses = host.statuses();
    host.shutdown().await;
    for status in &mut statuses {
        if enabled.get(&status.name) == Some(&false) && status.state == "running" {
            status.state = "disabled";
        }
    }
    Ok(statuses)
}

fn test(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
    name: &str,
    json: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let (specs, problems) = usable_specs(dir)?;
    let Some(spec) = specs.into_iter().find(|s| s.name == name) else {
        if let Some(problem) = problems.iter().find(|p| p.contains(&format!("'{name}'"))) {
            bail!("{problem}");
        }
        bail!("there is no plugin named '{name}' (see `quire plugin list`)");
    };
    let status = runtime.block_on(async {
        let registry = Arc::new(ToolRegistry::empty());
        let host = new_host();
        let _ = host.add(PluginSpec { enabled: true, ..spec }, &registry).await;
        let status = host.statuses().into_iter().next();
        host.shutdown().await;
        status
    });
    let status = status.context("the plugin was not kept")?;
    let ok = status.error.is_none();
    if json {
        crate::output::json_value(&serde_json::to_value(&status)?)?;
    } else {
        crate::output::text(&describe(&status))?;
    }
    if !ok {
        bail!(
            "the plugin '{name}' does not work: fix its entry in {} and run `quire plugin test {name}`, or `quire \
             plugin remove {name}`",
            dir.join("config.toml").display()
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A plugin's status for people: its state, then each tool with its effect.
fn describe(status: &PluginStatus) -> String {
    let mut out = format!("{}  {}", status.name, status.state);
    if status.restarts > 0 {
        out.push_str(&format!(" (restarted {} times)", status.restarts));
    }
    out.push('\n');
    if let Some(error) = &status.error {
        out.push_str(&format!("  problem: {error}\n"));
    }
    for tool in &status.tools {
        let effect = match tool.effect {
            Effect::ReadOnly => "read-only",
            Effect::Mutating => "mutating",
            Effect::Destructive => "destructive",
        };
        let ask = if tool.needs_approval { ", asks first" } else { "" };
        out.push_str(&format!("  {:<40} {effect}{ask}  {}\n", tool.name, tool.title));
    }
    if status.tools.is_empty() && status.error.is_none() {
        out.push_str("  (no tools)\n");
    }
    out
}
