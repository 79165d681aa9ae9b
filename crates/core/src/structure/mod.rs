//! The structure queries read from note bodies: tasks, inline fields and hashtags, kept in `note_tasks`,
//! `note_fields` and `note_hashtags` (migration 018). Like `note_links` they are derived data: written on every
//! write of a note's body (with its links, see `links::refresh_many`), never in the change log, rebuilt from the
//! bodies when the schema changes what is derived.

mod extract;

pub use extract::{Field, NO_PRIORITY, Structure, Task, field_key, structure};
pub(crate) use extract::{set_field_in_line, task_parts};

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::sql::Cached;

/// Writes a note's derived rows from its body (`None`: the note is gone, and so are its rows).
pub(crate) fn refresh(conn: &Connection, note_id: &str, body: Option<&str>) -> Result<()> {
    let found = body.filter(|b| !b.is_empty()).map(structure).unwrap_or_default();
    // Most saves change prose, not tasks or fields: then the rows stay, and no index page is written.
    if same(&stored(conn, note_id)?, &found) {
        return Ok(());
    }
    conn.exec_cached("DELETE FROM note_tasks WHERE note_id = ?1", [note_id])?;
    conn.exec_cached("DELETE FROM note_fields WHERE note_id = ?1", [note_id])?;
    conn.exec_cached("DELETE FROM note_hashtags WHERE note_id = ?1", [note_id])?;
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

/// Whether two structures give the same rows (hashtags as the table keeps them: a set).
fn same(a: &Structure, b: &Structure) -> bool {
    // As `INSERT OR IGNORE` keeps them: the first of the spellings that differ in case only.
    fn tags(s: &Structure) -> Vec<&String> {
        let mut seen = std::collections::HashSet::new();
        let mut t: Vec<&String> = s.hashtags.iter().filter(|t| seen.insert(t.to_lowercase())).collect();
        t.sort();
        t
    }
    a.tasks == b.tasks && a.fields == b.fields && tags(a) == tags(b)
}

/// What the derived tables hold for a note now, as [`structure`] gives it.
fn stored(conn: &Connection, note_id: &str) -> Result<Structure> {
    let mut out = Structure::default();
    let mut stmt = conn.prepare_cached(
        "SELECT line, status, text, due, scheduled, start, done_on, created_on, cancelled_on, priority, recurrence, \
         heading FROM note_tasks WHERE note_id = ?1 ORDER BY line",
    )?;
    let rows = stmt.query_map([note_id], |r| {
        let status: String = r.get(1)?;
        Ok(Task {
            line: r.get::<_, i64>(0)?.max(0) as usize,
            status: status.chars().next().unwrap_or(' '),
            text: r.get(2)?,
            due: r.get(3)?,
            scheduled: r.get(4)?,
            start: r.get(5)?,
            done_on: r.get(6)?,
            created_on: r.get(7)?,
            cancelled_on: r.get(8)?,
            priority: r.get(9)?,
            recurrence: r.get(10)?,
            heading: r.get(11)?,
        })
    })?;
    out.tasks = rows.collect::<rusqlite::Result<_>>()?;
    let mut stmt =
        conn.prepare_cached("SELECT name, key, value, line FROM note_fields WHERE note_id = ?1 ORDER BY ordinal")?;
    let rows = stmt.query_map([note_id], |r| {
        Ok(Field {
            name: r.get(0)?,
            key: r.get(1)?,
            value: r.get(2)?,
            line: r.get::<_, i64>(3)?.max(0) as usize,
        })
    })?;
    out.fields = rows.collect::<rusqlite::Result<_>>()?;
    let mut stmt = conn.prepare_cached("SELECT tag FROM note_hashtags WHERE note_id = ?1")?;
    let rows = stmt.query_map([note_id], |r| r.get::<_, String>(0))?;
    out.hashtags = rows.collect::<rusqlite::Result<_>>()?;
    Ok(out)
}
