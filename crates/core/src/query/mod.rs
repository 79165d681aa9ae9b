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

impl Reader<'_> {
    /// Runs a query as this reader's actor may see the workspace (see the module docs for protection).
    pub fn query(&self, query: &Query, options: &QueryOptions) -> Result<QueryResult> {
        run::run(self, query, options)
    }

    /// Parses and runs a query's text.
    pub fn query_text(&self, text: &str, options: &QueryOptions) -> Result<QueryResult> {
        let query = parse_query(text)?;
        self.query(&query, options)
    }
}
