//! Reading notes: one note, its view, lists of notes, and tags.

use rusqlite::{OptionalExtension, Row, params};

use super::{NoteList, NoteOrder, Page, PageOf, Reader};
use crate::entity::{AttachmentInfo, Note, NoteSummary, Tag, Timestamp};
use crate::error::{Error, Missing, Result};
use crate::protection::{Protection, content_visible_sql};

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

impl Reader<'_> {
    /// A note as this view sees it: outside the scope it does not exist.
    fn check_note_scope(&self, note: NoteSummary) -> Result<NoteSummary> {
        if self.in_scope(&note.notebook_id)? {
            Ok(note)
        } else {
            Err(Error::NotFound(Missing::Note))
        }
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

    /// The one note `name` means, as a command line or a form names a note: its id, or the one note
    /// [`Reader::notes_named`] finds; none, or several (the error lists their ids), is an error that says so.
    pub fn note_called(&self, name: &str) -> Result<NoteSummary> {
        if let Ok(note) = self.note_summary(name) {
            return Ok(note);
        }
        let mut named = self.notes_named(name)?;
        match named.len() {
            1 => Ok(named.remove(0)),
            0 => Err(Error::invalid(format!("no note has the id or title \"{name}\""))),
            n => Err(Error::invalid(format!(
                "{n} notes are titled \"{name}\": give one's id ({})",
                named.iter().map(|n| n.id.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// The notes a name means, most recently changed first: those titled so or with it as an alias (ignoring case),
    /// narrowed by a notebook path written before the title (`Work/Ideas`), outside the trash. This is the rule a
    /// `[[wikilink]]` resolves by (see `links::candidates`), so a prompt's or a command's "note by title" means what
    /// a link with that text means. Notes outside this reader's scope are left out.
    pub fn notes_named(&self, name: &str) -> Result<Vec<NoteSummary>> {
        let mut notes = Vec::new();
        for id in crate::links::candidates(self.conn, name)? {
            match self.note_summary(&id) {
                Ok(summary) => notes.push(summary),
                Err(Error::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        notes.sort_by_key(|n| std::cmp::Reverse(n.updated));
        Ok(notes)
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
        let note = self.note_unrecorded(id)?;
        self.record_read(&note.summary, None, crate::ledger::WHOLE);
        Ok(note)
    }

    /// [`Reader::note`], for core's own checks and uses that return none of its text: not in the read ledger.
    pub(crate) fn note_unrecorded(&self, id: &str) -> Result<Note> {
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
        self.record_read(&row.note.summary, None, crate::ledger::WHOLE);
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
                    ", n.body, nb.parent_id, nb.is_protected, nb.title, pb.parent_id, pb.is_protected, n.sealed, \
                     n.version",
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
        let (mut summary, body, chain, sealed, has_attachments, has_unresolved_links) = self
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
                    (r.get::<_, Option<Vec<u8>>>(17)?, r.get::<_, i64>(18)?),
                    extras && r.get::<_, bool>(19)?,
                    extras && r.get::<_, bool>(20)?,
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
        let body = match sealed {
            (Some(blob), version) => self.key_for_note(&summary)?.open_text(
                &summary.id,
                crate::seal::kind::BODY,
                version,
                &blob,
                "its body",
            )?,
            // Once a passphrase is set every protected note is sealed: plain text where a sealed body belongs was put
            // there from outside quire, and is not shown as the note's.
            (None, _) if summary.is_protected && crate::seal::sealer(self.conn)?.is_some() => {
                return Err(Error::SealBroken {
                    note_id: summary.id.clone(),
                    what: "its text is stored unsealed".into(),
                });
            }
            (None, _) => body,
        };
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
