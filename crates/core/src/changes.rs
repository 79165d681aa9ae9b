//! The change log as people read it: change sets with each change described in words ("note \"Plan\"", "tag #work
//! of \"Plan\""), revisions, and the user's two ways back (restore a revision, undo a change set). `quire history`,
//! `quire undo`, `quire note restore` and the web app's history all go through here.

use serde_json::{Value, json};

use crate::entity::{Actor, Change, ChangeSet, EntityKind, Note, Operation, Revision};
use crate::error::{Error, Missing, Result};
use crate::read::{Page, Reader};
use crate::workspace::Workspace;
use crate::write::{RevertReport, Writer};

/// One change set with what it changed, each change described in words.
#[derive(Debug, Clone)]
pub struct ChangeSetView {
    /// The change set.
    pub set: ChangeSet,
    /// Who made it, in words: the assistant's turn by its chat's title, not its id ([`actor_words`]).
    pub by: String,
    /// Its changes, each described in words; a description met again in the set is not repeated.
    pub changes: Vec<(Change, Described)>,
    /// What it undid, when it is an undo (ux-2 #13: an undo's changes say so).
    pub undoes: Option<UndoneRef>,
}

/// The change set an undo undid, for a person: its id, who made it and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndoneRef {
    /// Its id.
    pub change_set_id: String,
    /// Who made it, in words ([`actor_words`]).
    pub by: String,
    /// When it was made.
    pub created: crate::entity::Timestamp,
}

impl UndoneRef {
    /// "undo of Claude Desktop's change of 2026-12-06T10:00:00Z (CHANGE_SET)".
    pub fn words(&self) -> String {
        format!(
            "undo of {}'s change of {} ({})",
            self.by,
            self.created.to_rfc3339(),
            self.change_set_id
        )
    }
}

impl ChangeSetView {
    /// The JSON shape of `quire history --json` and the web app.
    pub fn to_json(&self) -> Value {
        json!({
            "change_set_id": self.set.id,
            "actor": self.set.actor.to_string(),
            "by": self.by,
            "created": self.set.created.to_rfc3339(),
            "undone": self.set.reverted.map(|t| t.to_rfc3339()),
            "undoes": self.undoes.as_ref().map(|u| json!({
                "change_set_id": u.change_set_id,
                "by": u.by,
                "created": u.created.to_rfc3339(),
            })),
            "changes": self.changes.iter().map(|(c, described)| json!({
                "entity": c.entity,
                "entity_id": c.entity_id,
                "operation": c.operation,
                "verb": described.verb,
                "what": described.what,
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

/// Who made a change, in words for a person (ux-2 #22): an assistant turn by its chat's title ("the assistant in
/// “Trip plans”, turn 2"), any other actor as it is named everywhere.
pub fn actor_words(r: &Reader<'_>, actor: &Actor) -> Result<String> {
    Ok(match actor {
        Actor::Agent { chat, turn } => match r.chat_title(chat)? {
            Some(title) if !title.trim().is_empty() => format!("the assistant in “{}”, turn {turn}", title.trim()),
            _ => format!("the assistant in a chat since deleted, turn {turn}"),
        },
        other => other.to_string(),
    })
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
            // A change set that changed the same thing several times (a typing session saves many times into one)
            // says so once: the first of each description stands for the rest.
            let mut changes: Vec<(Change, Described)> = Vec::new();
            for change in r.changes_in_set(&set.id)? {
                let described = describe_change(r, &change);
                if !changes.iter().any(|(_, seen)| *seen == described) {
                    changes.push((change, described));
                }
            }
            let by = actor_words(r, &set.actor)?;
            // The set it undid may be out of reach (outside a scope): then the undo names no one.
            let undoes = match set.undoes.as_deref().map(|id| r.change_set(id)) {
                Some(Ok(undone)) => Some(UndoneRef {
                    by: actor_words(r, &undone.actor)?,
                    change_set_id: undone.id,
                    created: undone.created,
                }),
                _ => None,
            };
            Ok(ChangeSetView {
                set,
                by,
                changes,
                undoes,
            })
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

/// A change in words: what was done ("trashed", "renamed") and to what (`note "Plan"`, `label "status" of "Plan"`).
/// Read together: `renamed note "Draft" to "Plan"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Described {
    /// What was done, in the past tense.
    pub verb: &'static str,
    /// What it was done to, named by titles and paths, never by ids where a name exists.
    pub what: String,
}

/// A change described in words, from the rows it changed: a note moved to the trash says "trashed", a renamed one
/// both titles, an attribute or attachment its name and its note's title, a removed notebook its old title.
/// What a protected note withholds from this reader (its tags, attributes and attachments) stays unnamed.
pub fn describe_change(r: &Reader<'_>, change: &Change) -> Described {
    let (before, after) = change_rows(r, change).unwrap_or((None, None));
    let field = |row: &Option<serde_json::Value>, key: &str| {
        row.as_ref()
            .and_then(|row| row.get(key))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let row = if after.is_some() { &after } else { &before };
    // The note a change is about, as this reader may see it; its title from the rows when it is gone.
    let owner_id = match change.entity {
        EntityKind::Note => Some(change.entity_id.clone()),
        EntityKind::NoteTag => change.entity_id.split('/').next().map(str::to_owned),
        EntityKind::Attribute | EntityKind::Attachment => field(row, "note_id"),
        _ => None,
    };
    let owner = owner_id.as_deref().and_then(|id| r.note_summary(id).ok());
    let shows_content = owner.as_ref().is_none_or(|n| r.shows_content(n));
    let title = owner.as_ref().map(|n| n.title.clone()).or_else(|| {
        (change.entity == EntityKind::Note)
            .then(|| field(row, "title"))
            .flatten()
    });
    let of = |title: &Option<String>| match title {
        Some(title) => format!(" of \"{title}\""),
        None => String::new(),
    };
    let tag_name = |id: &str| r.tags().ok()?.into_iter().find(|t| t.id == id).map(|t| t.name);
    let plain = verb(change.operation);
    // Protecting and unprotecting (a row's flag, before and after) are changes worth their own word.
    let protection_verb = || {
        let flag = |row: &Option<serde_json::Value>| {
            row.as_ref()
                .and_then(|r| r.get("is_protected"))
                .and_then(serde_json::Value::as_i64)
        };
        match (flag(&before), flag(&after)) {
            (Some(0), Some(1)) => Some("protected"),
            (Some(1), Some(0)) => Some("unprotected"),
            _ => None,
        }
    };
    match change.entity {
        EntityKind::Note => {
            let name = title
                .clone()
                .map_or_else(|| "a note".to_owned(), |t| format!("note \"{t}\""));
            if change.operation != Operation::Update {
                let verb = if change.operation == Operation::Delete {
                    "deleted"
                } else {
                    plain
                };
                return Described { verb, what: name };
            }
            let deleted = |row: &Option<serde_json::Value>| {
                row.as_ref()
                    .and_then(|r| r.get("deleted"))
                    .is_some_and(|d| !d.is_null())
            };
            if !deleted(&before) && deleted(&after) {
                return Described {
                    verb: "trashed",
                    what: name,
                };
            }
            if deleted(&before) && !deleted(&after) {
                return Described {
                    verb: "restored",
                    what: name,
                };
            }
            if let Some(verb) = protection_verb() {
                return Described { verb, what: name };
            }
            let (old_title, new_title) = (field(&before, "title"), field(&after, "title"));
            if let (Some(old), Some(new)) = (&old_title, &new_title)
                && old != new
            {
                return Described {
                    verb: "renamed",
                    what: format!("note \"{old}\" to \"{new}\""),
                };
            }
            let (old_book, new_book) = (field(&before, "notebook_id"), field(&after, "notebook_id"));
            if let (Some(_), Some(new)) = (&old_book, &new_book)
                && old_book != new_book
            {
                let path = r.notebook_path_text(new).unwrap_or_default();
                let place = if path.is_empty() {
                    "the top level".to_owned()
                } else {
                    format!("\"{path}\"")
                };
                return Described {
                    verb: "moved",
                    what: format!("{name} to {place}"),
                };
            }
            Described {
                verb: plain,
                what: name,
            }
        }
        EntityKind::NoteTag => {
            let tag = change
                .entity_id
                .split('/')
                .nth(1)
                .filter(|_| shows_content)
                .and_then(tag_name);
            // Said as a person says it (ux-2 #22): "tagged "Plan" with #work", "untagged "Plan" (#work)".
            let note = title
                .as_ref()
                .map_or_else(|| "a note".to_owned(), |t| format!("\"{t}\""));
            let with = tag.map_or_else(|| "a tag".to_owned(), |tag| format!("#{tag}"));
            match change.operation {
                Operation::Create => Described {
                    verb: "tagged",
                    what: format!("{note} with {with}"),
                },
                Operation::Delete => Described {
                    verb: "untagged",
                    what: format!("{note} ({with})"),
                },
                Operation::Update => Described {
                    verb: plain,
                    what: format!("{with} of {note}"),
                },
            }
        }
        EntityKind::Tag => {
            let name = tag_name(&change.entity_id).or_else(|| r.actor.is_user().then(|| field(row, "name")).flatten());
            let what = name.map_or_else(|| "a tag".to_owned(), |tag| format!("tag #{tag}"));
            Described { verb: plain, what }
        }
        EntityKind::Notebook => {
            // Named as the change left it: its title then, below the notebook that held it then.
            let title = field(row, "title").unwrap_or_default();
            let path_then = |title: &str, parent: Option<&str>| {
                let above = parent.and_then(|p| r.notebook_path_text(p).ok()).unwrap_or_default();
                if above.is_empty() {
                    title.to_owned()
                } else {
                    format!("{above}/{title}")
                }
            };
            let name = if title.is_empty() {
                "a notebook".to_owned()
            } else {
                format!("notebook \"{}\"", path_then(&title, field(row, "parent_id").as_deref()))
            };
            if change.operation == Operation::Update {
                if let Some(verb) = protection_verb() {
                    return Described { verb, what: name };
                }
                let (old_title, new_title) = (field(&before, "title"), field(&after, "title"));
                if let (Some(old), Some(new)) = (&old_title, &new_title)
                    && old != new
                {
                    let place = path_then(old, field(&before, "parent_id").as_deref());
                    return Described {
                        verb: "renamed",
                        what: format!("notebook \"{place}\" to \"{new}\""),
                    };
                }
                let (old_parent, new_parent) = (field(&before, "parent_id"), field(&after, "parent_id"));
                if old_parent != new_parent && new_parent.is_some() {
                    let above = new_parent
                        .as_deref()
                        .and_then(|p| r.notebook_path_text(p).ok())
                        .unwrap_or_default();
                    let place = if above.is_empty() {
                        "the top level".to_owned()
                    } else {
                        format!("\"{above}\"")
                    };
                    let from = path_then(&title, old_parent.as_deref());
                    return Described {
                        verb: "moved",
                        what: format!("notebook \"{from}\" to {place}"),
                    };
                }
            }
            Described {
                verb: plain,
                what: name,
            }
        }
        EntityKind::Attribute => {
            let kind = field(row, "kind").unwrap_or_else(|| "attribute".to_owned());
            let what = match field(row, "name").filter(|_| shows_content) {
                Some(name) => format!("{kind} \"{name}\"{}", of(&title)),
                None => format!("an attribute{}", of(&title)),
            };
            Described { verb: plain, what }
        }
        EntityKind::Attachment => {
            let what = match field(row, "title").filter(|_| shows_content) {
                Some(name) => format!("attachment \"{name}\"{}", of(&title)),
                None => format!("an attachment{}", of(&title)),
            };
            Described { verb: plain, what }
        }
    }
}

/// The row a change touched as it was before the change and right after it: the next change of the same row
/// recorded how it was after this one; without one, the row as it is now.
fn change_rows(r: &Reader<'_>, change: &Change) -> Result<(Option<serde_json::Value>, Option<serde_json::Value>)> {
    use rusqlite::OptionalExtension as _;
    let parse = |text: Option<String>| text.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let before: Option<String> = r
        .conn
        .prepare_cached("SELECT before FROM changes WHERE seq = ?1")?
        .query_row([change.seq], |row| row.get(0))
        .optional()?
        .flatten();
    let next: Option<Option<String>> = r
        .conn
        .prepare_cached(
            "SELECT before FROM changes WHERE entity = ?1 AND entity_id = ?2 AND seq > ?3 ORDER BY seq LIMIT 1",
        )?
        .query_row(
            rusqlite::params![change.entity.as_str(), change.entity_id, change.seq],
            |row| row.get(0),
        )
        .optional()?;
    let after = match next {
        Some(next) => parse(next),
        None => crate::history::snapshot(r.conn, change.entity, &change.entity_id)?,
    };
    Ok((parse(before), after))
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
    ws.write(&Actor::User, |w| restore_revision_in(w, note_id, revision))
}

/// [`restore_revision`] in the caller's write (the user's, unlocked for a sealed note:
/// [`Workspace::write_unlocked`]).
pub fn restore_revision_in(w: &mut Writer<'_>, note_id: &str, revision: i64) -> Result<Note> {
    if !w.revisions(note_id)?.iter().any(|r| r.id == revision) {
        return Err(Error::NotFound(Missing::Revision));
    }
    w.save_revision_now(note_id)?;
    w.restore_revision(revision)
}

/// Reverts a change set as the user (an agent turn, an MCP call, a plugin call, or one of the user's own, such as
/// an earlier undo). Returns who made it and what was undone; [`Error::ChangedSince`] when later changes stand in
/// the way, and nothing is undone then.
pub fn undo_change_set(ws: &Workspace, change_set_id: &str) -> Result<(Actor, RevertReport)> {
    ws.write(&Actor::User, |w| undo_change_set_in(w, change_set_id))
}

/// [`undo_change_set`] in the caller's write (the user's, unlocked when the undo would unseal a note).
pub fn undo_change_set_in(w: &mut Writer<'_>, change_set_id: &str) -> Result<(Actor, RevertReport)> {
    let set = w.change_set(change_set_id)?;
    Ok((set.actor.clone(), w.revert_change_set(change_set_id)?))
}

/// [`undo_change_set`] together with the later change sets that changed the same things since (see
/// [`crate::Writer::revert_change_set_and_later`]): the reports, newest change set first, the asked one last.
pub fn undo_change_set_and_later(ws: &Workspace, change_set_id: &str) -> Result<(Actor, Vec<RevertReport>)> {
    ws.write(&Actor::User, |w| undo_change_set_and_later_in(w, change_set_id))
}

/// [`undo_change_set_and_later`] in the caller's write.
pub fn undo_change_set_and_later_in(w: &mut Writer<'_>, change_set_id: &str) -> Result<(Actor, Vec<RevertReport>)> {
    let set = w.change_set(change_set_id)?;
    Ok((set.actor.clone(), w.revert_change_set_and_later(change_set_id)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ux-2 #22: the history named an assistant turn by its chat's raw id.
    #[test]
    fn an_assistant_turn_is_named_by_its_chats_title() {
        let ws = Workspace::open_in_memory().unwrap();
        let chat = ws.write(&Actor::User, |w| w.create_chat("Trip plans", None)).unwrap();
        let words = |chat: &str| {
            let actor = Actor::Agent {
                chat: chat.to_owned(),
                turn: 2,
            };
            ws.read(&Actor::User, |r| actor_words(r, &actor)).unwrap()
        };
        assert_eq!(words(&chat.id), "the assistant in “Trip plans”, turn 2");
        assert_eq!(words("gone"), "the assistant in a chat since deleted, turn 2");
        let user = ws.read(&Actor::User, |r| actor_words(r, &Actor::User)).unwrap();
        assert_eq!(user, "user");
    }
}
