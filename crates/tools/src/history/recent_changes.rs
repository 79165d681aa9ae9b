//! `recent_changes`: the change log, newest first: what changed, by whom, since when.

use crate::prelude::*;

/// Arguments of `recent_changes`.
#[allow(
    missing_docs,
    reason = "a doc comment would become a schema description the model pays for on every turn"
)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Changes from then on: 2026-01-15T09:00:00Z, 20260115, day-1, week-1 or month-1.
    pub since: Option<String>,
    /// Default 50, at most 100.
    pub limit: Option<u64>,
    pub offset: Option<u64>,
}

/// One change.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ChangeInfo {
    /// note, notebook, tag, note_tag, attribute, attachment or chat.
    pub entity: String,
    /// The entity's id (for note_tag: note id/tag id).
    pub entity_id: String,
    /// create, update or delete.
    pub operation: String,
    /// Who made it: user, agent, mcp client or plugin, with its name.
    pub actor: String,
    /// When (RFC 3339).
    pub at: String,
    /// The group of changes it belongs to (one agent turn or one tool call).
    pub change_set_id: String,
    /// The note's or notebook's title now, when it still exists.
    pub title: Option<String>,
}

/// A page of changes, newest first.
pub type Output = Page<ChangeInfo>;

impl Listed for ChangeInfo {
    const FIELD: &'static str = "changes";
    const ABOUT: &'static str = "The changes, newest first.";
}

tool! {
    /// List recent changes to the workspace, newest first: what, how, by whom, when.
    name: "recent_changes",
    title: "List recent changes",
    effect: read_only,
    input: Input,
    output: Output,
    run: run,
}

fn run(r: &Reader<'_>, input: Input) -> Result<Output, ToolError> {
    let since = match input.since.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(quire_core::parse_time(text)?),
    };
    let page = quire_core::Page {
        offset: input.offset.unwrap_or(0),
        limit: limit(input.limit, 50),
    };
    let changes = r.changes(since, page)?;
    let items: Vec<ChangeInfo> = changes
        .items
        .into_iter()
        .map(|c| {
            let title = match c.entity {
                quire_core::EntityKind::Note => r.note_summary(&c.entity_id).ok().map(|n| n.title),
                quire_core::EntityKind::Notebook => r.notebook(&c.entity_id).ok().map(|n| n.title),
                _ => None,
            };
            ChangeInfo {
                entity: serde_json::to_value(c.entity)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                entity_id: c.entity_id,
                operation: serde_json::to_value(c.operation)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                actor: c.actor.to_string(),
                at: c.at.to_rfc3339(),
                change_set_id: c.change_set_id,
                title: title.map(|t| crate::budget::shorten(&t, crate::types::TITLE_CHARS)),
            }
        })
        .collect();
    Ok(Page::fitted(items, changes.total, changes.offset))
}
