//! The built-in catalog: every built-in tool, listed once. Both consumers see exactly this list.

use crate::declare::BuiltinTool;
use crate::{attachments, attributes, history, notebooks, notes, tags};

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
    tags::list_tags::TOOL,
    tags::manage_tags::TOOL,
];
