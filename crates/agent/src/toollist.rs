//! `build_tool_list`: which tools the model is offered this turn, a pure function of the context.

use quire_tools::{Effect, ToolFilter, ToolRegistry};
use serde::{Deserialize, Serialize};

use crate::context::NoteContext;
use crate::model::ToolSpec;
use crate::session::{SessionTool, fenced_blocks};

/// What the application allows on top of the context.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolPolicy {
    /// Offer no workspace tools: the chat works on the focused note only.
    pub no_workspace_tools: bool,
    /// Which workspace tools are offered: the same filter the MCP server uses.
    pub filter: ToolFilter,
}

/// Where an offered tool is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// A session tool: edits the focused note's text.
    Session,
    /// A workspace tool of the registry (built-in or plugin).
    Workspace,
}

/// A tool offered this turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferedTool {
    /// How the model sees it.
    pub spec: ToolSpec,
    /// Where a call goes.
    pub tier: Tier,
    /// Its effect (session tools count as mutating: they change the editor's text).
    pub effect: Effect,
    /// A title for UIs.
    pub title: String,
}

/// The tools of one turn, following the seed's three cases:
/// no note focused: workspace tools only; a note focused without a selection: workspace tools plus the anchor and
/// append tools (and `replace_structured_block` when the note has a fenced block); a selection: workspace tools plus
/// `edit_selection` only.
pub fn build_tool_list(context: &NoteContext, registry: &ToolRegistry, policy: &ToolPolicy) -> Vec<OfferedTool> {
    let mut tools = Vec::new();
    if !policy.no_workspace_tools {
        for info in policy.filter.offered(registry) {
            tools.push(OfferedTool {
                spec: ToolSpec {
                    name: info.name.clone(),
                    description: info.description.clone(),
                    parameters: info.input_schema.clone(),
                },
                tier: Tier::Workspace,
                effect: info.effect,
                title: info.title.clone(),
            });
        }
    }
    let Some(note) = &context.note else { return tools };
    let session: Vec<SessionTool> = if note.selection.is_some() {
        vec![SessionTool::EditSelection]
    } else {
        let has_block = !fenced_blocks(&note.body).is_empty();
        SessionTool::ALL[1..]
            .iter()
            .copied()
            .filter(|t| *t != SessionTool::ReplaceStructuredBlock || has_block)
            .collect()
    };
    for tool in session {
        tools.push(OfferedTool {
            spec: ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: std::sync::Arc::new(tool.input_schema()),
            },
            tier: Tier::Session,
            effect: Effect::Mutating,
            title: tool.title().to_owned(),
        });
    }
    tools
}
