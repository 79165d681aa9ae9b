//! The read side: [`Reader`], a view of one snapshot of the workspace as one actor may see it.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::entity::{
    Actor, AttachmentInfo, Attribute, AttributeKind, Change, ChangeSet, Chat, ChatMessage, EntityKind, Note,
    NoteSummary, Notebook, Operation, Revision, Tag, Timestamp,
};
use crate::error::{Error, Missing, Result};
use crate::protection::{Protection, content_visible_sql, shows_content};
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

/// A note with what a reader shows beside it (see [`Reader::note_view`]).
#[derive(Debug, Clone)]
pub struct NoteView {
    /// The note.
    pub note: Note,
    /// Its notebook's path as [`Reader::notebook_path_text`] gives it.
    pub notebook_path: String,
    /// Its attachments, oldest first.
    pub attachments: Vec<AttachmentInfo>,
    /// Its unresolved links, when they were asked for.
    pub unresolved_links: Vec<crate::links::UnresolvedLink>,
}

/// What [`Reader::note_row`] read.
struct NoteRow {
    note: Note,
    /// The notebook's path, when the row held every notebook above the note.
    path: Option<String>,
    has_attachments: bool,
    has_unresolved_links: bool,
}

/// The note's notebook and its parent as the note's row brings them.
struct NotebookChain {
    parent: Option<String>,
    protected: bool,
    title: Option<String>,
    grandparent: Option<String>,
    parent_protected: bool,
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
    pub(crate) fulltext: Option<std::sync::Arc<crate::search::FullText>>,
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
        }
    }

    /// This view belongs to a read transaction: what it derives from the snapshot may be kept for its length.
    /// This reader with the workspace's full-text engine, for plain word searches.
    pub(crate) fn with_fulltext(mut self, fulltext: std::sync::Arc<crate::search::FullText>) -> Reader<'a> {
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

    /// A notebook as this view sees it: outside the scope it does not exist; a scope root sits at the top.
    fn scoped_notebook(&self, mut notebook: Notebook) -> Result<Option<Notebook>> {
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

    /// A note as this view sees it: outside the scope it does not exist.
    fn check_note_scope(&self, note: NoteSummary) -> Result<NoteSummary> {
        if self.in_scope(&note.notebook_id)? {
            Ok(note)
        } else {
            Err(Error::NotFound(Missing::Note))
        }
    }

    /// One notebook.
    pub fn notebook(&self, id: &str) -> Result<Notebook> {
        let notebook = self
            .conn
            .prepare_cached(concat!("SELECT ", notebook_columns!(), " FROM notebooks WHERE id = ?1"))?
            .query_row([id], notebook_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Notebook))?;
        self.scoped_notebook(notebook)?
            .ok_or(Error::NotFound(Missing::Notebook))
    }

    fn scoped_notebooks(&self, notebooks: Vec<Notebook>) -> Result<Vec<Notebook>> {
        let mut visible = Vec::with_capacity(notebooks.len());
        for notebook in notebooks {
            if let Some(notebook) = self.scoped_notebook(notebook)? {
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

    /// The metadata of one note: visible to every actor, protected or not.
    pub fn note_summary(&self, id: &str) -> Result<NoteSummary> {
        let protected = self.protection()?;
        let summary = self
            .conn
            .prepare_cached(concat!("SELECT ", note_columns!(), " FROM notes n WHERE n.id = ?1"))?
            .query_row([id], |r| summary_from_row(r, &protected))
            .optional()?
            .ok_or(Error::NotFound(Missing::Note))?;
        self.check_note_scope(summary)
    }

    /// Whether a note is protected (itself or by a notebook above it), as [`Reader::note_summary`] says, with the
    /// same errors for a note that does not exist or lies outside the scope, without reading the rest.
    pub(crate) fn note_is_protected(&self, id: &str) -> Result<bool> {
        let protected = self.protected_notebooks()?;
        let (notebook_id, own): (String, bool) = self
            .conn
            .prepare_cached("SELECT notebook_id, is_protected FROM notes WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .ok_or(Error::NotFound(Missing::Note))?;
        if !self.in_scope(&notebook_id)? {
            return Err(Error::NotFound(Missing::Note));
        }
        Ok(Protection::new(protected, self.actor).is_protected(own, &notebook_id))
    }

    /// One note with its body. For a non-user actor, a protected note gives [`Error::ProtectedContent`].
    pub fn note(&self, id: &str) -> Result<Note> {
        Ok(self.note_row(id, false)?.note)
    }

    /// A note with what a reader shows beside it: its notebook's path, its attachments and, when asked, its
    /// unresolved links ([`Reader::unresolved_links`]); the same checks as [`Reader::note`].
    ///
    /// `read_note` is the call clients make most, so this is read in one statement for the usual note: one in
    /// the root notebook or in a notebook directly below it, without attachments or unresolved links. The row
    /// brings the note's notebook and that notebook's parent (whose protection, with the note's own flag, is the
    /// whole answer when the parent is the root) and whether any attachment or unresolved link exists.
    pub fn note_view(&self, id: &str, unresolved_links: bool) -> Result<NoteView> {
        let row = self.note_row(id, true)?;
        let notebook_path = match row.path {
            Some(path) => path,
            None => self.notebook_path_text(&row.note.summary.notebook_id)?,
        };
        let attachments = if row.has_attachments {
            self.attachments_of(&row.note)?
        } else {
            Vec::new()
        };
        let unresolved_links = if unresolved_links && row.has_unresolved_links {
            self.unresolved_links_of(&row.note)?
        } else {
            Vec::new()
        };
        Ok(NoteView {
            note: row.note,
            notebook_path,
            attachments,
            unresolved_links,
        })
    }

    /// The note row with its notebook and that notebook's parent; with `extras`, whether the note has attachments
    /// and unresolved links. Scope and protection are checked here, for every caller.
    fn note_row(&self, id: &str, extras: bool) -> Result<NoteRow> {
        macro_rules! note_row_sql {
            ($extras:literal) => {
                concat!(
                    "SELECT ",
                    note_columns!(),
                    ", n.body, nb.parent_id, nb.is_protected, nb.title, pb.parent_id, pb.is_protected",
                    $extras,
                    " FROM notes n LEFT JOIN notebooks nb ON nb.id = n.notebook_id \
                     LEFT JOIN notebooks pb ON pb.id = nb.parent_id WHERE n.id = ?1"
                )
            };
        }
        let sql = if extras {
            note_row_sql!(
                ", EXISTS (SELECT 1 FROM attachments a WHERE a.note_id = n.id), \
                 EXISTS (SELECT 1 FROM note_links l WHERE l.source_id = n.id AND l.kind IN ('wikilink', 'embed') \
                 AND l.target_note_id IS NULL AND l.target_attachment_id IS NULL AND l.target <> '')"
            )
        } else {
            note_row_sql!("")
        };
        // Protection is settled below, from the row's notebooks or the protected set, and checked before return.
        let no_notebooks = Protection::settled_later();
        let (mut summary, body, chain, has_attachments, has_unresolved_links) = self
            .conn
            .prepare_cached(sql)?
            .query_row([id], |r| {
                let chain = NotebookChain {
                    parent: r.get(12)?,
                    protected: r.get::<_, Option<bool>>(13)?.unwrap_or(false),
                    title: r.get(14)?,
                    grandparent: r.get(15)?,
                    parent_protected: r.get::<_, Option<bool>>(16)?.unwrap_or(false),
                };
                Ok((
                    summary_from_row(r, &no_notebooks)?,
                    r.get::<_, String>(11)?,
                    chain,
                    extras && r.get::<_, bool>(17)?,
                    extras && r.get::<_, bool>(18)?,
                ))
            })
            .optional()?
            .ok_or(Error::NotFound(Missing::Note))?;
        let root = crate::entity::ROOT_NOTEBOOK_ID;
        // The notebooks above the note's, when the row holds all of them: the notebook is the root, or sits
        // directly below it. Deeper notes take the protected set (computed once per read transaction).
        let top = if summary.notebook_id == root && chain.parent.is_none() {
            Some(String::new())
        } else if chain.parent.as_deref() == Some(root) && chain.grandparent.is_none() {
            Some(chain.title.unwrap_or_default())
        } else {
            None
        };
        summary.is_protected |= match top {
            Some(_) => chain.protected || chain.parent_protected,
            None => self.protected_notebooks()?.contains(&summary.notebook_id),
        };
        let summary = self.check_note_scope(summary)?;
        self.ensure_content_visible(&summary)?;
        Ok(NoteRow {
            note: Note { summary, body },
            // The same through a scope: a notebook directly below the root that a scope reaches is one of the
            // scope's roots, which the scope shows at the top anyway.
            path: top,
            has_attachments,
            has_unresolved_links,
        })
    }

    /// The live notes directly in one notebook, by title.
    pub fn notes_in_notebook(&self, notebook_id: &str, page: Page) -> Result<PageOf<NoteSummary>> {
        self.note_list(NoteList::Notebook(notebook_id), NoteOrder::Natural, page)
    }

    /// Every live (not trashed) note, most recently updated first.
    pub fn all_notes(&self, page: Page) -> Result<PageOf<NoteSummary>> {
        self.note_page("n.deleted IS NULL AND ?1 = ?1", "n.updated DESC, n.seq DESC", "", page)
    }

    /// The notes in the trash, most recently trashed first.
    pub fn trashed_notes(&self, page: Page) -> Result<PageOf<NoteSummary>> {
        self.note_list(NoteList::Trash, NoteOrder::Natural, page)
    }

    /// The live notes that carry a tag (by name, ignoring case), most recently updated first.
    pub fn notes_tagged(&self, tag: &str, page: Page) -> Result<PageOf<NoteSummary>> {
        self.note_list(NoteList::Tagged(tag), NoteOrder::Natural, page)
    }

    /// A page of one list of notes in the order asked for. [`NoteOrder::Natural`] is the list's own: by title in a
    /// notebook, most recently updated first for a tag, most recently trashed first in the trash.
    pub fn note_list(&self, list: NoteList<'_>, order: NoteOrder, page: Page) -> Result<PageOf<NoteSummary>> {
        let (filter, natural, arg) = match list {
            NoteList::Notebook(id) => {
                self.notebook(id)?;
                (
                    "n.notebook_id = ?1 AND n.deleted IS NULL",
                    "n.title COLLATE NOCASE, n.id",
                    id,
                )
            }
            // A protected note's tags are its content: for non-user actors it carries none (`?5`).
            NoteList::Tagged(tag) => (
                "n.deleted IS NULL AND n.id IN (SELECT nt.note_id FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
                 WHERE t.name = ?1 COLLATE NOCASE) AND (?5 IS NULL OR (n.is_protected = 0 AND n.notebook_id NOT IN \
                 (SELECT value FROM json_each(?5))))",
                "n.updated DESC, n.id",
                tag,
            ),
            NoteList::Trash => ("n.deleted IS NOT NULL AND ?1 = ?1", "n.deleted DESC, n.id", ""),
        };
        let order = match order {
            NoteOrder::Natural => natural,
            NoteOrder::Title => "n.title COLLATE NOCASE, n.id",
            NoteOrder::Updated => "n.updated DESC, n.id DESC",
            NoteOrder::Created => "n.created DESC, n.id DESC",
        };
        self.note_page(filter, order, arg, page)
    }

    /// Every tag with the number of live notes that carry it, by name.
    ///
    /// The tags of a protected note are its content: for non-user actors they are not counted, and a tag only
    /// protected notes carry is not listed.
    pub fn tags(&self) -> Result<Vec<Tag>> {
        // Through a scope, only the tags of notes inside it (trashed ones included), counted inside it.
        let visible = content_visible_sql("n", "?2");
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT t.id, t.name, (SELECT count(*) FROM note_tags nt JOIN notes n ON n.id = nt.note_id \
             WHERE nt.tag_id = t.id AND n.deleted IS NULL AND {visible} AND (?1 IS NULL OR n.notebook_id IN \
             (SELECT value FROM json_each(?1)))) FROM tags t WHERE (?1 IS NULL AND ?2 IS NULL) \
             OR (?1 IS NULL AND NOT EXISTS (SELECT 1 FROM note_tags nt WHERE nt.tag_id = t.id)) OR EXISTS \
             (SELECT 1 FROM note_tags nt JOIN notes n ON n.id = nt.note_id WHERE nt.tag_id = t.id AND {visible} \
             AND (?1 IS NULL OR n.notebook_id IN (SELECT value FROM json_each(?1)))) ORDER BY t.name COLLATE NOCASE"
        ))?;
        let rows = stmt.query_map(params![self.scope_param()?, self.protection()?.sql_param()], |r| {
            Ok(Tag {
                id: r.get(0)?,
                name: r.get(1)?,
                note_count: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The attributes of a note, labels first, then by name.
    ///
    /// A protected note's attributes are its content: withheld from non-user actors.
    pub fn attributes(&self, note_id: &str) -> Result<Vec<Attribute>> {
        let note = self.note_summary(note_id)?;
        self.ensure_content_visible(&note)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, kind, name, value, created, updated FROM attributes WHERE note_id = ?1 \
             ORDER BY kind, name",
        )?;
        let rows = stmt.query_map([note_id], attribute_from_row)?;
        let attributes: Vec<Attribute> = rows.collect::<rusqlite::Result<_>>()?;
        if self.scope.is_none() {
            return Ok(attributes);
        }
        // Through a scope, a relation to a note outside it does not exist.
        Ok(attributes.into_iter().filter(|a| self.attribute_visible(a)).collect())
    }

    /// One attribute. Through a scope, one of a note outside it, or a relation to a note outside it, does not exist.
    /// One of a protected note is withheld from non-user actors.
    pub fn attribute(&self, id: &str) -> Result<Attribute> {
        let attribute = self
            .conn
            .prepare_cached("SELECT id, note_id, kind, name, value, created, updated FROM attributes WHERE id = ?1")?
            .query_row([id], attribute_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Attribute))?;
        if self.scope.is_some() && !self.attribute_visible(&attribute) {
            return Err(Error::NotFound(Missing::Attribute));
        }
        self.ensure_content_visible(&self.note_summary(&attribute.note_id)?)?;
        Ok(attribute)
    }

    /// Whether this view sees an attribute: its note, and for a relation its target, are visible.
    fn attribute_visible(&self, a: &Attribute) -> bool {
        self.note_summary(&a.note_id).is_ok() && (a.kind == AttributeKind::Label || self.note_summary(&a.value).is_ok())
    }

    /// The relations that point at a note, with the notes that own them. A protected note's relations are its
    /// content: non-user actors do not see them.
    pub fn backlinks(&self, note_id: &str) -> Result<Vec<(Attribute, NoteSummary)>> {
        self.note_summary(note_id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, kind, name, value, created, updated FROM attributes WHERE target_note_id = ?1 \
             ORDER BY note_id, name",
        )?;
        let attributes = stmt
            .query_map([note_id], attribute_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut links = Vec::with_capacity(attributes.len());
        for attribute in attributes {
            match self.note_summary(&attribute.note_id) {
                Ok(owner) if shows_content(self.actor, &owner) => links.push((attribute, owner)),
                Ok(_) => {}
                // A note outside this view's scope links here: it does not exist for this view.
                Err(Error::NotFound(_)) if self.scope.is_some() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(links)
    }

    /// The attachments of a note. Withheld from non-user actors when the note is protected.
    pub fn attachments(&self, note_id: &str) -> Result<Vec<AttachmentInfo>> {
        let note = self.note(note_id)?;
        self.attachments_of(&note)
    }

    /// The attachments of a note already read with [`Reader::note`]: holding the `Note` proves its content is
    /// visible to this actor, so no second check is needed.
    pub fn attachments_of(&self, note: &Note) -> Result<Vec<AttachmentInfo>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, note_id, title, mime, size, text IS NOT NULL, created FROM attachments WHERE note_id = ?1 \
             ORDER BY created, id",
        )?;
        let rows = stmt.query_map([&note.summary.id], attachment_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One attachment's metadata. Withheld from non-user actors when its note is protected.
    pub fn attachment(&self, id: &str) -> Result<AttachmentInfo> {
        let info = self
            .conn
            .prepare_cached(
                "SELECT id, note_id, title, mime, size, text IS NOT NULL, created FROM attachments WHERE id = ?1",
            )?
            .query_row([id], attachment_from_row)
            .optional()?
            .ok_or(Error::NotFound(Missing::Attachment))?;
        // Through a scope, an attachment of a note outside it does not exist either.
        let owner = self.note_summary(&info.note_id).map_err(|e| match e {
            Error::NotFound(_) => Error::NotFound(Missing::Attachment),
            other => other,
        })?;
        self.ensure_content_visible(&owner)?;
        Ok(info)
    }

    /// An attachment's bytes.
    pub fn attachment_data(&self, id: &str) -> Result<Vec<u8>> {
        self.attachment(id)?;
        Ok(self
            .conn
            .query_row("SELECT data FROM attachments WHERE id = ?1", [id], |r| r.get(0))?)
    }

    /// The text extracted from an attachment, if any.
    pub fn attachment_text(&self, id: &str) -> Result<Option<String>> {
        self.attachment(id)?;
        Ok(self
            .conn
            .query_row("SELECT text FROM attachments WHERE id = ?1", [id], |r| r.get(0))?)
    }

    /// The revisions of a note, newest first. Withheld from non-user actors when the note is protected.
    pub fn revisions(&self, note_id: &str) -> Result<Vec<Revision>> {
        let summary = self.note_summary(note_id)?;
        self.ensure_content_visible(&summary)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, note_id, title, body, actor, change_set_id, created FROM revisions WHERE note_id = ?1 \
             ORDER BY seq DESC",
        )?;
        let rows = stmt.query_map([note_id], revision_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The change log, newest first, optionally only changes at or after `since`.
    pub fn changes(&self, since: Option<Timestamp>, page: Page) -> Result<PageOf<Change>> {
        let since = since.map_or(i64::MIN, Timestamp::as_millis);
        let scope = self.scope_param()?;
        let in_scope = change_in_scope("?4");
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM changes c WHERE c.at >= ?1 AND {in_scope} AND ?2 = ?2 AND ?3 = ?3"),
            params![since, 0, 0, scope],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.seq, c.change_set_id, c.entity, c.entity_id, c.operation, c.actor, c.at FROM changes c \
             WHERE c.at >= ?1 AND {in_scope} ORDER BY c.seq DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![since, page.sql_limit(), page.sql_offset(), scope],
            change_from_row,
        )?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

    /// The sequence number of the latest change (0 when there is none): cheap, for watchers that look for news.
    pub fn latest_change_seq(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |r| r.get(0))?)
    }

    /// Up to `limit` changes after sequence number `seq`, oldest first (undone changes included: an undo is a
    /// change too).
    pub fn changes_after(&self, seq: i64, limit: u64) -> Result<Vec<Change>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, change_set_id, entity, entity_id, operation, actor, at FROM changes WHERE seq > ?1 \
             ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![seq, i64::try_from(limit).unwrap_or(i64::MAX)], change_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The changes of one change set, in the order they were made.
    pub fn changes_in_set(&self, change_set_id: &str) -> Result<Vec<Change>> {
        self.change_set(change_set_id)?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT c.seq, c.change_set_id, c.entity, c.entity_id, c.operation, c.actor, c.at FROM changes c \
             WHERE c.change_set_id = ?1 AND {} ORDER BY c.seq",
            change_in_scope("?2")
        ))?;
        let rows = stmt.query_map(params![change_set_id, self.scope_param()?], change_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One change set. Through a scope, only one that changed something inside it.
    pub fn change_set(&self, id: &str) -> Result<ChangeSet> {
        self.conn
            .query_row(
                &format!(
                    "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id) \
                     FROM change_sets s WHERE id = ?1 AND (?2 IS NULL OR EXISTS (SELECT 1 FROM changes c \
                     WHERE c.change_set_id = s.id AND {}))",
                    change_in_scope("?2")
                ),
                params![id, self.scope_param()?],
                change_set_from_row,
            )
            .optional()?
            .ok_or(Error::NotFound(Missing::ChangeSet))
    }

    /// The open (not reverted) change set that groups an agent turn's writes, if the turn wrote anything.
    pub fn open_change_set_of(&self, actor: &Actor) -> Result<Option<ChangeSet>> {
        let Some(key) = actor.grouping_key() else {
            return Ok(None);
        };
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM change_sets WHERE actor_key = ?1 AND reverted IS NULL ORDER BY created DESC LIMIT 1",
                [key],
                |r| r.get(0),
            )
            .optional()?;
        id.map(|id| self.change_set(&id)).transpose()
    }

    /// The change sets, newest first. Through a scope, those that changed something inside it.
    pub fn change_sets(&self, page: Page) -> Result<PageOf<ChangeSet>> {
        let scope = self.scope_param()?;
        let visible = format!(
            "(?3 IS NULL OR s.id IN (SELECT c.change_set_id FROM changes c WHERE {}))",
            change_in_scope("?3")
        );
        let total: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM change_sets s WHERE {visible} AND ?1 = ?1 AND ?2 = ?2"),
            params![0, 0, scope],
            |r| r.get(0),
        )?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id) \
             FROM change_sets s WHERE {visible} ORDER BY created DESC, rowid DESC LIMIT ?1 OFFSET ?2"
        ))?;
        let rows = stmt.query_map(params![page.sql_limit(), page.sql_offset(), scope], change_set_from_row)?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

    /// The change sets that changed a note, its tags, attributes or attachments, newest first.
    pub fn change_sets_of_note(&self, note_id: &str, page: Page) -> Result<PageOf<ChangeSet>> {
        self.note_summary(note_id)?;
        const TOUCHES: &str = "SELECT DISTINCT change_set_id FROM changes WHERE \
            (entity = 'note' AND entity_id = ?1) \
            OR (entity = 'note_tag' AND substr(entity_id, 1, length(?1) + 1) = ?1 || '/') \
            OR (entity IN ('attribute', 'attachment') AND (json_extract(before, '$.note_id') = ?1 \
                OR entity_id IN (SELECT id FROM attributes WHERE note_id = ?1) \
                OR entity_id IN (SELECT id FROM attachments WHERE note_id = ?1)))";
        let total: i64 = self
            .conn
            .query_row(&format!("SELECT count(*) FROM ({TOUCHES})"), [note_id], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT id, actor, created, reverted, (SELECT count(*) FROM changes c WHERE c.change_set_id = s.id) \
             FROM change_sets s WHERE id IN ({TOUCHES}) ORDER BY created DESC, rowid DESC LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![note_id, page.sql_limit(), page.sql_offset()],
            change_set_from_row,
        )?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

    /// One stored chat.
    pub fn chat(&self, id: &str) -> Result<Chat> {
        let mut chat = self
            .conn
            .query_row(
                "SELECT id, title, note_id, created, updated FROM chats WHERE id = ?1",
                [id],
                chat_from_row,
            )
            .optional()?
            .ok_or(Error::NotFound(Missing::Chat))?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT role, content FROM chat_messages WHERE chat_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map([id], |r| {
            let content: String = r.get(1)?;
            Ok(ChatMessage {
                role: r.get(0)?,
                content: serde_json::from_str(&content).unwrap_or(serde_json::Value::Null),
            })
        })?;
        chat.messages = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(chat)
    }

    /// The stored chats, most recently updated first, without their messages (read one with [`Reader::chat`]).
    pub fn chats(&self, page: Page) -> Result<PageOf<Chat>> {
        let total: i64 = self.conn.query_row("SELECT count(*) FROM chats", [], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, title, note_id, created, updated FROM chats ORDER BY updated DESC, id LIMIT ?1 OFFSET ?2",
        )?;
        let rows = stmt.query_map(params![page.sql_limit(), page.sql_offset()], chat_from_row)?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }

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

/// SQL that holds when the change `c` is about something inside the scope bound at `param` (a JSON array of
/// notebook ids), or when that parameter is NULL. Changes to tags themselves are outside every scope.
fn change_in_scope(param: &str) -> String {
    let notes = format!("(SELECT id FROM notes WHERE notebook_id IN (SELECT value FROM json_each({param})))");
    let owner = |table: &str| {
        format!("coalesce((SELECT note_id FROM {table} WHERE id = c.entity_id), json_extract(c.before, '$.note_id'))")
    };
    // A label has no target; a relation's target must be inside too.
    let target = "coalesce((SELECT target_note_id FROM attributes WHERE id = c.entity_id), \
                  json_extract(c.before, '$.target_note_id'), '')";
    format!(
        "({param} IS NULL OR (c.entity = 'notebook' AND c.entity_id IN (SELECT value FROM json_each({param}))) \
         OR (c.entity = 'note' AND c.entity_id IN {notes}) \
         OR (c.entity = 'note_tag' AND substr(c.entity_id, 1, instr(c.entity_id, '/') - 1) IN {notes}) \
         OR (c.entity = 'attachment' AND {} IN {notes}) \
         OR (c.entity = 'attribute' AND {} IN {notes} AND {target} IN (SELECT '' UNION ALL SELECT id FROM {notes})))",
        owner("attachments"),
        owner("attributes"),
    )
}

/// A note's summary from a row of [`NOTE_COLUMNS`], as the reader whose [`Protection`] this is may see it.
pub(crate) fn summary_from_row(r: &Row<'_>, protection: &Protection) -> rusqlite::Result<NoteSummary> {
    let notebook_id: String = r.get(2)?;
    let tags: Option<String> = r.get(10)?;
    Ok(protection.summary(NoteSummary {
        id: r.get(1)?,
        title: r.get(3)?,
        is_todo: r.get(4)?,
        todo_completed: r.get::<_, Option<i64>>(5)?.map(Timestamp),
        is_protected: protection.is_protected(r.get::<_, bool>(6)?, &notebook_id),
        created: Timestamp(r.get(7)?),
        updated: Timestamp(r.get(8)?),
        deleted: r.get::<_, Option<i64>>(9)?.map(Timestamp),
        tags: tags
            .map(|t| t.split('\u{1f}').map(str::to_owned).collect())
            .unwrap_or_default(),
        notebook_id,
    }))
}

fn notebook_from_row(r: &Row<'_>) -> rusqlite::Result<Notebook> {
    Ok(Notebook {
        id: r.get(0)?,
        title: r.get(1)?,
        parent_id: r.get(2)?,
        icon: r.get(3)?,
        is_protected: r.get(4)?,
        created: Timestamp(r.get(5)?),
        updated: Timestamp(r.get(6)?),
    })
}

fn attribute_from_row(r: &Row<'_>) -> rusqlite::Result<Attribute> {
    let kind: String = r.get(2)?;
    Ok(Attribute {
        id: r.get(0)?,
        note_id: r.get(1)?,
        kind: AttributeKind::parse(&kind).unwrap_or(AttributeKind::Label),
        name: r.get(3)?,
        value: r.get(4)?,
        created: Timestamp(r.get(5)?),
        updated: Timestamp(r.get(6)?),
    })
}

fn attachment_from_row(r: &Row<'_>) -> rusqlite::Result<AttachmentInfo> {
    Ok(AttachmentInfo {
        id: r.get(0)?,
        note_id: r.get(1)?,
        title: r.get(2)?,
        mime: r.get(3)?,
        size: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
        has_text: r.get(5)?,
        created: Timestamp(r.get(6)?),
    })
}

fn revision_from_row(r: &Row<'_>) -> rusqlite::Result<Revision> {
    Ok(Revision {
        id: r.get(0)?,
        note_id: r.get(1)?,
        title: r.get(2)?,
        body: r.get(3)?,
        actor: actor_from_text(&r.get::<_, String>(4)?),
        change_set_id: r.get(5)?,
        created: Timestamp(r.get(6)?),
    })
}

fn change_from_row(r: &Row<'_>) -> rusqlite::Result<Change> {
    let entity: String = r.get(2)?;
    let operation: String = r.get(4)?;
    Ok(Change {
        seq: r.get(0)?,
        change_set_id: r.get(1)?,
        entity: EntityKind::parse(&entity).unwrap_or(EntityKind::Note),
        entity_id: r.get(3)?,
        operation: Operation::parse(&operation).unwrap_or(Operation::Update),
        actor: actor_from_text(&r.get::<_, String>(5)?),
        at: Timestamp(r.get(6)?),
    })
}

fn change_set_from_row(r: &Row<'_>) -> rusqlite::Result<ChangeSet> {
    Ok(ChangeSet {
        id: r.get(0)?,
        actor: actor_from_text(&r.get::<_, String>(1)?),
        created: Timestamp(r.get(2)?),
        reverted: r.get::<_, Option<i64>>(3)?.map(Timestamp),
        change_count: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
    })
}

fn chat_from_row(r: &Row<'_>) -> rusqlite::Result<Chat> {
    Ok(Chat {
        id: r.get(0)?,
        title: r.get(1)?,
        note_id: r.get(2)?,
        messages: Vec::new(),
        created: Timestamp(r.get(3)?),
        updated: Timestamp(r.get(4)?),
    })
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
