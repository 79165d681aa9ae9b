//! Scopes: the notebooks an actor may see and change. A workspace handle made with [`Workspace::scoped`] limits
//! every read and write through it to some notebook subtrees, the way protection limits content: notes and
//! notebooks outside do not exist for it (lists, search, search by meaning, tags, backlinks, history), and a write
//! that would touch or create anything outside is refused. The scope's roots appear as top-level notebooks.
//!
//! [`Workspace::scoped`]: crate::Workspace::scoped

use std::collections::HashSet;

use rusqlite::Connection;

use crate::entity::ROOT_NOTEBOOK_ID;
use crate::error::Result;

/// Notebooks (by id) that, with everything inside them, make up what a scoped handle can reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    roots: Vec<String>,
    /// The scope of the handle this one was made from: a scope inside a scope reaches only what both reach.
    within: Option<std::sync::Arc<Scope>>,
}

impl Scope {
    /// These notebooks and their sub-notebooks.
    pub fn notebooks(roots: impl IntoIterator<Item = String>) -> Scope {
        let mut unique: Vec<String> = Vec::new();
        for root in roots {
            if !unique.contains(&root) {
                unique.push(root);
            }
        }
        Scope {
            roots: unique,
            within: None,
        }
    }

    /// This scope, limited further to what `outer` reaches.
    pub(crate) fn within(mut self, outer: std::sync::Arc<Scope>) -> Scope {
        self.within = Some(outer);
        self
    }

    /// The notebooks the scope starts from.
    pub fn roots(&self) -> &[String] {
        &self.roots
    }
}

/// A scope resolved in one transaction: every notebook id in it, and the roots that still exist.
#[derive(Debug)]
pub(crate) struct Resolved {
    pub(crate) ids: HashSet<String>,
    /// The roots that exist and are not inside another root, in the order given.
    pub(crate) roots: Vec<String>,
    /// `ids` as a JSON array, bound to SQL as `notebook_id IN (SELECT value FROM json_each(?))`.
    pub(crate) json: String,
}

impl Resolved {
    pub(crate) fn new(conn: &Connection, scope: &Scope) -> Result<Resolved> {
        let roots_json = serde_json::to_string(&scope.roots).unwrap_or_else(|_| "[]".into());
        let mut stmt = conn.prepare_cached(
            "WITH RECURSIVE sub(id) AS (SELECT nb.id FROM notebooks nb JOIN json_each(?1) j ON nb.id = j.value \
             WHERE nb.id <> ?2 UNION SELECT nb.id FROM notebooks nb JOIN sub ON nb.parent_id = sub.id) SELECT id FROM sub",
        )?;
        let mut ids: HashSet<String> = stmt
            .query_map(rusqlite::params![roots_json, ROOT_NOTEBOOK_ID], |r| {
                r.get::<_, String>(0)
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut order = scope.roots.clone();
        if let Some(outer) = &scope.within {
            let outer = Resolved::new(conn, outer)?;
            ids.retain(|id| outer.ids.contains(id));
            order.extend(outer.roots);
        }
        // The roots are the notebooks in the scope whose parent is not. Each is a root given to this scope or to
        // an outer one (a notebook whose parent is in both subtrees is in the scope with its parent), so only
        // those are looked at, the given ones first, in their order.
        let mut parents = conn.prepare_cached("SELECT parent_id FROM notebooks WHERE id = ?1")?;
        let mut roots: Vec<String> = Vec::new();
        for id in order.iter().filter(|id| ids.contains(*id)) {
            let parent: Option<String> = parents.query_row([id], |r| r.get(0))?;
            if !parent.is_some_and(|p| ids.contains(&p)) && !roots.contains(id) {
                roots.push(id.clone());
            }
        }
        let json = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
        Ok(Resolved { ids, roots, json })
    }
}
