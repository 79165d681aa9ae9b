//! `set_attribute`: set a label's value or a relation's target on a note.

use super::{AttributeInfo, AttributeType, attribute_info};
use crate::prelude::*;

/// Arguments of `set_attribute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The note's id.
    pub(crate) note_id: String,
    /// label (a name with a text value) or relation (a name pointing at another note).
    #[serde(rename = "type", alias = "kind")]
    pub(crate) kind: AttributeType,
    /// The attribute's name: letters, digits, _ : - or . (for example status, priority, source).
    pub(crate) name: String,
    /// For a label, its value (may be empty); for a relation, the id of the note it points at.
    #[serde(default)]
    pub(crate) value: String,
}

tool! {
    /// Set an attribute on a note: a label (name and text value) or a relation (name and another note's id).
    /// An attribute of the same type and name is replaced. Some names that change how notes behave (run, widget,
    /// renderNote, ...) are reserved for the user.
    name: "set_attribute",
    title: "Set attribute",
    effect: mutating,
    input: Input,
    output: AttributeInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<AttributeInfo, ToolError> {
    let kind = match input.kind {
        AttributeType::Label => quire_core::AttributeKind::Label,
        AttributeType::Relation => quire_core::AttributeKind::Relation,
    };
    let attribute = w.set_attribute(&input.note_id, kind, &input.name, &input.value)?;
    attribute_info(w, attribute)
}
