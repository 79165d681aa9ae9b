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
    /// Plugins left out of this chat, by name.
    #[serde(default)]
    pub plugins_off: std::collections::BTreeSet<String>,
}

/// Where an offered tool is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// A session tool: edits the focused note's text.
    Session,
    /// A workspace tool of the registry (built-in or plugin).
    Workspace,
    /// `find_tools`: loads plugin tools that were not offered up front (see [`build_tool_offer`]).
    Search,
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
    /// Whether a call waits for the user's approval (destructive tools; a plugin's writing tools when it says so).
    #[serde(default)]
    pub needs_approval: bool,
    /// The plugin it belongs to, for a plugin's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

/// The name of the tool that loads deferred plugin tools.
pub const FIND_TOOLS: &str = "find_tools";

/// The most tokens the tool definitions of a first request may take, so that they and the system prompt stay under
/// the 3,000 tokens `cargo xtask bench prompt` holds the prompt to. Past it, plugin tools are deferred.
pub const TOOL_TOKENS: usize = 2_700;

/// The tools of a turn: those offered, and plugin tools held back until `find_tools` asks for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOffer {
    /// Offered from the first request.
    pub offered: Vec<OfferedTool>,
    /// Plugin tools that `find_tools` can load (empty when every tool fits).
    pub deferred: Vec<OfferedTool>,
}

/// About how many tokens a tool's definition takes (name, description and schema as JSON, with the wire format's
/// wrapping): its bytes over 3.5. The built-in tools come to 3.9 bytes a token in `o200k_base`, so this errs on the
/// side of deferring (`cargo xtask bench prompt` counts exactly).
pub fn estimate_tokens(spec: &ToolSpec) -> usize {
    (spec.name.len() + spec.description.len() + spec.parameters.to_string().len() + 30) * 2 / 7
}

/// The tools of one turn, following the seed's three cases:
/// no note focused: workspace tools only; a note focused without a selection: workspace tools plus the anchor and
/// append tools (and `replace_structured_block` when the note has a fenced block); a selection: workspace tools plus
/// `edit_selection` only.
pub fn build_tool_list(context: &NoteContext, registry: &ToolRegistry, policy: &ToolPolicy) -> Vec<OfferedTool> {
    build_tool_offer(context, registry, policy).offered
}

/// The tools of one turn, as [`build_tool_list`] says. When they would not all fit in [`TOOL_TOKENS`], the tools that
/// may wait ([`quire_tools::ToolInfo::on_request`]: plugin tools, and the query and task tools as one group) are
/// offered while they fit, plugin tools first, and the rest wait for `find_tools` (naming what it finds); the tools
/// it finds are added to the following requests of the turn.
pub fn build_tool_offer(context: &NoteContext, registry: &ToolRegistry, policy: &ToolPolicy) -> ToolOffer {
    let mut tools = Vec::new();
    // Tools the agent may load on request (plugin tools; the query and task tools), kept apart until they fit.
    let mut later = Vec::new();
    if !policy.no_workspace_tools {
        for info in policy.filter.offered(registry) {
            if info.plugin.as_ref().is_some_and(|p| policy.plugins_off.contains(p)) {
                continue;
            }
            let tool = OfferedTool {
                spec: ToolSpec {
                    name: info.name.clone(),
                    description: info.description.clone(),
                    parameters: info.input_schema.clone(),
                },
                tier: Tier::Workspace,
                effect: info.effect,
                title: info.title.clone(),
                needs_approval: info.needs_approval,
                plugin: info.plugin.clone(),
            };
            if info.on_request {
                later.push((tool, info.origin == quire_tools::ToolOrigin::Builtin));
            } else {
                tools.push(tool);
            }
        }
    }
    add_session_tools(context, &mut tools);
    let cost = |t: &OfferedTool| estimate_tokens(&t.spec);
    let base: usize = tools.iter().map(cost).sum();
    if base + later.iter().map(|(t, _)| cost(t)).sum::<usize>() <= TOOL_TOKENS {
        tools.extend(later.into_iter().map(|(t, _)| t));
        return ToolOffer {
            offered: tools,
            deferred: Vec::new(),
        };
    }
    // Over the budget: what fits is offered, the plugins the person added first, with room kept for `find_tools`;
    // the rest waits for it.
    // The built-in ones (the query and task tools) go together: a listing without the tool that completes what it
    // lists, or the other way round, would leave the model half a job.
    let (builtin_tools, plugin_tools): (Vec<_>, Vec<_>) = later.into_iter().partition(|(_, builtin)| *builtin);
    let builtin_tools: Vec<OfferedTool> = builtin_tools.into_iter().map(|(t, _)| t).collect();
    let plugin_tools: Vec<OfferedTool> = plugin_tools.into_iter().map(|(t, _)| t).collect();
    let mut all_plugins: Vec<&str> = plugin_tools.iter().filter_map(|t| t.plugin.as_deref()).collect();
    all_plugins.dedup();
    let mut used = base + cost(&find_tools(&all_plugins, true));
    let mut deferred = Vec::new();
    let units = plugin_tools
        .into_iter()
        .map(|t| vec![t])
        .chain(std::iter::once(builtin_tools));
    for unit in units.filter(|u| !u.is_empty()) {
        let c: usize = unit.iter().map(cost).sum();
        if used + c <= TOOL_TOKENS {
            used += c;
            tools.extend(unit);
        } else {
            deferred.extend(unit);
        }
    }
    if !deferred.is_empty() {
        let mut plugins: Vec<&str> = deferred.iter().filter_map(|t| t.plugin.as_deref()).collect();
        plugins.dedup();
        let builtins = deferred.iter().any(|t| quire_tools::catalog_on_request(&t.spec.name));
        tools.push(find_tools(&plugins, builtins));
    }
    ToolOffer {
        offered: tools,
        deferred,
    }
}

/// `find_tools`, naming the plugins whose tools it finds (and the query and task tools, when `builtins`).
fn find_tools(plugins: &[&str], builtins: bool) -> OfferedTool {
    OfferedTool {
        spec: ToolSpec {
            name: FIND_TOOLS.to_owned(),
            description: {
                // Named, so the model knows when to look; past six, the rest are only counted.
                let mut named = plugins.iter().take(6).copied().collect::<Vec<_>>().join(", ");
                if plugins.len() > 6 {
                    named.push_str(&format!(" and {} more", plugins.len() - 6));
                }
                let mut kinds = Vec::new();
                if builtins {
                    kinds.push("queries over notes' fields and tasks".to_owned());
                }
                if !named.is_empty() {
                    kinds.push(format!("plugins {named}"));
                }
                format!("Loads more tools ({}) by what they do.", kinds.join("; "))
            },
            parameters: std::sync::Arc::new(serde_json::json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Words of the task"}},
                "required": ["query"]
            })),
        },
        tier: Tier::Search,
        effect: Effect::ReadOnly,
        title: "Find tools".to_owned(),
        needs_approval: false,
        plugin: None,
    }
}

/// The deferred tools that match `query` best (words of it in a tool's name or description), at most `limit`.
pub fn search_deferred<'a>(deferred: &'a [OfferedTool], query: &str, limit: usize) -> Vec<&'a OfferedTool> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &OfferedTool)> = deferred
        .iter()
        .map(|t| {
            let name = t.spec.name.to_lowercase().replace(['_', '-'], " ");
            let text = format!("{name} {}", t.spec.description.to_lowercase());
            let score = words
                .iter()
                .map(|w| {
                    if name.contains(w.as_str()) {
                        3
                    } else {
                        usize::from(text.contains(w.as_str()))
                    }
                })
                .sum();
            (score, t)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.spec.name.cmp(&b.1.spec.name)));
    scored.into_iter().take(limit).map(|(_, t)| t).collect()
}

/// The session tools of the context (the seed's three cases).
fn add_session_tools(context: &NoteContext, tools: &mut Vec<OfferedTool>) {
    let Some(note) = &context.note else { return };
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
            needs_approval: false,
            plugin: None,
        });
    }
}
