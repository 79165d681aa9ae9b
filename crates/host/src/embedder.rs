//! The embedder choice: which sentence model search by meaning uses, by the configuration's precedence
//! (`QUIRE_EMBED_MODEL`, then `[index] model`, `[index] model_dir`, `[index] embed_url`, then the built-in
//! fallback), where catalog models are installed, and the workspace with that embedder loaded lazily.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use quire_core::{Embedder, Workspace};
use quire_embed::{CatalogModel, ModelStore, catalog, find_model};

use crate::settings::IndexConfig;

/// Where installed models live.
pub fn store() -> anyhow::Result<ModelStore> {
    let dir = dirs::data_dir().context("cannot find your data directory (set XDG_DATA_HOME)")?;
    Ok(ModelStore::new(dir.join("quire").join("models")))
}

/// What search by meaning uses, by the configuration's precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Active {
    /// `QUIRE_EMBED_MODEL`: a model folder.
    Env(PathBuf),
    /// `[index] model`: a catalog model, installed or not.
    Catalog(String),
    /// `[index] model_dir`.
    Folder(PathBuf),
    /// `[index] embed_url` and `embed_model`.
    Http(String),
    /// Nothing: the built-in hashed fallback.
    Builtin,
}

impl Active {
    /// The embedder `config` (and the environment) name.
    pub fn of(config: &IndexConfig) -> Active {
        Active::of_in(config, |name| std::env::var(name).ok())
    }

    /// [`Active::of`] with the environment `env` gives: `QUIRE_EMBED_MODEL`, then `[index] model`, `model_dir`,
    /// `embed_url` (with `embed_model`), then the built-in fallback.
    pub fn of_in(config: &IndexConfig, env: impl Fn(&str) -> Option<String>) -> Active {
        if let Some(dir) = env("QUIRE_EMBED_MODEL").filter(|v| !v.is_empty()) {
            return Active::Env(dir.into());
        }
        if let Some(name) = &config.model {
            return Active::Catalog(name.clone());
        }
        if let Some(dir) = &config.model_dir {
            return Active::Folder(dir.clone());
        }
        match (&config.embed_url, &config.embed_model) {
            (None, None) => Active::Builtin,
            (url, model) => Active::Http(format!(
                "{} at {}",
                model.as_deref().unwrap_or("?"),
                url.as_deref().unwrap_or("?")
            )),
        }
    }

    /// The catalog name, when a catalog model is active.
    pub fn catalog_name(&self) -> Option<&str> {
        match self {
            Active::Catalog(name) => Some(find_model(name).map_or(name.as_str(), |m| m.name)),
            _ => None,
        }
    }

    /// The choice in words, with the setting that made it.
    pub fn describe(&self) -> String {
        match self {
            Active::Env(dir) => format!("the model folder {} (QUIRE_EMBED_MODEL)", dir.display()),
            Active::Catalog(name) => format!("{name} ([index] model)"),
            Active::Folder(dir) => format!("the model folder {} ([index] model_dir)", dir.display()),
            Active::Http(what) => format!("{what} ([index] embed_url)"),
            Active::Builtin => "the built-in fallback, which matches words rather than meaning".to_owned(),
        }
    }
}

/// A model of quire's catalog by name, or what the catalog knows.
pub fn catalog_model(name: &str) -> anyhow::Result<&'static CatalogModel> {
    find_model(name).with_context(|| {
        let known: Vec<&str> = catalog().iter().map(|m| m.name).collect();
        format!(
            "there is no model called {name:?} in quire's catalog (it knows: {}; see quire model list)",
            known.join(", ")
        )
    })
}

/// The workspace with the embedder the configuration names (the built-in fallback when none is set), loaded lazily:
/// on the first semantic search or indexing round, so a model that takes a moment to load never delays a command,
/// and a wrong model setting fails only search by meaning (which then says why), not the command.
pub fn with_configured_embedder(ws: Workspace, config: &IndexConfig) -> Workspace {
    let local = |dir: std::path::PathBuf, fix: &'static str| {
        move || {
            let model = quire_embed::LocalEmbedder::load(&dir).map_err(|e| format!("{e}; {fix}"))?;
            Ok(Arc::new(model) as Arc<dyn Embedder>)
        }
    };
    match Active::of(config) {
        Active::Env(dir) => ws.with_embedder_loader(local(
            dir,
            "fix QUIRE_EMBED_MODEL, or unset it to use the configured model",
        )),
        Active::Folder(dir) => ws.with_embedder_loader(local(
            dir,
            "fix [index] model_dir, or remove it to use the built-in fallback",
        )),
        Active::Catalog(name) => {
            let dir = catalog_model(&name).and_then(|model| {
                let store = store()?;
                if store.is_installed(model) {
                    Ok(store.dir(model))
                } else {
                    anyhow::bail!(
                        "the model {} ([index] model) is not installed: run `quire model install {}`",
                        model.name,
                        model.name
                    )
                }
            });
            match dir {
                Ok(dir) => ws.with_embedder_loader(local(
                    dir,
                    "install it again with `quire model install`, or choose another with `quire model use`",
                )),
                Err(e) => {
                    let reason = e.to_string();
                    ws.with_embedder_loader(move || Err(reason.into()))
                }
            }
        }
        Active::Builtin => ws,
        Active::Http(_) => match (&config.embed_url, &config.embed_model) {
            (Some(url), Some(model)) => {
                let dimensions = config.embed_dimensions;
                let client = quire_embed::ClientConfig::new(url.clone(), model.clone(), config.embed_api_key.clone());
                ws.with_embedder_loader(move || {
                    let dimensions = dimensions.ok_or_else(|| {
                        "[index] embed_dimensions is needed with embed_url (384 for all-MiniLM-L6-v2)".to_owned()
                    })?;
                    Ok(Arc::new(quire_embed::HttpEmbedder::new(client, dimensions)) as Arc<dyn Embedder>)
                })
            }
            _ => ws.with_embedder_loader(|| Err("[index] needs both embed_url and embed_model".into())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedder_comes_from_the_environment_then_each_setting_in_turn() {
        let none = |_: &str| None;
        let mut config = IndexConfig::default();
        assert_eq!(Active::of_in(&config, none), Active::Builtin);
        config.embed_url = Some("http://embed".into());
        config.embed_model = Some("minilm".into());
        assert_eq!(
            Active::of_in(&config, none),
            Active::Http("minilm at http://embed".into())
        );
        config.model_dir = Some(PathBuf::from("/models/mine"));
        assert_eq!(Active::of_in(&config, none), Active::Folder("/models/mine".into()));
        config.model = Some("all-MiniLM-L6-v2".into());
        assert_eq!(Active::of_in(&config, none), Active::Catalog("all-MiniLM-L6-v2".into()));
        let env = |name: &str| (name == "QUIRE_EMBED_MODEL").then(|| "/from/env".to_owned());
        assert_eq!(Active::of_in(&config, env), Active::Env("/from/env".into()));
        let empty = |_: &str| Some(String::new());
        assert_eq!(
            Active::of_in(&config, empty),
            Active::Catalog("all-MiniLM-L6-v2".into()),
            "an empty variable is unset"
        );
    }
}
