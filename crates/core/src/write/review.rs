//! The write side of review: recording what a staged write changed, showing a client its pending changes (inside a
//! transaction that is rolled back), and accepting or rejecting changes (see [`crate::review`]).

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use crate::entity::{Actor, EntityKind};
use crate::error::{Error, Missing, Result};
use crate::history;
use crate::read::item_of;
use crate::review::{OPEN_SET_MS, Selection, StoredRow, is_change, merge_row};

use super::{Writer, note_of};

/// What one staged write changed: per entity, the row before it (the first time it touched it) and after.
pub(crate) type Capture = Vec<(EntityKind, String, Option<Value>, Option<Value>)>;

/// What a decision did: changes accepted and rejected, chosen ones left pending as stale (`ROW.N`).
pub(crate) type Decided = (usize, usize, Vec<String>);

impl<'a> Writer<'a> {
    /// The highest change-log entry so far (what a staged write adds comes after it).
    pub(crate) fn change_log_mark(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |r| r.get(0))?)
    }

    /// What this transaction changed after `mark`: each entity's row before its first change and as it is now.
    pub(crate) fn staged_capture(&self, mark: i64) -> Result<Capture> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT entity, entity_id, before FROM changes WHERE seq > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([mark], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for row in rows {
            let (entity, id, before) = row?;
            let Some(kind) = EntityKind::parse(&entity) else {
                continue;
            };
            if !seen.insert((entity, id.clone())) {
                continue;
            }
            let before = before.and_then(|t| serde_json::from_str(&t).ok());
            let after = history::snapshot(self.conn, kind, &id)?;
            out.push((kind, id, before, after));
        }
        Ok(out)
    }

    /// Records a staged write in the client's open review set (a new one when it has none, or when the user acted
    /// on it or it lay still for half an hour). Returns the set, or `None` when the write changed nothing.
    pub(crate) fn record_staged(&mut self, client: &str, capture: Capture) -> Result<Option<i64>> {
        let changes: Capture = capture
            .into_iter()
            .filter(|(_, _, before, after)| is_change(before.as_ref(), after.as_ref()))
            .collect();
        if changes.is_empty() {
            return Ok(None);
        }
        let now = self.now().as_millis();
        let open: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM review_sets WHERE client = ?1 AND closed = 0 AND updated >= ?2 ORDER BY id DESC LIMIT 1",
                params![client, now - OPEN_SET_MS],
                |r| r.get(0),
            )
            .optional()?;
        let set = match open {
            Some(set) => set,
            None => {
                self.conn.execute(
                    "INSERT INTO review_sets (client, created, updated) VALUES (?1, ?2, ?2)",
                    params![client, now],
                )?;
                self.conn.last_insert_rowid()
            }
        };
        let json = |v: &Option<Value>| v.as_ref().map(Value::to_string);
        for (kind, id, before, after) in &changes {
            let existing: Option<(i64, Option<String>)> = self
                .conn
                .query_row(
                    "SELECT id, base FROM review_rows WHERE set_id = ?1 AND entity = ?2 AND entity_id = ?3",
                    params![set, kind.as_str(), id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            match existing {
                Some((row, base)) => {
                    let base: Option<Value> = base.and_then(|t| serde_json::from_str(&t).ok());
                    if is_change(base.as_ref(), after.as_ref()) {
                        self.conn.execute(
                            "UPDATE review_rows SET proposed = ?2, decisions = '{}', settled = 0 WHERE id = ?1",
                            params![row, json(after)],
                        )?;
                    } else {
                        // The client put it back as it was.
                        self.conn.execute("DELETE FROM review_rows WHERE id = ?1", [row])?;
                    }
                }
                None => {
                    self.conn.execute(
                        "INSERT INTO review_rows (set_id, entity, entity_id, base, proposed) VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![set, kind.as_str(), id, json(before), json(after)],
                    )?;
                }
            }
        }
        self.conn
            .execute("UPDATE review_sets SET updated = ?2 WHERE id = ?1", params![set, now])?;
        let left: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM review_rows WHERE set_id = ?1)",
            [set],
            |r| r.get(0),
        )?;
        if !left {
            self.conn.execute("DELETE FROM review_sets WHERE id = ?1", [set])?;
            self.review_news(set, "dropped")?;
            return Ok(None);
        }
        self.review_news(set, "staged")?;
        Ok(Some(set))
    }

    /// Puts the client's pending changes into this transaction, merged onto the workspace as it is (what accepting
    /// them all would give; a stale change is left out), so that what the client reads and writes next sees them.
    /// Only ever done in a transaction that is rolled back. Returns the sets shown.
    pub(crate) fn apply_review_overlay(&mut self, client: &str) -> Result<Vec<i64>> {
        let rows = self.review_rows_where("s.client = ?1 AND r.settled = 0", &client)?;
        let mut shown = Vec::new();
        for row in &rows {
            let current = history::snapshot(self.conn, row.kind, &row.entity_id)?;
            let merged = merge_row(
                row.kind,
                row,
                current.as_ref(),
                &row.accepted(),
                &row.pending(),
                self.now(),
            );
            if merged.target != current {
                // Best effort: a row that no longer fits (its note gone) is left out of the view, whole.
                if self
                    .attempt(|w| w.put_review_row(row, &rows, merged.target.as_ref(), false))
                    .is_ok()
                    && !shown.contains(&row.set_id)
                {
                    shown.push(row.set_id);
                }
            }
        }
        Ok(shown)
    }

    /// Stores a staged row's merged state: through the change log and the guards (`logged`, accepting), or as a raw
    /// row (the client's view of its pending changes). Keeps revisions, links and the search index in step.
    fn put_review_row(
        &mut self,
        row: &StoredRow,
        rows: &[StoredRow],
        target: Option<&Value>,
        logged: bool,
    ) -> Result<()> {
        let (kind, mut id, mut target) = (row.kind, row.entity_id.clone(), target.cloned());
        if kind == EntityKind::NoteTag
            && let Some(Value::Object(link)) = &mut target
        {
            // A tag the client made: made now, or one of its name made since.
            let tag = link
                .get("tag_id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if history::snapshot(self.conn, EntityKind::Tag, &tag)?.is_none() {
                let made = rows
                    .iter()
                    .find(|r| r.kind == EntityKind::Tag && r.entity_id == tag)
                    .and_then(|r| r.proposed.clone())
                    .ok_or(Error::NotFound(Missing::Tag))?;
                let name = made.get("name").and_then(Value::as_str).unwrap_or_default();
                match self.tag_id(name)? {
                    Some(existing) => {
                        id = format!("{}/{existing}", id.split('/').next().unwrap_or_default());
                        link.insert("tag_id".into(), Value::String(existing));
                    }
                    None => self.put_raw(EntityKind::Tag, &tag, Some(&made), logged)?,
                }
            }
        }
        if kind == EntityKind::Tag && row.base.is_none() && history::snapshot(self.conn, kind, &id)?.is_none() {
            let name = target
                .as_ref()
                .and_then(|t| t.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if self.tag_id(name)?.is_some() {
                return Ok(());
            }
        }
        let current = history::snapshot(self.conn, kind, &id)?;
        if logged && !self.actor.is_user() {
            self.check_revert_allowed(kind, &id, current.as_ref().or(target.as_ref()))?;
        }
        if kind == EntityKind::Note {
            self.before_note_restore(&id, target.as_ref())?;
        }
        self.put_raw(kind, &id, target.as_ref(), logged)?;
        if let Some(note) = note_of(kind, &id, target.as_ref().or(current.as_ref())) {
            if logged && self.sealer()?.is_some() && self.note_summary(&note).is_ok() {
                self.reconcile_seal(&note)?;
            }
            self.refresh_search(&note)?;
            if current.is_none() && kind == EntityKind::Note {
                crate::links::refresh_target_id(self.conn, &note)?;
            }
        }
        if kind == EntityKind::Notebook {
            self.reader.forget_scope();
            if logged {
                self.refresh_search_everywhere()?;
            }
        }
        Ok(())
    }

    fn put_raw(&mut self, kind: EntityKind, id: &str, target: Option<&Value>, logged: bool) -> Result<()> {
        if logged {
            self.mutate(kind, id, |w| history::restore(w.conn, kind, id, target))
        } else {
            history::restore(self.conn, kind, id, target)
        }
    }

    /// Accepts (as the client: the writer's actor must be it) or rejects (as the user) the chosen pending changes of
    /// a review set. A change that no longer fits is left pending and named; everything else is decided.
    pub(crate) fn decide_review(&mut self, set: i64, accept: bool, selection: &Selection) -> Result<Decided> {
        let client = self.review_client(set)?;
        if accept && *self.actor != (Actor::Mcp { client: client.clone() }) {
            return Err(Error::UserOnly("accept staged changes"));
        }
        let rows = self.review_rows_where("r.set_id = ?1", &set)?;
        let chosen = choose(&rows, selection)?;
        let (mut accepted, mut rejected, mut stale) = (0, 0, Vec::new());
        let mut decided_rows = Vec::new();
        for row in &rows {
            let Some(chosen) = chosen.get(&row.id).filter(|c| !c.is_empty()) else {
                continue;
            };
            let mut decided: BTreeMap<usize, Option<String>> =
                row.decisions.iter().map(|(i, d)| (*i, Some(d.clone()))).collect();
            // A tag the client made is shown (and counted) as the tag it put on a note.
            let counted = usize::from(!(row.kind == EntityKind::Tag && row.base.is_none()));
            if accept {
                let current = history::snapshot(self.conn, row.kind, &row.entity_id)?;
                let merged = merge_row(row.kind, row, current.as_ref(), &row.accepted(), chosen, self.now());
                let mut left_out: Vec<usize> = merged.stale.clone();
                // In a savepoint: a row that fails half-way (a tag made, its link refused) leaves nothing behind.
                if merged.target != current
                    && self
                        .attempt(|w| w.put_review_row(row, &rows, merged.target.as_ref(), true))
                        .is_err()
                {
                    // It cannot be written as things are now (a protected note, a note or notebook gone).
                    left_out = chosen.clone();
                }
                for i in chosen {
                    if left_out.contains(i) {
                        stale.push(format!("{}.{i}", row.id));
                    } else {
                        // Named with its change set once the write has one.
                        decided.insert(*i, None);
                        accepted += counted;
                    }
                }
            } else {
                for i in chosen {
                    decided.insert(*i, Some("rejected".into()));
                    rejected += counted;
                }
            }
            decided_rows.push((row.id, row.changes().len(), decided));
        }
        let accepted_as = match self.change_set_id() {
            Some(id) => format!("accepted:{id}"),
            None => "accepted".to_owned(),
        };
        for (row, changes, decided) in decided_rows {
            let settled = decided.len() >= changes;
            let text: BTreeMap<String, String> = decided
                .into_iter()
                .map(|(i, d)| (i.to_string(), d.unwrap_or_else(|| accepted_as.clone())))
                .collect();
            self.conn.execute(
                "UPDATE review_rows SET decisions = ?2, settled = ?3 WHERE id = ?1",
                params![
                    row,
                    serde_json::to_string(&text).unwrap_or_else(|_| "{}".into()),
                    settled
                ],
            )?;
        }
        // The client's next write starts another set; tags it made and no note kept are settled with the set.
        self.conn.execute(
            "UPDATE review_sets SET closed = 1, \
             decided = max(?2, (SELECT coalesce(max(decided), 0) + 1 FROM review_sets)) WHERE id = ?1",
            params![set, self.now().as_millis()],
        )?;
        self.review_news(set, "decided")?;
        self.conn.execute(
            "UPDATE review_rows SET settled = 1 WHERE set_id = ?1 AND entity = 'tag' AND base IS NULL \
             AND NOT EXISTS (SELECT 1 FROM review_rows o WHERE o.set_id = ?1 AND o.settled = 0 AND o.entity = 'note_tag')",
            [set],
        )?;
        if let Some(change_set) = self.change_set_id().map(str::to_owned) {
            self.conn.execute(
                "UPDATE review_sets SET change_sets = json_insert(change_sets, '$[#]', ?2) WHERE id = ?1",
                params![set, change_set],
            )?;
        }
        Ok((accepted, rejected, stale))
    }

    /// Forgets staged changes of notes that are protected now: no plain text of a protected note stays in the review
    /// tables, and nobody can accept it into one. Done before every commit; nothing to do without staged changes.
    pub(crate) fn drop_protected_reviews(&self) -> Result<()> {
        let any: bool = self
            .conn
            .query_row("SELECT EXISTS (SELECT 1 FROM review_rows)", [], |r| r.get(0))?;
        if !any {
            return Ok(());
        }
        let mut dropped = self.conn.prepare(
            "WITH RECURSIVE p(id) AS (SELECT id FROM notebooks WHERE is_protected = 1 \
             UNION SELECT nb.id FROM notebooks nb JOIN p ON nb.parent_id = p.id), \
             hidden(id) AS (SELECT id FROM notes WHERE is_protected = 1 OR notebook_id IN (SELECT id FROM p)) \
             DELETE FROM review_rows WHERE \
               (entity = 'note' AND entity_id IN (SELECT id FROM hidden)) \
               OR (entity = 'note_tag' AND substr(entity_id, 1, instr(entity_id, '/') - 1) IN (SELECT id FROM hidden)) \
               OR (entity IN ('attribute', 'attachment') AND coalesce(json_extract(proposed, '$.note_id'), \
                   json_extract(base, '$.note_id')) IN (SELECT id FROM hidden)) \
               OR (entity = 'note' AND json_extract(proposed, '$.notebook_id') IN (SELECT id FROM p)) \
             RETURNING set_id",
        )?;
        let sets: BTreeSet<i64> = dropped.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        for set in sets {
            self.review_news(set, "dropped")?;
        }
        Ok(())
    }

    /// Tells watchers that a review set was staged to, decided or dropped ([`crate::news`]).
    fn review_news(&self, set: i64, kind: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO review_news (set_id, kind) VALUES (?1, ?2)",
            params![set, kind],
        )?;
        Ok(())
    }
}

/// The pending changes a selection names, per stored row. A note the set makes is chosen whole: its tags and
/// attributes cannot be had without it.
fn choose(rows: &[StoredRow], selection: &Selection) -> Result<BTreeMap<i64, Vec<usize>>> {
    let mut out: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let made: BTreeSet<String> = rows
        .iter()
        .filter(|r| r.kind == EntityKind::Note && r.base.is_none())
        .map(|r| format!("note:{}", r.entity_id))
        .collect();
    let mut whole: BTreeSet<String> = BTreeSet::new();
    match selection {
        Selection::All => {
            for row in rows {
                out.insert(row.id, row.pending());
            }
            return Ok(out);
        }
        Selection::Items(keys) => whole.extend(keys.iter().cloned()),
        Selection::Hunks(ids) => {
            for id in ids {
                let parsed = id
                    .split_once('.')
                    .and_then(|(r, n)| Some((r.parse::<i64>().ok()?, n.parse::<usize>().ok()?)));
                let Some((row_id, n)) = parsed else {
                    return Err(Error::invalid(format!(
                        "'{id}' is not a change of this review (ROW.N)."
                    )));
                };
                let Some(row) = rows.iter().find(|r| r.id == row_id) else {
                    return Err(Error::invalid(format!("'{id}' is not a change of this review.")));
                };
                let (kind, entity) = item_of(row);
                let key = format!("{kind}:{entity}");
                if made.contains(&key) {
                    whole.insert(key);
                } else if row.pending().contains(&n) {
                    out.entry(row_id).or_default().push(n);
                }
            }
        }
    }
    for row in rows {
        let (kind, entity) = item_of(row);
        if whole.contains(&format!("{kind}:{entity}")) {
            out.insert(row.id, row.pending());
        }
    }
    let known: BTreeSet<String> = rows
        .iter()
        .map(|r| {
            let (kind, entity) = item_of(r);
            format!("{kind}:{entity}")
        })
        .collect();
    if let Some(unknown) = whole.iter().find(|k| !known.contains(*k)) {
        return Err(Error::invalid(format!("'{unknown}' is not in this review.")));
    }
    Ok(out)
}
