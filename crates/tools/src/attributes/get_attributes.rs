//! `get_attributes`: a note's labels and relations.

use super::{AttributeInfo, attribute_info};
use crate::prelude::*;

/// Arguments of `get_attributes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    pub offset: Option<u64>,
}

/// The note's attributes.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    pub note_id: String,
    /// The attributes.
    #[serde(flatten)]
    pub page: Page<AttributeInfo>,
}

impl Listed for AttributeInfo {
    const FIELD: &'static str = "attributes";
    const ABOUT: &'static str = "Labels first, then relations, each by name.";
}

tool! {
    /// List a note's attributes: labels (name, value) and relations (name, target note).
    name: "get_attributes",
    title: "Get attributes",
    effect: read_only,
    quick: true,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let all = r.attributes(&input.note_id)?;
    let total = all.len() as u64;
    let offset = input.offset.unwrap_or(0);
    let attributes = all
        .into_iter()
        .skip(offset as usize)
        .take(crate::types::MAX_PAGE as usize)
        .map(|a| attribute_info(r, a))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Output {
        note_id: input.note_id,
        page: Page::fitted(attributes, total, offset),
    })
}
