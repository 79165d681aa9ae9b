//! `NotebookTree`: every notebook with its path and its effective protection, the one place both are worked out.

use std::collections::{HashMap, HashSet};

use crate::entity::{Notebook, ROOT_NOTEBOOK_ID};
use crate::error::Result;
use crate::read::Reader;

/// The notebooks of a workspace, loaded once: paths (`Work/Projects`) and effective protection (a notebook inside a
/// protected notebook is protected too). Tools, the CLI and the MCP server describe notebooks through it rather
/// than walking the tree themselves.
#[derive(Debug, Clone)]
pub struct NotebookTree {
    by_id: HashMap<String, Notebook>,
    protected: HashSet<String>,
}

impl NotebookTree {
    /// The path from the top, titles joined with `/` (`Work/Projects`); empty for the top level (`_root`).
    pub fn path(&self, id: &str) -> String {
        let mut titles = Vec::new();
        let mut current = self.by_id.get(id);
        while let Some(nb) = current {
            if nb.id == ROOT_NOTEBOOK_ID || titles.len() > self.by_id.len() {
                break;
            }
            titles.push(nb.title.as_str());
            current = nb.parent_id.as_deref().and_then(|p| self.by_id.get(p));
        }
        titles.reverse();
        titles.join("/")
    }

    /// Whether the notebook is protected, itself or through a notebook that holds it.
    pub fn is_protected(&self, id: &str) -> bool {
        self.protected.contains(id)
    }

    /// One notebook, as stored (its own `is_protected` flag; see [`NotebookTree::is_protected`]).
    pub fn get(&self, id: &str) -> Option<&Notebook> {
        self.by_id.get(id)
    }

    /// Every notebook, `_root` included, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Notebook> {
        self.by_id.values()
    }
}

impl Reader<'_> {
    /// Every notebook with its path and effective protection.
    pub fn notebook_tree(&self) -> Result<NotebookTree> {
        let by_id = self.notebooks()?.into_iter().map(|nb| (nb.id.clone(), nb)).collect();
        Ok(NotebookTree {
            by_id,
            protected: (*self.protected_notebooks()?).clone(),
        })
    }

    /// The path of one notebook from the top (`Work/Projects`; empty for the top level), walking only its own
    /// ancestors.
    pub fn notebook_path_text(&self, id: &str) -> Result<String> {
        let mut titles: Vec<String> = self.ancestors(id, false)?.into_iter().map(|nb| nb.title).collect();
        titles.reverse();
        Ok(titles.join("/"))
    }
}
