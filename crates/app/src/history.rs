//! `quire history`, `quire undo`, `quire note revisions` and `quire note restore`: seeing and taking back changes.

use anyhow::bail;
use quire_core::changes::{ChangeSetPage, ChangeSetView, change_set_views, revision_json};
use quire_core::{Error, Missing, Page, Workspace};
use serde_json::{Value, json};

use clap::Args;

use crate::output::Output;
use crate::unlock::Unlocker;

pub(crate) fn history(out: &Output, ws: &Workspace, keys: &Unlocker, args: &HistoryArgs) -> anyhow::Result<()> {
    let page = Page {
        offset: args.offset,
        limit: args.limit.clamp(1, 500),
    };
    // A sealed note's revisions open with the passphrase (asked only for one).
    let (page, revisions) = keys.read(ws, |r| {
        let sets = change_set_views(r, args.note.as_deref(), page)?;
        let revisions = match &args.note {
            Some(id) => Some(r.revisions(id)?),
            None => None,
        };
        Ok((sets, revisions))
    })?;
    let ChangeSetPage { sets, total, has_more } = page;
    if out.json {
        let sets: Vec<Value> = sets.iter().map(ChangeSetView::to_json).collect();
        let mut value = json!({ "total": total, "offset": args.offset, "has_more": has_more, "change_sets": sets });
        if let Some(revisions) = &revisions {
            value["revisions"] = Value::Array(revisions.iter().map(|r| revision_json(r, false)).collect());
        }
        return crate::output::json_value(&value);
    }
    let mut text = String::new();
    if let Some(revisions) = &revisions {
        text.push_str(&revisions_text(revisions, false));
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
        text.push_str(&format!("{}  {}  {}{state}\n", set.id, set.created, view.by));
        if let Some(undone) = &view.undoes {
            text.push_str(&format!("    ({})\n", undone.words()));
        }
        for (_, described) in view.changes.iter().take(8) {
            text.push_str(&format!("    {} {}\n", described.verb, described.what));
        }
        if view.changes.len() > 8 {
            text.push_str(&format!("    … and {} more changes\n", view.changes.len() - 8));
        }
    }
    if has_more {
        text.push_str(&format!(
            "\nMore with --offset {}. Undo a change set (an AI's or your own) with: quire undo CHANGE_SET\n",
            args.offset + sets.len() as u64
        ));
    } else if !sets.is_empty() {
        text.push_str("\nUndo a change set (an AI's or your own) with: quire undo CHANGE_SET\n");
    }
    crate::output::text(&text)
}

fn revisions_text(revisions: &[quire_core::Revision], with_text: bool) -> String {
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
        if with_text {
            for line in revision.body.lines() {
                text.push_str(&format!("         | {line}\n"));
            }
        }
    }
    text.push_str("Restore one with: quire note restore NOTE_ID REVISION\n");
    text
}

/// A note's revisions; with `text`, each one's text too (security finding 2-#13: there was no way to read one
/// short of restoring it).
pub(crate) fn revisions(out: &Output, ws: &Workspace, keys: &Unlocker, id: &str, text: bool) -> anyhow::Result<()> {
    let revisions = keys.read(ws, |r| Ok(r.revisions(id)?))?;
    if out.json {
        let list: Vec<Value> = revisions.iter().map(|r| revision_json(r, text)).collect();
        return crate::output::json_value(&json!({ "note_id": id, "revisions": list }));
    }
    crate::output::text(&revisions_text(&revisions, text))
}

/// Puts a note back to a revision as the user's write, keeping the current text as a revision first (through the
/// key when the note is sealed).
pub(crate) fn restore(out: &Output, ws: &Workspace, keys: &Unlocker, id: &str, revision: i64) -> anyhow::Result<()> {
    let note = keys.write(ws, |w| {
        match quire_core::changes::restore_revision_in(w, id, revision) {
            Ok(note) => Ok(note),
            Err(Error::NotFound(Missing::Revision)) => {
                bail!("note {id} has no revision {revision}; `quire note revisions {id}` lists them")
            }
            Err(e) => Err(e.into()),
        }
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
pub(crate) fn undo(
    out: &Output,
    ws: &Workspace,
    keys: &Unlocker,
    change_set: &str,
    with_later: bool,
) -> anyhow::Result<()> {
    // An undo that puts a sealed note's text back, or unseals one, needs the key: tried without it first.
    let done = keys.write(ws, |w| {
        Ok(if with_later {
            quire_core::changes::undo_change_set_and_later_in(w, change_set)?
        } else {
            let (actor, report) = quire_core::changes::undo_change_set_in(w, change_set)?;
            (actor, vec![report])
        })
    });
    let (actor, reports) = match done.map_err(anyhow::Error::downcast::<Error>) {
        Ok(done) => done,
        // The refusal says "Cannot undo" itself, and that nothing changed.
        Err(Ok(Error::ChangedSince(blocked))) if !with_later => bail!(
            "{blocked} Nothing was undone.\n`quire undo {change_set} --with-later` undoes the later change too; \
             `quire history` lists it."
        ),
        Err(Ok(Error::Conflict(message))) => bail!("nothing was undone: {message}"),
        Err(Ok(Error::ChangedSince(blocked))) => bail!("{blocked} Nothing was undone."),
        Err(Ok(e)) => return Err(e.into()),
        Err(Err(e)) => return Err(e),
    };
    // The asked change set is undone last; its report says where the undo itself went.
    let Some(report) = reports.last() else {
        bail!("nothing was undone");
    };
    let later = reports.len() - 1;
    if out.json {
        return crate::output::json_value(&json!({
            "undone_change_set_id": report.reverted_change_set_id,
            "undone_changes": report.undone_changes,
            "actor": actor.to_string(),
            "change_set_id": report.change_set_id,
            "undone_later_change_set_ids": reports[..later].iter().map(|r| &r.reverted_change_set_id).collect::<Vec<_>>(),
        }));
    }
    let again = report
        .change_set_id
        .as_deref()
        .map(|id| format!(" The undo is change set {id}."))
        .unwrap_or_default();
    let also = match later {
        0 => String::new(),
        1 => " It undid 1 later change set first.".to_owned(),
        n => format!(" It undid {n} later change sets first."),
    };
    crate::output::text(&format!(
        "Undid {} change{} by {actor} (change set {}).{also}{again}\n",
        report.undone_changes,
        if report.undone_changes == 1 { "" } else { "s" },
        report.reverted_change_set_id
    ))
}

/// `quire ledger`: what AI read.
#[derive(Debug, Args)]
pub(crate) struct LedgerArgs {
    /// Only what was read of this note.
    #[arg(long, value_name = "ID")]
    pub(crate) note: Option<String>,
    /// Only what this client read: its name as listed (an MCP client's, `quire assistant`, a plugin's, an agent's
    /// such as `codex`), in any case.
    #[arg(long, value_name = "NAME")]
    pub(crate) client: Option<String>,
    /// Only what was read since then: a day (2026-12-01), a time (2026-12-01T09:00, this computer's; or with a Z),
    /// or a time back from now (day-7, week-2).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// How many rows, the latest first.
    #[arg(long, default_value_t = 100)]
    pub(crate) limit: usize,
}

/// `quire history`.
#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// Only what concerns this note: its revisions and the change sets that touched it.
    #[arg(long, value_name = "ID")]
    pub(crate) note: Option<String>,
    /// How many change sets to show, newest first.
    #[arg(long, default_value_t = 20)]
    pub(crate) limit: u64,
    /// How many to skip, for the next page.
    #[arg(long, default_value_t = 0)]
    pub(crate) offset: u64,
}
