//! Queries over notes' structure, in Dataview's query language (DQL): `TABLE`, `LIST`, `TASK` and `CALENDAR`
//! queries over labels (front matter), inline fields (`key:: value`), tags, notebooks, links and tasks. One engine
//! for every consumer: the `query_notes` tool, `quire query`, saved views. docs/query.md is the user's guide.
//!
//! A query runs in two steps: SQL finds the notes (or tasks) its `FROM` allows and narrows them by the parts of its
//! first `WHERE`s that an index answers (`source`), then the evaluator runs every command over what SQL kept
//! (`run`). SQL only ever keeps a superset of the answer, so the rows are what the query's words mean: the property
//! test in `tests/query.rs` compares every random query with a run that skips the SQL narrowing.
//!
//! Protection is applied here, in core: for every actor but the user, a protected note shows its `file` (title,
//! notebook, times) and nothing else (no fields, no tags, no tasks, no links), and `FROM #tag` or `[[link]]` does
//! not find it by its content. Sealed notes' bodies are not plain text, so their tasks and inline fields are never
//! derived at all.

mod eval;
mod func;
mod lex;
pub(crate) mod literal;
mod parse;
mod rows;
mod run;
mod source;
mod text;
mod value;

use serde::{Deserialize, Serialize};

pub use func::known as is_function;
pub use literal::{day_named, duration, is_date_words, iso, typed};
pub use parse::{BinOp, Column, Command, Expr, Kind, Lambda, Query, Source, parse_expr, parse_query};
pub use rows::priority_name;
pub use value::{Duration, Link, Value};

use crate::error::Result;
use crate::read::Reader;

/// A query that does not read: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at character {offset})")]
pub struct QueryError {
    /// Where in the query, in characters from its start.
    pub offset: usize,
    /// What is wrong, and often how to write it.
    pub message: String,
}

impl QueryError {
    pub(crate) fn at(offset: usize, message: &str) -> QueryError {
        QueryError {
            offset,
            message: message.to_owned(),
        }
    }

    /// This error with its offset, a byte's, counted in characters of `src`.
    fn in_characters(mut self, src: &str) -> QueryError {
        self.offset = src.char_indices().take_while(|(i, _)| *i < self.offset).count();
        self
    }
}

impl From<QueryError> for crate::Error {
    fn from(e: QueryError) -> crate::Error {
        crate::Error::Invalid(format!("the query does not read: {e}"))
    }
}

/// How a query runs.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// The local time it runs at (now, in the system's time zone, when not given).
    pub now: Option<jiff::civil::DateTime>,
    /// The note a query inside a note belongs to: `this` and `[[]]`.
    pub this_note: Option<String>,
    /// Evaluate every note the `FROM` gives, without narrowing by the `WHERE` in SQL: the naive run that the
    /// property test compares the engine with. Same rows, slower.
    pub exhaustive: bool,
}

/// A note a row is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NoteRef {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its notebook's path (empty at the top).
    pub notebook: String,
}

/// A task a row is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskRef {
    /// Its note.
    pub note_id: String,
    /// Its line in the note's body, from 0.
    pub line: u64,
    /// The character in its box (a space when open).
    pub status: String,
    /// Its text after the box.
    pub text: String,
    /// Whether it is done (`x`).
    pub completed: bool,
    /// 📅, as YYYY-MM-DD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    /// ⏳.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    /// 🛫.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// ✅.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion: Option<String>,
    /// `highest`, `high`, `medium`, `none`, `low`, `lowest`.
    pub priority: String,
    /// 🔁's rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<String>,
}

impl TaskRef {
    pub(crate) fn from_row(note_id: &str, t: &rows::TaskRow) -> TaskRef {
        TaskRef {
            note_id: note_id.to_owned(),
            line: t.line.max(0) as u64,
            status: t.status.clone(),
            text: t.text.clone(),
            completed: t.done,
            due: t.due.clone(),
            scheduled: t.scheduled.clone(),
            start: t.start.clone(),
            completion: t.done_on.clone(),
            priority: priority_name(t.priority).to_owned(),
            recurrence: t.recurrence.clone(),
        }
    }
}

/// A row of a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ResultRow {
    /// The note it is about (absent for a group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<NoteRef>,
    /// The group's key, for a row of a grouped query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Value>,
    /// A table's cells after the note (or group) column; a list's value; a calendar's date.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<Value>,
    /// The task, for a task query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskRef>,
    /// A group's members, for grouped tables, lists and tasks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ResultRow>,
}

/// What a query gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct QueryResult {
    /// `table`, `list`, `task` or `calendar`.
    pub kind: String,
    /// A table's column headings (the note or group column first, unless `WITHOUT ID`).
    pub headers: Vec<String>,
    /// The rows, in order.
    pub rows: Vec<ResultRow>,
    /// For a table that is not grouped, beside each heading, the field a view may set in the note for that
    /// column (a plain field's name, as [`crate::Writer::set_note_field`] takes it); empty when no column is one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Option<String>>,
    /// The field the rows are grouped by, when it is one a view may set (a board's columns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_field: Option<String>,
    /// Rows that failed to evaluate (left out of a `WHERE`, empty in a cell): the first few messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// A query kept in a note: a ```` ```dataview ```` or ```` ```query ```` block, with the view its info string names
/// (```` ```query board ````). A note holding one is a saved view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SavedQuery {
    /// The query.
    pub query: String,
    /// The view asked for: `table`, `board`, `list`, `tasks` or `calendar`; none: as the query's kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<String>,
}

/// The views a block's info string may name.
pub const VIEWS: &[&str] = &["table", "board", "list", "tasks", "calendar"];

/// The saved queries of a note's text, in order (Dataview's JavaScript blocks are not queries).
pub fn saved_queries(body: &str) -> Vec<SavedQuery> {
    crate::markdown::fenced_blocks(body)
        .into_iter()
        .filter(|b| b.tag.eq_ignore_ascii_case("dataview") || b.tag.eq_ignore_ascii_case("query"))
        .map(|b| {
            let view = b
                .info
                .split_whitespace()
                .nth(1)
                .map(str::to_ascii_lowercase)
                .filter(|v| VIEWS.contains(&v.as_str()));
            SavedQuery {
                query: body[b.content_start..b.content_end].trim().to_owned(),
                view,
            }
        })
        .collect()
}

/// One saved query of a view, run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ViewRun {
    /// The query and its view.
    #[serde(flatten)]
    pub saved: SavedQuery,
    /// Its result, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<QueryResult>,
    /// Why it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Reader<'_> {
    /// Runs the saved queries of a note (a saved view), each with `this` the note, as this reader's actor: a
    /// protected note's are refused to actors other than the user, as its text is. A query that fails says why in
    /// its place; the others still run.
    pub fn run_view(&self, note_id: &str, options: &QueryOptions) -> Result<Vec<ViewRun>> {
        let note = self.note_unrecorded(note_id)?;
        let options = QueryOptions {
            this_note: Some(note.summary.id.clone()),
            ..options.clone()
        };
        Ok(saved_queries(&note.body)
            .into_iter()
            .map(|saved| match self.query_text(&saved.query, &options) {
                Ok(result) => ViewRun {
                    saved,
                    result: Some(result),
                    error: None,
                },
                Err(e) => ViewRun {
                    saved,
                    result: None,
                    error: Some(e.to_string()),
                },
            })
            .collect())
    }

    /// Runs a query as this reader's actor may see the workspace (see the module docs for protection).
    pub fn query(&self, query: &Query, options: &QueryOptions) -> Result<QueryResult> {
        let result = run::run(self, query, options)?;
        if self.ledger.is_some() {
            self.record_rows(&result.rows)?;
        }
        Ok(result)
    }

    /// The read ledger: each note a result shows something of (a task's text, a field's value), once.
    fn record_rows(&self, rows: &[ResultRow]) -> Result<()> {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<&ResultRow> = rows.iter().collect();
        while let Some(row) = stack.pop() {
            stack.extend(row.children.iter());
            let Some(note) = &row.note else { continue };
            let part = if row.task.is_some() { "task" } else { "query result" };
            if seen.insert((note.id.clone(), part)) {
                let summary = self.note_summary(&note.id)?;
                self.record_read(&summary, None, part);
            }
        }
        Ok(())
    }

    /// Parses and runs a query's text.
    pub fn query_text(&self, text: &str, options: &QueryOptions) -> Result<QueryResult> {
        let query = parse_query(text)?;
        self.query(&query, options)
    }
}
