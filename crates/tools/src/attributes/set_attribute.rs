//! `set_attribute`: set a label's value or a relation's target on a note.

use super::{AttributeInfo, AttributeType, ValueType, attribute_info};
use crate::prelude::*;

/// Arguments of `set_attribute`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub note_id: String,
    #[serde(rename = "type", alias = "kind")]
    pub kind: AttributeType,
    /// Letters, digits, spaces, _ : - or . (e.g. status).
    pub name: String,
    /// A label's text, or a relation's target note id.
    #[serde(default)]
    pub value: String,
    /// json: value is JSON text (true, 42, ["a"]) kept as a structured label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<ValueType>,
}

tool! {
    /// Set a label or relation on a note, replacing one of the same type and name. Names that change how notes
    /// behave (run, widget, ...) are the user's.
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
    let attribute = match (kind, input.value_type) {
        (quire_core::AttributeKind::Label, Some(ValueType::Json)) => {
            w.set_json_label(&input.note_id, &input.name, &input.value)?
        }
        (quire_core::AttributeKind::Relation, Some(ValueType::Json)) => {
            return Err(ToolError::new(
                "A relation's value is a note id: only a label can hold JSON (value_type json).",
            ));
        }
        _ => w.set_attribute(&input.note_id, kind, &input.name, &input.value)?,
    };
    attribute_info(w, attribute)
}
