//! `list_tasks`: the tasks (`- [ ]` lines) of every note, by state, due date, tag or notebook.

use super::{TaskInfo, query_error, task_info};
use crate::prelude::*;

/// Arguments of `list_tasks`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// open (default), done or all.
    pub state: Option<TaskState>,
    /// Due on or before: YYYY-MM-DD, today, tomorrow, eow (end of week), eom.
    pub due_before: Option<String>,
    /// Due on or after.
    pub due_after: Option<String>,
    /// Only tasks in notes with this tag.
    pub tag: Option<String>,
    /// Only tasks in this notebook (path, such as Work/Projects) and below.
    pub notebook: Option<String>,
    /// Only tasks in this note.
    pub note_id: Option<String>,
    /// Default 50, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// Which tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Not done.
    #[default]
    Open,
    /// Done.
    Done,
    /// Both.
    All,
}

/// The tasks.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The tasks.
    #[serde(flatten)]
    pub page: Page<TaskInfo>,
}

tool! {
    /// List tasks (- [ ] lines in any note) by state, due date, tag, notebook or note; due dates first.
    name: "list_tasks",
    title: "List tasks",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

/// The DQL text of a task listing (also what `quire tasks` runs).
pub fn task_query(input: &Input) -> Result<String, ToolError> {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let mut from = Vec::new();
    if let Some(tag) = &input.tag {
        let tag = tag.trim().trim_start_matches('#');
        if tag.is_empty() || tag.contains(|c: char| c.is_whitespace() || c == ')' || c == '(') {
            return Err(ToolError::new(format!("\"{tag}\" is not a tag name")));
        }
        from.push(format!("#{tag}"));
    }
    if let Some(nb) = &input.notebook {
        from.push(quote(nb));
    }
    let mut conditions = Vec::new();
    match input.state.unwrap_or_default() {
        TaskState::Open => conditions.push("!completed".to_owned()),
        TaskState::Done => conditions.push("completed".to_owned()),
        TaskState::All => {}
    }
    for (bound, op) in [(&input.due_before, "<="), (&input.due_after, ">=")] {
        if let Some(day) = bound {
            let day = day.trim();
            if !quire_core::query::is_date_words(day) {
                return Err(ToolError::new(format!(
                    "\"{day}\" is not a date: give YYYY-MM-DD, today, tomorrow, eow or eom"
                )));
            }
            conditions.push(format!("due AND due {op} date({day})"));
        }
    }
    if let Some(id) = &input.note_id {
        conditions.push(format!("file.id = {}", quote(id)));
    }
    let mut q = "TASK".to_owned();
    if !from.is_empty() {
        q.push_str(&format!(" FROM {}", from.join(" AND ")));
    }
    if !conditions.is_empty() {
        q.push_str(&format!(" WHERE {}", conditions.join(" AND ")));
    }
    // Soonest due first; undated ones after the dated (null sorts first in the language).
    q.push_str(" SORT default(due, date(9999-12-31)), file.name, line");
    Ok(q)
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let q = task_query(&input)?;
    let result = r
        .query_text(&q, &quire_core::query::QueryOptions::default())
        .map_err(query_error)?;
    let offset = input.offset.unwrap_or(0);
    // Tasks with a due date first (null sorts first in the query language).
    let (dated, undated): (Vec<_>, Vec<_>) = result
        .rows
        .into_iter()
        .partition(|r| r.task.as_ref().is_some_and(|t| t.due.is_some()));
    let all: Vec<_> = dated.into_iter().chain(undated).collect();
    let total = all.len() as u64;
    let tasks = all
        .into_iter()
        .skip(offset as usize)
        .take(limit(input.limit, 50) as usize)
        .filter_map(|row| {
            let title = row.note.as_ref().map(|n| n.title.clone()).unwrap_or_default();
            row.task.as_ref().map(|t| task_info(t, &title))
        })
        .collect();
    Ok(Output {
        page: Page::fitted(tasks, total, offset),
    })
}
