//! Reading history: revisions, the change log and change sets.

use rusqlite::{OptionalExtension, Row, params};

use super::{Page, PageOf, Reader, actor_from_text};
use crate::entity::{Actor, Change, ChangeSet, EntityKind, Operation, Revision, Timestamp};
use crate::error::{Error, Missing, Result};

impl Reader<'_> {
    /// The revisions of a note, newest first. Withheld from non-user actors when the note is protected.
    pub fn revisions(&self, note_id: &str) -> Result<Vec<Revision>> {
        let summary = self.note_summary(note_id)?;
        self.ensure_content_visible(&summary)?;
        self.record_read(&summary, None, "revisions");
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, note_id, title, body, actor, change_set_id, created, sealed FROM revisions \
             WHERE note_id = ?1 ORDER BY seq DESC",
        )?;
        let rows = stmt.query_map([note_id], |r| {
            Ok((revision_from_row(r)?, r.get::<_, Option<Vec<u8>>>(7)?))
        })?;
        let mut revisions = Vec::new();
        for row in rows {
            let (mut revision, sealed) = row?;
            if let Some(blob) = sealed {
                let what = format!("revision {}", revision.id);
                revision.body = self.key_for_note(&summary)?.open_text(
                    &summary.id,
                    crate::seal::kind::REVISION,
                    revision.id,
                    &blob,
                    &what,
                )?;
            }
            revisions.push(revision);
        }
        Ok(revisions)
    }

    /// The change log, newest first, optionally only changes at or after `since`.
    pub fn changes(&self, since: Option<Timestamp>, page: Page) -> Result<PageOf<Change>> {
        let since = since.map_or(i64::MIN, Timestamp::as_millis);
        let scope = self.scope_param()?;
        let in_scope = change_in_scope("?4");
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM changes c WHERE c.at >= ?1 AND {in_scope} AND ?2 = ?2 AND ?3 = ?3"),
            params![since, 0, 0, scope],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.seq, c.change_set_id, c.entity, c.entity_id, c.operation, c.actor, c.at FROM changes c \
             WHERE c.at >= ?1 AND {in_scope} ORDER BY c.seq DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![since, page.sql_limit(), page.sql_offset(), scope],
            change_from_row,
        )?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

    /// The sequence number of the latest change (0 when there is none): cheap, for watchers that look for news.
    pub fn latest_change_seq(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |r| r.get(0))?)
    }

    /// Up to `limit` changes after sequence number `seq`, oldest first (undone changes included: an undo is a
    /// change too).
    pub fn changes_after(&self, seq: i64, limit: u64) -> Result<Vec<Change>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, change_set_id, entity, entity_id, operation, actor, at FROM changes WHERE seq > ?1 \
             ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![seq, i64::try_from(limit).unwrap_or(i64::MAX)], change_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The changes of one change set, in the order they were made.
    pub fn changes_in_set(&self, change_set_id: &str) -> Result<Vec<Change>> {
        self.change_set(change_set_id)?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.seq, c.change_set_id, c.entity, c.entity_id, c.operation, c.actor, c.at FROM changes c \
             WHERE c.change_set_id = ?1 AND {} ORDER BY c.seq",
            change_in_scope("?2")
        ))?;
        let rows = stmt.query_map(params![change_set_id, self.scope_param()?], change_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One change set. Through a scope, only one that changed something inside it.
    pub fn change_set(&self, id: &str) -> Result<ChangeSet> {
        self.conn
            .query_row(
                &format!(
                    "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id), undoes \
                     FROM change_sets s WHERE id = ?1 AND (?2 IS NULL OR EXISTS (SELECT 1 FROM changes c \
                     WHERE c.change_set_id = s.id AND {}))",
                    change_in_scope("?2")
                ),
                params![id, self.scope_param()?],
                change_set_from_row,
            )
            .optional()?
            .ok_or(Error::NotFound(Missing::ChangeSet))
    }

    /// The open (not reverted) change set that groups an agent turn's writes, if the turn wrote anything.
    pub fn open_change_set_of(&self, actor: &Actor) -> Result<Option<ChangeSet>> {
        let Some(key) = actor.grouping_key() else {
            return Ok(None);
        };
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM change_sets WHERE actor_key = ?1 AND reverted IS NULL ORDER BY created DESC LIMIT 1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        id.map(|id| self.change_set(&id)).transpose()
    }

    /// The change sets, newest first. Through a scope, those that changed something inside it.
    pub fn change_sets(&self, page: Page) -> Result<PageOf<ChangeSet>> {
        let scope = self.scope_param()?;
        let visible = format!(
            "(?3 IS NULL OR s.id IN (SELECT c.change_set_id FROM changes c WHERE {}))",
            change_in_scope("?3")
        );
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM change_sets s WHERE {visible} AND ?1 = ?1 AND ?2 = ?2"),
            params![0, 0, scope],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id), undoes \
             FROM change_sets s WHERE {visible} ORDER BY created DESC, rowid DESC LIMIT ?1 OFFSET ?2"
        ))?;
        let rows = stmt.query_map(params![page.sql_limit(), page.sql_offset(), scope], change_set_from_row)?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

    /// The change sets that changed a note, its tags, attributes or attachments, newest first.
    pub fn change_sets_of_note(&self, note_id: &str, page: Page) -> Result<PageOf<ChangeSet>> {
        self.note_summary(note_id)?;
        const TOUCHES: &str = "SELECT DISTINCT change_set_id FROM changes WHERE \
            (entity = 'note' AND entity_id = ?1) \
            OR (entity = 'note_tag' AND substr(entity_id, 1, length(?1) + 1) = ?1 || '/') \
            OR (entity IN ('attribute', 'attachment') AND (json_extract(before, '$.note_id') = ?1 \
                OR entity_id IN (SELECT id FROM attributes WHERE note_id = ?1) \
                OR entity_id IN (SELECT id FROM attachments WHERE note_id = ?1)))";
        let total: i64 = self
            .conn
            .query_row(&format!("SELECT count(*) FROM ({TOUCHES})"), [note_id], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id), undoes \
             FROM change_sets s WHERE id IN ({TOUCHES}) ORDER BY created DESC, rowid DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![note_id, page.sql_limit(), page.sql_offset()],
            change_set_from_row,
        )?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }
}

/// SQL that holds when the change `c` is about something inside the scope bound at `param` (a JSON array of
/// notebook ids), or when that parameter is NULL. Changes to tags themselves are outside every scope.
fn change_in_scope(param: &str) -> String {
    let notes = format!("(SELECT id FROM notes WHERE notebook_id IN (SELECT value FROM json_each({param})))");
    let owner = |table: &str| {
        format!("coalesce((SELECT note_id FROM {table} WHERE id = c.entity_id), json_extract(c.before, '$.note_id'))")
    };
    // A label has no target; a relation's target must be inside too.
    let target = "coalesce((SELECT target_note_id FROM attributes WHERE id = c.entity_id), \
                  json_extract(c.before, '$.target_note_id'), '')";
    format!(
        "({param} IS NULL OR (c.entity = 'notebook' AND c.entity_id IN (SELECT value FROM json_each({param}))) \
         OR (c.entity = 'note' AND c.entity_id IN {notes}) \
         OR (c.entity = 'note_tag' AND substr(c.entity_id, 1, instr(c.entity_id, '/') - 1) IN {notes}) \
         OR (c.entity = 'attachment' AND {} IN {notes}) \
         OR (c.entity = 'attribute' AND {} IN {notes} AND {target} IN (SELECT '' UNION ALL SELECT id FROM {notes})))",
        owner("attachments"),
        owner("attributes"),
    )
}

fn revision_from_row(r: &Row<'_>) -> rusqlite::Result<Revision> {
    Ok(Revision {
        id: r.get(0)?,
        note_id: r.get(1)?,
        title: r.get(2)?,
        body: r.get(3)?,
        actor: actor_from_text(&r.get::<_, String>(4)?),
        change_set_id: r.get(5)?,
        created: Timestamp(r.get(6)?),
    })
}

fn change_from_row(r: &Row<'_>) -> rusqlite::Result<Change> {
    let entity: String = r.get(2)?;
    let operation: String = r.get(4)?;
    Ok(Change {
        seq: r.get(0)?,
        change_set_id: r.get(1)?,
        entity: EntityKind::parse(&entity).unwrap_or(EntityKind::Note),
        entity_id: r.get(3)?,
        operation: Operation::parse(&operation).unwrap_or(Operation::Update),
        actor: actor_from_text(&r.get::<_, String>(5)?),
        at: Timestamp(r.get(6)?),
    })
}

fn change_set_from_row(r: &Row<'_>) -> rusqlite::Result<ChangeSet> {
    Ok(ChangeSet {
        id: r.get(0)?,
        actor: actor_from_text(&r.get::<_, String>(1)?),
        created: Timestamp(r.get(2)?),
        reverted: r.get::<_, Option<i64>>(3)?.map(Timestamp),
        change_count: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
        undoes: r.get(5)?,
    })
}
