//! The schema: embedded migrations, and the checks that refuse files quire did not write.

use std::io::Read;
use std::path::Path;

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::error::{Error, Result};

/// `PRAGMA application_id` of a quire workspace: "QUIR" in ASCII.
const APPLICATION_ID: i64 = 0x5155_4952;

/// The migrations, in order. `PRAGMA user_version` holds how many have been applied.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_initial.sql"),
    include_str!("migrations/002_semantic.sql"),
    include_str!("migrations/003_vector_store.sql"),
    include_str!("migrations/004_chat_messages.sql"),
    include_str!("migrations/005_note_list_orders.sql"),
    include_str!("migrations/006_links.sql"),
    include_str!("migrations/007_lookups.sql"),
    include_str!("migrations/008_search_log.sql"),
    include_str!("migrations/009_visible_notes.sql"),
    include_str!("migrations/010_label_values.sql"),
    include_str!("migrations/011_chat_usage.sql"),
    include_str!("migrations/012_sealed_notes.sql"),
    include_str!("migrations/013_sync.sql"),
    include_str!("migrations/014_review.sql"),
    include_str!("migrations/015_news.sql"),
    include_str!("migrations/016_sync_conflicts.sql"),
    include_str!("migrations/017_plugin_calls.sql"),
    include_str!("migrations/018_structure.sql"),
    include_str!("migrations/019_undo_links.sql"),
    include_str!("migrations/020_query_indexes.sql"),
    include_str!("migrations/021_read_ledger.sql"),
    include_str!("migrations/022_automation_runs.sql"),
    include_str!("migrations/023_sealed_conflicts.sql"),
    include_str!("migrations/024_sync_lineage.sql"),
    include_str!("migrations/025_attachment_extraction.sql"),
];

/// The migration after which everything derived from notes (links, keys, tasks, inline fields, hashtags) is built
/// again from the notes (0-based): the last one that changed what is derived (018: tasks and fields for queries;
/// 010 before it: links in label values). A workspace older than it gets them then, whichever version it comes
/// from, with the code and tables of this build.
const LINKS_REBUILT_AT: usize = 17;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Refuses an existing file that is not a quire workspace or is newer than this build.
///
/// It reads the 100-byte SQLite header directly instead of opening the file with SQLite: even a read-only
/// connection to a WAL-mode database creates `-wal` and `-shm` files beside it, and a refused file must be
/// left exactly as it was.
pub(crate) fn check_existing_file(path: &Path) -> Result<()> {
    let shown = path.display().to_string();
    let not_a_workspace = |reason: &str| Error::NotAWorkspace {
        path: shown.clone(),
        reason: reason.to_owned(),
    };
    let mut header = Vec::with_capacity(100);
    match std::fs::File::open(path) {
        Ok(file) => {
            file.take(100).read_to_end(&mut header).map_err(|source| Error::Io {
                context: format!("cannot read {}", path.display()),
                source,
            })?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::Io {
                context: format!("cannot open {}", path.display()),
                source,
            });
        }
    }
    if header.is_empty() {
        return Ok(());
    }
    if header.len() < 100 || !header.starts_with(b"SQLite format 3\0") {
        return Err(not_a_workspace("it is not an SQLite database"));
    }
    let field = |at: usize| u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    let (page_count, user_version, application_id) = (field(28), i64::from(field(60)), i64::from(field(68)));
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name().unwrap_or_default().to_string_lossy()
    ));
    let wal_has_frames = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    let (application_id, user_version, empty) = if application_id != APPLICATION_ID && wal_has_frames {
        // The main file's header can be older than the WAL beside it (a process that ended before checkpointing).
        // Only SQLite can read the current header then; it may create the `-shm` index beside an existing WAL,
        // which is how SQLite recovers any such file, and it changes nothing in the database.
        read_through_sqlite(path).map_err(|_| not_a_workspace("it is not an SQLite database"))?
    } else {
        (application_id, user_version, page_count <= 1)
    };
    if application_id != APPLICATION_ID {
        // A database whose only page is the (empty) schema table has nothing to lose: it becomes a workspace.
        if application_id == 0 && user_version == 0 && empty {
            return Ok(());
        }
        return Err(not_a_workspace("it is an SQLite database of another application"));
    }
    if user_version > SCHEMA_VERSION {
        return Err(Error::TooNew {
            path: shown,
            found: user_version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

fn read_through_sqlite(path: &Path) -> rusqlite::Result<(i64, i64, bool)> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    Ok((app, version, tables == 0))
}

/// Brings the schema up to date. Runs once per open, on one connection, before anything else.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let migrations = Migrations::new(
        MIGRATIONS
            .iter()
            .enumerate()
            .map(|(i, sql)| {
                if i == LINKS_REBUILT_AT {
                    // The links of the notes written before links (or links in labels) existed.
                    M::up_with_hook(sql, |tx: &rusqlite::Transaction<'_>| {
                        crate::links::rebuild_all(tx).map_err(|e| rusqlite_migration::HookError::Hook(e.to_string()))
                    })
                } else {
                    M::up(sql)
                }
            })
            .collect(),
    );
    migrations.to_latest(conn)?;
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    if app != APPLICATION_ID {
        conn.pragma_update(None, "application_id", APPLICATION_ID)?;
        // Put the new header into the main file now, so the file says it is a quire workspace even if this process
        // ends before SQLite checkpoints the WAL. Passive: it never waits. (A no-op in memory.)
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
    }
    Ok(())
}
