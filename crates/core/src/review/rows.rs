//! One staged row: the changes it makes (fields, runs of lines, the row made or removed) and their merge onto the
//! row as it is now.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::entity::{EntityKind, Timestamp};
use crate::merge::{LineHunk, line_hunks, merge_line_hunks};

/// Columns that record when or how a row was stored rather than what it holds: never a change of their own, and
/// never a reason to call a change stale.
const BOOKKEEPING: &[&str] = &["seq", "created", "updated", "version", "sealed"];

/// One change of a staged row, in the order [`changes_of`] lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// The row is new.
    Create,
    /// The row is removed.
    Delete,
    /// One column takes another value.
    Field(String),
    /// A run of lines of a note's body.
    Lines(LineHunk),
}

/// A staged row as stored.
#[derive(Debug, Clone)]
pub(crate) struct StoredRow {
    pub(crate) id: i64,
    pub(crate) set_id: i64,
    pub(crate) kind: EntityKind,
    pub(crate) entity_id: String,
    pub(crate) base: Option<Value>,
    pub(crate) proposed: Option<Value>,
    /// Change index -> `rejected`, or `accepted` with the change set that wrote it (`accepted:ID`).
    pub(crate) decisions: BTreeMap<usize, String>,
}

impl StoredRow {
    pub(crate) fn changes(&self) -> Vec<Change> {
        changes_of(self.base.as_ref(), self.proposed.as_ref())
    }

    pub(crate) fn accepted(&self) -> Vec<usize> {
        self.decisions
            .iter()
            .filter(|(_, d)| d.starts_with("accepted"))
            .map(|(i, _)| *i)
            .collect()
    }

    /// The changes not decided yet.
    pub(crate) fn pending(&self) -> Vec<usize> {
        (0..self.changes().len())
            .filter(|i| !self.decisions.contains_key(i))
            .collect()
    }
}

fn content_equal(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !BOOKKEEPING.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    };
    strip(a) == strip(b)
}

/// Whether a staged row changes anything a person would see.
pub(crate) fn is_change(base: Option<&Value>, proposed: Option<&Value>) -> bool {
    match (base, proposed) {
        (Some(b), Some(p)) => !content_equal(b, p),
        (None, None) => false,
        _ => true,
    }
}

/// The changes from `base` to `proposed`, in a fixed order: the columns by name, a body by runs of lines.
pub(crate) fn changes_of(base: Option<&Value>, proposed: Option<&Value>) -> Vec<Change> {
    match (base, proposed) {
        (None, None) => vec![],
        (None, Some(_)) => vec![Change::Create],
        (Some(_), None) => vec![Change::Delete],
        (Some(Value::Object(b)), Some(Value::Object(p))) => {
            let mut columns: Vec<&String> = b.keys().chain(p.keys()).collect();
            columns.sort();
            columns.dedup();
            let mut out = Vec::new();
            for column in columns {
                if BOOKKEEPING.contains(&column.as_str()) || b.get(column) == p.get(column) {
                    continue;
                }
                match (column.as_str(), b.get(column), p.get(column)) {
                    ("body", Some(Value::String(old)), Some(Value::String(new))) => {
                        out.extend(line_hunks(old, new).into_iter().map(Change::Lines));
                    }
                    _ => out.push(Change::Field(column.clone())),
                }
            }
            out
        }
        _ => vec![],
    }
}

/// What merging chosen changes of a row onto its current state gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Merged {
    /// The row to store (`None`: remove it); equal to the current row when nothing applies.
    pub(crate) target: Option<Value>,
    /// The chosen changes that no longer fit (their place changed meanwhile).
    pub(crate) stale: Vec<usize>,
}

/// Merges the changes `chosen` of a staged row onto `current`, the changes `applied` being in it already.
pub(crate) fn merge_row(
    kind: EntityKind,
    row: &StoredRow,
    current: Option<&Value>,
    applied: &[usize],
    chosen: &[usize],
    now: Timestamp,
) -> Merged {
    let unchanged = Merged {
        target: current.cloned(),
        stale: vec![],
    };
    if chosen.is_empty() {
        return unchanged;
    }
    let all_stale = Merged {
        target: current.cloned(),
        stale: chosen.to_vec(),
    };
    match (row.base.as_ref(), row.proposed.as_ref(), current) {
        (None, Some(proposed), None) => {
            let mut target = proposed.clone();
            if let (EntityKind::Note, Value::Object(o)) = (kind, &mut target) {
                // The row number is the store's to give: another note may hold it by now.
                o.remove("seq");
            }
            Merged {
                target: Some(target),
                stale: vec![],
            }
        }
        // Made already (accepted before, or the same row written since).
        (None, Some(proposed), Some(current)) if content_equal(proposed, current) => unchanged,
        (Some(_), None, None) => unchanged,
        (Some(base), None, Some(current)) if content_equal(base, current) => Merged {
            target: None,
            stale: vec![],
        },
        (Some(Value::Object(base)), Some(Value::Object(proposed)), Some(Value::Object(current))) => {
            let changes = changes_of(row.base.as_ref(), row.proposed.as_ref());
            let mut target = current.clone();
            let mut stale = Vec::new();
            let mut lines = Vec::new();
            let mut line_index = BTreeMap::new();
            for (i, change) in changes.iter().enumerate() {
                match change {
                    Change::Field(column) if chosen.contains(&i) => {
                        let (b, p, c) = (base.get(column), proposed.get(column), current.get(column));
                        if c == b {
                            match p {
                                Some(p) => target.insert(column.clone(), p.clone()),
                                None => target.remove(column),
                            };
                        } else if c != p {
                            stale.push(i);
                        }
                    }
                    Change::Lines(hunk) => {
                        line_index.insert(i, lines.len());
                        lines.push(hunk.clone());
                    }
                    _ => {}
                }
            }
            let chosen_lines: Vec<usize> = chosen.iter().filter_map(|i| line_index.get(i).copied()).collect();
            if !chosen_lines.is_empty() {
                let text = |o: &serde_json::Map<String, Value>| {
                    o.get("body").and_then(Value::as_str).unwrap_or_default().to_owned()
                };
                let applied_lines: Vec<usize> = applied.iter().filter_map(|i| line_index.get(i).copied()).collect();
                let (body, stale_lines) =
                    merge_line_hunks(&text(base), &text(current), &lines, &applied_lines, &chosen_lines);
                target.insert("body".into(), Value::String(body));
                stale.extend(
                    line_index
                        .iter()
                        .filter(|(_, k)| stale_lines.contains(k))
                        .map(|(i, _)| *i),
                );
            }
            let target = Value::Object(target);
            let mut target_row = target.clone();
            if !content_equal(&target, &Value::Object(current.clone()))
                && let Value::Object(o) = &mut target_row
                && o.contains_key("updated")
            {
                o.insert("updated".into(), Value::from(now.as_millis()));
            }
            stale.sort_unstable();
            Merged {
                target: Some(target_row),
                stale,
            }
        }
        _ => all_stale,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn row(base: Option<Value>, proposed: Option<Value>) -> StoredRow {
        StoredRow {
            id: 1,
            set_id: 1,
            kind: EntityKind::Note,
            entity_id: "n".into(),
            base,
            proposed,
            decisions: BTreeMap::new(),
        }
    }

    #[test]
    fn fields_and_lines_merge_onto_what_changed_since_and_clashes_are_stale() {
        let base = json!({"id": "n", "seq": 3, "title": "Plan", "body": "a\nb\nc\n", "updated": 1});
        let proposed = json!({"id": "n", "seq": 3, "title": "Plan v2", "body": "A\nb\nc\nd\n", "updated": 2});
        let row = row(Some(base), Some(proposed));
        let changes = row.changes();
        assert_eq!(changes.len(), 3, "{changes:?}");
        assert!(matches!(&changes[2], Change::Field(c) if c == "title"));
        // The user changed line b and the title since.
        let current = json!({"id": "n", "seq": 3, "title": "Plan!", "body": "a\nB\nc\n", "updated": 5});
        let merged = merge_row(EntityKind::Note, &row, Some(&current), &[], &[0, 1, 2], Timestamp(9));
        assert_eq!(merged.stale, vec![2]);
        let target = merged.target.unwrap();
        assert_eq!(target["body"], "A\nB\nc\nd\n");
        assert_eq!(target["title"], "Plan!");
        assert_eq!(target["updated"], 9);
        // Only the last run of lines.
        let merged = merge_row(EntityKind::Note, &row, Some(&current), &[], &[1], Timestamp(9));
        assert_eq!(merged.target.unwrap()["body"], "a\nB\nc\nd\n");
        // A new note keeps its id but not its row number; a removed row stays removed only if nobody changed it.
        let made = merge_row(
            EntityKind::Note,
            &super::tests::row(None, Some(current.clone())),
            None,
            &[],
            &[0],
            Timestamp(9),
        );
        assert!(made.target.unwrap().get("seq").is_none());
        let gone = super::tests::row(Some(json!({"id": "a", "value": "1"})), None);
        let kept = merge_row(
            EntityKind::Attribute,
            &gone,
            Some(&json!({"id": "a", "value": "2"})),
            &[],
            &[0],
            Timestamp(9),
        );
        assert_eq!(kept.stale, vec![0]);
    }
}
