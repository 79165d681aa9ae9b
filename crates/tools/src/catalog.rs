//! The built-in catalog: every built-in tool, listed once. Both consumers see exactly this list.

use crate::declare::BuiltinTool;
use crate::{attachments, attributes, history, notebooks, notes, structure, tags};

/// Every built-in tool. A test fails when a tool file exists that is not listed here.
pub(crate) const BUILTIN_TOOLS: &[BuiltinTool] = &[
    attachments::read_attachment::TOOL,
    attributes::delete_attribute::TOOL,
    attributes::get_attributes::TOOL,
    attributes::get_backlinks::TOOL,
    attributes::set_attribute::TOOL,
    history::recent_changes::TOOL,
    notebooks::create_notebook::TOOL,
    notebooks::list_notebooks::TOOL,
    notebooks::move_notebook::TOOL,
    notebooks::rename_notebook::TOOL,
    notes::create_note::TOOL,
    notes::delete_note::TOOL,
    notes::list_notes::TOOL,
    notes::move_note::TOOL,
    notes::read_note::TOOL,
    notes::restore_note::TOOL,
    notes::search_notes::TOOL,
    notes::semantic_search_notes::TOOL,
    notes::update_note::TOOL,
    structure::complete_task::TOOL,
    structure::list_tasks::TOOL,
    structure::query_notes::TOOL,
    tags::list_tags::TOOL,
    tags::manage_tags::TOOL,
];

/// The built-in tools quire's agent may load on request (through `find_tools`) when its first request would pass
/// its budget of tool tokens: the agent's prompt stays under 3,000 tokens with every other tool offered at once.
pub(crate) const ON_REQUEST: &[&str] = &["query_notes", "list_tasks", "complete_task"];
