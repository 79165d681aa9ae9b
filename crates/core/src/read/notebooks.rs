//! Reading notebooks: one, all, by title, their paths, subtrees and note counts.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Row};

use super::{NOTEBOOK_COLUMNS, Reader};
use crate::entity::{Notebook, Timestamp};
use crate::error::{Error, Missing, Result};

impl Reader<'_> {
    /// A notebook as this view sees it: outside the scope it does not exist; a scope root sits at the top; its
    /// effective protection is filled in from `protected` (see [`Reader::protected_notebooks`]).
    fn scoped_notebook(&self, mut notebook: Notebook, protected: &HashSet<String>) -> Result<Option<Notebook>> {
        notebook.effectively_protected = protected.contains(&notebook.id);
        let Some(scope) = self.scope()? else {
            return Ok(Some(notebook));
        };
        if notebook.id == crate::entity::ROOT_NOTEBOOK_ID {
            return Ok(Some(notebook));
        }
        if !scope.ids.contains(&notebook.id) {
            return Ok(None);
        }
        if scope.roots.contains(&notebook.id) {
            notebook.parent_id = Some(crate::entity::ROOT_NOTEBOOK_ID.to_owned());
        }
        Ok(Some(notebook))
    }

    /// One notebook.
    pub fn notebook(&self, id: &str) -> Result<Notebook> {
        let notebook = self
            .conn
            .prepare_cached(concat!("SELECT ", notebook_columns!(), " FROM notebooks WHERE id = ?1"))?
            .query_row([id], notebook_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Notebook))?;
        self.scoped_notebook(notebook, &*self.protected_notebooks()?)?
            .ok_or(Error::NotFound(Missing::Notebook))
    }

    fn scoped_notebooks(&self, notebooks: Vec<Notebook>) -> Result<Vec<Notebook>> {
        let protected = self.protected_notebooks()?;
        let mut visible = Vec::with_capacity(notebooks.len());
        for notebook in notebooks {
            if let Some(notebook) = self.scoped_notebook(notebook, &protected)? {
                visible.push(notebook);
            }
        }
        Ok(visible)
    }

    /// Every notebook, the system root first, then by title.
    pub fn notebooks(&self) -> Result<Vec<Notebook>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {NOTEBOOK_COLUMNS} FROM notebooks ORDER BY id <> '_root', title COLLATE NOCASE, id"
        ))?;
        let rows = stmt.query_map([], notebook_from_row)?;
        self.scoped_notebooks(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The notebooks whose title is `title`, ignoring case.
    pub fn notebooks_titled(&self, title: &str) -> Result<Vec<Notebook>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {NOTEBOOK_COLUMNS} FROM notebooks WHERE title = ?1 COLLATE NOCASE ORDER BY created, id"
        ))?;
        let rows = stmt.query_map([title], notebook_from_row)?;
        self.scoped_notebooks(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The notebook a path such as `Work/Projects` names, walked from the top level with titles compared ignoring
    /// case (empty parts, as in `Work//Projects` or a trailing `/`, are skipped); the top level (`_root`) for an
    /// empty path; `None` when a part is missing. The one rule for "the notebook at this path": the CLI, the web app
    /// and MCP resources all resolve paths through it.
    pub fn notebook_at_path(&self, path: &str) -> Result<Option<Notebook>> {
        let notebooks = self.notebooks()?;
        let mut at = crate::entity::ROOT_NOTEBOOK_ID;
        for part in path_parts(path) {
            match notebooks
                .iter()
                .find(|nb| nb.parent_id.as_deref() == Some(at) && nb.title.eq_ignore_ascii_case(part))
            {
                Some(nb) => at = &nb.id,
                None => return Ok(None),
            }
        }
        Ok(notebooks.iter().find(|nb| nb.id == at).cloned())
    }

    /// The notebook a person means by `name`: a path (`Work/Projects`) is walked from the top as in
    /// [`Reader::notebook_at_path`]; a lone title names the one notebook that has it anywhere in the tree, or of
    /// several, the one at the top level (whose path it also is). `None` when nothing matches; a title that several
    /// notebooks below the top share is [`Error::Invalid`], with a path to give instead.
    pub fn find_notebook(&self, name: &str) -> Result<Option<Notebook>> {
        let parts = path_parts(name);
        let [title] = parts.as_slice() else {
            return self.notebook_at_path(name);
        };
        let found = self.notebooks_titled(title)?;
        let top: Vec<&Notebook> = found
            .iter()
            .filter(|nb| nb.parent_id.as_deref() == Some(crate::entity::ROOT_NOTEBOOK_ID))
            .collect();
        match (found.as_slice(), top.as_slice()) {
            ([], _) => Ok(None),
            ([one], _) => Ok(Some(one.clone())),
            (_, [one]) => Ok(Some((*one).clone())),
            (several, _) => Err(Error::invalid(format!(
                "{} notebooks are titled '{title}'; give its path instead, for example '{}'",
                several.len(),
                self.notebook_path_text(&several[0].id)?
            ))),
        }
    }

    /// The number of live (not trashed) notes directly in each notebook.
    pub fn notebook_note_counts(&self) -> Result<HashMap<String, u64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT notebook_id, count(*) FROM notes WHERE deleted IS NULL GROUP BY notebook_id")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut counts = HashMap::new();
        for row in rows {
            let (id, count) = row?;
            if self.in_scope(&id)? {
                counts.insert(id, u64::try_from(count).unwrap_or(0));
            }
        }
        Ok(counts)
    }

    /// The path from the root to `id`: `_root` first, the notebook itself last.
    pub fn notebook_path(&self, id: &str) -> Result<Vec<Notebook>> {
        let mut path = self.ancestors(id, true)?;
        path.reverse();
        Ok(path)
    }

    /// `id` and the notebooks above it, nearest first; the root among them only `with_root` (a path's text leaves
    /// it out, so it is not read for it).
    pub(crate) fn ancestors(&self, id: &str, with_root: bool) -> Result<Vec<Notebook>> {
        // One lookup per level: for the few levels notebooks have, faster than one recursive statement.
        let mut path = Vec::new();
        let mut next = Some(id.to_owned());
        while let Some(id) = next.take() {
            if !with_root && id == crate::entity::ROOT_NOTEBOOK_ID {
                break;
            }
            if path.len() > 10_000 {
                return Err(Error::invalid("The notebook tree has a cycle."));
            }
            let notebook = self.notebook(&id)?;
            next.clone_from(&notebook.parent_id);
            path.push(notebook);
        }
        Ok(path)
    }

    /// The ids of `id` and every notebook below it.
    pub fn notebook_subtree(&self, id: &str) -> Result<Vec<String>> {
        self.notebook(id)?;
        let mut stmt = self.conn.prepare_cached(
            "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION SELECT nb.id FROM notebooks nb JOIN sub ON nb.parent_id = sub.id) \
             SELECT id FROM sub",
        )?;
        let rows = stmt.query_map([id], |r| r.get::<_, String>(0))?;
        let mut ids = Vec::new();
        for sub in rows {
            let sub = sub?;
            // The root's subtree, seen through a scope, is the scope.
            if self.in_scope(&sub)? || sub == crate::entity::ROOT_NOTEBOOK_ID {
                ids.push(sub);
            }
        }
        Ok(ids)
    }
}

fn notebook_from_row(r: &Row<'_>) -> rusqlite::Result<Notebook> {
    Ok(Notebook {
        id: r.get(0)?,
        title: r.get(1)?,
        parent_id: r.get(2)?,
        icon: r.get(3)?,
        is_protected: r.get(4)?,
        effectively_protected: false,
        created: Timestamp(r.get(5)?),
        updated: Timestamp(r.get(6)?),
    })
}

/// The titles of a notebook path such as `Work/Projects`, trimmed; empty parts are skipped.
pub(crate) fn path_parts(path: &str) -> Vec<&str> {
    path.split('/').map(str::trim).filter(|p| !p.is_empty()).collect()
}
