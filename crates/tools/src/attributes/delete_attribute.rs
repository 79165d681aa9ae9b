//! `delete_attribute`: remove one attribute from a note.

use crate::prelude::*;

/// Arguments of `delete_attribute`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub note_id: String,
    /// From get_attributes.
    #[serde(alias = "id")]
    pub attribute_id: String,
}

/// What was removed.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    pub note_id: String,
    /// The removed attribute's id.
    pub attribute_id: String,
    /// Always true: the attribute is gone.
    pub deleted: bool,
}

tool! {
    /// Remove an attribute from a note.
    name: "delete_attribute",
    title: "Delete attribute",
    effect: mutating,
    input: Input,
    output: Output,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<Output, ToolError> {
    w.delete_attribute(&input.note_id, &input.attribute_id)?;
    Ok(Output {
        note_id: input.note_id,
        attribute_id: input.attribute_id,
        deleted: true,
    })
}
