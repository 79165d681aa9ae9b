//! `restore_note`: take a note out of the trash.

use crate::prelude::*;

/// Arguments of `restore_note`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A note in the trash (list_notes in_trash).
    #[serde(alias = "id")]
    pub note_id: String,
}

tool! {
    /// Take a note out of the trash.
    name: "restore_note",
    title: "Restore note",
    effect: mutating,
    input: Input,
    output: NoteInfo,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<NoteInfo, ToolError> {
    w.restore_note(&input.note_id)?;
    note_info(w, &input.note_id)
}
