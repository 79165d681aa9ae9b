//! `quire index`: the embedder from the configuration, status, and rebuilding with a progress bar.

use quire_core::Workspace;

use crate::output::Output;
use quire_host::embedder::Active;

pub(crate) fn status(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    show_status(out, ws, None)
}

/// The status; after a rebuild, with how many notes the word-search index holds.
fn show_status(out: &Output, ws: &Workspace, words: Option<u64>) -> anyhow::Result<()> {
    let active = Active::of(&quire_host::settings::read_config(&quire_host::settings::config_dir()?)?.index);
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
