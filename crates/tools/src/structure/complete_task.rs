//! `complete_task`: marks a task done (or open again) in its note; a repeating task gets its next occurrence.

use crate::prelude::*;

/// Arguments of `complete_task`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    pub note_id: String,
    /// The task's line, as list_tasks or query_notes gave it.
    pub line: u64,
    /// The task's text as you read it: refused if the line now says something else.
    pub text: Option<String>,
    /// false marks it open again. Default true.
    pub done: Option<bool>,
}

/// What changed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note.
    pub note_id: String,
    /// The task's line now (one lower when its next occurrence was written above it).
    pub line: u64,
    /// Its text now.
    pub text: String,
    /// Whether it is done now.
    pub completed: bool,
    /// The next occurrence of a repeating task, written above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// false when it already was as asked (nothing written).
    pub changed: bool,
}

tool! {
    /// Mark a task (a - [ ] line) done, with today's ✅ date, or open again; a repeating task (🔁) gets its next
    /// occurrence. Give the note_id and line from list_tasks or query_notes, and its text.
    name: "complete_task",
    title: "Complete task",
    effect: mutating,
    input: Input,
    output: Output,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<Output, ToolError> {
    let done = w.set_task_done(&quire_core::TaskToggle {
        note_id: input.note_id,
        line: usize::try_from(input.line).unwrap_or(usize::MAX),
        done: input.done.unwrap_or(true),
        expect_text: input.text,
        today: None,
    })?;
    Ok(Output {
        note_id: done.note_id,
        line: done.line as u64,
        text: done.text,
        completed: done.done,
        next: done.next,
        changed: done.changed,
    })
}
