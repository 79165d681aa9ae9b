//! The configuration file, `config.toml` in quire's configuration directory.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;

/// Everything `config.toml` may hold. Unknown keys are an error, so a typo does not go unnoticed.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    #[serde(default)]
    pub(crate) mcp: McpConfig,
    #[serde(default)]
    pub(crate) chat: ChatConfig,
    #[serde(default)]
    pub(crate) index: IndexConfig,
}

/// `[index]`: which embedder semantic search uses (the built-in fallback when none is set).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IndexConfig {
    /// A model of quire's catalog, installed with `quire model install` (written by `quire model use`). It wins over
    /// `model_dir` and `embed_url`.
    pub(crate) model: Option<String>,
    /// A local sentence-embedding model directory (config.json, tokenizer.json, model.safetensors); also
    /// `QUIRE_EMBED_MODEL`.
    pub(crate) model_dir: Option<std::path::PathBuf>,
    /// An OpenAI-compatible API base URL, such as `http://localhost:11434/v1`.
    pub(crate) embed_url: Option<String>,
    /// The embedding model's name there.
    pub(crate) embed_model: Option<String>,
    /// Its vector length (384 for all-MiniLM-L6-v2, 768 for nomic-embed-text, 1536 for text-embedding-3-small).
    pub(crate) embed_dimensions: Option<usize>,
    /// The API key, if the endpoint needs one.
    pub(crate) embed_api_key: Option<String>,
}

/// `[mcp]`: what `quire mcp` offers.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpConfig {
    #[serde(default)]
    pub(crate) read_only: bool,
    #[serde(default)]
    pub(crate) disabled_tools: Vec<String>,
    /// Notebooks (titles or paths) the client is limited to; empty for the whole workspace.
    #[serde(default)]
    pub(crate) notebooks: Vec<String>,
    /// Whether destructive tools (delete_note, …) ask the user through the client first.
    #[serde(default)]
    pub(crate) confirm_destructive: ConfirmSetting,
}

/// `[mcp] confirm_destructive`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ConfirmSetting {
    /// Ask through clients that can; run for the others (what goes goes to the trash or a revision).
    #[default]
    Ask,
    /// Ask through clients that can; refuse for the others.
    AskOrDeny,
    /// Never ask.
    Allow,
    /// Always refuse.
    Deny,
}

impl ConfirmSetting {
    pub(crate) fn policy(self) -> quire_mcp::ConfirmDestructive {
        match self {
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
pub(crate) struct ChatConfig {
    pub(crate) model: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    #[serde(default)]
    pub(crate) models: Vec<NamedModel>,
}

/// One `[[chat.models]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NamedModel {
    /// What the picker shows and `--model` accepts (default: the model itself).
    pub(crate) name: Option<String>,
    /// `provider:model`, as for `[chat] model`.
    pub(crate) model: String,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
}

pub(crate) fn config_dir() -> anyhow::Result<PathBuf> {
    let dir = dirs::config_dir().context("cannot find your configuration directory (set XDG_CONFIG_HOME)")?;
    Ok(dir.join("quire"))
}

pub(crate) fn read_config(dir: &Path) -> anyhow::Result<Config> {
    let path = dir.join("config.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).with_context(|| format!("cannot read {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Sets `[index] model` in config.toml (removes it with `None`), keeping the rest of the file as it was, comments
/// included. The file is replaced in one rename, and only with text that still reads as a valid configuration.
pub(crate) fn set_index_model(dir: &Path, model: Option<&str>) -> anyhow::Result<()> {
    let path = dir.join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("cannot read {}", path.display()))?;
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
    let text = doc.to_string();
    toml::from_str::<Config>(&text).with_context(|| format!("{} would not be valid", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temporary = dir.join(".config.toml.new");
    std::fs::write(&temporary, text).with_context(|| format!("cannot write {}", temporary.display()))?;
    std::fs::rename(&temporary, &path).with_context(|| format!("cannot write {}", path.display()))
}
