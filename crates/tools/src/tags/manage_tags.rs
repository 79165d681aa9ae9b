//! `manage_tags`: add and remove tags on one note in one call.

use crate::prelude::*;

/// Arguments of `manage_tags`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(alias = "id")]
    pub note_id: String,
    /// Created if missing.
    #[serde(default)]
    pub add: Vec<String>,
    /// Tags to remove.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// The note's tags after the change.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Output {
    /// The note, with its tags now.
    #[serde(flatten)]
    pub note: NoteInfo,
    /// The tags that were added (ones it already had are left out).
    pub added: Vec<String>,
    /// The tags that were removed (ones it did not have are left out).
    pub removed: Vec<String>,
    /// How many more tags were added than are listed (absent when all are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_added: Option<u64>,
    /// How many more tags were removed than are listed (absent when all are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_removed: Option<u64>,
}

tool! {
    /// Add and remove a note's tags.
    name: "manage_tags",
    title: "Manage tags",
    effect: mutating,
    input: Input,
    output: Output,
    run: run,
}

fn run(w: &mut Writer<'_>, input: Input) -> Result<Output, ToolError> {
    if input.add.is_empty() && input.remove.is_empty() {
        return Err(ToolError::new("Nothing to change: give tags in add or remove."));
    }
    if let Some(both) = input
        .add
        .iter()
        .find(|a| input.remove.iter().any(|r| r.trim().eq_ignore_ascii_case(a.trim())))
    {
        return Err(ToolError::new(format!(
            "The tag '{both}' is in both add and remove; give it in one of them."
        )));
    }
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for tag in &input.add {
        if w.add_tag(&input.note_id, tag)? {
            added.push(tag.trim().to_owned());
        }
    }
    for tag in &input.remove {
        if w.remove_tag(&input.note_id, tag)? {
            removed.push(tag.trim().to_owned());
        }
    }
    if input.add.is_empty() {
        // Removing from a note that does not exist must still say so.
        w.note_summary(&input.note_id)?;
    }
    let more_added = crate::budget::fit_counted(&mut added, OUTPUT_TOKENS / 4);
    let more_removed = crate::budget::fit_counted(&mut removed, OUTPUT_TOKENS / 4);
    Ok(Output {
        note: note_info(w, &input.note_id)?,
        added,
        removed,
        more_added,
        more_removed,
    })
}
