//! `list_tags`: every tag with the number of notes that carry it.

use crate::prelude::*;

/// Arguments of `list_tags`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Default and most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// A tag.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TagInfo {
    /// The tag's name; use it with tag: in search_notes and with manage_tags.
    pub name: String,
    /// How many notes (not in the trash) carry it.
    pub note_count: u64,
}

/// A page of tags, by name.
pub type Output = Page<TagInfo>;

impl Listed for TagInfo {
    const FIELD: &'static str = "tags";
    const ABOUT: &'static str = "The tags, by name.";
}

tool! {
    /// List the tags in use, with note counts.
    name: "list_tags",
    title: "List tags",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let all = r.tags()?;
    let offset = input.offset.unwrap_or(0);
    let limit = limit(input.limit, 100);
    let tags: Vec<TagInfo> = all
        .iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|t| TagInfo {
            name: t.name.clone(),
            note_count: t.note_count,
        })
        .collect();
    Ok(Page::fitted(tags, all.len() as u64, offset))
}
