//! Notebooks: create, rename, icon, move, delete, protect.

use crate::sql::Cached;
use rusqlite::params;

use crate::entity::{EntityKind, Notebook};
use crate::error::{Error, Result};
use crate::guard;

use super::{NewNotebook, Writer, is_system_id};

/// What [`Writer::create_notebook_path`] did: the notebook the path names, and the ones it had to create, outermost
/// first (empty when the whole path existed).
#[derive(Debug, Clone)]
pub struct NotebookPath {
    /// The last notebook of the path.
    pub notebook: Notebook,
    /// The notebooks created for it, outermost first.
    pub created: Vec<Notebook>,
}

impl<'a> Writer<'a> {
    /// The notebooks of a path such as `Work/Projects` below `parent` (the top level when `None`), each found by its
    /// title (ignoring case) or created when missing: the one rule for "make this path" that the CLI's `notebook
    /// add` and the web app's "+ Notebook" share. Empty parts (`Work//Projects`, a trailing `/`) are skipped; a path
    /// with no part is refused.
    pub fn create_notebook_path(&mut self, parent: Option<&str>, path: &str) -> Result<NotebookPath> {
        let parts = crate::read::path_parts(path);
        if parts.is_empty() {
            return Err(Error::invalid(
                "Give the notebook a title, or a path such as Work/Projects.",
            ));
        }
        let mut at = match parent {
            Some(id) => id.to_owned(),
            None => self.default_notebook()?,
        };
        let mut created = Vec::new();
        let mut last = None;
        for part in parts {
            let existing = self
                .notebooks()?
                .into_iter()
                .find(|nb| nb.parent_id.as_deref() == Some(at.as_str()) && nb.title.eq_ignore_ascii_case(part));
            let notebook = match existing {
                Some(notebook) => notebook,
                None => {
                    let notebook = self.create_notebook(NewNotebook {
                        title: part.to_owned(),
                        parent_id: Some(at.clone()),
                        icon: None,
                    })?;
                    created.push(notebook.clone());
                    notebook
                }
            };
            at = notebook.id.clone();
            last = Some(notebook);
        }
        let notebook =
            last.ok_or_else(|| Error::invalid("Give the notebook a title, or a path such as Work/Projects."))?;
        Ok(NotebookPath { notebook, created })
    }

    /// Creates a notebook.
    pub fn create_notebook(&mut self, new: NewNotebook) -> Result<Notebook> {
        let parent = match new.parent_id.as_deref() {
            Some(id) => id.to_owned(),
            None => self.default_notebook()?,
        };
        let parent = parent.as_str();
        self.check_notebook_target(parent, "create a notebook inside")?;
        let title = guard::notebook_title(&new.title)?;
        let icon = guard::icon(new.icon.as_deref())?;
        let id = self.new_id()?;
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, &id, |w| {
            w.conn.exec_cached(
                "INSERT INTO notebooks (id, parent_id, title, icon, is_protected, created, updated) \
                 VALUES (?1, ?2, ?3, ?4, 0, ?5, ?5)",
                params![id, parent, title, icon, now],
            )?;
            Ok(())
        })?;
        self.notebook(&id)
    }

    /// Renames a notebook.
    pub fn rename_notebook(&mut self, id: &str, title: &str) -> Result<Notebook> {
        self.check_notebook_writable(id, "rename")?;
        let title = guard::notebook_title(title)?;
        let notebook = self.notebook(id)?;
        if let Some(parent) = &notebook.parent_id {
            self.check_title_free(parent, &title, id)?;
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.exec_cached(
                "UPDATE notebooks SET title = ?2, updated = ?3 WHERE id = ?1 AND title IS NOT ?2",
                params![id, title, now],
            )?;
            Ok(())
        })?;
        self.notebook(id)
    }

    /// Moves a notebook under another one. A move into its own subtree is refused.
    pub fn move_notebook(&mut self, id: &str, new_parent_id: &str) -> Result<Notebook> {
        self.check_notebook_writable(id, "move")?;
        self.check_notebook_target(new_parent_id, "move a notebook into")?;
        if self.notebook_subtree(id)?.iter().any(|sub| sub == new_parent_id) {
            return Err(Error::InvalidTarget(
                "Cannot move a notebook into itself or one of its sub-notebooks".into(),
            ));
        }
        let notebook = self.notebook(id)?;
        if notebook.parent_id.as_deref() != Some(new_parent_id) {
            self.check_title_free(new_parent_id, &notebook.title, id)?;
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.exec_cached(
                "UPDATE notebooks SET parent_id = ?2, updated = ?3 WHERE id = ?1 AND parent_id IS NOT ?2",
                params![id, new_parent_id, now],
            )?;
            Ok(())
        })?;
        // Protection is inherited, so a move can change which notes are protected.
        if self.sealer()?.is_some() {
            self.reconcile_seal_in_notebook(id)?;
        }
        self.refresh_search_in_notebook(id)?;
        self.notebook(id)
    }

    /// Deletes an empty notebook (notes in the trash count as content).
    pub fn delete_notebook(&mut self, id: &str) -> Result<()> {
        self.check_notebook_writable(id, "delete")?;
        let notes: i64 = self
            .conn
            .row_cached("SELECT count(*) FROM notes WHERE notebook_id = ?1", [id], |r| r.get(0))?;
        let children: i64 = self
            .conn
            .row_cached("SELECT count(*) FROM notebooks WHERE parent_id = ?1", [id], |r| {
                r.get(0)
            })?;
        if notes > 0 || children > 0 {
            return Err(Error::NotebookNotEmpty {
                notes: u64::try_from(notes).unwrap_or(0),
                notebooks: u64::try_from(children).unwrap_or(0),
            });
        }
        self.mutate(EntityKind::Notebook, id, |w| {
            w.conn.exec_cached("DELETE FROM notebooks WHERE id = ?1", [id])?;
            Ok(())
        })
    }

    /// Refuses a second notebook of the same title (ignoring case) in one parent: one path would name both, and
    /// people, the CLI and MCP resources name notebooks by path. Renames and moves check it for every actor.
    fn check_title_free(&self, parent: &str, title: &str, except: &str) -> Result<()> {
        let clash = self.notebooks()?.into_iter().find(|nb| {
            nb.id != except && nb.parent_id.as_deref() == Some(parent) && nb.title.eq_ignore_ascii_case(title.trim())
        });
        match clash {
            Some(clash) => Err(Error::NotebookTitleTaken(Box::new(crate::error::TitleTaken {
                path: self.notebook_path_text(&clash.id)?,
                parent_path: self.notebook_path_text(parent)?,
                title: clash.title,
            }))),
            None => Ok(()),
        }
    }

    /// Protects or unprotects a notebook and everything inside it. Only the user may do this, except that an import
    /// may protect what it brings in.
    pub fn set_notebook_protected(&mut self, id: &str, protected: bool) -> Result<Notebook> {
        self.require_user_or_import_protecting(
            protected,
            if protected {
                "protect notebooks"
            } else {
                "unprotect notebooks"
            },
        )?;
        if is_system_id(id) {
            self.notebook(id)?;
            return Err(Error::System { action: "protect" });
        }
        let now = self.now.as_millis();
        self.mutate(EntityKind::Notebook, id, |w| {
            let changed = w.conn.exec_cached(
                "UPDATE notebooks SET is_protected = ?2, updated = ?3 WHERE id = ?1 AND is_protected <> ?2",
                params![id, protected, now],
            )?;
            if changed == 0 {
                w.notebook(id)?;
            }
            Ok(())
        })?;
        if self.sealer()?.is_some() {
            self.reconcile_seal_in_notebook(id)?;
        }
        self.refresh_search_in_notebook(id)?;
        self.notebook(id)
    }
}
