//! Settings: the one owner of `config.toml` (in quire's configuration directory) and of how a setting is resolved.
//! The chat model's precedence (flags, then `QUIRE_MODEL`/`QUIRE_BASE_URL`, then `[chat] model`, then each
//! `[[chat.models]]` entry), the models' prices and the turn's token budget, and every write to the file (a model
//! added from the web page, the index model) live here, and `quire chat`, `quire serve` (the web app's models) and
//! `quire model` all go through it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use quire_agent::{ChatModel, ModelSettings, Prices};
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
    /// `[[plugins]]`: MCP servers whose tools the agent may use. quire-plugins reads and writes them; read here too so
    /// that the whole file is checked at once.
    #[serde(default)]
    #[allow(dead_code, reason = "quire-plugins reads the entries; here they are only checked")]
    pub plugins: Vec<quire_plugins::config::PluginConfig>,
}

/// `[sync]`: `interval`, how often `quire serve` and `quire mcp` sync with the other devices when nothing changed
/// here, as `"30s"`, `"5m"` or a number of seconds (30 seconds when unset). A change here syncs within seconds.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    /// How often to sync when nothing changed here.
    pub interval: Option<toml::Value>,
}

/// `[sync] interval`, resolved.
pub fn sync_interval() -> anyhow::Result<std::time::Duration> {
    let dir = config_dir()?;
    let Some(value) = read_config(&dir)?.sync.interval else {
        return Ok(std::time::Duration::from_secs(30));
    };
    match seconds_of(&value, 1) {
        Some(seconds) if (1..=24 * 3600).contains(&seconds) => Ok(std::time::Duration::from_secs(seconds)),
        _ => anyhow::bail!(
            "{}: [sync] interval = {value:?} is not a duration quire reads; write \"30s\", \"5m\" or a number of \
             seconds (from 1 second to a day)",
            dir.join("config.toml").display()
        ),
    }
}

pub use quire_plugins::config::seconds_of;

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

/// The prices a `[chat]` table or a `[[chat.models]]` entry gives: none when it gives none, both `price_in` and
/// `price_out` otherwise (an estimate needs both), none negative.
fn prices(
    what: &str,
    price_in: Option<f64>,
    price_out: Option<f64>,
    price_cached_in: Option<f64>,
) -> anyhow::Result<Option<Prices>> {
    let given = [
        ("price_in", price_in),
        ("price_out", price_out),
        ("price_cached_in", price_cached_in),
    ];
    if let Some((key, value)) = given.iter().find(|(_, v)| v.is_some_and(|v| !v.is_finite() || v < 0.0)) {
        anyhow::bail!(
            "{what}: {key} = {} is not a price; give currency units per million tokens, such as 2.5",
            value.unwrap_or_default()
        );
    }
    match (price_in, price_out) {
        (Some(input), Some(output)) => Ok(Some(Prices {
            input,
            output,
            cached_input: price_cached_in,
        })),
        (None, None) if price_cached_in.is_none() => Ok(None),
        _ => anyhow::bail!(
            "{what}: give both price_in and price_out (currency units per million tokens sent and generated) to \
             see what turns cost, or neither"
        ),
    }
}

/// `[chat] note_view_tokens`: the focused note's budget in a turn's first request (at least 200 tokens).
pub fn note_view_tokens() -> anyhow::Result<usize> {
    note_view_tokens_in(&config_dir()?)
}

fn note_view_tokens_in(dir: &Path) -> anyhow::Result<usize> {
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

/// Adds a `[[chat.models]]` entry to config.toml, or replaces the one of the same name, keeping the rest of the file
/// as it was. The file holds the key, so it is written readable by its owner only.
pub fn add_chat_model(dir: &Path, model: &NamedModel) -> anyhow::Result<()> {
    edit_config(dir, |doc, path| {
        let chat = doc
            .entry("chat")
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()))
            .as_table_like_mut()
            .with_context(|| format!("{}: `chat` is not a table", path.display()))?;
        let models = chat
            .entry("models")
            .or_insert(toml_edit::Item::ArrayOfTables(toml_edit::ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .with_context(|| {
                format!(
                    "{}: `chat.models` is not a list of [[chat.models]] entries",
                    path.display()
                )
            })?;
        let name = model.name.clone().unwrap_or_else(|| model.model.clone());
        let mut entry = toml_edit::Table::new();
        entry.insert("name", toml_edit::value(name.as_str()));
        entry.insert("model", toml_edit::value(model.model.as_str()));
        if let Some(base_url) = &model.base_url {
            entry.insert("base_url", toml_edit::value(base_url.as_str()));
        }
        if let Some(key) = &model.api_key {
            entry.insert("api_key", toml_edit::value(key.as_str()));
        }
        for (key, price) in [
            ("price_in", model.price_in),
            ("price_out", model.price_out),
            ("price_cached_in", model.price_cached_in),
        ] {
            if let Some(price) = price {
                entry.insert(key, toml_edit::value(price));
            }
        }
        let same = models.iter().position(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .or_else(|| t.get("model").and_then(|m| m.as_str()))
                == Some(&name)
        });
        match same.and_then(|at| models.get_mut(at)) {
            Some(existing) => *existing = entry,
            None => models.push(entry),
        }
        Ok(())
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

/// A model the user can choose: its name, how to reach it, and its prices if the configuration gives them.
pub struct ModelChoice {
    /// Its name.
    pub name: String,
    /// How to reach it.
    pub settings: ModelSettings,
    /// Its prices, when the configuration gives them.
    pub prices: Option<Prices>,
}

/// The models the configuration offers, the default first: the one the flags, the environment (`QUIRE_MODEL`,
/// `QUIRE_BASE_URL`) or `[chat] model` name, then each `[[chat.models]]` entry. `model` may also be an entry's name,
/// which makes that entry the default. Empty when nothing is configured. `[chat]`'s prices go with the model chosen
/// outside the entries, each entry's with its model.
pub fn configured_models(model: Option<String>, base_url: Option<String>) -> anyhow::Result<Vec<ModelChoice>> {
    configured_models_in(&config_dir()?, |name| std::env::var(name).ok(), model, base_url)
}

/// [`configured_models`] for the configuration in `dir` and the environment `env` gives.
pub fn configured_models_in(
    dir: &Path,
    env: impl Fn(&str) -> Option<String>,
    model: Option<String>,
    base_url: Option<String>,
) -> anyhow::Result<Vec<ModelChoice>> {
    let file = dir.join("config.toml");
    let config = read_config(dir)?.chat;
    let mut choices: Vec<ModelChoice> = config
        .models
        .iter()
        .map(|m| {
            let name = m.name.clone().unwrap_or_else(|| m.model.clone());
            let what = format!("{}: the [[chat.models]] entry {name}", file.display());
            Ok(ModelChoice {
                prices: prices(&what, m.price_in, m.price_out, m.price_cached_in)?,
                name,
                settings: ModelSettings {
                    model: m.model.clone(),
                    base_url: m.base_url.clone(),
                    api_key: m.api_key.clone(),
                },
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let chat_prices = prices(
        &format!("{}: [chat]", file.display()),
        config.price_in,
        config.price_out,
        config.price_cached_in,
    )?;
    let wanted = model.or_else(|| env("QUIRE_MODEL"));
    let base_url = base_url.or_else(|| env("QUIRE_BASE_URL"));
    if let Some(at) = wanted.as_ref().and_then(|w| choices.iter().position(|c| &c.name == w)) {
        let mut chosen = choices.remove(at);
        if base_url.is_some() {
            chosen.settings.base_url = base_url;
        }
        choices.insert(0, chosen);
    } else if let Some(model) = wanted.or(config.model) {
        choices.insert(
            0,
            ModelChoice {
                name: model.clone(),
                settings: ModelSettings {
                    model,
                    base_url: base_url.or(config.base_url),
                    api_key: config.api_key,
                },
                prices: chat_prices,
            },
        );
    }
    Ok(choices)
}

/// Keeps a chat model added from the web page, once it is usable now (a known provider, its key when it needs
/// one): a `[[chat.models]]` entry of config.toml (the key with it, in a file only its owner reads), so `quire chat`
/// and the next `quire serve` offer it too. Returns the connected model; an `Err` is said to the person.
pub fn keep_chat_model(dir: &Path, name: &str, settings: &ModelSettings) -> anyhow::Result<Box<dyn ChatModel>> {
    let chat = quire_agent::model_from_settings(settings, |var| std::env::var(var).ok()).map_err(|e| {
        // The agent's advice names `--model`, which the page has no use for.
        let reason = e.message.replace(quire_agent::HOW_TO_CONFIGURE, "");
        anyhow::anyhow!(
            "{} cannot be used: {} Give provider:model with ollama, openai, anthropic or openai-compatible (with its \
             base URL).",
            settings.model,
            reason.trim()
        )
    })?;
    let entry = NamedModel {
        name: Some(name.to_owned()),
        model: settings.model.clone(),
        base_url: settings.base_url.clone(),
        api_key: settings.api_key.clone(),
        price_in: None,
        price_out: None,
        price_cached_in: None,
    };
    add_chat_model(dir, &entry).map_err(|e| anyhow::anyhow!("The model could not be kept: {e:#}"))?;
    Ok(chat)
}

#[cfg(test)]
mod tests {

    fn names(dir: &Path, env: &[(&str, &str)], model: Option<&str>) -> Vec<(String, String, Option<String>)> {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        configured_models_in(dir, lookup, model.map(str::to_owned), None)
            .unwrap()
            .into_iter()
            .map(|c| (c.name, c.settings.model, c.settings.base_url))
            .collect()
    }

    #[test]
    fn the_chat_model_comes_from_the_flag_then_the_environment_then_the_file_then_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        assert!(names(dir.path(), &[], None).is_empty(), "nothing configured: no model");
        std::fs::write(
            dir.path().join("config.toml"),
            "[chat]\nmodel = \"ollama:llama3\"\nbase_url = \"http://file\"\n\n[[chat.models]]\nname = \"work\"\n\
             model = \"openai:gpt-4o\"\nbase_url = \"http://work\"\n",
        )
        .unwrap();
        let file = names(dir.path(), &[], None);
        assert_eq!(
            file[0],
            (
                "ollama:llama3".into(),
                "ollama:llama3".into(),
                Some("http://file".into())
            )
        );
        assert_eq!(file[1].0, "work", "the entries follow");
        let env = names(
            dir.path(),
            &[("QUIRE_MODEL", "anthropic:claude"), ("QUIRE_BASE_URL", "http://env")],
            None,
        );
        assert_eq!(
            env[0],
            (
                "anthropic:claude".into(),
                "anthropic:claude".into(),
                Some("http://env".into())
            )
        );
        let flag = names(dir.path(), &[("QUIRE_MODEL", "anthropic:claude")], Some("openai:o3"));
        assert_eq!(flag[0].1, "openai:o3", "the flag wins over the environment");
        assert_eq!(
            flag[0].2,
            Some("http://file".into()),
            "with [chat]'s address when none is given"
        );
        let entry = names(dir.path(), &[("QUIRE_BASE_URL", "http://env")], Some("work"));
        assert_eq!(
            entry.len(),
            1,
            "naming an entry makes it the default, not a second model"
        );
        assert_eq!(
            entry[0],
            ("work".into(), "openai:gpt-4o".into(), Some("http://env".into()))
        );
    }

    use std::path::Path;

    use super::{NamedModel, add_chat_model, configured_models_in, lock_timeout_in, prices, read_config};

    fn entry(name: &str, model: &str, key: Option<&str>) -> NamedModel {
        NamedModel {
            name: Some(name.into()),
            model: model.into(),
            base_url: None,
            api_key: key.map(str::to_owned),
            price_in: None,
            price_out: None,
            price_cached_in: None,
        }
    }

    #[test]
    fn a_model_added_from_the_page_keeps_the_file_and_replaces_its_namesake() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "# my settings\n[chat]\nmodel = \"ollama:qwen3\"\n\n[index]\nmodel = \"m\"\n",
        )
        .unwrap();
        add_chat_model(dir.path(), &entry("Work", "openai:gpt-4.1-mini", Some("sk-1"))).unwrap();
        add_chat_model(dir.path(), &entry("Local", "ollama:llama3", None)).unwrap();
        add_chat_model(dir.path(), &entry("Work", "openai:gpt-4.1", Some("sk-2"))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my settings\n"), "{text}");
        let config = read_config(dir.path()).unwrap();
        assert_eq!(config.chat.model.as_deref(), Some("ollama:qwen3"));
        assert_eq!(config.index.model.as_deref(), Some("m"));
        let models: Vec<(Option<String>, String, Option<String>)> = config
            .chat
            .models
            .into_iter()
            .map(|m| (m.name, m.model, m.api_key))
            .collect();
        assert_eq!(
            models,
            [
                (Some("Work".into()), "openai:gpt-4.1".into(), Some("sk-2".into())),
                (Some("Local".into()), "ollama:llama3".into(), None),
            ]
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600,
                "it holds keys"
            );
        }
    }

    #[test]
    fn a_configuration_from_before_prices_still_loads_and_prices_come_whole() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[chat]\nmodel = \"ollama:qwen3\"\n\n[[chat.models]]\nname = \"Work\"\nmodel = \"openai:gpt-4.1\"\n",
        )
        .unwrap();
        let config = read_config(dir.path()).unwrap();
        assert_eq!(
            (
                config.chat.price_in,
                config.chat.max_turn_tokens,
                config.chat.models[0].price_out
            ),
            (None, None, None)
        );
        assert_eq!(
            super::note_view_tokens_in(dir.path()).unwrap(),
            quire_agent::DEFAULT_VIEW_TOKENS
        );
        std::fs::write(dir.path().join("config.toml"), "[chat]\nnote_view_tokens = 500\n").unwrap();
        assert_eq!(super::note_view_tokens_in(dir.path()).unwrap(), 500);
        std::fs::write(dir.path().join("config.toml"), "[chat]\nnote_view_tokens = 10\n").unwrap();
        assert!(
            super::note_view_tokens_in(dir.path())
                .unwrap_err()
                .to_string()
                .contains("give 200 or more")
        );
        let priced = prices("x", Some(2.0), Some(8.0), None).unwrap().unwrap();
        assert_eq!((priced.input, priced.output, priced.cached_input), (2.0, 8.0, None));
        assert_eq!(prices("x", None, None, None).unwrap(), None);
        for (input, output, cached) in [
            (Some(2.0), None, None),
            (None, None, Some(0.5)),
            (Some(-1.0), Some(1.0), None),
        ] {
            assert!(
                prices("x", input, output, cached).is_err(),
                "{input:?} {output:?} {cached:?}"
            );
        }
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
