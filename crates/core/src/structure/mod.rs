//! The structure queries read from note bodies: tasks, inline fields and hashtags, kept in `note_tasks`,
//! `note_fields` and `note_hashtags` (migration 018). Like `note_links` they are derived data: written on every
//! write of a note's body (with its links, see `links::refresh_many`), never in the change log, rebuilt from the
//! bodies when the schema changes what is derived.

mod extract;

pub(crate) use extract::task_parts;
pub use extract::{Field, NO_PRIORITY, Structure, Task, field_key, structure};

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::sql::Cached;

/// Writes a note's derived rows from its body (`None`: the note is gone, and so are its rows).
pub(crate) fn refresh(conn: &Connection, note_id: &str, body: Option<&str>) -> Result<()> {
    conn.exec_cached("DELETE FROM note_tasks WHERE note_id = ?1", [note_id])?;
    conn.exec_cached("DELETE FROM note_fields WHERE note_id = ?1", [note_id])?;
    conn.exec_cached("DELETE FROM note_hashtags WHERE note_id = ?1", [note_id])?;
    let Some(body) = body.filter(|b| !b.is_empty()) else {
        return Ok(());
    };
    let found = structure(body);
    if !found.tasks.is_empty() {
        let mut insert = conn.prepare_cached(
            "INSERT INTO note_tasks (note_id, line, status, done, text, due, scheduled, start, done_on, created_on, \
             cancelled_on, priority, recurrence, heading) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        for t in &found.tasks {
            insert.execute(params![
                note_id,
                t.line as i64,
                t.status.to_string(),
                t.is_done(),
                t.text,
                t.due,
                t.scheduled,
                t.start,
                t.done_on,
                t.created_on,
                t.cancelled_on,
                t.priority,
                t.recurrence,
                t.heading,
            ])?;
        }
    }
    if !found.fields.is_empty() {
        let mut insert = conn.prepare_cached(
            "INSERT INTO note_fields (note_id, ordinal, key, name, value, line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for (i, f) in found.fields.iter().enumerate() {
            insert.execute(params![note_id, i as i64, f.key, f.name, f.value, f.line as i64])?;
        }
    }
    for tag in &found.hashtags {
        conn.exec_cached(
            "INSERT OR IGNORE INTO note_hashtags (note_id, tag) VALUES (?1, ?2)",
            params![note_id, tag],
        )?;
    }
    Ok(())
}
