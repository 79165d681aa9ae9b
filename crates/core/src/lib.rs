//! quire-core: the storage of a quire workspace and the guards that protect it.
//!
//! A workspace is one SQLite file (WAL, foreign keys, migrations applied on open) holding notebooks, notes, tags,
//! attributes, attachments, revisions, an append-only change log, change sets and stored chats. All access goes
//! through synchronous closures: [`Workspace::read`] gets a [`Reader`], [`Workspace::write`] gets a [`Writer`]
//! inside one `BEGIN IMMEDIATE` transaction that an error or a panic rolls back. Nothing async can run inside.
//!
//! Every write names its [`Actor`]. For every actor but the user, the write methods themselves apply the guards
//! (the entity exists, is not a system entity, is not protected, the target is valid, the attribute is not
//! dangerous), so a caller cannot forget them; protected notes show their title but never their body or
//! attachments. Writes by non-user actors save a revision first, and each write is a change set that
//! [`Writer::revert_change_set`] undoes.
//!
//! [`Reader::search`] runs the query language that [`search_syntax!`] states in one sentence (written once, for
//! every help text).
//!
//! This crate depends on no other quire crate and knows nothing about tools, language models, MCP or HTTP.
//! It is the only crate that touches `rusqlite` and `r2d2`; their errors never leave it except wrapped in
//! [`Error::Database`].
//!
//! ```
//! use quire_core::{Actor, Error, NewNote, SearchOptions, Workspace};
//!
//! let ws = Workspace::open_in_memory()?;
//! let note = ws.write(&Actor::User, |w| {
//!     let note = w.create_note(NewNote::new("Diary", "private thoughts"))?;
//!     w.set_note_protected(&note.summary.id, true)?;
//!     Ok::<_, Error>(note)
//! })?;
//! let agent = Actor::Mcp { client: "inspector".into() };
//! let refused = ws.write(&agent, |w| w.trash_note(&note.summary.id));
//! assert_eq!(refused.unwrap_err().to_string(), "Note is protected and cannot be modified");
//! let hits = ws.read(&agent, |r| r.search("thoughts", SearchOptions::default()))?;
//! assert_eq!(hits.total, 0);
//! # Ok::<(), Error>(())
//! ```

pub mod automation_runs;
pub mod changes;
pub mod conflicts;
mod entity;
mod error;
mod files;
mod guard;
mod history;
pub mod ledger;
pub mod links;
pub mod markdown;
pub mod merge;
pub mod news;
pub mod pages;
pub mod plugin_calls;
mod protection;
pub mod query;
mod read;
pub mod replica;
pub mod review;
mod schema;
mod scope;
pub mod seal;
mod search;
mod semantic;
mod sql;
pub mod structure;
pub mod template;
#[cfg(feature = "testing")]
pub mod testing;
mod tree;
mod workspace;
mod write;

pub use entity::{
    Actor, AttachmentInfo, Attribute, AttributeKind, Change, ChangeSet, Chat, ChatMessage, ChatUsage, EntityKind,
    ExtractionCounts, Note, NoteSummary, Notebook, Operation, ROOT_NOTEBOOK_ID, Revision, Tag, Timestamp, TurnUsage,
    ValueType,
};
pub use error::{ChangedSince, DatabaseError, Error, Missing, Result, TitleTaken};
pub use guard::{MAX_ATTACHMENT_BYTES, MAX_BODY_BYTES, MAX_NAME_CHARS, MAX_TITLE_CHARS, is_dangerous_attribute};
pub use read::{NoteList, NoteOrder, NoteView, Page, PageOf, Reader};
pub use schema::SCHEMA_VERSION;
pub use scope::Scope;
pub use search::{Citation, SEARCH_SYNTAX, SearchHit, SearchOptions, parse_time};
pub use semantic::{
    Chunk, EmbedError, Embedder, HashedNgramEmbedder, IndexStatus, Indexer, Relevance, SEARCH_CATCH_UP, SemanticHit,
    SemanticQuery, SemanticTarget, chunk_note, chunk_note_for, content_words,
};
pub use tree::NotebookTree;
pub use workspace::Workspace;
pub use write::{
    DEFAULT_TEMPLATES_NOTEBOOK, FieldWritten, FromTemplate, ImportRecord, NewAttachment, NewNote, NewNotebook,
    NoteUpdate, NotebookPath, Opened, Period, PeriodicNote, PeriodicSettings, Relinked, RevertReport, SavedEdit,
    TYPING_SESSION_MS, TaskDone, TaskToggle, UserEdit, Writer, day_asked, import_note_hash, period_start,
    periodic_place,
};

/// Bytes in lower-case hex (ids, hashes, tokens, blobs in the change log).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|byte| {
            [
                DIGITS[usize::from(byte >> 4)] as char,
                DIGITS[usize::from(byte & 15)] as char,
            ]
        })
        .collect()
}
