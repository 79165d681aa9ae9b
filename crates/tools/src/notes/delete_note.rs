//! `delete_note`: move a note to the trash (never a permanent delete).

use crate::prelude::*;

/// Arguments of `delete_note`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
}

/// The trashed note.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note, now in the trash.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// What happened and how to undo it.
    pub message: String,
}

tool! {
    /// Move a note to the trash (restore_note brings it back). Only when the user asked.
    name: "delete_note",
    title: "Delete note",
    effect: destructive,
    input: Input,
    output: Output,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<Output, ToolError> {
    w.trash_note(&input.note_id)?;
    Ok(Output {
        note: note_info(w, &input.note_id)?,
        message: "The note was moved to the trash; restore_note brings it back.".to_owned(),
    })
}
