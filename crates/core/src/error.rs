//! The one error type of quire-core, with the fixed messages the guards produce.

use std::fmt;

/// Everything that can go wrong in quire-core.
///
/// The `Display` text of the guard variants is shown to models and users as is, so it is a full sentence
/// and stays fixed: tests and snapshots above core compare it literally.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The entity does not exist (or, for a non-user actor, is not visible).
    #[error("{} not found", .0.label())]
    NotFound(Missing),
    /// The entity is a system entity that cannot be changed this way.
    #[error("Cannot {action} system notebooks")]
    System {
        /// What was refused: `delete`, `rename`, `move`, `protect`, ...
        action: &'static str,
    },
    /// The note (or notebook) is protected and a non-user actor tried to change it.
    #[error("{} is protected and cannot be modified", .0.label())]
    Protected(Missing),
    /// A non-user actor tried to change the title or text of the note open in the user's editor.
    #[error(
        "This note is open in the user's editor, so its title and text cannot be written directly. Propose the change \
         with the tools that edit the open note; the user reviews it before it is saved."
    )]
    OpenInEditor,
    /// A non-user actor tried to read the content of a protected note.
    #[error("Note is protected; its content cannot be read")]
    ProtectedContent,
    /// The note is sealed and the workspace is locked: reading or changing its content needs the passphrase
    /// ([`Workspace::unlock`](crate::Workspace::unlock)).
    #[error("Note '{title}' is sealed: unlock the workspace with its passphrase to read or change it")]
    Locked {
        /// The note.
        note_id: String,
        /// Its title (titles are not sealed).
        title: String,
    },
    /// A sealed piece of a note failed its check: it was changed or damaged outside quire, or moved from another
    /// note. Nothing of it was read.
    #[error(
        "The sealed content of note {note_id} ({what}) failed its check: it was changed or damaged outside quire. \
         Nothing of it was read."
    )]
    SealBroken {
        /// The note.
        note_id: String,
        /// Which piece: "its body", "revision 12", "attachment x.pdf", ...
        what: String,
    },
    /// The passphrase does not open the workspace key. Nothing changed.
    #[error("Wrong passphrase. Nothing changed.")]
    WrongPassphrase,
    /// The recovery key does not open the workspace key. Nothing changed.
    #[error("That recovery key does not open this workspace. Nothing changed.")]
    WrongRecoveryKey,
    /// No passphrase is set on this workspace, so nothing is sealed and there is nothing to unlock.
    #[error("No passphrase is set on this workspace: protected notes are not sealed (`quire lock init` seals them).")]
    NoLock,
    /// The target of a write is not valid: a missing or protected parent, a cycle, a missing relation target.
    #[error("{0}")]
    InvalidTarget(String),
    /// The attribute name changes behaviour and only the user may set it.
    #[error("Attribute '{0}' is potentially dangerous and cannot be set")]
    DangerousAttribute(String),
    /// The operation is reserved for the user.
    #[error("Only the user can {0}")]
    UserOnly(&'static str),
    /// A handle limited to some notebooks ([`crate::Scope`]) tried to reach or create something outside them, or to
    /// move or delete one of the notebooks it was given.
    #[error("{0}")]
    OutsideScope(String),
    /// An argument is not valid; the message says which and why.
    #[error("{0}")]
    Invalid(String),
    /// A search query could not be understood; the message says where and how to fix it.
    #[error("{0}")]
    Query(String),
    /// A change set cannot be reverted because later writes changed the same entities.
    #[error("{0}")]
    Conflict(String),
    /// A change set cannot be reverted because a later change set changed the same thing since; it says which, so
    /// a caller can offer to undo both ([`Writer::revert_change_set_and_later`](crate::Writer::revert_change_set_and_later)).
    #[error("{0}")]
    ChangedSince(Box<ChangedSince>),
    /// A save from an editor was made on an older version of the note: it changed since the editor loaded it
    /// (another window, the CLI or an AI client saved it), and nothing was saved
    /// ([`Writer::save_user_edit`](crate::Writer::save_user_edit)).
    #[error("The note changed since it was loaded (another window or an AI client saved it). Nothing was saved.")]
    StaleEdit {
        /// The note.
        note_id: String,
        /// Its `updated` time now.
        updated: crate::Timestamp,
    },
    /// A rename or move would put two notebooks of one title (ignoring case) in one parent, so that one path would
    /// name both.
    #[error(
        "A notebook titled '{}' is there already, with the path '{}'; rename one of them first.",
        .0.title,
        .0.path
    )]
    NotebookTitleTaken(Box<TitleTaken>),
    /// Only an empty notebook can be deleted; notes in the trash count.
    #[error(
        "Notebook is not empty: it holds {} (trashed ones included) and {}. Move or delete them first.",
        count(*.notes, "note", "notes"),
        count(*.notebooks, "notebook", "notebooks")
    )]
    NotebookNotEmpty {
        /// Its notes, trashed ones included.
        notes: u64,
        /// Its sub-notebooks.
        notebooks: u64,
    },
    /// The embedder could not be loaded (a missing or broken model, a wrong setting); only semantic search is
    /// affected.
    #[error(
        "Search by meaning is unavailable: the embedding model could not be loaded ({0}). Search by words \
         instead; `quire index status` says how to fix the model setting."
    )]
    EmbedderUnavailable(String),
    /// The file exists but is not a quire workspace.
    #[error("{path} is not a quire workspace ({reason}); it was left untouched")]
    NotAWorkspace {
        /// The file that was opened.
        path: String,
        /// What gave it away.
        reason: String,
    },
    /// The file was written by a newer quire.
    #[error(
        "{path} was written by a newer quire (schema version {found}, this build knows up to {supported}); it was left untouched"
    )]
    TooNew {
        /// The file that was opened.
        path: String,
        /// The schema version in the file.
        found: i64,
        /// The newest schema version this build knows.
        supported: i64,
    },
    /// The file system refused something.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// SQLite or the connection pool failed; this is a bug or an environment problem, not bad input.
    #[error("database error: {0}")]
    Database(DatabaseError),
}

/// The kind of entity a guard message talks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Missing {
    /// A note.
    Note,
    /// A notebook.
    Notebook,
    /// A parent notebook.
    ParentNotebook,
    /// A tag.
    Tag,
    /// An attribute.
    Attribute,
    /// An attachment.
    Attachment,
    /// A revision.
    Revision,
    /// A change set.
    ChangeSet,
    /// A chat.
    Chat,
    /// A review set of staged changes.
    ReviewSet,
}

impl Missing {
    fn label(self) -> &'static str {
        match self {
            Missing::Note => "Note",
            Missing::Notebook => "Notebook",
            Missing::ParentNotebook => "Parent notebook",
            Missing::Tag => "Tag",
            Missing::Attribute => "Attribute",
            Missing::Attachment => "Attachment",
            Missing::Revision => "Revision",
            Missing::ChangeSet => "Change set",
            Missing::Chat => "Chat",
            Missing::ReviewSet => "Review",
        }
    }
}

/// An error from SQLite or the connection pool. Its inner type stays private to core.
pub struct DatabaseError(Inner);

enum Inner {
    Sqlite(rusqlite::Error),
    Pool(r2d2::Error),
    Migration(rusqlite_migration::Error),
}

impl DatabaseError {
    /// Whether the file system had no room for the write (SQLite's `SQLITE_FULL`, or a write or sync that failed).
    pub fn is_disk_full(&self) -> bool {
        matches!(
            &self.0,
            Inner::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure)
        )
    }
}

impl fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Inner::Sqlite(e) => e.fmt(f),
            Inner::Pool(e) => write!(f, "connection pool: {e}"),
            Inner::Migration(e) => write!(f, "migration: {e}"),
        }
    }
}

impl fmt::Debug for DatabaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Database(DatabaseError(Inner::Sqlite(e)))
    }
}

impl From<r2d2::Error> for Error {
    fn from(e: r2d2::Error) -> Self {
        Error::Database(DatabaseError(Inner::Pool(e)))
    }
}

impl From<rusqlite_migration::Error> for Error {
    fn from(e: rusqlite_migration::Error) -> Self {
        Error::Database(DatabaseError(Inner::Migration(e)))
    }
}

impl Error {
    /// Whether this error comes from bad input or a guard (the caller can fix the call),
    /// as opposed to a failure of the database or the file system.
    pub fn is_caller_error(&self) -> bool {
        !matches!(self, Error::Database(_) | Error::Io { .. })
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::Invalid(message.into())
    }
}

/// The notebook that already has the title a rename or move wanted ([`Error::NotebookTitleTaken`]).
#[derive(Debug, Clone)]
pub struct TitleTaken {
    /// Its title.
    pub title: String,
    /// Its path (`Work/Projects`).
    pub path: String,
    /// The path of the notebook that holds both (empty for the top level).
    pub parent_path: String,
}

/// `3 notes`, `1 notebook`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The result type of quire-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What stands in the way of an undo: the thing a later change set changed again, and that change set.
#[derive(Debug, Clone)]
pub struct ChangedSince {
    /// What changed again, in words (`the note "Plan"`).
    pub what: String,
    /// The latest change set that changed it, when the change log still names it.
    pub later: Option<crate::ChangeSet>,
}

impl fmt::Display for ChangedSince {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cannot undo: {} was changed again afterwards", self.what)?;
        if let Some(later) = &self.later {
            let by = match &later.actor {
                crate::Actor::User => "you".to_owned(),
                crate::Actor::Agent { .. } => "the assistant".to_owned(),
                crate::Actor::Mcp { client } => format!("the AI client {client}"),
                crate::Actor::Plugin { id } => format!("the plugin {id}"),
                crate::Actor::Import { .. } => "an import".to_owned(),
                crate::Actor::Sync { device } => format!("sync from device {device}"),
            };
            // `2026-12-03T05:31:50.554Z` as `2026-12-03 05:31 UTC`.
            let at = later.created.to_rfc3339();
            let at = at.get(..16).map_or(at.clone(), |short| short.replace('T', " "));
            write!(f, ", by {by} on {at} UTC")?;
        }
        f.write_str(". Undo that later change first, or undo both together.")
    }
}
