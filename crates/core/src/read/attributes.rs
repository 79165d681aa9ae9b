//! Reading attributes (labels and relations) and backlinks.

use rusqlite::{OptionalExtension, Row};

use super::Reader;
use crate::entity::{Attribute, AttributeKind, NoteSummary, Timestamp, ValueType};
use crate::error::{Error, Missing, Result};
use crate::protection::shows_content;

impl Reader<'_> {
    /// The attributes of a note, labels first, then by name.
    ///
    /// A protected note's attributes are its content: withheld from non-user actors.
    pub fn attributes(&self, note_id: &str) -> Result<Vec<Attribute>> {
        let note = self.note_summary(note_id)?;
        self.ensure_content_visible(&note)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, kind, name, value, created, updated, value_type FROM attributes WHERE note_id = ?1 \
             ORDER BY kind, name",
        )?;
        let rows = stmt.query_map([note_id], attribute_from_row)?;
        let attributes: Vec<Attribute> = rows.collect::<rusqlite::Result<_>>()?;
        if self.scope.is_none() {
            return Ok(attributes);
        }
        // Through a scope, a relation to a note outside it does not exist.
        Ok(attributes.into_iter().filter(|a| self.attribute_visible(a)).collect())
    }

    /// One attribute. Through a scope, one of a note outside it, or a relation to a note outside it, does not exist.
    /// One of a protected note is withheld from non-user actors.
    pub fn attribute(&self, id: &str) -> Result<Attribute> {
        let attribute = self
            .conn
            .prepare_cached(
                "SELECT id, note_id, kind, name, value, created, updated, value_type FROM attributes WHERE id = ?1",
            )?
            .query_row([id], attribute_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Attribute))?;
        if self.scope.is_some() && !self.attribute_visible(&attribute) {
            return Err(Error::NotFound(Missing::Attribute));
        }
        self.ensure_content_visible(&self.note_summary(&attribute.note_id)?)?;
        Ok(attribute)
    }

    /// Whether this view sees an attribute: its note, and for a relation its target, are visible.
    fn attribute_visible(&self, a: &Attribute) -> bool {
        self.note_summary(&a.note_id).is_ok() && (a.kind == AttributeKind::Label || self.note_summary(&a.value).is_ok())
    }

    /// The relations that point at a note, with the notes that own them. A protected note's relations are its
    /// content: non-user actors do not see them.
    pub fn backlinks(&self, note_id: &str) -> Result<Vec<(Attribute, NoteSummary)>> {
        self.note_summary(note_id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, kind, name, value, created, updated, value_type FROM attributes WHERE target_note_id = ?1 \
             ORDER BY note_id, name",
        )?;
        let attributes = stmt
            .query_map([note_id], attribute_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut links = Vec::with_capacity(attributes.len());
        for attribute in attributes {
            match self.note_summary(&attribute.note_id) {
                Ok(owner) if shows_content(self.actor, &owner) => links.push((attribute, owner)),
                Ok(_) => {}
                // A note outside this view's scope links here: it does not exist for this view.
                Err(Error::NotFound(_)) if self.scope.is_some() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(links)
    }
}

fn attribute_from_row(r: &Row<'_>) -> rusqlite::Result<Attribute> {
    let kind: String = r.get(2)?;
    Ok(Attribute {
        id: r.get(0)?,
        note_id: r.get(1)?,
        kind: AttributeKind::parse(&kind).unwrap_or(AttributeKind::Label),
        name: r.get(3)?,
        value: r.get(4)?,
        value_type: ValueType::parse(&r.get::<_, String>(7)?),
        created: Timestamp(r.get(5)?),
        updated: Timestamp(r.get(6)?),
    })
}
