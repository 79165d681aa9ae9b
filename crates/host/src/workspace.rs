//! Opening the workspace a command works on: the one named, or the default one in the user's data directory
//! (created with a welcome note the first time), opened the way the command needs it.

use std::path::PathBuf;

use anyhow::Context;
use quire_core::{Actor, NewNote, Workspace};

/// The default workspace's first note.
const WELCOME: &str = include_str!("../assets/welcome.md");

/// How a command wants its workspace opened.
#[derive(Debug, Clone, Copy, Default)]
pub struct Opening {
    /// Build a large word-search index in the background: only the long-lived commands (servers, chat) do. A
    /// command that exits before such a build could finish is answered by FTS5.
    pub background_index: bool,
    /// Load the configured embedder: only the commands that embed text do (a local model takes a moment to load,
    /// and a wrong model setting must not stop `note add`).
    pub embeds: bool,
}

/// Opens the workspace at `path`, or the default one (`QUIRE_WORKSPACE` is the command line's to read), as `how`
/// says. A default workspace that does not exist yet is created with a welcome note.
pub fn open(path: Option<PathBuf>, how: Opening) -> anyhow::Result<Workspace> {
    let (path, is_default) = match path {
        Some(path) => (path, false),
        None => {
            let dir = dirs::data_dir()
                .context("cannot find your data directory; pass --workspace PATH or set QUIRE_WORKSPACE")?;
            (dir.join("quire").join("workspace.quire"), true)
        }
    };
    let is_new = !path.exists();
    let ws = Workspace::open(&path)?;
    if is_new {
        tracing::info!(path = %path.display(), "created a new workspace");
        if is_default {
            ws.write(&Actor::User, |w| {
                w.create_note(NewNote {
                    tags: vec!["quire".into()],
                    ..NewNote::new("Welcome to quire", WELCOME)
                })
            })?;
        }
    }
    if !how.background_index {
        ws.set_search_index_builds_in_background(false);
    }
    // A configuration quire cannot read is said by the commands that need it; the ledger then keeps its default.
    if let Ok(Some(days)) = crate::settings::config_dir()
        .and_then(|dir| crate::settings::read_config(&dir))
        .map(|config| config.ledger.retention_days)
    {
        ws.set_ledger_retention(days);
    }
    Ok(if how.embeds {
        crate::embedder::with_configured_embedder(
            ws,
            &crate::settings::read_config(&crate::settings::config_dir()?)?.index,
        )
    } else {
        ws
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_workspace_is_created_empty_and_opened_again_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.quire");
        let ws = open(Some(path.clone()), Opening::default()).unwrap();
        let count = |ws: &Workspace| {
            ws.read(&Actor::User, |r| r.all_notes(quire_core::Page::first(10)))
                .unwrap()
                .total
        };
        assert_eq!(count(&ws), 0, "only the default workspace gets the welcome note");
        ws.write(&Actor::User, |w| w.create_note(NewNote::new("Kept", "text")))
            .unwrap();
        drop(ws);
        let again = open(Some(path), Opening::default()).unwrap();
        assert_eq!(count(&again), 1);
    }
}
