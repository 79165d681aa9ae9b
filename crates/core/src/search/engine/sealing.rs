//! What the word index does when notes are sealed: it must not keep their words (see `crate::seal`).

use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use rusqlite::Connection;

use super::{Engine, FullText, Mark, Outcome, State, is_index_file, notes_at_most, take_folder_lock};

impl FullText {
    /// After sealing: the index must not keep the sealed words. Up to the size whole builds run in the foreground,
    /// it is built again now; above, its files are removed and the next search builds it (in the background, or
    /// FTS5 answers meanwhile). When another process holds it, nothing here: that process builds it again before
    /// its next search, since sealing changed the file's key.
    pub(crate) fn forget_sealed(&self, conn: &Connection) -> Outcome<()> {
        if self.is_building() {
            // A build in the background reads the notes as sealed already (it began after this write's commit
            // or will catch up from the new key).
            return Ok(());
        }
        if notes_at_most(conn)? <= self.background_above.load(Ordering::Relaxed) {
            return self.rebuild(conn).map(drop);
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let engine = match std::mem::replace(&mut *state, State::Closed) {
            State::Open(engine) => engine,
            _ => Box::new(self.open()?),
        };
        let Some(dir) = &self.dir else { return Ok(()) };
        // Dropping the engine closes tantivy's files; quire's lock on the folder is held until the files are gone.
        let Engine {
            lock, reader, writer, ..
        } = *engine;
        drop(writer);
        drop(reader);
        for entry in std::fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            if path.is_file() && is_index_file(&path) {
                std::fs::remove_file(&path)?;
            }
        }
        drop(lock);
        Ok(())
    }

    /// At open, for a workspace whose notes may be sealed: an index made for another key of the file (a process
    /// sealed notes, changing the key, and was killed before it cleared the index) may hold sealed words; its files
    /// are removed (the next search builds it). Left alone when another process holds the folder.
    pub(crate) fn discard_if_stale(&self, key: &str) -> Outcome<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let Ok(meta) = std::fs::read_to_string(dir.join("meta.json")) else {
            return Ok(());
        };
        let stored = serde_json::from_str::<serde_json::Value>(&meta)
            .ok()
            .and_then(|m| m.get("payload")?.as_str().map(str::to_owned))
            .and_then(|p| serde_json::from_str::<Mark>(&p).ok())
            .map(|m| m.key);
        if stored.as_deref() == Some(key) {
            return Ok(());
        }
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*state, State::Open(_)) {
            return Ok(());
        }
        let Some(_lock) = take_folder_lock(dir)? else {
            return Ok(());
        };
        for entry in std::fs::read_dir(dir)?.flatten() {
            let path = entry.path();
            if path.is_file() && is_index_file(&path) {
                std::fs::remove_file(&path)?;
            }
        }
        drop(state);
        Ok(())
    }
}
