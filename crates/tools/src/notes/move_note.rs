//! `move_note`: put a note in another notebook.

use crate::prelude::*;

/// Arguments of `move_note`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    /// `_root` for the top level.
    #[serde(alias = "target_notebook_id", alias = "parent_id")]
    pub notebook_id: String,
}

tool! {
    /// Move a note into another notebook.
    name: "move_note",
    title: "Move note",
    effect: mutating,
    input: Input,
    output: NoteInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NoteInfo, ToolError> {
    w.move_note(&input.note_id, &input.notebook_id)?;
    note_info(w, &input.note_id)
}
