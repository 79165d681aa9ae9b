//! The schema: embedded migrations, and the checks that refuse files quire did not write.

use std::path::Path;

use rusqlite::Connection;
use rusqlite_migration::{M, Migrations};

use crate::error::{Error, Result};
use crate::workspace::open_read_only;

/// `PRAGMA application_id` of a quire workspace: "QUIR" in ASCII.
const APPLICATION_ID: i64 = 0x5155_4952;

/// The migrations, in order. `PRAGMA user_version` holds how many have been applied.
const MIGRATIONS: &[&str] = &[include_str!("migrations/001_initial.sql")];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Refuses an existing file that is not a quire workspace or is newer than this build, without writing to it.
pub(crate) fn check_existing_file(path: &Path) -> Result<()> {
    let len = match std::fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(Error::Io { context: format!("cannot read {}", path.display()), source });
        }
    };
    if len == 0 {
        return Ok(());
    }
    let shown = path.display().to_string();
    let not_a_workspace = |reason: &str| Error::NotAWorkspace { path: shown.clone(), reason: reason.to_owned() };
    let conn = open_read_only(path).map_err(|_| not_a_workspace("it cannot be opened as an SQLite database"))?;
    let header = (|| -> rusqlite::Result<(i64, i64, i64)> {
        let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
        Ok((app, version, tables))
    })();
    let (app, version, tables) = header.map_err(|_| not_a_workspace("it is not an SQLite database"))?;
    if app != APPLICATION_ID {
        if app == 0 && version == 0 && tables == 0 {
            // An empty SQLite database: nothing to lose, it becomes a workspace.
            return Ok(());
        }
        return Err(not_a_workspace("it is an SQLite database of another application"));
    }
    if version > SCHEMA_VERSION {
        return Err(Error::TooNew { path: shown, found: version, supported: SCHEMA_VERSION });
    }
    Ok(())
}

/// Brings the schema up to date. Runs once per open, on one connection, before anything else.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let migrations = Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect());
    migrations.to_latest(conn)?;
    let app: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    if app != APPLICATION_ID {
        conn.pragma_update(None, "application_id", APPLICATION_ID)?;
    }
    Ok(())
}
