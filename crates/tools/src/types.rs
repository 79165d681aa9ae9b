//! Output types shared by the tools, so that a note, a notebook or a page is described the same way everywhere.

use quire_core::{NoteSummary, Notebook, NotebookTree, Reader};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::ToolError;

/// The most items any list tool returns in one call.
pub(crate) const MAX_PAGE: u64 = 100;
/// Titles in outputs are shortened (start and end kept) beyond this many characters.
pub(crate) const TITLE_CHARS: usize = 300;
/// Notebook paths in outputs are shortened beyond this many characters.
pub(crate) const PATH_CHARS: usize = 200;
/// The estimated tokens of a note's tag list in an output; the rest are counted in `more_tags`.
const TAGS_TOKENS: usize = 150;

/// A note, described with the same fields by every tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NoteInfo {
    /// The note's id; pass it as `note_id` to other tools.
    pub note_id: String,
    /// The title.
    pub title: String,
    /// The id of the notebook that holds it (`_root` for the top level).
    pub notebook_id: String,
    /// The notebook's path from the top, such as `Work/Projects` (empty for the top level).
    pub notebook_path: String,
    /// Tag names, sorted.
    pub tags: Vec<String>,
    /// How many more tags it has than fit in `tags` (absent when all are listed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more_tags: Option<u64>,
    /// Whether it is a to-do.
    pub is_todo: bool,
    /// When the to-do was completed (RFC 3339), if it was.
    pub todo_completed: Option<String>,
    /// Whether it is protected: its title is visible, its content cannot be read or changed by tools.
    pub is_protected: bool,
    /// Whether it is in the trash.
    pub in_trash: bool,
    /// When it was created (RFC 3339).
    pub created: String,
    /// When it last changed (RFC 3339).
    pub updated: String,
}

/// A notebook, described with the same fields by every tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotebookInfo {
    /// The notebook's id; pass it as `notebook_id` to other tools.
    pub notebook_id: String,
    /// The title.
    pub title: String,
    /// The parent notebook's id (`_root` for a top-level notebook).
    pub parent_id: String,
    /// The path from the top, such as `Work/Projects`.
    pub path: String,
    /// Its icon, if any.
    pub icon: Option<String>,
    /// Whether it is protected: tools cannot change it or anything inside it.
    pub is_protected: bool,
}

/// Notebook titles, paths and effective protection, loaded once per call (from quire-core's [`NotebookTree`]).
pub(crate) struct Notebooks {
    tree: NotebookTree,
}

impl Notebooks {
    pub(crate) fn load(r: &Reader<'_>) -> Result<Notebooks, ToolError> {
        Ok(Notebooks {
            tree: r.notebook_tree()?,
        })
    }

    /// `Work/Projects` for a notebook id; empty for the root.
    pub(crate) fn path(&self, id: &str) -> String {
        self.tree.path(id)
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Notebook> {
        self.tree.get(id)
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Notebook> {
        self.tree.iter()
    }

    pub(crate) fn note(&self, note: &NoteSummary) -> NoteInfo {
        NoteInfo::new(note, self.path(&note.notebook_id))
    }

    pub(crate) fn notebook(&self, notebook: &Notebook) -> NotebookInfo {
        NotebookInfo::new(notebook, self.path(&notebook.id))
    }
}

impl NotebookInfo {
    /// The notebook as tools describe it, at a path (as text) the caller has read; protected when it is, itself or
    /// through a parent ([`Notebook::effectively_protected`]).
    pub fn new(notebook: &Notebook, path: String) -> NotebookInfo {
        NotebookInfo {
            notebook_id: notebook.id.clone(),
            title: crate::budget::shorten(&notebook.title, TITLE_CHARS),
            parent_id: notebook.parent_id.clone().unwrap_or_default(),
            path: crate::budget::shorten(&path, PATH_CHARS),
            icon: notebook.icon.clone(),
            is_protected: notebook.effectively_protected,
        }
    }
}

/// The note as every tool describes it.
pub(crate) fn note_info(r: &Reader<'_>, id: &str) -> Result<NoteInfo, ToolError> {
    let summary = r.note_summary(id)?;
    summary_info(r, &summary)
}

/// One note's description, walking up only its own notebook path (cheaper than loading every notebook).
pub(crate) fn summary_info(r: &Reader<'_>, note: &NoteSummary) -> Result<NoteInfo, ToolError> {
    Ok(NoteInfo::new(note, r.notebook_path_text(&note.notebook_id)?))
}

impl NoteInfo {
    /// The note as the user's own reads describe it (the web app, the command line): [`NoteInfo::new`] without the
    /// budget, so the title, path and tags are whole, as [`crate::ToolRegistry::read_as_user`] gives them.
    pub fn whole(note: &NoteSummary, notebook_path: String) -> NoteInfo {
        crate::budget::unlimited(|| NoteInfo::new(note, notebook_path))
    }

    /// The note as tools describe it, in a notebook whose path (as text) the caller has read.
    pub fn new(note: &NoteSummary, notebook_path: String) -> NoteInfo {
        // Titles, paths and tag lists are the strings no page can split: kept short enough that a page of notes
        // holds a useful number of them (see crate::budget).
        let mut tags = note.tags.clone();
        let more_tags = crate::budget::fit_counted(&mut tags, TAGS_TOKENS);
        NoteInfo {
            note_id: note.id.clone(),
            title: crate::budget::shorten(&note.title, TITLE_CHARS),
            notebook_id: note.notebook_id.clone(),
            notebook_path: crate::budget::shorten(&notebook_path, PATH_CHARS),
            tags,
            more_tags,
            is_todo: note.is_todo,
            todo_completed: note.todo_completed.map(|t| t.to_rfc3339()),
            is_protected: note.is_protected,
            in_trash: note.deleted.is_some(),
            created: note.created.to_rfc3339(),
            updated: note.updated.to_rfc3339(),
        }
    }
}

/// The notebook as every tool describes it.
pub(crate) fn notebook_info(r: &Reader<'_>, id: &str) -> Result<NotebookInfo, ToolError> {
    let notebook = r.notebook(id)?;
    Ok(Notebooks::load(r)?.notebook(&notebook))
}

/// The `limit` a list tool uses: the default when absent, never more than [`MAX_PAGE`], at least 1.
pub(crate) fn limit(requested: Option<u64>, default: u64) -> u64 {
    requested.unwrap_or(default).clamp(1, MAX_PAGE)
}
