//! `delete_attribute`: remove one attribute from a note.

use crate::prelude::*;

/// Arguments of `delete_attribute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    pub(crate) note_id: String,
    /// From get_attributes.
    #[serde(alias = "id")]
    pub(crate) attribute_id: String,
}

/// What was removed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Output {
    pub(crate) note_id: String,
    /// The removed attribute's id.
    pub(crate) attribute_id: String,
    /// Always true: the attribute is gone.
    pub(crate) deleted: bool,
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
