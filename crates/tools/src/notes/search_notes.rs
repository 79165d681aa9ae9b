//! `search_notes`: full-text search with quire's query language.

use crate::prelude::*;

/// Arguments of `search_notes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[doc = quire_core::search_syntax!()]
    #[serde(alias = "q", alias = "text")]
    pub query: String,
    /// Default 10, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
    /// Include the trash.
    pub include_trashed: Option<bool>,
}

/// One search result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    /// The note.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// Text around the match, matched words wrapped in <mark></mark>.
    pub snippet: String,
    /// Relevance; higher is better. Only comparable within one result list.
    pub score: f64,
    /// The attachment the words are in, and the page: read it with read_attachment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_in: Option<FoundIn>,
}

/// Where in a note's attachments the words were found.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FoundIn {
    /// For read_attachment.
    pub attachment_id: String,
    /// Its file name.
    pub title: String,
    /// The page of the first match, from 1.
    pub page: u32,
}

/// A page of results, best first.
pub type Output = Page<SearchResult>;

impl Listed for SearchResult {
    const FIELD: &'static str = "results";
    const ABOUT: &'static str = "The results, best first.";
}

tool! {
    /// Find notes by keywords and filters, best first, with a snippet around the match.
    name: "search_notes",
    title: "Search notes",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let page = quire_core::Page {
        offset: input.offset.unwrap_or(0),
        limit: limit(input.limit, 10),
    };
    let options = quire_core::SearchOptions {
        page,
        include_trashed: input.include_trashed.unwrap_or(false),
    };
    let hits = r.search(&input.query, options)?;
    let notebooks = Notebooks::load(r)?;
    let results: Vec<SearchResult> = hits
        .items
        .iter()
        .map(|hit| SearchResult {
            note: notebooks.note(&hit.note),
            snippet: crate::budget::shorten(&hit.snippet, SNIPPET_CHARS),
            score: (hit.score * 1000.0).round() / 1000.0,
            found_in: hit.found_in.as_ref().map(|c| FoundIn {
                attachment_id: c.attachment_id.clone(),
                title: crate::budget::shorten(&c.title, crate::types::TITLE_CHARS),
                page: c.page,
            }),
        })
        .collect();
    Ok(Page::fitted(results, hits.total, hits.offset))
}
