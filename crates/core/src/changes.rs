//! The change log as people read it: change sets with each change described in words ("note \"Plan\"", "tag #work
//! of \"Plan\""), revisions, and the user's two ways back (restore a revision, undo a change set). `quire history`,
//! `quire undo`, `quire note restore` and the web app's history all go through here.

use serde_json::{Value, json};

use crate::entity::{Actor, Change, ChangeSet, EntityKind, Note, Operation, Revision};
use crate::error::{Error, Missing, Result};
use crate::read::{Page, Reader};
use crate::workspace::Workspace;
use crate::write::RevertReport;

/// One change set with what it changed, each change described in words.
#[derive(Debug, Clone)]
pub struct ChangeSetView {
    /// The change set.
    pub set: ChangeSet,
    /// Its changes, each with a short description of what it touched.
    pub changes: Vec<(Change, String)>,
}

impl ChangeSetView {
    /// The JSON shape of `quire history --json` and the web app.
    pub fn to_json(&self) -> Value {
        json!({
            "change_set_id": self.set.id,
            "actor": self.set.actor.to_string(),
            "created": self.set.created.to_rfc3339(),
            "undone": self.set.reverted.map(|t| t.to_rfc3339()),
            "changes": self.changes.iter().map(|(c, what)| json!({
                "entity": c.entity,
                "entity_id": c.entity_id,
                "operation": c.operation,
                "verb": verb(c.operation),
                "what": what,
                "actor": c.actor.to_string(),
                "at": c.at.to_rfc3339(),
            })).collect::<Vec<_>>(),
        })
    }
}

/// A page of change sets, newest first: the workspace's, or those that touched one note.
#[derive(Debug, Clone)]
pub struct ChangeSetPage {
    /// The change sets.
    pub sets: Vec<ChangeSetView>,
    /// How many there are in all.
    pub total: u64,
    /// Whether more follow.
    pub has_more: bool,
}

/// The change sets of the workspace (or of `note`), with their changes described.
pub fn change_set_views(r: &Reader<'_>, note: Option<&str>, page: Page) -> Result<ChangeSetPage> {
    let sets = match note {
        Some(id) => r.change_sets_of_note(id, page)?,
        None => r.change_sets(page)?,
    };
    let views = sets
        .items
        .into_iter()
        .map(|set| {
            let changes = r
                .changes_in_set(&set.id)?
                .into_iter()
                .map(|c| {
                    let what = describe_change(r, &c);
                    (c, what)
                })
                .collect();
            Ok(ChangeSetView { set, changes })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ChangeSetPage {
        sets: views,
        total: sets.total,
        has_more: sets.has_more,
    })
}

/// The past tense of an operation: "created", "changed", "removed".
pub fn verb(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "created",
        Operation::Update => "changed",
        Operation::Delete => "removed",
    }
}

/// A short name for what a change touched: a note's title when it is a note.
pub fn describe_change(r: &Reader<'_>, change: &Change) -> String {
    let note_id = match change.entity {
        EntityKind::Note => Some(change.entity_id.as_str()),
        EntityKind::NoteTag => change.entity_id.split('/').next(),
        _ => None,
    };
    let note = note_id.and_then(|id| r.note_summary(id).ok());
    // A protected note's tags are its content: a reader it is withheld from gets "a tag of".
    let shows_tags = note.as_ref().is_none_or(|n| r.shows_content(n));
    let title = note.map(|n| n.title);
    let tag_name = |id: &str| r.tags().ok()?.into_iter().find(|t| t.id == id).map(|t| t.name);
    match (change.entity, title) {
        (EntityKind::Note, Some(title)) => format!("note \"{title}\""),
        (EntityKind::NoteTag, Some(title)) => match change
            .entity_id
            .split('/')
            .nth(1)
            .filter(|_| shows_tags)
            .and_then(tag_name)
        {
            Some(tag) => format!("tag #{tag} of \"{title}\""),
            None => format!("a tag of \"{title}\""),
        },
        (EntityKind::Tag, _) => match tag_name(&change.entity_id) {
            Some(tag) => format!("tag #{tag}"),
            None => format!("tag {}", change.entity_id),
        },
        (EntityKind::Notebook, _) => match r.notebook_path_text(&change.entity_id) {
            Ok(path) if !path.is_empty() => format!("notebook \"{path}\""),
            _ => format!("notebook {}", change.entity_id),
        },
        (kind, _) => format!("{} {}", entity_label(kind), change.entity_id),
    }
}

fn entity_label(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Notebook => "notebook",
        EntityKind::Note => "note",
        EntityKind::Tag => "tag",
        EntityKind::NoteTag => "tag link",
        EntityKind::Attribute => "attribute",
        EntityKind::Attachment => "attachment",
    }
}

/// A revision as JSON; with `body`, its text too (the web app diffs it against the note).
pub fn revision_json(revision: &Revision, body: bool) -> Value {
    let mut value = json!({
        "revision": revision.id,
        "note_id": revision.note_id,
        "title": revision.title,
        "body_chars": revision.body.chars().count(),
        "actor": revision.actor.to_string(),
        "change_set_id": revision.change_set_id,
        "created": revision.created.to_rfc3339(),
    });
    if body {
        value["body"] = Value::String(revision.body.clone());
    }
    value
}

/// Puts a note back to one of its revisions as the user's write, keeping the current text as a revision first.
pub fn restore_revision(ws: &Workspace, note_id: &str, revision: i64) -> Result<Note> {
    ws.write(&Actor::User, |w| {
        if !w.revisions(note_id)?.iter().any(|r| r.id == revision) {
            return Err(Error::NotFound(Missing::Revision));
        }
        w.save_revision_now(note_id)?;
        w.restore_revision(revision)
    })
}

/// Reverts a change set as the user (an agent turn, an MCP call, a plugin call, or one of the user's own, such as
/// an earlier undo). Returns who made it and what was undone; [`Error::Conflict`] when later changes stand in the
/// way, and nothing is undone then.
pub fn undo_change_set(ws: &Workspace, change_set_id: &str) -> Result<(Actor, RevertReport)> {
    ws.write(&Actor::User, |w| {
        let set = w.change_set(change_set_id)?;
        Ok((set.actor.clone(), w.revert_change_set(change_set_id)?))
    })
}
