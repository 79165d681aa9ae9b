//! Settings: the one owner of `config.toml` (in quire's configuration directory) and of how a setting is resolved.
//! The chat model's precedence (flags, then `QUIRE_MODEL`/`QUIRE_BASE_URL`, then `[chat] model`, then each
//! `[[chat.models]]` entry), the models' prices and the turn's token budget, and every write to the file (a model
//! added from the web page, the index model) live here, and `quire chat`, `quire serve` (the web app's models) and
//! `quire model` all go through it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// Everything `config.toml` may hold. Unknown keys are an error, so a typo does not go unnoticed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    /// `[mcp]`.
    pub mcp: McpConfig,
    #[serde(default)]
    /// `[chat]`.
    pub chat: ChatConfig,
    #[serde(default)]
    /// `[index]`.
    pub index: IndexConfig,
    #[serde(default)]
    /// `[lock]`.
    pub lock: LockConfig,
    #[serde(default)]
    /// `[sync]`.
    pub sync: SyncConfig,
    /// `[[agents]]`: external agents that speak ACP (`quire agent`).
    #[serde(default)]
    pub agents: Vec<AgentConfig>,
    /// `[[automations]]`: prompts run on a schedule or a trigger (`quire automation`).
    #[serde(default)]
    pub automations: Vec<AutomationConfig>,
    /// `[ledger]`: how long the record of what AI read is kept.
    #[serde(default)]
    pub ledger: LedgerConfig,
    /// `[daily]`: where daily notes live, their titles' format and template.
    #[serde(default)]
    pub daily: PeriodicConfig,
    /// `[weekly]`: the same for weekly notes.
    #[serde(default)]
    pub weekly: PeriodicConfig,
    /// `[templates]`: where templates are looked for first.
    #[serde(default)]
    pub templates: TemplatesConfig,
    /// `[capture]`: OCR's languages and the notebook quick captures go to.
    #[serde(default)]
    pub capture: CaptureConfig,
    /// `[[plugins]]`: MCP servers whose tools the agent may use. quire-plugins reads and writes them; read here too so
    /// that the whole file is checked at once.
    #[serde(default)]
    #[allow(dead_code, reason = "quire-plugins reads the entries; here they are only checked")]
    pub plugins: Vec<quire_plugins::config::PluginConfig>,
}

/// One `[[agents]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Its name in quire (`quire chat --agent NAME`).
    pub name: String,
    /// The program that speaks ACP on its standard input and output.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables for it, with their values.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Variables of quire's own environment passed on to it (an API key kept in your shell), beside
    /// [`AGENT_ENVIRONMENT`].
    #[serde(default)]
    pub inherit_env: Vec<String>,
    /// The notebooks (titles or paths) it reaches through quire; none: all of them.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// What becomes of its writes.
    #[serde(default)]
    pub writes: AgentWrites,
    /// A folder whose text files it may read and write over ACP (its working directory then); none: no file system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<String>,
    /// Whether it may run commands over ACP (in its folder, or its own data folder).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub terminal: bool,
}

/// One `[[automations]]` entry: a prompt that runs on a schedule, on a trigger, or by hand.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutomationConfig {
    /// Its name (`quire automation run NAME`); its writes wait for review under "NAME (automation)".
    pub name: String,
    /// What it asks.
    pub prompt: String,
    /// The chat model that runs it (a `[[chat.models]]` name); neither this nor `agent`: the default chat model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The external agent (an `[[agents]]` name) that runs it instead of a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The notebooks (titles or paths) it reaches; none: all of them.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// When it runs: `daily 07:30`, `weekly monday 09:00`, `every 6 hours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    /// Or what starts it: `note created`, `note changed`, `tag added #NAME`, `task due`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// How long a trigger waits for its notebooks to be left alone before it runs, in seconds (default: 60 for
    /// `note changed`, 5 for the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_seconds: Option<u64>,
    /// What becomes of its writes.
    #[serde(default)]
    pub writes: AgentWrites,
    /// Whether it runs on its schedule or trigger (a paused one still runs by hand).
    #[serde(default = "enabled", skip_serializing_if = "is_enabled")]
    pub enabled: bool,
}

fn enabled() -> bool {
    true
}

fn is_enabled(enabled: &bool) -> bool {
    *enabled
}

/// What becomes of an agent's writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentWrites {
    /// They wait in the review inbox (the default).
    #[default]
    Stage,
    /// They are applied at once (each undoable).
    Apply,
}

/// What an agent gets of quire's environment besides its entry's `env` and `inherit_env`: what a program needs to
/// run and find its own configuration (its home), never quire's keys.
pub const AGENT_ENVIRONMENT: &[&str] = &["PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR", "TERM"];

impl AgentConfig {
    /// Whether its writes are applied at once rather than staged.
    pub fn applies_writes(&self) -> bool {
        self.writes == AgentWrites::Apply
    }

    /// The name its reads and writes are recorded under.
    pub fn client_name(&self) -> String {
        format!("{} (ACP agent)", self.name)
    }

    /// The agent as quire-agent starts it.
    pub fn agent(&self) -> quire_agent::acp::AcpAgent {
        quire_agent::acp::AcpAgent {
            name: self.name.clone(),
            command: self.command.clone(),
            args: self.args.clone(),
            env: AGENT_ENVIRONMENT
                .iter()
                .map(|name| (*name).to_owned())
                .chain(self.inherit_env.iter().cloned())
                .filter_map(|name| std::env::var(&name).ok().map(|value| (name, value)))
                .chain(self.env.clone())
                .collect(),
            access: quire_agent::acp::AgentAccess {
                folder: self.files.as_ref().map(std::path::PathBuf::from),
                terminal: self.terminal,
            },
        }
    }
}

/// `[daily]` and `[weekly]`: `notebook` (a path such as `Journal/Daily`), `format` (the title's date in Moment.js
/// tokens, `YYYY-MM-DD` and `gggg-[W]ww` when unset; a `/` files the note in notebooks below) and `template` (a note's
/// id, title or `Notebook/Title` path).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeriodicConfig {
    /// The notebook path.
    pub notebook: Option<String>,
    /// The title's format.
    pub format: Option<String>,
    /// The template.
    pub template: Option<String>,
}

/// `[templates]`: `notebook`, where a template named by its title is looked for first (`Templates` when unset).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplatesConfig {
    /// The notebook path.
    pub notebook: Option<String>,
}

/// The daily or weekly notes' settings: config.toml's `[daily]`/`[weekly]` over quire-core's defaults.
pub fn periodic(period: quire_core::Period) -> anyhow::Result<quire_core::PeriodicSettings> {
    let config = read_config(&config_dir()?)?;
    Ok(periodic_from(&config, period))
}

/// [`periodic`] from a configuration already read.
pub fn periodic_from(config: &Config, period: quire_core::Period) -> quire_core::PeriodicSettings {
    let set = match period {
        quire_core::Period::Day => &config.daily,
        quire_core::Period::Week => &config.weekly,
    };
    let default = quire_core::PeriodicSettings::default_for(period);
    quire_core::PeriodicSettings {
        notebook: set.notebook.clone().unwrap_or(default.notebook),
        format: set.format.clone().unwrap_or(default.format),
        template: set.template.clone().filter(|t| !t.trim().is_empty()),
    }
}

/// `[templates] notebook`, `Templates` when unset.
pub fn templates_notebook() -> anyhow::Result<String> {
    Ok(templates_notebook_from(&read_config(&config_dir()?)?))
}

/// [`templates_notebook`] from a configuration already read.
pub fn templates_notebook_from(config: &Config) -> String {
    config
        .templates
        .notebook
        .clone()
        .unwrap_or_else(|| quire_core::DEFAULT_TEMPLATES_NOTEBOOK.to_owned())
}

/// `[sync]`: `interval`, how often `quire serve` and `quire mcp` sync with the other devices when nothing changed
/// here, as `"30s"`, `"5m"` or a number of seconds (30 seconds when unset). A change here syncs within seconds.
/// `timeout`: how long a remote target may keep a request waiting with nothing (6 seconds when unset).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    /// How often to sync when nothing changed here.
    pub interval: Option<toml::Value>,
    /// How long a stalled remote request waits.
    pub timeout: Option<toml::Value>,
}

/// Where this process keeps the sync targets' credentials typed in Settings (`sync-credentials.json` of the
/// configuration directory), for quire-sync to find them whatever opens a target. Without a configuration
/// directory, the environment alone gives them.
pub fn keep_sync_credentials() {
    if let Ok(dir) = config_dir() {
        quire_sync::credentials::keep_in(dir.join(SYNC_CREDENTIALS));
    }
}

/// The file of [`keep_sync_credentials`], in the configuration directory.
pub const SYNC_CREDENTIALS: &str = "sync-credentials.json";

/// `[sync] timeout`, resolved and handed to quire-sync for the targets opened from now on.
pub fn apply_sync_timeout() -> anyhow::Result<()> {
    let dir = config_dir()?;
    let Some(value) = read_config(&dir)?.sync.timeout else {
        return Ok(());
    };
    match seconds_of(&value, 1) {
        Some(seconds) if (1..=600).contains(&seconds) => {
            quire_sync::set_request_timeout(std::time::Duration::from_secs(seconds));
            Ok(())
        }
        _ => anyhow::bail!(
            "{}: [sync] timeout = {} is not a duration quire reads; write \"10s\", \"1m\" or a number of \
             seconds (from 1 second to 10 minutes)",
            dir.join("config.toml").display(),
            quire_plugins::config::shown_value(&value)
        ),
    }
}

/// `[capture]` of `config.toml`.
pub fn capture() -> anyhow::Result<CaptureConfig> {
    Ok(read_config(&config_dir()?)?.capture)
}

/// `[sync] interval`, resolved.
pub fn sync_interval() -> anyhow::Result<std::time::Duration> {
    apply_sync_timeout()?;
    let dir = config_dir()?;
    let Some(value) = read_config(&dir)?.sync.interval else {
        return Ok(std::time::Duration::from_secs(30));
    };
    match seconds_of(&value, 1) {
        Some(seconds) if (1..=24 * 3600).contains(&seconds) => Ok(std::time::Duration::from_secs(seconds)),
        _ => anyhow::bail!(
            "{}: [sync] interval = {} is not a duration quire reads; write \"30s\", \"5m\" or a number of \
             seconds (from 1 second to a day)",
            dir.join("config.toml").display(),
            quire_plugins::config::shown_value(&value)
        ),
    }
}

pub use quire_plugins::config::seconds_of;

/// `[ledger]`: `retention_days`, how long the read ledger keeps what AI read (90 days when unset; 0 keeps nothing).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerConfig {
    /// Days.
    pub retention_days: Option<u32>,
}

/// `[capture]`: `ocr_languages`, Tesseract's language codes joined by `+` (`"eng+deu"`; English when unset; the
/// variable `QUIRE_OCR_LANGUAGES` wins); `inbox`, the notebook `quire capture` files into ("Inbox" when unset).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureConfig {
    /// Tesseract's languages.
    pub ocr_languages: Option<String>,
    /// The notebook of quick captures, by title or path.
    pub inbox: Option<String>,
}

impl CaptureConfig {
    /// The languages OCR reads: `QUIRE_OCR_LANGUAGES`, then `ocr_languages`, then English.
    pub fn ocr_languages(&self) -> String {
        std::env::var("QUIRE_OCR_LANGUAGES")
            .ok()
            .filter(|l| !l.trim().is_empty())
            .or_else(|| self.ocr_languages.clone())
            .unwrap_or_else(|| "eng".to_owned())
    }

    /// Tesseract, when it is installed, with [`CaptureConfig::ocr_languages`].
    pub fn ocr(&self) -> Option<quire_capture::Ocr> {
        quire_capture::Ocr::find(&self.ocr_languages())
    }

    /// The inbox notebook's title or path.
    pub fn inbox(&self) -> String {
        self.inbox
            .clone()
            .filter(|i| !i.trim().is_empty())
            .unwrap_or_else(|| "Inbox".to_owned())
    }
}

/// `[lock]`: sealed notes. `timeout`: how long the web app keeps the workspace unlocked without use, as `"10m"`,
/// `"30s"`, `"1h"` or a number of minutes (10 minutes when unset).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockConfig {
    /// How long the web app stays unlocked without use.
    pub timeout: Option<toml::Value>,
}

/// `[lock] timeout`, resolved: the web app's unlock period.
pub fn lock_timeout() -> anyhow::Result<std::time::Duration> {
    lock_timeout_in(&config_dir()?)
}

fn lock_timeout_in(dir: &Path) -> anyhow::Result<std::time::Duration> {
    use std::time::Duration;
    let Some(value) = read_config(dir)?.lock.timeout else {
        return Ok(Duration::from_secs(10 * 60));
    };
    let seconds = seconds_of(&value, 60);
    let value = match &value {
        toml::Value::String(text) => format!("{text:?}"),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(n) => n.to_string(),
        other => format!("a {}", other.type_str()),
    };
    match seconds {
        Some(seconds) if (1..=7 * 24 * 3600).contains(&seconds) => Ok(Duration::from_secs(seconds)),
        Some(0) => anyhow::bail!(
            "{}: [lock] timeout = {value} would lock again at once; give a duration such as \"10m\" or \"30s\"",
            dir.join("config.toml").display()
        ),
        _ => anyhow::bail!(
            "{}: [lock] timeout = {value} is not a duration quire reads; write \"10m\", \"30s\", \"1h\" or a number of \
             minutes (at most a week)",
            dir.join("config.toml").display()
        ),
    }
}

/// `[index]`: which embedder semantic search uses (the built-in fallback when none is set).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexConfig {
    /// A model of quire's catalog, installed with `quire model install` (written by `quire model use`). It wins over
    /// `model_dir` and `embed_url`.
    pub model: Option<String>,
    /// A local sentence-embedding model directory (config.json, tokenizer.json, model.safetensors); also
    /// `QUIRE_EMBED_MODEL`.
    pub model_dir: Option<std::path::PathBuf>,
    /// An OpenAI-compatible API base URL, such as `http://localhost:11434/v1`.
    pub embed_url: Option<String>,
    /// The embedding model's name there.
    pub embed_model: Option<String>,
    /// Its vector length (384 for all-MiniLM-L6-v2, 768 for nomic-embed-text, 1536 for text-embedding-3-small).
    pub embed_dimensions: Option<usize>,
    /// The API key, if the endpoint needs one.
    pub embed_api_key: Option<String>,
}

/// `[mcp]`: what `quire mcp` offers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    #[serde(default)]
    /// Offer only read-only tools.
    pub read_only: bool,
    #[serde(default)]
    /// Tools clients may not call.
    pub disabled_tools: Vec<String>,
    /// Notebooks (titles or paths) the client is limited to; empty for the whole workspace.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// Whether destructive tools (delete_note, …) ask the user through the client first.
    #[serde(default)]
    pub confirm_destructive: ConfirmSetting,
    /// Whether clients' writes are applied or staged for review.
    #[serde(default)]
    pub writes: WritesSetting,
    /// Whether hosts that render MCP Apps may show staged changes inline, with Accept and Reject (default no).
    pub inline_review: Option<bool>,
}

/// `[mcp] writes`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WritesSetting {
    /// Applied at once (each undoable).
    #[default]
    Apply,
    /// Staged for the user's review (`quire review`, the web app's Review page).
    Stage,
}

/// `[mcp] confirm_destructive`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmSetting {
    /// Ask through clients that can; stage for the user's review for the others.
    #[default]
    AskOrStage,
    /// Ask through clients that can; run for the others (what goes goes to the trash or a revision).
    Ask,
    /// Ask through clients that can; refuse for the others.
    AskOrDeny,
    /// Never ask.
    Allow,
    /// Always refuse.
    Deny,
}

impl ConfirmSetting {
    /// The server's rule for destructive calls.
    pub fn policy(self) -> quire_mcp::ConfirmDestructive {
        match self {
            ConfirmSetting::AskOrStage => quire_mcp::ConfirmDestructive::AskOrStage,
            ConfirmSetting::Ask => quire_mcp::ConfirmDestructive::Ask,
            ConfirmSetting::AskOrDeny => quire_mcp::ConfirmDestructive::AskOrDeny,
            ConfirmSetting::Allow => quire_mcp::ConfirmDestructive::Allow,
            ConfirmSetting::Deny => quire_mcp::ConfirmDestructive::Deny,
        }
    }
}

/// `[chat]`: which model the agent uses, and `[[chat.models]]`, more models to choose from (`--model NAME`, the web
/// app's picker).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatConfig {
    /// The model's name.
    pub model: Option<String>,
    /// The API's address.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<String>,
    /// The prices of the model chosen outside `[[chat.models]]` (`model` here, `QUIRE_MODEL`, `--model
    /// provider:model`), in currency units per million tokens sent.
    pub price_in: Option<f64>,
    /// Per million tokens generated.
    pub price_out: Option<f64>,
    /// Per million tokens read from the provider's prompt cache (default: `price_in`).
    pub price_cached_in: Option<f64>,
    /// The most tokens (sent and generated) one turn may use before it stops; no budget when absent.
    pub max_turn_tokens: Option<u64>,
    /// How many tokens of the focused note the first request of a turn may carry whole (above it: its outline and
    /// the part around the cursor); quire-agent's default when absent.
    pub note_view_tokens: Option<usize>,
    #[serde(default)]
    /// `[[chat.models]]`: more models to choose from.
    pub models: Vec<NamedModel>,
}

/// One `[[chat.models]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedModel {
    /// What the picker shows and `--model` accepts (default: the model itself).
    pub name: Option<String>,
    /// `provider:model`, as for `[chat] model`.
    pub model: String,
    /// The API's address.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<String>,
    /// Its prices, as `[chat]`'s.
    pub price_in: Option<f64>,
    /// Price per million output tokens.
    pub price_out: Option<f64>,
    /// Price per million cached input tokens.
    pub price_cached_in: Option<f64>,
}

/// `[chat] note_view_tokens`: the focused note's budget in a turn's first request (at least 200 tokens).
pub fn note_view_tokens() -> anyhow::Result<usize> {
    note_view_tokens_in(&config_dir()?)
}

pub(crate) fn note_view_tokens_in(dir: &Path) -> anyhow::Result<usize> {
    match read_config(dir)?.chat.note_view_tokens {
        None => Ok(quire_agent::DEFAULT_VIEW_TOKENS),
        Some(tokens) if tokens < 200 => anyhow::bail!(
            "{}: [chat] note_view_tokens = {tokens} leaves no room for the note's outline; give 200 or more (the \
             default is {})",
            dir.join("config.toml").display(),
            quire_agent::DEFAULT_VIEW_TOKENS
        ),
        Some(tokens) => Ok(tokens),
    }
}

/// `[chat] max_turn_tokens`: the most tokens one turn may use, if the configuration sets a budget.
pub fn max_turn_tokens() -> anyhow::Result<Option<u64>> {
    let dir = config_dir()?;
    let budget = read_config(&dir)?.chat.max_turn_tokens;
    if budget == Some(0) {
        anyhow::bail!(
            "{}: [chat] max_turn_tokens = 0 would stop every turn after its first request; give a number of tokens \
             such as 50000, or remove it for no budget",
            dir.join("config.toml").display()
        );
    }
    Ok(budget)
}

/// quire's configuration directory (`quire` in the system's).
pub fn config_dir() -> anyhow::Result<PathBuf> {
    let dir = dirs::config_dir().context("cannot find your configuration directory (set XDG_CONFIG_HOME)")?;
    Ok(dir.join("quire"))
}

/// config.toml of `dir`, checked whole (nothing when there is no file).
pub fn read_config(dir: &Path) -> anyhow::Result<Config> {
    let path = dir.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("cannot read {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Sets `[index] model` in config.toml (removes it with `None`), keeping the rest of the file as it was, comments
/// included. The file is replaced in one rename, and only with text that still reads as a valid configuration.
pub fn set_index_model(dir: &Path, model: Option<&str>) -> anyhow::Result<()> {
    edit_config(dir, |doc, path| {
        match model {
            Some(name) => {
                let index = doc
                    .entry("index")
                    .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
                    .as_table_like_mut()
                    .with_context(|| format!("{}: `index` is not a table", path.display()))?;
                index.insert("model", toml_edit::value(name));
            }
            None => {
                if let Some(index) = doc.get_mut("index").and_then(|i| i.as_table_like_mut()) {
                    index.remove("model");
                }
            }
        }
        Ok(())
    })
}

/// Edits the `[[KEY]]` list of config.toml in place, keeping the rest of the file (see [`edit_config`]: the result
/// must read as a configuration quire takes).
pub fn edit_entries(
    dir: &Path,
    key: &str,
    change: impl FnOnce(&mut toml_edit::ArrayOfTables) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    edit_config(dir, |doc, path| {
        let list = doc
            .entry(key)
            .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .with_context(|| format!("{}: `{key}` is not a list of [[{key}]] entries", path.display()))?;
        change(list)
    })
}

/// Edits config.toml in place with `edit`, keeping what it does not touch, comments included. The result must still
/// read as a valid configuration; it replaces the file in one rename, readable by its owner only (it may hold keys).
pub fn edit_config(
    dir: &Path,
    edit: impl FnOnce(&mut toml_edit::DocumentMut, &Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let path = dir.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("cannot read {}", path.display()))?;
    edit(&mut doc, &path)?;
    let text = doc.to_string();
    toml::from_str::<Config>(&text).with_context(|| format!("{} would not be valid", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temporary = dir.join(".config.toml.new");
    // A leftover of an interrupted write would keep its own permissions.
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temporary)
        .and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
    written.with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, &path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::{lock_timeout_in, periodic_from};
    use quire_core::Period;

    #[test]
    fn daily_and_weekly_settings_fall_back_to_cores_defaults_one_key_at_a_time() {
        let config: super::Config = toml::from_str(
            "[daily]\nnotebook = \"Journal/Daily\"\ntemplate = \"Templates/Day\"\n[weekly]\nformat = \"GGGG-[W]WW\"\ntemplate = \" \"\n",
        )
        .unwrap();
        let day = periodic_from(&config, Period::Day);
        assert_eq!(
            (day.notebook.as_str(), day.format.as_str(), day.template.as_deref()),
            ("Journal/Daily", "YYYY-MM-DD", Some("Templates/Day"))
        );
        let week = periodic_from(&config, Period::Week);
        assert_eq!(
            (week.notebook.as_str(), week.format.as_str(), week.template),
            ("Weekly", "GGGG-[W]WW", None)
        );
        let typo = toml::from_str::<super::Config>("[daily]\nfolder = \"x\"\n").unwrap_err();
        assert!(typo.to_string().contains("unknown field"), "{typo}");
    }

    #[test]
    fn the_lock_timeout_reads_as_a_duration_or_minutes() {
        let dir = tempfile::tempdir().unwrap();
        let timeout = |text: &str| {
            std::fs::write(dir.path().join("config.toml"), format!("[lock]\ntimeout = {text}\n")).unwrap();
            lock_timeout_in(dir.path())
                .map(|d| d.as_secs())
                .map_err(|e| e.to_string())
        };
        assert_eq!(timeout("\"30s\""), Ok(30));
        assert_eq!(timeout("\"10m\""), Ok(600));
        assert_eq!(timeout("\"2 hours\""), Ok(7200));
        assert_eq!(timeout("5"), Ok(300));
        assert_eq!(timeout("0.5"), Ok(30));
        assert!(timeout("\"0s\"").unwrap_err().contains("would lock again at once"));
        assert!(timeout("\"soon\"").unwrap_err().contains("not a duration"));
        assert!(timeout("-3").unwrap_err().contains("not a duration"));
        std::fs::remove_file(dir.path().join("config.toml")).unwrap();
        assert_eq!(lock_timeout_in(dir.path()).unwrap().as_secs(), 600);
    }
}
