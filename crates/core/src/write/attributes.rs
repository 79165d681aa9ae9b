//! Attributes: labels (text or JSON) and relations.

use crate::sql::Cached;
use rusqlite::{OptionalExtension, params};

use crate::entity::{Attribute, AttributeKind, EntityKind, ValueType};
use crate::error::{Error, Result};
use crate::guard;

use super::Writer;

impl<'a> Writer<'a> {
    /// Sets a label's value (text) or a relation's target note on a note, replacing the attribute of the same kind
    /// and name if there is one.
    pub fn set_attribute(&mut self, note_id: &str, kind: AttributeKind, name: &str, value: &str) -> Result<Attribute> {
        self.put_attribute(note_id, kind, name, value, ValueType::Text)
    }

    /// Sets a structured label: `json` is JSON text (`true`, `42`, `["a","b"]`, `{"k":"v"}`...), kept as written,
    /// replacing the label of the same name if there is one (text or JSON). Text that is not JSON is refused.
    pub fn set_json_label(&mut self, note_id: &str, name: &str, json: &str) -> Result<Attribute> {
        let json = json.trim();
        if serde_json::from_str::<serde::de::IgnoredAny>(json).is_err() {
            return Err(Error::invalid(format!(
                "The value of label '{name}' is not JSON; give JSON text such as true, 42, [\"a\"] or {{\"k\": 1}}."
            )));
        }
        self.put_attribute(note_id, AttributeKind::Label, name, json, ValueType::Json)
    }

    fn put_attribute(
        &mut self,
        note_id: &str,
        kind: AttributeKind,
        name: &str,
        value: &str,
        value_type: ValueType,
    ) -> Result<Attribute> {
        self.ensure_note_writable(note_id)?;
        let target = match kind {
            AttributeKind::Relation => {
                let target = self.note_summary(value).map_err(|e| match e {
                    Error::NotFound(_) => Error::InvalidTarget("Relation target note not found".into()),
                    other => other,
                })?;
                Some(target.id)
            }
            AttributeKind::Label => None,
        };
        if !self.actor.is_user() && guard::is_dangerous_attribute(name) {
            return Err(Error::DangerousAttribute(name.to_owned()));
        }
        guard::attribute_name(name)?;
        if value.len() > guard::MAX_BODY_BYTES {
            return Err(Error::invalid("Attribute value is too long."));
        }
        let existing: Option<String> = self
            .conn
            .row_cached(
                "SELECT id FROM attributes WHERE note_id = ?1 AND kind = ?2 AND name = ?3",
                params![note_id, kind.as_str(), name],
                |r| r.get(0),
            )
            .optional()?;
        let (id, is_new) = match existing {
            // Through a scope, an attribute it cannot see (a relation to a note outside) is not overwritten.
            Some(id) if self.attribute(&id).is_err() => {
                return Err(Error::OutsideScope(format!(
                    "The note already has a {} named '{name}' that this client cannot see; choose another name",
                    kind.as_str()
                )));
            }
            Some(id) => (id, false),
            None => (self.new_id()?, true),
        };
        let now = self.now.as_millis();
        let write = |w: &Self| {
            // Whether the row exists is known: a plain INSERT or UPDATE (an upsert costs a statement journal).
            if is_new {
                w.conn.exec_cached(
                    "INSERT INTO attributes (id, note_id, kind, name, value, target_note_id, created, updated, \
                     value_type) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
                    params![
                        id,
                        note_id,
                        kind.as_str(),
                        name,
                        value,
                        target,
                        now,
                        value_type.as_str()
                    ],
                )?;
            } else {
                w.conn.exec_cached(
                    "UPDATE attributes SET value = ?2, target_note_id = ?3, updated = ?4, value_type = ?5 \
                     WHERE id = ?1 AND (value IS NOT ?2 OR value_type IS NOT ?5)",
                    params![id, value, target, now, value_type.as_str()],
                )?;
            }
            Ok(())
        };
        if is_new {
            self.mutate_new(EntityKind::Attribute, &id, write)?;
        } else {
            self.mutate(EntityKind::Attribute, &id, write)?;
        }
        if kind == AttributeKind::Label {
            // A label's value may hold links (and `aliases` names the note).
            self.refresh_links(note_id)?;
        }
        if is_new {
            // Just written as it is: not read back.
            return Ok(Attribute {
                id,
                note_id: note_id.to_owned(),
                kind,
                name: name.to_owned(),
                value: value.to_owned(),
                value_type,
                created: self.now,
                updated: self.now,
            });
        }
        self.attribute(&id)
    }

    /// Removes an attribute from a note.
    pub fn delete_attribute(&mut self, note_id: &str, attribute_id: &str) -> Result<()> {
        self.ensure_note_writable(note_id)?;
        let attribute = self.attribute(attribute_id)?;
        if attribute.note_id != note_id {
            return Err(Error::InvalidTarget(
                "Attribute does not belong to the specified note".into(),
            ));
        }
        if !self.actor.is_user() && guard::is_dangerous_attribute(&attribute.name) {
            return Err(Error::DangerousAttribute(attribute.name));
        }
        self.mutate(EntityKind::Attribute, attribute_id, |w| {
            w.delete_row(EntityKind::Attribute, attribute_id)
        })?;
        if attribute.kind == AttributeKind::Label {
            self.refresh_links(note_id)?;
        }
        Ok(())
    }
}
