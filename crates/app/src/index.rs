//! `quire index`: the embedder from the configuration, status, and rebuilding with a progress bar.

use std::sync::Arc;

use quire_core::{Embedder, Workspace};

use crate::config::IndexConfig;
use crate::output::Output;

/// The workspace with the embedder the configuration names (the built-in fallback when none is set), loaded lazily:
/// on the first semantic search or indexing round, so a model that takes a moment to load never delays a command,
/// and a wrong model setting fails only search by meaning (which then says why), not the command.
pub(crate) fn with_configured_embedder(ws: Workspace, config: &IndexConfig) -> Workspace {
    let model_dir = std::env::var_os("QUIRE_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .or(config.model_dir.clone());
    if let Some(dir) = model_dir {
        return ws.with_embedder_loader(move || {
            let model = quire_embed::LocalEmbedder::load(&dir).map_err(|e| {
                format!("{e}; fix QUIRE_EMBED_MODEL or [index] model_dir, or unset them to use the built-in fallback")
            })?;
            Ok(Arc::new(model) as Arc<dyn Embedder>)
        });
    }
    match (&config.embed_url, &config.embed_model) {
        (None, None) => ws,
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
    }
}

pub(crate) fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    let status = match ws.index_status() {
        Ok(status) => status,
        // With --json, main prints the error as `{"error": ...}`.
        Err(quire_core::Error::EmbedderUnavailable(reason)) => {
            anyhow::bail!("search by meaning is unavailable: {reason}");
        }
        Err(e) => return Err(e.into()),
    };
    if out.json {
        return crate::output::json_value(&serde_json::to_value(&status)?);
    }
    crate::output::text(&format!(
        "embedder: {}\nindexed notes: {} ({} chunks)\nwaiting: {} changed notes\n",
        status.description, status.indexed_notes, status.chunks, status.pending_changes
    ))
}

pub(crate) fn rebuild(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
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
    status(out, ws)
}
