//! `semantic_search_notes`: search by meaning. Its contract is final; it answers once the semantic index exists.

use crate::notes::search_notes::{Output, SearchResult};
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
    /// Also rank up notes that contain every word of the query (default false).
    pub(crate) hybrid: Option<bool>,
    /// How many results to return (default 10, at most 100).
    pub(crate) limit: Option<u64>,
}

tool! {
    /// Search the notes by meaning rather than exact words: finds notes about the same thing even when they use
    /// other words. Give a query or like_note_id. Results carry the best-matching passage and a similarity score.
    /// Protected and trashed notes are never returned. hybrid also ranks up notes containing every query word.
    name: "semantic_search_notes",
    title: "Search notes by meaning",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let target = match (input.query, input.like_note_id) {
        (None, None) => {
            return Err(ToolError::new(
                "Give a query (what to look for) or like_note_id (a note to find similar notes to).",
            ));
        }
        (Some(_), Some(_)) => return Err(ToolError::new("Give either query or like_note_id, not both.")),
        (None, Some(id)) => quire_core::SemanticTarget::LikeNote(id),
        (Some(q), None) => quire_core::SemanticTarget::Text(q),
    };
    let relevance = match input.relevance.unwrap_or(Relevance::Normal) {
        Relevance::Strict => quire_core::Relevance::Strict,
        Relevance::Normal => quire_core::Relevance::Normal,
        Relevance::Loose => quire_core::Relevance::Loose,
    };
    let query = quire_core::SemanticQuery {
        target,
        notebook_id: input.notebook_id,
        tag: input.tag,
        relevance,
        hybrid: input.hybrid.unwrap_or(false),
        limit: limit(input.limit, 10),
    };
    let hits = r.semantic_search(&query)?;
    let notebooks = Notebooks::load(r)?;
    Ok(Output {
        total: hits.total,
        offset: 0,
        has_more: hits.has_more,
        results: hits
            .items
            .iter()
            .map(|hit| SearchResult {
                note: notebooks.note(&hit.note),
                snippet: hit.snippet.clone(),
                score: hit.score,
            })
            .collect(),
    })
}
