//! The write side: [`Writer`], whose every method applies the guards for non-user actors and logs the change.

mod attachments;
mod attributes;
mod chats;
mod edit;
mod fields;
mod guards;
mod import;
mod machinery;
mod notebooks;
mod notes;
pub use edit::{SavedEdit, TYPING_SESSION_MS, UserEdit};
pub use fields::FieldWritten;
pub use import::{ImportRecord, import_note_hash};
pub use notebooks::NotebookPath;
pub use notes::Relinked;
mod periodic;
mod revert;
mod review;
mod revisions;
mod seal;
mod synced;
mod tags;
mod tasks;
pub use periodic::{
    DEFAULT_TEMPLATES_NOTEBOOK, FromTemplate, Opened, Period, PeriodicNote, PeriodicSettings, day_asked, period_start,
    periodic_place,
};
pub use tasks::{TaskDone, TaskToggle};

use std::ops::Deref;

use serde::{Deserialize, Serialize};

use crate::entity::{Actor, EntityKind, Timestamp};
use crate::error::{Error, Result};
use crate::read::Reader;

/// A bulk write's page cache (see [`Writer::defer_search_index`]): the indexes an import of 10,000 notes writes
/// into at random places outgrow 32 MiB, and each page read back cost a system call (10-15% of the import).
/// Only for that transaction; the cache is set back after it.
pub(crate) const BULK_CACHE_KIB: i64 = -64 * 1024;

/// The most deferred full-text entries written by one statement (see `flush_deferred_search`)...
const SEARCH_ENTRIES_PER_STATEMENT: usize = 2_000;
/// ... and the most text they hold: what SQLite keeps in memory while the statement runs follows its text (75 MB
/// for 2,000 notes of 8 KB), and an import's memory follows its largest note, not the export (issue 51).
const SEARCH_BYTES_PER_STATEMENT: usize = 1 << 20;

/// What a new note holds. Build it with [`NewNote::new`] and adjust the public fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewNote {
    /// The title (one line, not empty).
    pub title: String,
    /// The Markdown body.
    pub body: String,
    /// The notebook to create it in; `None` means the root notebook.
    pub notebook_id: Option<String>,
    /// Whether it is a to-do.
    pub is_todo: bool,
    /// Tags to attach, created when missing.
    pub tags: Vec<String>,
    /// The creation time to record (for imports); `None` means now.
    pub created: Option<Timestamp>,
    /// The update time to record (for imports); `None` means the creation time.
    pub updated: Option<Timestamp>,
}

impl NewNote {
    /// A plain note with a title and a body, in the root notebook.
    pub fn new(title: impl Into<String>, body: impl Into<String>) -> NewNote {
        NewNote {
            title: title.into(),
            body: body.into(),
            ..NewNote::default()
        }
    }
}

/// Changes to a note; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoteUpdate {
    /// A new title.
    pub title: Option<String>,
    /// A new body, replacing the whole body.
    pub body: Option<String>,
    /// Make it a to-do or a plain note.
    pub is_todo: Option<bool>,
    /// Mark the to-do completed (at a time) or not completed (`Some(None)`).
    pub todo_completed: Option<Option<Timestamp>>,
}

/// What a new notebook holds.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewNotebook {
    /// The title (one line, not empty).
    pub title: String,
    /// The parent notebook; `None` means the root notebook.
    pub parent_id: Option<String>,
    /// An optional icon.
    pub icon: Option<String>,
}

/// What a new attachment holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewAttachment {
    /// Its title, usually the file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// The bytes.
    pub data: Vec<u8>,
    /// Text extracted from it, searched with the note.
    pub text: Option<String>,
}

/// What reverting a change set did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevertReport {
    /// The change set that was reverted.
    pub reverted_change_set_id: String,
    /// How many of its changes were undone.
    pub undone_changes: u64,
    /// The change set that holds the revert itself (so a revert can be reverted).
    pub change_set_id: Option<String>,
}

/// A view of one `BEGIN IMMEDIATE` transaction on behalf of one actor.
///
/// Every method checks, for every actor but the user and in this order: the entity exists, it is not a system
/// entity, it is not protected, the target is valid, the attribute is not dangerous. Then it writes, records the
/// change in the change log (one change set per `write` call, or per agent turn), saves a revision before a
/// non-user actor changes a note's title or body, and keeps the search index in step.
/// It dereferences to a [`Reader`] that sees the transaction's own writes.
pub struct Writer<'a> {
    reader: Reader<'a>,
    change_set: Option<String>,
    /// A note open in the user's editor: its title and body change only through edits the user accepts.
    in_editor: Option<String>,
    now: Timestamp,
    /// Notes whose full-text entry is written when the transaction is about to commit rather than at each write
    /// (see [`Writer::defer_search_index`]).
    deferred_search: std::cell::RefCell<Option<std::collections::BTreeSet<String>>>,
    /// The workspace's sealer, read once per write: `None` when no passphrase is set.
    sealer: std::cell::OnceCell<Option<crate::seal::Sealer>>,
    sealed_something: std::cell::Cell<bool>,
    /// A note whose words were indexed was sealed: the indexes are cleared of them before commit.
    purge_words: std::cell::Cell<bool>,
    /// Notes sealed by this write: tool results that showed them are taken out of chats before it commits.
    sealed_notes: std::cell::RefCell<std::collections::BTreeSet<String>>,
    /// Which note each attachment ever named in the change log belongs to (read once per write, when sealing;
    /// forgotten when an attachment changes).
    attachment_owners: std::cell::RefCell<Option<std::collections::HashMap<String, Vec<String>>>>,
}

impl<'a> Deref for Writer<'a> {
    type Target = Reader<'a>;

    fn deref(&self) -> &Reader<'a> {
        &self.reader
    }
}

impl<'a> Writer<'a> {
    /// This writer's reads recorded for the read ledger (a staged client's read runs on a writer).
    pub(crate) fn record_reads(&mut self) {
        self.reader.ledger = Some(std::cell::RefCell::default());
    }

    pub(crate) fn new(
        conn: &'a rusqlite::Connection,
        actor: &'a Actor,
        embedder: std::sync::Arc<crate::semantic::EmbedderSlot>,
        vectors: std::sync::Arc<crate::semantic::VectorCache>,
        scope: Option<&'a crate::Scope>,
        key: Option<&'a crate::seal::Unlocked>,
    ) -> Writer<'a> {
        Writer {
            reader: Reader::new(conn, actor, embedder, vectors, scope).with_key(key),
            change_set: None,
            in_editor: None,
            now: Timestamp::now(),
            deferred_search: std::cell::RefCell::new(None),
            sealer: std::cell::OnceCell::new(),
            sealed_something: std::cell::Cell::new(false),
            purge_words: std::cell::Cell::new(false),
            sealed_notes: std::cell::RefCell::new(std::collections::BTreeSet::new()),
            attachment_owners: std::cell::RefCell::new(None),
        }
    }

    /// The time this write is stamped with.
    pub(crate) fn now(&self) -> Timestamp {
        self.now
    }

    /// Whether this write sealed content that was plain before: the workspace then checkpoints its WAL and clears
    /// the old words out of the search index once it commits.
    pub(crate) fn sealed_something(&self) -> bool {
        self.sealed_something.get()
    }

    /// Writes the full-text entries of the notes this transaction changes once, just before it commits, rather
    /// than after each write: for a write of thousands of notes (an import). The full-text index flushes its
    /// pending entries at every statement that may need undoing, so entries written one note at a time each
    /// became a segment of its own to merge. The notes' links are extracted and resolved then too, once every note
    /// they may name is written. Searching through this writer does not see the pending entries, nor backlinks
    /// the pending links.
    pub fn defer_search_index(&mut self) {
        if self.deferred_search.get_mut().is_none() {
            // A bulk write: a larger page cache for this transaction (set back by `Workspace::write`). Failing to
            // get it only makes the write slower.
            let _ = self.conn.pragma_update(None, "cache_size", BULK_CACHE_KIB);
        }
        self.deferred_search.get_mut().get_or_insert_with(Default::default);
    }

    /// Whether this write deferred its full-text entries (a bulk write, see [`Writer::defer_search_index`]).
    pub(crate) fn is_bulk(&self) -> bool {
        self.deferred_search.borrow().is_some()
    }

    /// What a write does last, before it commits (called by [`crate::Workspace::write`]): the deferred full-text
    /// entries, then what sealing leaves to the end (chats' tool results, the words in the indexes).
    pub(crate) fn before_commit(&mut self) -> Result<()> {
        self.flush_deferred_search()?;
        self.drop_protected_reviews()?;
        self.remove_chats_about_sealed()?;
        self.purge_sealed_words()
    }

    /// Writes the deferred full-text entries.
    fn flush_deferred_search(&mut self) -> Result<()> {
        let Some(notes) = self.deferred_search.get_mut().take() else {
            return Ok(());
        };
        crate::links::refresh_many(self.conn, &notes)?;
        // In rowid order: the index flushes its pending entries whenever a rowid is not above the last one, and
        // in the order of the ids (random) an import of 10,000 notes made thousands of segments to merge (three
        // times slower). A few statements for all of them: the index flushes its pending entries at each
        // statement, so one per note would still make a segment per note; but one statement for all kept every
        // page it changed in its statement journal until it ended (150 MB of an import of 50,000 notes).
        let ids = serde_json::to_string(&notes).map_err(|e| Error::invalid(e.to_string()))?;
        let ordered: Vec<(String, usize)> = {
            let mut stmt = self.conn.prepare(
                "SELECT id, length(CAST(title AS BLOB)) + length(CAST(body AS BLOB)) + coalesce((SELECT \
                 sum(length(CAST(a.text AS BLOB))) FROM attachments a WHERE a.note_id = notes.id), 0) FROM notes \
                 WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY seq",
            )?;
            let rows = stmt.query_map([&ids], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as usize)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut chunks: Vec<Vec<&str>> = vec![Vec::new()];
        let mut bytes = 0;
        for (id, size) in &ordered {
            let last = chunks.last().map_or(0, Vec::len);
            if last > 0 && (last >= SEARCH_ENTRIES_PER_STATEMENT || bytes + size > SEARCH_BYTES_PER_STATEMENT) {
                chunks.push(Vec::new());
                bytes = 0;
            }
            bytes += size;
            if let Some(chunk) = chunks.last_mut() {
                chunk.push(id);
            }
        }
        for chunk in chunks.iter().filter(|c| !c.is_empty()) {
            let ids = serde_json::to_string(chunk).map_err(|e| Error::invalid(e.to_string()))?;
            self.conn.execute(
                "DELETE FROM notes_fts WHERE rowid IN \
                 (SELECT n.seq FROM notes n WHERE n.id IN (SELECT value FROM json_each(?1)))",
                [&ids],
            )?;
            // As `write_search_entry`: a protected note (or one in a protected notebook) is found by its title only.
            self.conn.execute(
                "WITH RECURSIVE p(id) AS (SELECT id FROM notebooks WHERE is_protected = 1 \
                 UNION SELECT nb.id FROM notebooks nb JOIN p ON nb.parent_id = p.id) \
                 INSERT INTO notes_fts (rowid, title, body, tags, attachments) \
                 SELECT n.seq, n.title, \
                 CASE WHEN hidden THEN '' ELSE n.body END, \
                 CASE WHEN hidden THEN '' ELSE (SELECT coalesce(group_concat(t.name, ' '), '') \
                   FROM note_tags nt JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = n.id) END, \
                 CASE WHEN hidden THEN '' ELSE (SELECT coalesce(group_concat(text, ' '), '') \
                   FROM attachments a WHERE a.note_id = n.id) END \
                 FROM (SELECT n.*, (n.is_protected OR n.notebook_id IN (SELECT id FROM p)) AS hidden FROM notes n \
                   WHERE n.id IN (SELECT value FROM json_each(?1))) n \
                 ORDER BY n.seq",
                [&ids],
            )?;
            self.conn.execute(
                "INSERT INTO search_log (note_seq) SELECT seq FROM notes \
                 WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY seq",
                [&ids],
            )?;
        }
        // The newest id from the log itself: after an insert of no rows, `last_insert_rowid` is another table's.
        let newest: i64 = self
            .conn
            .query_row("SELECT coalesce(max(id), 0) FROM search_log", [], |r| r.get(0))?;
        crate::search::forget_old_log(self.conn, newest)?;
        Ok(())
    }

    /// The change set this write records into, once it has written something.
    pub fn change_set_id(&self) -> Option<&str> {
        self.change_set.as_deref()
    }

    /// Marks a note as open in the user's editor for the rest of this transaction: a non-user actor's change to its
    /// title or body is then refused with [`Error::OpenInEditor`] (tags, attributes, moves and the trash are not
    /// affected). The agent sets it for the focused note of a turn, so every change to that note's text is an edit
    /// the user previews, and the editor's copy and the store never diverge.
    pub fn set_open_in_editor(&mut self, note_id: &str) {
        self.in_editor = Some(note_id.to_owned());
    }

    /// Records the rest of this transaction's changes in the change set `id`, which must exist and not be reverted.
    /// A non-user actor may only continue a change set of its own (a plugin call whose writes span several
    /// transactions); the user may join any (accepting the edits an agent turn proposed puts them in its change set,
    /// so undoing the turn undoes them too).
    pub fn join_change_set(&mut self, id: &str) -> Result<()> {
        let set = self.change_set(id)?;
        if set.reverted.is_some() {
            return Err(Error::Conflict("This change set was already reverted.".into()));
        }
        if !self.actor.is_user() && set.actor != *self.actor {
            return Err(Error::UserOnly("record changes in another actor's change set"));
        }
        self.change_set = Some(set.id);
        Ok(())
    }

    /// Records the rest of this transaction's changes in the open change set of an agent turn, creating it (in the
    /// turn's name) if the turn wrote nothing yet, so that undoing (or cancelling) the turn takes them back too. The
    /// user does this when accepting the edits a turn proposed; a plugin tool the turn called does it for its own
    /// writes (they stay recorded as the plugin's). Returns the change set's id.
    pub fn join_turn(&mut self, turn: &Actor) -> Result<String> {
        if !matches!(self.actor, Actor::User | Actor::Plugin { .. }) {
            return Err(Error::UserOnly("record changes in an agent turn"));
        }
        if turn.grouping_key().is_none() {
            return Err(Error::invalid(
                "Only an agent turn groups its writes in one change set.",
            ));
        }
        let id = self.open_change_set(turn)?;
        self.change_set = Some(id.clone());
        Ok(id)
    }
}

fn is_system_id(id: &str) -> bool {
    id.starts_with('_')
}

/// The note an entity belongs to, if it belongs to one: for a note itself, a tag link, an attribute, an attachment.
pub(crate) fn note_of(kind: EntityKind, entity_id: &str, row: Option<&serde_json::Value>) -> Option<String> {
    match kind {
        EntityKind::Note => Some(entity_id.to_owned()),
        EntityKind::NoteTag => entity_id.split('/').next().map(str::to_owned),
        EntityKind::Attribute | EntityKind::Attachment => row
            .and_then(|r| r.get("note_id"))
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        _ => None,
    }
}
