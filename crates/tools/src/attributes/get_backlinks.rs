//! `get_backlinks`: the notes that point at a note: links in their bodies and relation attributes.

use crate::prelude::*;

/// Arguments of `get_backlinks`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    /// Default 50, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// A note that points at this one.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Backlink {
    /// The note that points here.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// How: `wikilink`, `embed`, `note` (a quire://note link) or `relation`.
    pub kind: String,
    /// The text around the link in its body (absent for relations and for protected notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// The relation's name, for a relation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation: Option<String>,
    /// The relation's attribute id, for a relation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute_id: Option<String>,
    /// The label whose value holds the link (front matter such as `related: "[[Note]]"`), for a link in a label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The backlinks.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note they point at.
    pub note_id: String,
    /// The backlinks.
    #[serde(flatten)]
    pub page: Page<Backlink>,
}

impl Listed for Backlink {
    const FIELD: &'static str = "backlinks";
    const ABOUT: &'static str = "The backlinks: links in other notes' text first, then relations.";
}

tool! {
    /// List the notes that link to a note (in their text, with the words around, or by a relation).
    name: "get_backlinks",
    title: "Get backlinks",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let notebooks = Notebooks::load(r)?;
    let mut all: Vec<Backlink> = r
        .body_backlinks(&input.note_id)?
        .iter()
        .map(|b| Backlink {
            note: notebooks.note(&b.source),
            kind: serde_json::to_value(b.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            snippet: b.snippet.as_deref().map(|s| crate::budget::shorten(s, SNIPPET_CHARS)),
            relation: None,
            attribute_id: None,
            label: b.label.clone(),
        })
        .collect();
    all.extend(r.backlinks(&input.note_id)?.iter().map(|(attribute, owner)| Backlink {
        note: notebooks.note(owner),
        kind: "relation".to_owned(),
        snippet: None,
        relation: Some(attribute.name.clone()),
        attribute_id: Some(attribute.id.clone()),
        label: None,
    }));
    let offset = input.offset.unwrap_or(0);
    let total = all.len() as u64;
    let backlinks: Vec<Backlink> = all
        .into_iter()
        .skip(offset as usize)
        .take(limit(input.limit, 50) as usize)
        .collect();
    Ok(Output {
        note_id: input.note_id,
        page: Page::fitted(backlinks, total, offset),
    })
}
