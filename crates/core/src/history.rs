//! Row snapshots for the change log, and putting a row back to a snapshot when a change set is reverted.

use crate::sql::Cached;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde_json::{Map, Value};

use crate::entity::EntityKind;
use crate::error::{Error, Result};

/// Where an entity kind lives: its table and key columns. A composite key is written `a/b` in the change log.
fn table_of(kind: EntityKind) -> (&'static str, &'static [&'static str]) {
    match kind {
        EntityKind::Notebook => ("notebooks", &["id"]),
        EntityKind::Note => ("notes", &["id"]),
        EntityKind::Tag => ("tags", &["id"]),
        EntityKind::NoteTag => ("note_tags", &["note_id", "tag_id"]),
        EntityKind::Attribute => ("attributes", &["id"]),
        EntityKind::Attachment => ("attachments", &["id"]),
    }
}

fn key_values(kind: EntityKind, id: &str) -> Vec<String> {
    match kind {
        EntityKind::NoteTag => id.splitn(2, '/').map(str::to_owned).collect(),
        _ => vec![id.to_owned()],
    }
}

fn key_filter(keys: &[&str]) -> String {
    keys.iter()
        .enumerate()
        .map(|(i, k)| format!("{k} = ?{}", i + 1))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The whole row of an entity as a JSON object, or `None` when it does not exist.
pub(crate) fn snapshot(conn: &Connection, kind: EntityKind, id: &str) -> Result<Option<Value>> {
    // Taken several times by every write: the statement text is fixed per kind, not formatted each time.
    let sql = match kind {
        EntityKind::Notebook => "SELECT * FROM notebooks WHERE id = ?1",
        EntityKind::Note => "SELECT * FROM notes WHERE id = ?1",
        EntityKind::Tag => "SELECT * FROM tags WHERE id = ?1",
        EntityKind::NoteTag => "SELECT * FROM note_tags WHERE note_id = ?1 AND tag_id = ?2",
        EntityKind::Attribute => "SELECT * FROM attributes WHERE id = ?1",
        EntityKind::Attachment => "SELECT * FROM attachments WHERE id = ?1",
    };
    debug_assert_eq!(sql, {
        let (table, keys) = table_of(kind);
        format!("SELECT * FROM {table} WHERE {}", key_filter(keys))
    });
    let mut stmt = conn.prepare_cached(sql)?;
    let row = stmt
        .query_row(params_from_iter(key_values(kind, id)), |r| {
            let columns = r.as_ref();
            let mut object = Map::new();
            for i in 0..columns.column_count() {
                object.insert(columns.column_name(i)?.to_owned(), to_json(r.get_ref(i)?));
            }
            Ok(Value::Object(object))
        })
        .optional()?;
    Ok(row.map(|row| leave_out_defaults(kind, row)))
}

/// Columns added after the change log began, with the value every older row has. A snapshot leaves such a column
/// out while it holds that value, so the fingerprints logged before the column existed still match the rows they
/// describe (a change set from then can still be undone), and [`restore`] puts the value back when a snapshot
/// lacks it.
fn added_columns(kind: EntityKind) -> &'static [(&'static str, AddedDefault)] {
    match kind {
        EntityKind::Attribute => &[("value_type", AddedDefault::Text("text"))],
        EntityKind::Note => &[("sealed", AddedDefault::Null), ("version", AddedDefault::Zero)],
        EntityKind::Attachment => &[("sealed", AddedDefault::Null), ("extraction", AddedDefault::Null)],
        _ => &[],
    }
}

#[derive(Clone, Copy)]
enum AddedDefault {
    Text(&'static str),
    Null,
    Zero,
}

impl AddedDefault {
    fn value(self) -> Value {
        match self {
            AddedDefault::Text(text) => Value::String(text.to_owned()),
            AddedDefault::Null => Value::Null,
            AddedDefault::Zero => Value::from(0),
        }
    }
}

fn leave_out_defaults(kind: EntityKind, mut row: Value) -> Value {
    if let Value::Object(object) = &mut row {
        for (column, default) in added_columns(kind) {
            if object.get(*column) == Some(&default.value()) {
                object.remove(*column);
            }
        }
        // Local bookkeeping, never part of a change: where the reading of an attachment's text stands (migration
        // 025). An undo puts NULL back: a file whose text the snapshot lacks is read again.
        if kind == EntityKind::Attachment {
            object.remove("extraction");
        }
    }
    row
}

fn put_back_defaults(kind: EntityKind, row: &Map<String, Value>) -> Map<String, Value> {
    let mut row = row.clone();
    for (column, default) in added_columns(kind) {
        row.entry(column.to_string()).or_insert_with(|| default.value());
    }
    row
}

/// A blob as a snapshot holds it.
pub(crate) fn blob_json(bytes: &[u8]) -> Value {
    to_json(ValueRef::Blob(bytes))
}

/// The bytes of a blob in a snapshot.
pub(crate) fn blob_from_json(value: &Value) -> Option<Vec<u8>> {
    value.get("$blob").and_then(Value::as_str).map(decode_hex)
}

/// A short fingerprint of a row snapshot. The change log keeps the whole row before a change (to revert it) but
/// only this hash of the row after it: enough to notice that a later write changed the entity, at a fraction
/// of the space. FNV-1a over the JSON text, whose keys serde_json keeps sorted.
pub(crate) fn fingerprint(row: &Value) -> String {
    /// FNV-1a fed by the JSON writer, so the text is never held whole.
    struct Fnv(u64);
    impl std::io::Write for Fnv {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            for byte in bytes {
                self.0 ^= u64::from(*byte);
                self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    // Writing JSON into a hasher cannot fail.
    let _ = serde_json::to_writer(&mut hash, row);
    format!("{:016x}", hash.0)
}

/// Puts an entity back to `target`: deletes it when `target` is `None`, otherwise updates or re-inserts the row.
pub(crate) fn restore(conn: &Connection, kind: EntityKind, id: &str, target: Option<&Value>) -> Result<()> {
    let (table, keys) = table_of(kind);
    let filter = key_filter(keys);
    let exists = snapshot(conn, kind, id)?.is_some();
    let outcome = match target {
        None => conn.exec_cached(
            &format!("DELETE FROM {table} WHERE {filter}"),
            params_from_iter(key_values(kind, id)),
        ),
        Some(Value::Object(row)) => {
            let row = put_back_defaults(kind, row);
            let columns: Vec<&String> = row.keys().collect();
            let values: Vec<SqlValue> = row.values().map(from_json).collect();
            if exists {
                let assignments = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c} = ?{}", i + 1))
                    .collect::<Vec<_>>()
                    .join(", ");
                let keyed = keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| format!("{k} = ?{}", columns.len() + i + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ");
                let params = values
                    .into_iter()
                    .chain(key_values(kind, id).into_iter().map(SqlValue::Text));
                conn.exec_cached(
                    &format!("UPDATE {table} SET {assignments} WHERE {keyed}"),
                    params_from_iter(params),
                )
            } else {
                let names = columns.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
                let slots = (1..=columns.len())
                    .map(|i| format!("?{i}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                conn.exec_cached(
                    &format!("INSERT INTO {table} ({names}) VALUES ({slots})"),
                    params_from_iter(values),
                )
            }
        }
        Some(_) => {
            return Err(Error::Conflict(format!("The change log entry for {id} is damaged.")));
        }
    };
    match outcome {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::ConstraintViolation => {
            Err(Error::Conflict(format!(
                "Cannot revert: the {} {id} is still referenced by later changes (or its parent is gone); \
                 revert the later change sets first.",
                kind.as_str().replace('_', " ")
            )))
        }
        Err(e) => Err(e.into()),
    }
}

fn to_json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let hex = crate::hex(b);
            let mut object = Map::new();
            object.insert("$blob".to_owned(), Value::String(hex));
            Value::Object(object)
        }
    }
}

fn from_json(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| SqlValue::Real(n.as_f64().unwrap_or(0.0)), SqlValue::Integer),
        Value::String(s) => SqlValue::Text(s.clone()),
        Value::Object(o) => match o.get("$blob").and_then(Value::as_str) {
            Some(hex) => SqlValue::Blob(decode_hex(hex)),
            None => SqlValue::Text(value.to_string()),
        },
        Value::Array(_) => SqlValue::Text(value.to_string()),
    }
}

fn decode_hex(hex: &str) -> Vec<u8> {
    hex.as_bytes()
        .chunks(2)
        .filter_map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Change logs written before keep their hashes: the streamed fingerprint is the one of the JSON text, and
    /// blobs keep their hex form.
    #[test]
    fn fingerprints_and_blobs_keep_their_form() {
        let row = serde_json::json!({"body": "a \"quoted\"\nline é", "n": 3, "blob": {"$blob": "00ff10"}});
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in row.to_string().bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(fingerprint(&row), format!("{hash:016x}"));
        assert_eq!(
            to_json(ValueRef::Blob(&[0x00, 0xff, 0x10, 0xab])),
            serde_json::json!({"$blob": "00ff10ab"})
        );
        assert_eq!(decode_hex("00ff10ab"), vec![0x00, 0xff, 0x10, 0xab]);
    }
}
