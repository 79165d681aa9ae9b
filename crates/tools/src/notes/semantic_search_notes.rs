//! `semantic_search_notes`: search by meaning. Its contract is final; it answers once the semantic index exists.

use crate::notes::search_notes::Output;
use crate::prelude::*;

/// How close a match must be.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Relevance {
    /// Only close matches.
    Strict,
    /// The default balance.
    Normal,
    /// Also loosely related notes.
    Loose,
}

/// Arguments of `semantic_search_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// What to look for, in plain words; matches notes that mean the same even with other words. Give this or
    /// like_note_id.
    #[serde(alias = "q", alias = "text")]
    pub(crate) query: Option<String>,
    /// Find notes similar to this note instead of to a query.
    pub(crate) like_note_id: Option<String>,
    /// Only notes in this notebook (and its sub-notebooks).
    pub(crate) notebook_id: Option<String>,
    /// Only notes with this tag.
    pub(crate) tag: Option<String>,
    /// How close a match must be (default normal).
    pub(crate) relevance: Option<Relevance>,
    /// Also weigh keyword matches (default false).
    pub(crate) hybrid: Option<bool>,
    /// How many results to return (default 10, at most 100).
    pub(crate) limit: Option<u64>,
}

tool! {
    /// Search the notes by meaning rather than exact words: finds notes about the same thing even when they use
    /// other words. Give a query or like_note_id. Protected and trashed notes are never returned.
    name: "semantic_search_notes",
    title: "Search notes by meaning",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    match (&input.query, &input.like_note_id) {
        (None, None) => {
            return Err(ToolError::new(
                "Give a query (what to look for) or like_note_id (a note to find similar notes to).",
            ));
        }
        (Some(_), Some(_)) => {
            return Err(ToolError::new("Give either query or like_note_id, not both."));
        }
        (None, Some(id)) => drop(r.note_summary(id)?),
        (Some(q), None) if q.trim().is_empty() => {
            return Err(ToolError::new("The query is empty; say what to look for."));
        }
        (Some(_), None) => {}
    }
    if let Some(id) = &input.notebook_id {
        r.notebook(id)?;
    }
    let _ = (input.tag, input.relevance, input.hybrid, input.limit);
    Err(ToolError::new(
        "The semantic index of this workspace is not built yet, so search by meaning is not available. Use \
         search_notes for keyword search; prefix* and any:1 broaden a keyword query.",
    ))
}
