//! Reading review sets: the stored rows, and the sets as people review them (by note, each change with what it was,
//! what it becomes and whether it still applies).

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::entity::{Actor, EntityKind, Timestamp};
use crate::error::{Error, Missing, Result};
use crate::history;
use crate::review::{Change, HunkState, ReviewHunk, ReviewItem, ReviewSet, ReviewSummary, StoredRow, merge_row};

use super::Reader;

fn parse_json(text: Option<String>) -> Option<Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

fn field<'v>(row: Option<&'v Value>, column: &str) -> Option<&'v Value> {
    row.and_then(|r| r.get(column))
}

fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Reader<'_> {
    /// Stored rows: those of a set, or the pending ones of a client (oldest set first), in the order they were made.
    pub(crate) fn review_rows_where(&self, filter: &str, arg: &dyn rusqlite::ToSql) -> Result<Vec<StoredRow>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT r.id, r.set_id, r.entity, r.entity_id, r.base, r.proposed, r.decisions FROM review_rows r \
             JOIN review_sets s ON s.id = r.set_id WHERE {filter} ORDER BY r.set_id, r.id"
        ))?;
        let rows = stmt.query_map([arg], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, set_id, entity, entity_id, base, proposed, decisions) = row?;
            let Some(kind) = EntityKind::parse(&entity) else {
                continue;
            };
            let decisions: BTreeMap<String, String> = serde_json::from_str(&decisions).unwrap_or_default();
            out.push(StoredRow {
                id,
                set_id,
                kind,
                entity_id,
                base: parse_json(base),
                proposed: parse_json(proposed),
                decisions: decisions
                    .into_iter()
                    .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
                    .collect(),
            });
        }
        Ok(out)
    }

    /// The client a review set belongs to; for an actor other than the user, only its own sets exist.
    pub fn review_client(&self, id: i64) -> Result<String> {
        let client: Option<String> = self
            .conn
            .query_row("SELECT client FROM review_sets WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        match (client, self.actor) {
            (Some(client), Actor::User) => Ok(client),
            (Some(client), Actor::Mcp { client: me }) if *me == client => Ok(client),
            _ => Err(Error::NotFound(Missing::ReviewSet)),
        }
    }

    /// Review sets, newest first: those with changes waiting only, or all of them (at most `limit`). For an actor
    /// other than the user, only its own.
    pub fn review_sets(&self, pending_only: bool, limit: usize) -> Result<Vec<ReviewSummary>> {
        let ids: Vec<i64> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT s.id, s.client FROM review_sets s WHERE (?1 = 0 OR EXISTS \
                 (SELECT 1 FROM review_rows r WHERE r.set_id = s.id AND r.settled = 0)) ORDER BY s.id DESC",
            )?;
            let rows = stmt.query_map([pending_only], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            let mut ids = Vec::new();
            for row in rows {
                let (id, client) = row?;
                let mine = match self.actor {
                    Actor::User => true,
                    Actor::Mcp { client: me } => *me == client,
                    _ => false,
                };
                if mine {
                    ids.push(id);
                }
            }
            ids
        };
        let mut out = Vec::new();
        for id in ids {
            let set = self.review_set(id)?;
            if pending_only && set.summary.pending == 0 {
                continue;
            }
            out.push(set.summary);
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// A review set with its changes by note, each with where it stands now.
    pub fn review_set(&self, id: i64) -> Result<ReviewSet> {
        let client = self.review_client(id)?;
        let (created, updated, closed, change_sets): (i64, i64, bool, String) = self.conn.query_row(
            "SELECT created, updated, closed, change_sets FROM review_sets WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let rows = self.review_rows_where("r.set_id = ?1", &id)?;
        let mut items: Vec<ReviewItem> = Vec::new();
        let (mut pending, mut accepted, mut rejected) = (0, 0, 0);
        for row in &rows {
            let hunks = self.review_hunks(row, &rows)?;
            if hunks.is_empty() {
                continue;
            }
            for hunk in &hunks {
                match hunk.state {
                    HunkState::Pending | HunkState::Stale => pending += 1,
                    HunkState::Accepted | HunkState::Undone => accepted += 1,
                    HunkState::Rejected => rejected += 1,
                }
            }
            let (kind, entity) = item_of(row);
            let key = format!("{kind}:{entity}");
            match items.iter_mut().find(|i| i.key == key) {
                Some(item) => item.hunks.extend(hunks),
                None => {
                    let (title, change) = self.item_title(kind, &entity, &rows)?;
                    items.push(ReviewItem {
                        key,
                        kind: kind.to_owned(),
                        id: entity,
                        title,
                        change,
                        hunks,
                    });
                }
            }
        }
        let titles = items.iter().map(|i| i.title.clone()).collect();
        Ok(ReviewSet {
            summary: ReviewSummary {
                id,
                client,
                created: Timestamp(created),
                updated: Timestamp(updated),
                pending,
                accepted,
                rejected,
                titles,
                open: !closed,
            },
            items,
            change_sets: serde_json::from_str(&change_sets).unwrap_or_default(),
        })
    }

    /// An item's title (as it is, else as the client left it, else as it was) and what happens to it.
    fn item_title(&self, kind: &str, id: &str, rows: &[StoredRow]) -> Result<(String, String)> {
        let entity = match kind {
            "note" => EntityKind::Note,
            "notebook" => EntityKind::Notebook,
            _ => EntityKind::Tag,
        };
        let column = if entity == EntityKind::Tag { "name" } else { "title" };
        let own = rows.iter().find(|r| r.kind == entity && r.entity_id == id);
        let current = history::snapshot(self.conn, entity, id)?;
        let title = text_of(field(current.as_ref(), column))
            .or_else(|| own.and_then(|r| text_of(field(r.proposed.as_ref(), column))))
            .or_else(|| own.and_then(|r| text_of(field(r.base.as_ref(), column))))
            .unwrap_or_else(|| id.to_owned());
        let change = match own.map(|r| (r.base.is_some(), r.proposed.is_some())) {
            Some((false, true)) => "created",
            Some((true, false)) => "deleted",
            _ => "changed",
        };
        Ok((title, change.to_owned()))
    }

    /// The changes of one stored row as hunks, with where each stands now.
    fn review_hunks(&self, row: &StoredRow, rows: &[StoredRow]) -> Result<Vec<ReviewHunk>> {
        let changes = row.changes();
        // A tag the client made shows as the tag it put on a note.
        if row.kind == EntityKind::Tag && row.base.is_none() {
            return Ok(vec![]);
        }
        let current = history::snapshot(self.conn, row.kind, &row.entity_id)?;
        let applied = row.accepted();
        let mut out = Vec::with_capacity(changes.len());
        for (i, change) in changes.iter().enumerate() {
            let state = match row.decisions.get(&i).map(String::as_str) {
                Some("rejected") => HunkState::Rejected,
                Some(accepted) => {
                    // Undone since: the change set that wrote it was reverted.
                    let undone = accepted
                        .strip_prefix("accepted:")
                        .and_then(|id| self.change_set(id).ok())
                        .is_some_and(|set| set.reverted.is_some());
                    if undone { HunkState::Undone } else { HunkState::Accepted }
                }
                None => {
                    let merged = merge_row(row.kind, row, current.as_ref(), &applied, &[i], Timestamp(0));
                    if merged.stale.is_empty() {
                        HunkState::Pending
                    } else {
                        HunkState::Stale
                    }
                }
            };
            let mut hunk = self.describe_change(row, change, rows)?;
            hunk.id = format!("{}.{i}", row.id);
            hunk.state = state;
            out.push(hunk);
        }
        Ok(out)
    }

    /// A change in words.
    fn describe_change(&self, row: &StoredRow, change: &Change, rows: &[StoredRow]) -> Result<ReviewHunk> {
        let (base, proposed) = (row.base.as_ref(), row.proposed.as_ref());
        let hunk = |field: &str, what: String, before: Option<String>, after: Option<String>| ReviewHunk {
            id: String::new(),
            field: field.to_owned(),
            what,
            before,
            after,
            context_before: String::new(),
            context_after: String::new(),
            state: HunkState::Pending,
        };
        let either = proposed.or(base);
        Ok(match (row.kind, change) {
            (EntityKind::Note, Change::Create) => hunk(
                "note",
                format!(
                    "New note in {}",
                    self.notebook_name(text_of(field(either, "notebook_id")), rows)?
                ),
                None,
                text_of(field(proposed, "body")),
            ),
            (EntityKind::Note, Change::Delete) => {
                hunk("note", "Note deleted".into(), text_of(field(base, "body")), None)
            }
            (EntityKind::Note, Change::Lines(lines)) => {
                let body = text_of(field(base, "body")).unwrap_or_default();
                let chars: Vec<char> = body.chars().collect();
                let line_before = {
                    let upto: String = chars[..lines.start.min(chars.len())].iter().collect();
                    upto.trim_end_matches('\n')
                        .rsplit('\n')
                        .next()
                        .unwrap_or_default()
                        .to_owned()
                };
                let line_after = {
                    let from: String = chars[lines.end.min(chars.len())..].iter().collect();
                    from.split('\n').next().unwrap_or_default().to_owned()
                };
                let empty = |s: &str| (!s.is_empty()).then(|| s.to_owned());
                ReviewHunk {
                    context_before: if lines.start == 0 { String::new() } else { line_before },
                    context_after: line_after,
                    ..hunk("text", "Text".into(), empty(&lines.old), empty(&lines.text))
                }
            }
            (EntityKind::Note, Change::Field(column)) => match column.as_str() {
                "title" => hunk(
                    "title",
                    "Title".into(),
                    text_of(field(base, "title")),
                    text_of(field(proposed, "title")),
                ),
                "notebook_id" => hunk(
                    "notebook",
                    "Notebook".into(),
                    Some(self.notebook_name(text_of(field(base, column)), rows)?),
                    Some(self.notebook_name(text_of(field(proposed, column)), rows)?),
                ),
                "deleted" => {
                    let trashed = !matches!(field(proposed, column), None | Some(Value::Null));
                    let what = if trashed {
                        "Moved to the trash"
                    } else {
                        "Restored from the trash"
                    };
                    hunk("trash", what.into(), None, None)
                }
                "is_todo" => {
                    let todo = field(proposed, column) == Some(&Value::from(1));
                    hunk(
                        "todo",
                        if todo { "Made a to-do" } else { "No longer a to-do" }.into(),
                        None,
                        None,
                    )
                }
                "todo_completed" => {
                    let done = !matches!(field(proposed, column), None | Some(Value::Null));
                    hunk(
                        "completed",
                        if done { "Marked done" } else { "Marked not done" }.into(),
                        None,
                        None,
                    )
                }
                other => hunk(
                    other,
                    other.replace('_', " "),
                    text_of(field(base, other)),
                    text_of(field(proposed, other)),
                ),
            },
            (EntityKind::NoteTag, _) => {
                let tag_id = row.entity_id.split('/').nth(1).unwrap_or_default();
                let name = self.tag_name(tag_id, rows)?;
                match change {
                    Change::Delete => hunk("tag", format!("Tag #{name} removed"), Some(format!("#{name}")), None),
                    _ => hunk("tag", format!("Tag #{name} added"), None, Some(format!("#{name}"))),
                }
            }
            (EntityKind::Attribute, _) => {
                let kind = text_of(field(either, "kind")).unwrap_or_else(|| "label".into());
                let name = text_of(field(either, "name")).unwrap_or_default();
                let value = |row: Option<&Value>| row.and_then(|_| text_of(field(row, "value")));
                let label = if kind == "relation" { "Relation" } else { "Label" };
                hunk(&kind, format!("{label} {name}"), value(base), value(proposed))
            }
            (EntityKind::Notebook, Change::Create) => hunk(
                "notebook",
                format!(
                    "New notebook in {}",
                    self.notebook_name(text_of(field(proposed, "parent_id")), rows)?
                ),
                None,
                text_of(field(proposed, "title")),
            ),
            (EntityKind::Notebook, Change::Delete) => hunk(
                "notebook",
                "Notebook deleted".into(),
                text_of(field(base, "title")),
                None,
            ),
            (EntityKind::Notebook, Change::Field(column)) if column == "parent_id" => hunk(
                "parent",
                "Moved".into(),
                Some(self.notebook_name(text_of(field(base, column)), rows)?),
                Some(self.notebook_name(text_of(field(proposed, column)), rows)?),
            ),
            (EntityKind::Notebook | EntityKind::Tag, Change::Field(column)) => hunk(
                "name",
                "Renamed".into(),
                text_of(field(base, column)),
                text_of(field(proposed, column)),
            ),
            (_, Change::Delete) => hunk("delete", format!("{} removed", row.kind.as_str()), None, None),
            (_, _) => hunk("change", format!("{} changed", row.kind.as_str()), None, None),
        })
    }

    /// A notebook's title by id: as it is, or as the set makes it.
    fn notebook_name(&self, id: Option<String>, rows: &[StoredRow]) -> Result<String> {
        let Some(id) = id else {
            return Ok("?".into());
        };
        if id == crate::entity::ROOT_NOTEBOOK_ID {
            return Ok("the top level".into());
        }
        if let Some(row) = rows
            .iter()
            .find(|r| r.kind == EntityKind::Notebook && r.entity_id == id)
            && let Some(title) = text_of(field(row.proposed.as_ref().or(row.base.as_ref()), "title"))
        {
            return Ok(title);
        }
        let title: Option<String> = self
            .conn
            .query_row("SELECT title FROM notebooks WHERE id = ?1", [&id], |r| r.get(0))
            .optional()?;
        Ok(title.unwrap_or(id))
    }

    /// A tag's name by id: as it is, or as the set makes it.
    fn tag_name(&self, id: &str, rows: &[StoredRow]) -> Result<String> {
        if let Some(row) = rows.iter().find(|r| r.kind == EntityKind::Tag && r.entity_id == id)
            && let Some(name) = text_of(field(row.proposed.as_ref().or(row.base.as_ref()), "name"))
        {
            return Ok(name);
        }
        let name: Option<String> = self
            .conn
            .query_row("SELECT name FROM tags WHERE id = ?1", params![id], |r| r.get(0))
            .optional()?;
        Ok(name.unwrap_or_else(|| id.to_owned()))
    }
}

/// The item a stored row belongs to: the note of a note, tag link or attribute; a notebook; a tag.
pub(crate) fn item_of(row: &StoredRow) -> (&'static str, String) {
    match row.kind {
        EntityKind::Notebook => ("notebook", row.entity_id.clone()),
        EntityKind::Tag => ("tag", row.entity_id.clone()),
        kind => {
            let note = crate::write::note_of(kind, &row.entity_id, row.proposed.as_ref().or(row.base.as_ref()));
            ("note", note.unwrap_or_else(|| row.entity_id.clone()))
        }
    }
}
