//! Setting a note's field from a view: a table's cell or a board's column writes the value where the note keeps
//! it, an inline field's line (`key:: value`, `[key:: value]`) or a label, so that the note reads as it did with
//! one value changed. Through the ordinary note update and labels' write: guards, revisions, one change set.

use serde::Serialize;

use super::{NoteUpdate, Writer};
use crate::entity::AttributeKind;
use crate::error::{Error, Result};
use crate::markdown::{LineKind, lines};
use crate::structure::{field_key, set_field_in_line, structure};

/// Where [`Writer::set_note_field`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "in", rename_all = "lowercase")]
pub enum FieldWritten {
    /// The inline field on this line (from 0) of the body.
    Line {
        /// The line.
        line: usize,
    },
    /// The label of this name.
    Label {
        /// Its name.
        name: String,
    },
}

/// Names a view cannot write: the implicit fields.
const IMPLICIT: &[&str] = &["file", "this", "tags", "etags", "aliases"];

impl Writer<'_> {
    /// Sets the field `name` of a note to `value` (one line): the first inline field of that name in its text, or
    /// else its label of that name (matched as queries match names: case, spaces and formatting aside), made when
    /// there is none.
    pub fn set_note_field(&mut self, note_id: &str, name: &str, value: &str) -> Result<FieldWritten> {
        let key = field_key(name);
        if key.is_empty() || IMPLICIT.contains(&key.as_str()) || key.starts_with("file.") {
            return Err(Error::invalid(format!(
                "\"{name}\" is not a field a view can set: it is the note's own, or empty"
            )));
        }
        if value.contains(['\n', '\r']) {
            return Err(Error::invalid("A field's value is one line."));
        }
        let value = value.trim();
        let note = self.note(note_id)?;
        if let Some(field) = structure(&note.body).fields.into_iter().find(|f| f.key == key) {
            let mut changed = false;
            let body: String = lines(&note.body)
                .into_iter()
                .enumerate()
                .map(|(n, line)| {
                    let text = line.text.trim_end_matches(['\n', '\r']);
                    let ending = &line.text[text.len()..];
                    match (n == field.line && line.kind == LineKind::Text)
                        .then(|| set_field_in_line(text, &key, value))
                        .flatten()
                    {
                        Some(new) => {
                            changed = true;
                            format!("{new}{ending}")
                        }
                        None => line.text.to_owned(),
                    }
                })
                .collect();
            if changed {
                if body != note.body {
                    self.update_note(
                        note_id,
                        NoteUpdate {
                            body: Some(body),
                            ..NoteUpdate::default()
                        },
                    )?;
                }
                return Ok(FieldWritten::Line { line: field.line });
            }
        }
        let label = self
            .attributes(note_id)?
            .into_iter()
            .find(|a| a.kind == AttributeKind::Label && field_key(&a.name) == key)
            .map_or_else(|| name.trim().to_owned(), |a| a.name);
        self.set_attribute(note_id, AttributeKind::Label, &label, value)?;
        Ok(FieldWritten::Label { name: label })
    }
}
