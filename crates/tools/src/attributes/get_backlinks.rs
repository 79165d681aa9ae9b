//! `get_backlinks`: the notes whose relations point at a note.

use crate::prelude::*;

/// Arguments of `get_backlinks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    /// The note's id.
    #[serde(alias = "id")]
    pub(crate) note_id: String,
    /// How many backlinks to return (default 50, at most 100).
    pub(crate) limit: Option<u64>,
    /// How many to skip, for the next page (default 0).
    pub(crate) offset: Option<u64>,
}

/// A note that points at this one.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Backlink {
    /// The note that has the relation.
    #[serde(flatten)]
    pub(crate) note: NoteInfo,
    /// The relation's name.
    pub(crate) relation: String,
    /// The relation's attribute id.
    pub(crate) attribute_id: String,
}

/// The backlinks.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Output {
    /// The note they point at.
    pub(crate) note_id: String,
    /// How many backlinks there are in all.
    pub(crate) total: u64,
    /// The offset of this page.
    pub(crate) offset: u64,
    /// Whether more follow.
    pub(crate) has_more: bool,
    /// The backlinks.
    pub(crate) backlinks: Vec<Backlink>,
}

tool! {
    /// List the notes that point at a note through a relation attribute.
    name: "get_backlinks",
    title: "Get backlinks",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let all = r.backlinks(&input.note_id)?;
    let notebooks = Notebooks::load(r)?;
    let offset = input.offset.unwrap_or(0);
    let backlinks: Vec<Backlink> = all
        .iter()
        .skip(offset as usize)
        .take(limit(input.limit, 50) as usize)
        .map(|(attribute, owner)| Backlink {
            note: notebooks.note(owner),
            relation: attribute.name.clone(),
            attribute_id: attribute.id.clone(),
        })
        .collect();
    let total = all.len() as u64;
    Ok(Output {
        note_id: input.note_id,
        total,
        offset,
        has_more: offset + (backlinks.len() as u64) < total,
        backlinks,
    })
}
