//! `semantic_search_notes`: search by meaning. Its contract is final; it answers once the semantic index exists.

use crate::notes::search_notes::{Output, SearchResult};
use crate::prelude::*;

/// Passages are shortened beyond this many characters.
const PASSAGE_CHARS: usize = 800;

/// How close a match must be.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    /// Close matches only.
    Strict,
    /// Balanced (the default).
    Normal,
    /// Also loosely related.
    Loose,
}

/// Arguments of `semantic_search_notes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Plain words. This or like_note_id.
    #[serde(alias = "q", alias = "text")]
    pub query: Option<String>,
    /// Notes like this note instead.
    pub like_note_id: Option<String>,
    /// Only this notebook's tree.
    pub notebook_id: Option<String>,
    /// Only notes with this tag.
    pub tag: Option<String>,
    pub relevance: Option<Relevance>,
    /// Rank up notes with every query word.
    pub hybrid: Option<bool>,
    /// Default 10, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

tool! {
    /// Find notes by meaning, even in other words, with the best passage and a score.
    name: "semantic_search_notes",
    title: "Search notes by meaning",
    effect: read_only,
    prepare: catch_up,
    input: Input,
    output: Output,
    run: run,
}

/// quire-core's freshness rule: a small backlog of changed notes is embedded before the search reads.
fn catch_up(ws: &quire_core::Workspace) {
    // A failure here (the model cannot load) is the search's to report, in its own words.
    let _ = ws.catch_up_for_search();
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let offset = input.offset.unwrap_or(0).min(quire_core::Page::MAX_LIMIT);
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
        // The best offset + limit, then the page: search by meaning ranks at most 200 notes.
        limit: (offset + limit(input.limit, 10)).min(quire_core::Page::MAX_LIMIT),
    };
    let hits = r.semantic_search(&query)?;
    let notebooks = Notebooks::load(r)?;
    let results: Vec<SearchResult> = hits
        .items
        .iter()
        .skip(offset as usize)
        .map(|hit| SearchResult {
            note: notebooks.note(&hit.note),
            snippet: crate::budget::shorten(&hit.snippet, PASSAGE_CHARS),
            score: hit.score,
            found_in: None,
        })
        .collect();
    // The ranking read offset + limit notes from the top, so the page's total is the ranking's.
    Ok(Page::fitted(results, hits.total, offset))
}
