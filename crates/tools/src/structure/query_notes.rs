//! `query_notes`: runs a query in Dataview's language over the notes' fields, tags, notebooks, links and tasks.

use quire_core::query::Value;

use super::{TaskInfo, query_error, task_info};
use crate::prelude::*;

/// Arguments of `query_notes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// A Dataview query: TABLE rating, author FROM #book WHERE rating >= 4 SORT rating DESC (also LIST, TASK,
    /// CALENDAR; FROM "Notebook/Path", `[[Note]]`; GROUP BY, FLATTEN, LIMIT; fields are labels and key:: value).
    /// Empty with note_id: that note's saved query (its first dataview or query block).
    #[serde(default)]
    pub query: String,
    /// The note the query is in (this, `[[]]`).
    pub note_id: Option<String>,
    /// Default 50, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// A row of the result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// The note the row is about (absent for a group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_id: Option<String>,
    /// Its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The group's key, for a grouped query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<serde_json::Value>,
    /// The values, one per column after the first (a list's value, a calendar's date); dates as YYYY-MM-DD.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<serde_json::Value>,
    /// The task, for a TASK query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskInfo>,
    /// A group's notes or tasks (titles, or tasks' texts), for a grouped LIST or TASK.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

impl Listed for Row {
    const FIELD: &'static str = "rows";
    const ABOUT: &'static str = "The rows, in the query's order.";
}

/// What the query gave.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// table, list, task or calendar.
    pub kind: String,
    /// A table's column headings (File or the group first, unless WITHOUT ID).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// The rows.
    #[serde(flatten)]
    pub page: Page<Row>,
    /// Rows that failed to evaluate (left out of WHERE, empty cells): the first messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

tool! {
    /// Query notes by their fields (front matter labels and key:: value lines), tags, notebooks, links and tasks,
    /// in Dataview's query language: tables, lists, tasks, calendars. Protected notes show their titles only.
    name: "query_notes",
    title: "Query notes",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let options = quire_core::query::QueryOptions {
        this_note: input.note_id.clone(),
        ..quire_core::query::QueryOptions::default()
    };
    let query = match (input.query.trim(), &input.note_id) {
        ("", Some(id)) => {
            let body = r.note(id)?.body;
            let saved = quire_core::query::saved_queries(&body).into_iter().next();
            saved
                .ok_or_else(|| ToolError::new("That note holds no saved query (a ```dataview or ```query block)."))?
                .query
        }
        ("", None) => return Err(ToolError::new("Give a query, or the note_id of a note that holds one.")),
        (text, _) => text.to_owned(),
    };
    let result = r.query_text(&query, &options).map_err(query_error)?;
    let offset = input.offset.unwrap_or(0);
    let total = result.rows.len() as u64;
    let rows: Vec<Row> = result
        .rows
        .into_iter()
        .skip(offset as usize)
        .take(limit(input.limit, 50) as usize)
        .map(|row| {
            let title = row.note.as_ref().map(|n| n.title.clone()).unwrap_or_default();
            Row {
                note_id: row.note.as_ref().map(|n| n.id.clone()),
                title: row
                    .note
                    .as_ref()
                    .map(|n| crate::budget::shorten(&n.title, crate::types::TITLE_CHARS)),
                group: row.group.as_ref().map(compact),
                cells: row.cells.iter().map(compact).collect(),
                task: row.task.as_ref().map(|t| task_info(t, &title)),
                members: row
                    .children
                    .iter()
                    .take(50)
                    .filter_map(|c| {
                        let task = c.task.as_ref().map(|t| crate::budget::shorten(&t.text, 200));
                        task.or_else(|| {
                            c.note
                                .as_ref()
                                .map(|n| crate::budget::shorten(&n.title, crate::types::TITLE_CHARS))
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Output {
        kind: result.kind,
        headers: result.headers,
        page: Page::fitted(rows, total, offset),
        warnings: result.warnings,
    })
}

/// Characters a cell's value takes at most once written as JSON.
const CELL_CHARS: usize = 1_500;

/// A value as a cell shows it to a model: links as `[[Title]]`, dates as text, long text shortened (start and end
/// kept), lists and objects cut to their first items with the count of the rest, and a cell that is still too long
/// given as its shortened JSON text.
pub(crate) fn compact(v: &Value) -> serde_json::Value {
    let out = compact_at(v, 0);
    let text = out.to_string();
    if text.chars().count() > CELL_CHARS {
        serde_json::Value::String(crate::budget::shorten(&text, CELL_CHARS))
    } else {
        out
    }
}

fn compact_at(v: &Value, depth: usize) -> serde_json::Value {
    use serde_json::Value as J;
    const ITEMS: usize = 10;
    match v {
        Value::Text(s) => J::String(crate::budget::shorten(s, 300)),
        Value::Link(l) => J::String(format!(
            "[[{}]]",
            crate::budget::shorten(&l.target, crate::types::TITLE_CHARS)
        )),
        Value::List(items) if depth < 3 => {
            let mut out: Vec<J> = items.iter().take(ITEMS).map(|i| compact_at(i, depth + 1)).collect();
            if items.len() > ITEMS {
                out.push(J::String(format!("… {} more", items.len() - ITEMS)));
            }
            J::Array(out)
        }
        Value::Object(o) if depth < 3 => {
            let mut out: serde_json::Map<String, J> = o
                .iter()
                .take(ITEMS)
                .map(|(k, v)| (crate::budget::shorten(k, 100), compact_at(v, depth + 1)))
                .collect();
            if o.len() > ITEMS {
                out.insert("…".to_owned(), J::String(format!("{} more", o.len() - ITEMS)));
            }
            J::Object(out)
        }
        Value::List(_) | Value::Object(_) => J::String(crate::budget::shorten(&v.display(), 300)),
        other => other.to_json(),
    }
}
