//! Tools over notes' structure: queries in Dataview's language, tasks, and completing a task.

pub mod complete_task;
pub mod list_tasks;
pub mod query_notes;

use crate::prelude::*;

/// A task, as the task tools give it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TaskInfo {
    /// Its note; with `line`, what complete_task takes.
    pub note_id: String,
    /// Its note's title.
    pub title: String,
    /// Its line in the note, from 0.
    pub line: u64,
    /// Its text after the box, with the Tasks plugin's signs (📅 due, ⏳ scheduled, ✅ done, 🔁 repeat).
    pub text: String,
    /// Whether it is done.
    pub completed: bool,
    /// The character in its box when it is neither open nor done (`/` in progress, `-` cancelled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Due date, YYYY-MM-DD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// Scheduled date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    /// Start date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Done date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<String>,
    /// highest, high, medium, low or lowest (absent for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// How it repeats (every week...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<String>,
}

impl Listed for TaskInfo {
    const FIELD: &'static str = "tasks";
    const ABOUT: &'static str = "The tasks, in the query's order (by note and line unless sorted).";
}

pub(crate) fn task_info(t: &quire_core::query::TaskRef, title: &str) -> TaskInfo {
    TaskInfo {
        note_id: t.note_id.clone(),
        title: crate::budget::shorten(title, crate::types::TITLE_CHARS),
        line: t.line,
        text: crate::budget::shorten(&t.text, 500),
        completed: t.completed,
        status: (t.status != " " && !t.completed).then(|| t.status.clone()),
        due: t.due.clone(),
        scheduled: t.scheduled.clone(),
        start: t.start.clone(),
        completion: t.completion.clone(),
        priority: (t.priority != "none").then(|| t.priority.clone()),
        recurrence: t.recurrence.clone(),
    }
}

/// The query's own error, as the model should read it.
pub(crate) fn query_error(e: quire_core::Error) -> ToolError {
    match e {
        quire_core::Error::Invalid(m) => ToolError::new(format!(
            "{m}. Queries use Dataview's language: TABLE a, b FROM #tag WHERE x > 1 SORT a DESC; LIST; TASK WHERE !completed."
        )),
        other => other.into(),
    }
}
