//! `quire index`: the embedder from the configuration, status, and rebuilding with a progress bar.

use std::sync::Arc;

use anyhow::Context;
use quire_core::Workspace;

use crate::config::IndexConfig;
use crate::output::Output;

/// The workspace with the embedder the configuration names (the built-in fallback when none is set).
pub(crate) fn with_configured_embedder(ws: Workspace, config: &IndexConfig) -> anyhow::Result<Workspace> {
    let model_dir = std::env::var_os("QUIRE_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .or(config.model_dir.clone());
    if let Some(dir) = model_dir {
        let model = quire_agent::LocalEmbedder::load(&dir)
            .map_err(|e| anyhow::anyhow!("cannot load the embedding model in {}: {e}", dir.display()))?;
        return Ok(ws.with_embedder(Arc::new(model)));
    }
    match (&config.embed_url, &config.embed_model) {
        (None, None) => Ok(ws),
        (Some(url), Some(model)) => {
            let dimensions = config
                .embed_dimensions
                .context("[index] embed_dimensions is needed with embed_url (384 for all-MiniLM-L6-v2)")?;
            let client = quire_agent::ClientConfig::new(url.clone(), model.clone(), config.embed_api_key.clone());
            Ok(ws.with_embedder(Arc::new(quire_agent::HttpEmbedder::new(client, dimensions))))
        }
        _ => anyhow::bail!("[index] needs both embed_url and embed_model"),
    }
}

pub(crate) fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    let status = ws.index_status()?;
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
