//! The read side: [`Reader`], a view of one snapshot of the workspace as one actor may see it.

use std::collections::HashSet;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::entity::{Actor, NoteSummary};
use crate::error::{Error, Result};
use crate::protection::{Protection, shows_content};
use crate::scope::{Resolved, Scope};

/// Which slice of a long list to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// How many items to skip.
    pub offset: u64,
    /// How many items to return at most; capped at [`Page::MAX_LIMIT`].
    pub limit: u64,
}

impl Page {
    /// The largest page any list returns.
    pub const MAX_LIMIT: u64 = 200;

    /// The first `limit` items.
    pub fn first(limit: u64) -> Page {
        Page { offset: 0, limit }
    }

    pub(crate) fn capped_limit(self) -> u64 {
        self.limit.min(Page::MAX_LIMIT)
    }

    pub(crate) fn sql_limit(self) -> i64 {
        i64::try_from(self.capped_limit()).unwrap_or(i64::MAX)
    }

    pub(crate) fn sql_offset(self) -> i64 {
        i64::try_from(self.offset).unwrap_or(i64::MAX)
    }
}

impl Default for Page {
    fn default() -> Page {
        Page { offset: 0, limit: 50 }
    }
}

/// One page of a longer list, with the total so a caller knows whether to ask for more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageOf<T> {
    /// The items of this page.
    pub items: Vec<T>,
    /// How many items the whole list has.
    pub total: u64,
    /// The offset this page starts at.
    pub offset: u64,
    /// Whether items follow this page.
    pub has_more: bool,
}

impl<T> PageOf<T> {
    pub(crate) fn new(items: Vec<T>, total: u64, page: Page) -> PageOf<T> {
        let has_more = page.offset.saturating_add(items.len() as u64) < total;
        PageOf {
            items,
            total,
            offset: page.offset,
            has_more,
        }
    }
}

/// A read-only view of one consistent snapshot of the workspace, as one actor may see it.
///
/// It has no write methods. For every actor but the user, the body, revisions and attachments of a
/// protected note are withheld ([`Error::ProtectedContent`]); its existence and title stay visible.
pub struct Reader<'a> {
    pub(crate) conn: &'a Connection,
    pub(crate) actor: &'a Actor,
    pub(crate) embedder: std::sync::Arc<crate::semantic::EmbedderSlot>,
    pub(crate) vectors: std::sync::Arc<crate::semantic::VectorCache>,
    scope: Option<&'a Scope>,
    resolved: std::cell::OnceCell<Resolved>,
    /// The protected notebooks, computed once per read transaction (a snapshot: nothing changes them under it).
    /// Writers never keep it, since their own writes may change it.
    protected: std::cell::OnceCell<std::rc::Rc<HashSet<String>>>,
    memoize_protected: bool,
    /// The full-text engine beside the file; only read transactions get it (see `search::engine`).
    pub(crate) fulltext: Option<std::sync::Arc<crate::search::engine::FullText>>,
    /// The unlocked workspace key: set only by [`crate::Workspace::read_unlocked`] and
    /// [`crate::Workspace::write_unlocked`], whose actor is always the user.
    pub(crate) key: Option<&'a crate::seal::Unlocked>,
    /// What this transaction returned, for the read ledger: set only for an actor the ledger records.
    pub(crate) ledger: Option<std::cell::RefCell<Vec<crate::ledger::Read>>>,
}

/// The columns [`summary_from_row`] reads, as a literal so that the statements read most often are fixed text
/// (`concat!`), not formatted and hashed again on every call.
macro_rules! note_columns {
    () => {
        "n.seq, n.id, n.notebook_id, n.title, n.is_todo, n.todo_completed, \
         n.is_protected, n.created, n.updated, n.deleted, \
         (SELECT group_concat(name, char(31)) FROM (SELECT t.name FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
          WHERE nt.note_id = n.id ORDER BY t.name COLLATE NOCASE))"
    };
}
pub(crate) use note_columns;
pub(crate) const NOTE_COLUMNS: &str = note_columns!();

/// The columns [`notebook_from_row`] reads (a literal, as [`note_columns`]).
macro_rules! notebook_columns {
    () => {
        "id, title, parent_id, icon, is_protected, created, updated"
    };
}
const NOTEBOOK_COLUMNS: &str = notebook_columns!();

impl<'a> Reader<'a> {
    pub(crate) fn new(
        conn: &'a Connection,
        actor: &'a Actor,
        embedder: std::sync::Arc<crate::semantic::EmbedderSlot>,
        vectors: std::sync::Arc<crate::semantic::VectorCache>,
        scope: Option<&'a Scope>,
    ) -> Reader<'a> {
        Reader {
            conn,
            actor,
            embedder,
            vectors,
            scope,
            resolved: std::cell::OnceCell::new(),
            protected: std::cell::OnceCell::new(),
            memoize_protected: false,
            fulltext: None,
            key: None,
            ledger: None,
        }
    }

    /// This view recording what it returns, for the read ledger.
    pub(crate) fn recording(mut self) -> Reader<'a> {
        self.ledger = Some(std::cell::RefCell::default());
        self
    }

    /// What this view returned, for the read ledger.
    pub(crate) fn take_reads(&self) -> Vec<crate::ledger::Read> {
        self.ledger.as_ref().map(|r| r.take()).unwrap_or_default()
    }

    /// This view with the unlocked key, for the user only (see [`crate::Workspace::read_unlocked`]).
    pub(crate) fn with_key(mut self, key: Option<&'a crate::seal::Unlocked>) -> Reader<'a> {
        debug_assert!(key.is_none() || self.actor.is_user());
        self.key = key.filter(|_| self.actor.is_user());
        self
    }

    /// The unlocked key, to open a sealed piece of this note: [`Error::Locked`] naming it without the key.
    pub(crate) fn key_for_note(&self, note: &crate::entity::NoteSummary) -> Result<&'a crate::seal::Unlocked> {
        self.key.ok_or_else(|| Error::Locked {
            note_id: note.id.clone(),
            title: note.title.clone(),
        })
    }

    /// Whether this view holds the unlocked key (sealed notes open for it).
    pub fn is_unlocked(&self) -> bool {
        self.key.is_some()
    }

    /// This view belongs to a read transaction: what it derives from the snapshot may be kept for its length.
    /// This reader with the workspace's full-text engine, for plain word searches.
    pub(crate) fn with_fulltext(mut self, fulltext: std::sync::Arc<crate::search::engine::FullText>) -> Reader<'a> {
        self.fulltext = Some(fulltext);
        self
    }

    pub(crate) fn read_only(mut self) -> Reader<'a> {
        self.memoize_protected = true;
        self
    }

    /// The actor this view belongs to.
    pub fn actor(&self) -> &Actor {
        self.actor
    }

    /// The scope of this view, resolved once per transaction; `None` when it sees the whole workspace.
    pub(crate) fn scope(&self) -> Result<Option<&Resolved>> {
        let Some(scope) = self.scope else {
            return Ok(None);
        };
        if let Some(resolved) = self.resolved.get() {
            return Ok(Some(resolved));
        }
        let resolved = Resolved::new(self.conn, scope)?;
        Ok(Some(self.resolved.get_or_init(|| resolved)))
    }

    /// Forgets the resolved scope, after a write changed the notebook tree.
    pub(crate) fn forget_scope(&mut self) {
        self.resolved.take();
    }

    /// Whether a notebook (by id) is inside this view's scope (always, without a scope).
    pub fn in_scope(&self, notebook_id: &str) -> Result<bool> {
        Ok(self.scope()?.is_none_or(|s| s.ids.contains(notebook_id)))
    }

    /// The scope's notebook ids as JSON for `json_each(?)`, or NULL without a scope.
    pub(crate) fn scope_param(&self) -> Result<Option<String>> {
        Ok(self.scope()?.map(|s| s.json.clone()))
    }

    /// The notebook a scoped view creates into when none is named: the scope's first root (the root notebook
    /// without a scope).
    pub fn default_notebook(&self) -> Result<String> {
        Ok(match self.scope()? {
            Some(scope) => scope.roots.first().cloned().ok_or_else(|| {
                Error::InvalidTarget("None of the notebooks this client may use exists any more".into())
            })?,
            None => crate::entity::ROOT_NOTEBOOK_ID.to_owned(),
        })
    }
}

impl Reader<'_> {
    /// Whether this reader may see a note's content: always for the user; for other actors,
    /// only when the note is not protected.
    pub fn shows_content(&self, note: &NoteSummary) -> bool {
        shows_content(self.actor, note)
    }

    /// The protection rule as this reader applies it.
    pub(crate) fn protection(&self) -> Result<Protection> {
        Ok(Protection::new(self.protected_notebooks()?, self.actor))
    }

    /// The ids of every notebook that is protected itself or lies inside a protected notebook.
    pub(crate) fn protected_notebooks(&self) -> Result<std::rc::Rc<HashSet<String>>> {
        if let Some(set) = self.protected.get() {
            return Ok(set.clone());
        }
        let set = std::rc::Rc::new(self.load_protected_notebooks()?);
        if self.memoize_protected {
            let _ = self.protected.set(set.clone());
        }
        Ok(set)
    }

    fn load_protected_notebooks(&self) -> Result<HashSet<String>> {
        // Most workspaces protect nothing: the partial index on protected notebooks says so without the recursion.
        let any: bool = self
            .conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM notebooks WHERE is_protected = 1)")?
            .query_row([], |r| r.get(0))?;
        if !any {
            return Ok(HashSet::new());
        }
        let mut stmt = self.conn.prepare_cached(
            "WITH RECURSIVE p(id) AS (SELECT id FROM notebooks WHERE is_protected = 1 \
             UNION SELECT nb.id FROM notebooks nb JOIN p ON nb.parent_id = p.id) SELECT id FROM p",
        )?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The rule of [`Protection`] for one note: this reader that the protected note's content is withheld from gets
    /// [`Error::ProtectedContent`].
    pub(crate) fn ensure_content_visible(&self, note: &NoteSummary) -> Result<()> {
        if !shows_content(self.actor, note) {
            return Err(Error::ProtectedContent);
        }
        Ok(())
    }

    /// A page of notes. `filter` may use `?1` (bound to `arg`) and `?5` (bound to [`Protection::sql_param`], for
    /// [`content_visible_sql`]).
    pub(crate) fn note_page(&self, filter: &str, order: &str, arg: &str, page: Page) -> Result<PageOf<NoteSummary>> {
        let scope = self.scope_param()?;
        let protection = self.protection()?;
        let hidden = protection.sql_param();
        let filter = format!(
            "{filter} AND (?4 IS NULL OR n.notebook_id IN (SELECT value FROM json_each(?4))) AND (?5 IS NULL OR ?5 = ?5)"
        );
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM notes n WHERE {filter} AND ?2 = ?2 AND ?3 = ?3"),
            params![arg, 0, 0, scope, hidden],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {NOTE_COLUMNS} FROM notes n WHERE {filter} ORDER BY {order} LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(params![arg, page.sql_limit(), page.sql_offset(), scope, hidden], |r| {
            summary_from_row(r, &protection)
        })?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }
}

pub(crate) fn actor_to_text(actor: &Actor) -> String {
    serde_json::to_string(actor).unwrap_or_else(|_| "{\"kind\":\"user\"}".to_owned())
}

pub(crate) fn actor_from_text(text: &str) -> Actor {
    // Only this crate writes the column, always through `actor_to_text`; an unreadable value would mean a file
    // edited by hand, and is shown as the user rather than failing the whole read.
    serde_json::from_str(text).unwrap_or(Actor::User)
}

/// Which notes a [`Reader::note_list`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteList<'a> {
    /// The live notes directly in a notebook (by id).
    Notebook(&'a str),
    /// The live notes with a tag (by name, ignoring case).
    Tagged(&'a str),
    /// The notes in the trash.
    Trash,
}

/// The order of a [`Reader::note_list`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NoteOrder {
    /// The list's own order.
    #[default]
    Natural,
    /// By title, ignoring case.
    Title,
    /// Most recently changed first.
    Updated,
    /// Most recently created first.
    Created,
}

mod attachments;
mod attributes;
mod chats;
mod history;
mod notebooks;
mod notes;
mod review;
pub(crate) use review::item_of;

pub(crate) use notebooks::path_parts;
pub use notes::NoteView;
pub(crate) use notes::summary_from_row;
