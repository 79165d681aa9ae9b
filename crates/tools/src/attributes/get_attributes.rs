//! `get_attributes`: a note's labels and relations.

use super::{AttributeInfo, attribute_info};
use crate::prelude::*;

/// Arguments of `get_attributes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Input {
    #[serde(alias = "id")]
    pub(crate) note_id: String,
}

/// The note's attributes.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Output {
    pub(crate) note_id: String,
    /// Labels first, then relations, each by name.
    pub(crate) attributes: Vec<AttributeInfo>,
}

tool! {
    /// List a note's attributes: labels (name, value) and relations (name, target note).
    name: "get_attributes",
    title: "Get attributes",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let attributes = r
        .attributes(&input.note_id)?
        .into_iter()
        .map(|a| attribute_info(r, a))
        .collect::<Result<_, _>>()?;
    Ok(Output {
        note_id: input.note_id,
        attributes,
    })
}
