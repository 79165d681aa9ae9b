//! `quire index`: the embedder from the configuration, status, and rebuilding with a progress bar.

use std::sync::Arc;

use quire_core::{Embedder, Workspace};

use crate::model::Active;
use crate::output::Output;
use crate::settings::IndexConfig;

/// The workspace with the embedder the configuration names (the built-in fallback when none is set), loaded lazily:
/// on the first semantic search or indexing round, so a model that takes a moment to load never delays a command,
/// and a wrong model setting fails only search by meaning (which then says why), not the command.
pub(crate) fn with_configured_embedder(ws: Workspace, config: &IndexConfig) -> Workspace {
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
            let dir = crate::model::catalog_model(&name).and_then(|model| {
                let store = crate::model::store()?;
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

pub(crate) fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    show_status(out, ws, None)
}

/// The status; after a rebuild, with how many notes the word-search index holds.
fn show_status(out: &Output, ws: &Workspace, words: Option<u64>) -> anyhow::Result<()> {
    let active = Active::of(&crate::settings::read_config(&crate::settings::config_dir()?)?.index);
    let status = match ws.index_status() {
        Ok(status) => status,
        // With --json, main prints the error as `{"error": ...}`.
        Err(quire_core::Error::EmbedderUnavailable(reason)) => {
            anyhow::bail!("search by meaning is unavailable: {reason}");
        }
        Err(e) => return Err(e.into()),
    };
    if out.json {
        let mut value = serde_json::to_value(&status)?;
        value["model"] = serde_json::json!(active.catalog_name());
        value["uses"] = serde_json::json!(active.describe());
        if let Some(words) = words {
            value["word_index_notes"] = serde_json::json!(words);
        }
        return crate::output::json_value(&value);
    }
    let mut text = words.map_or_else(String::new, |n| format!("word search index: {n} notes\n"));
    text += &format!(
        "search by meaning uses {}
embedder: {}
indexed notes: {} ({} chunks)
waiting: {} changed notes
",
        active.describe(),
        status.description,
        status.indexed_notes,
        status.chunks,
        status.pending_changes
    );
    if active == Active::Builtin {
        text.push_str(&format!(
            "\nfor search that finds paraphrases, install a sentence model ({}, {} MiB, runs on this computer): \
             quire model install\n",
            quire_embed::models::DEFAULT_MODEL,
            quire_embed::find_model(quire_embed::models::DEFAULT_MODEL).map_or(0, |m| m.size() >> 20)
        ));
    }
    crate::output::text(&text)
}

pub(crate) fn rebuild(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    // The word-search index first (seconds); a failure there (another quire process holds it) does not stop the
    // index for search by meaning.
    let words = match ws.rebuild_search_index() {
        Ok(n) => Some(n),
        Err(e) => {
            eprintln!("warning: the word-search index was not rebuilt: {e}");
            None
        }
    };
    ws.reset_index()?;
    let total = ws.index_status()?.pending_changes;
    let bar = if out.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(total)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} notes, {per_sec}, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    loop {
        let done = ws.index_pending(64)?;
        bar.inc(done as u64);
        if done == 0 {
            break;
        }
    }
    bar.finish_and_clear();
    show_status(out, ws, words)
}
