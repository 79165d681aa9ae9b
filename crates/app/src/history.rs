//! `quire history`, `quire undo`, `quire note revisions` and `quire note restore`: seeing and taking back changes.

use anyhow::bail;
use quire_core::{Actor, Change, ChangeSet, EntityKind, Error, Operation, Page, Workspace};
use serde_json::{Value, json};

use crate::cli::HistoryArgs;
use crate::output::Output;

/// One change set with what it changed, as `quire history` shows it.
struct SetView {
    set: ChangeSet,
    changes: Vec<(Change, String)>,
}

/// A short name for what a change touched: a note's title when it is a note.
fn describe(r: &quire_core::Reader<'_>, change: &Change) -> String {
    let note_id = match change.entity {
        EntityKind::Note => Some(change.entity_id.as_str()),
        EntityKind::NoteTag => change.entity_id.split('/').next(),
        _ => None,
    };
    let title = note_id.and_then(|id| r.note_summary(id).ok()).map(|n| n.title);
    let tag_name = |id: &str| r.tags().ok()?.into_iter().find(|t| t.id == id).map(|t| t.name);
    match (change.entity, title) {
        (EntityKind::Note, Some(title)) => format!("note \"{title}\""),
        (EntityKind::NoteTag, Some(title)) => match change.entity_id.split('/').nth(1).and_then(tag_name) {
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

fn verb(operation: Operation) -> &'static str {
    match operation {
        Operation::Create => "created",
        Operation::Update => "changed",
        Operation::Delete => "removed",
    }
}

pub(crate) fn history(out: &Output, ws: &Workspace, args: &HistoryArgs) -> anyhow::Result<()> {
    let page = Page {
        offset: args.offset,
        limit: args.limit.clamp(1, 500),
    };
    let (sets, total, has_more, revisions) = ws.read(&Actor::User, |r| {
        let sets = match &args.note {
            Some(id) => r.change_sets_of_note(id, page)?,
            None => r.change_sets(page)?,
        };
        let revisions = match &args.note {
            Some(id) => Some(r.revisions(id)?),
            None => None,
        };
        let views = sets
            .items
            .into_iter()
            .map(|set| {
                let changes = r.changes_in_set(&set.id)?;
                let described = changes
                    .into_iter()
                    .map(|c| {
                        let what = describe(r, &c);
                        (c, what)
                    })
                    .collect();
                Ok::<_, Error>(SetView {
                    set,
                    changes: described,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok::<_, Error>((views, sets.total, sets.has_more, revisions))
    })?;
    if out.json {
        let sets: Vec<Value> = sets.iter().map(set_json).collect();
        let mut value = json!({ "total": total, "offset": args.offset, "has_more": has_more, "change_sets": sets });
        if let Some(revisions) = &revisions {
            value["revisions"] = Value::Array(revisions.iter().map(revision_json).collect());
        }
        return crate::output::json_value(&value);
    }
    let mut text = String::new();
    if let Some(revisions) = &revisions {
        text.push_str(&revisions_text(revisions));
        text.push('\n');
    }
    if sets.is_empty() {
        text.push_str(if total == 0 {
            "No changes yet.\n"
        } else {
            "No change sets on this page (fewer than --offset).\n"
        });
    }
    for view in &sets {
        let set = &view.set;
        let state = match set.reverted {
            Some(at) => format!("  (undone {at})"),
            None => String::new(),
        };
        text.push_str(&format!("{}  {}  {}{state}\n", set.id, set.created, set.actor));
        for (change, what) in view.changes.iter().take(8) {
            text.push_str(&format!("    {} {what}\n", verb(change.operation)));
        }
        if view.changes.len() > 8 {
            text.push_str(&format!("    … and {} more changes\n", view.changes.len() - 8));
        }
    }
    if has_more {
        text.push_str(&format!(
            "\nMore with --offset {}. Undo an AI's change set with: quire undo CHANGE_SET\n",
            args.offset + sets.len() as u64
        ));
    } else if !sets.is_empty() {
        text.push_str("\nUndo an AI's change set with: quire undo CHANGE_SET\n");
    }
    crate::output::text(&text)
}

fn set_json(view: &SetView) -> Value {
    json!({
        "change_set_id": view.set.id,
        "actor": view.set.actor.to_string(),
        "created": view.set.created.to_rfc3339(),
        "undone": view.set.reverted.map(|t| t.to_rfc3339()),
        "changes": view.changes.iter().map(|(c, what)| json!({
            "entity": c.entity,
            "entity_id": c.entity_id,
            "operation": c.operation,
            "what": what,
            "actor": c.actor.to_string(),
            "at": c.at.to_rfc3339(),
        })).collect::<Vec<_>>(),
    })
}

fn revision_json(revision: &quire_core::Revision) -> Value {
    json!({
        "revision": revision.id,
        "note_id": revision.note_id,
        "title": revision.title,
        "body_chars": revision.body.chars().count(),
        "actor": revision.actor.to_string(),
        "change_set_id": revision.change_set_id,
        "created": revision.created.to_rfc3339(),
    })
}

fn revisions_text(revisions: &[quire_core::Revision]) -> String {
    if revisions.is_empty() {
        return "No revisions: the note has not been changed by an AI, nor restored.\n".to_owned();
    }
    let mut text = String::from("Revisions (the note before each change), newest first:\n");
    for revision in revisions {
        text.push_str(&format!(
            "  {:>5}  {}  before a change by {}: \"{}\", {} characters\n",
            revision.id,
            revision.created,
            revision.actor,
            revision.title,
            revision.body.chars().count()
        ));
    }
    text.push_str("Restore one with: quire note restore NOTE_ID REVISION\n");
    text
}

pub(crate) fn revisions(out: &Output, ws: &Workspace, id: &str) -> anyhow::Result<()> {
    let revisions = ws.read(&Actor::User, |r| r.revisions(id))?;
    if out.json {
        let list: Vec<Value> = revisions.iter().map(revision_json).collect();
        return crate::output::json_value(&json!({ "note_id": id, "revisions": list }));
    }
    crate::output::text(&revisions_text(&revisions))
}

/// Puts a note back to a revision as the user's write, keeping the current text as a revision first.
pub(crate) fn restore(out: &Output, ws: &Workspace, id: &str, revision: i64) -> anyhow::Result<()> {
    let note = ws.write(&Actor::User, |w| {
        let revisions = w.revisions(id)?;
        if !revisions.iter().any(|r| r.id == revision) {
            bail!("note {id} has no revision {revision}; `quire note revisions {id}` lists them");
        }
        w.save_revision_now(id)?;
        Ok(w.restore_revision(revision)?)
    })?;
    if out.json {
        return crate::output::json_value(&json!({
            "note_id": note.summary.id,
            "title": note.summary.title,
            "restored_revision": revision,
        }));
    }
    crate::output::text(&format!(
        "Restored note {} \"{}\" to revision {revision}; the text before is kept as a revision.\n",
        note.summary.id, note.summary.title
    ))
}

/// Reverts a change set as the user: an AI's (an agent turn with the edits accepted from it, an MCP call, a plugin
/// call) or one of the user's own, such as an earlier undo.
pub(crate) fn undo(out: &Output, ws: &Workspace, change_set: &str) -> anyhow::Result<()> {
    let report = ws.write(&Actor::User, |w| {
        let set = w.change_set(change_set)?;
        Ok::<_, anyhow::Error>((set.actor.clone(), w.revert_change_set(change_set)?))
    });
    let (actor, report) = match report {
        Ok(done) => done,
        Err(e) => match e.downcast_ref::<Error>() {
            Some(Error::Conflict(message)) => bail!("nothing was undone: {message}"),
            _ => return Err(e),
        },
    };
    if out.json {
        return crate::output::json_value(&json!({
            "undone_change_set_id": report.reverted_change_set_id,
            "undone_changes": report.undone_changes,
            "actor": actor.to_string(),
            "change_set_id": report.change_set_id,
        }));
    }
    let again = report
        .change_set_id
        .as_deref()
        .map(|id| format!(" The undo is change set {id}."))
        .unwrap_or_default();
    crate::output::text(&format!(
        "Undid {} change{} by {actor} (change set {}).{again}\n",
        report.undone_changes,
        if report.undone_changes == 1 { "" } else { "s" },
        report.reverted_change_set_id
    ))
}
