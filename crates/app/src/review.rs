//! `quire review ...`: the changes MCP clients staged for review (`writes = "stage"`, `quire mcp token add --review`,
//! destructive calls of clients that cannot ask), listed, shown as diffs, accepted or rejected.

use anyhow::bail;
use clap::{Args, Subcommand};
use quire_core::review::{HunkState, ReviewHunk, ReviewSet, ReviewSummary, Selection};
use quire_core::{Actor, Workspace};

use crate::output::Output;

const REVIEW_HELP: &str = "\
An MCP client whose writes are staged (writes = \"stage\" under [mcp], `quire mcp --review`, a token made with
`quire mcp token add NAME --review`, or a destructive call from a client that cannot ask) changes nothing until you
accept: its changes wait here, by note, each change with an id (ROW.N). Accepting merges them onto what changed since;
a change whose lines changed meanwhile is stale and can only be rejected. What you accept is one change set in the
client's name: `quire undo` takes it back. The web app's Review page does the same.";

/// `quire review ...`.
#[derive(Debug, Subcommand)]
#[command(after_help = REVIEW_HELP)]
pub(crate) enum ReviewCommand {
    /// The review sets with changes waiting (--all: every one).
    List {
        /// Also those decided already.
        #[arg(long)]
        all: bool,
    },
    /// One review set: each note's changes as a diff, with their ids and where they stand.
    Show {
        /// The set's number.
        id: i64,
    },
    /// Accept changes: all that wait, or those named.
    Accept(DecideArgs),
    /// Reject changes: all that wait, or those named.
    Reject(DecideArgs),
}

/// Which changes of a set.
#[derive(Debug, Args)]
pub(crate) struct DecideArgs {
    /// The set's number.
    pub(crate) id: i64,
    /// Only this change (ROW.N, as `quire review show` prints it); repeat for several.
    #[arg(long = "change", value_name = "ROW.N")]
    pub(crate) changes: Vec<String>,
    /// Only the changes of this note (its id); repeat for several.
    #[arg(long = "note", value_name = "NOTE_ID", conflicts_with = "changes")]
    pub(crate) notes: Vec<String>,
}

pub(crate) fn run(out: &Output, ws: &Workspace, command: ReviewCommand) -> anyhow::Result<()> {
    match command {
        ReviewCommand::List { all } => {
            let sets = ws.read(&Actor::User, |r| r.review_sets(!all, 200))?;
            if out.json {
                return crate::output::json_value(&serde_json::to_value(&sets)?);
            }
            if sets.is_empty() {
                return crate::output::line(if all {
                    "No staged changes yet."
                } else {
                    "Nothing waits for review."
                });
            }
            let text: String = sets.iter().map(summary_line).collect();
            crate::output::text(&text)
        }
        ReviewCommand::Show { id } => {
            let set = ws.read(&Actor::User, |r| r.review_set(id))?;
            if out.json {
                return crate::output::json_value(&serde_json::to_value(&set)?);
            }
            crate::output::text(&set_text(&set))
        }
        ReviewCommand::Accept(args) => decide(out, ws, args, true),
        ReviewCommand::Reject(args) => decide(out, ws, args, false),
    }
}

fn decide(out: &Output, ws: &Workspace, args: DecideArgs, accept: bool) -> anyhow::Result<()> {
    let selection = if !args.changes.is_empty() {
        Selection::Hunks(args.changes)
    } else if !args.notes.is_empty() {
        Selection::Items(args.notes.iter().map(|n| format!("note:{n}")).collect())
    } else {
        Selection::All
    };
    let outcome = ws.decide_review(args.id, accept, &selection)?;
    if out.json {
        return crate::output::json_value(&serde_json::to_value(&outcome)?);
    }
    let mut text = if accept {
        format!("Accepted {} change(s)", outcome.accepted)
    } else {
        format!("Rejected {} change(s)", outcome.rejected)
    };
    if let Some(change_set) = &outcome.change_set_id {
        text.push_str(&format!(
            " as change set {change_set} (`quire undo {change_set}` takes them back)"
        ));
    }
    text.push_str(".\n");
    if !outcome.stale.is_empty() {
        text.push_str(&format!(
            "Left waiting, stale (what they change changed since): {}. Reject them, or redo them by hand.\n",
            outcome.stale.join(", ")
        ));
    }
    let left = outcome.set.summary.pending;
    if left > 0 {
        text.push_str(&format!("{left} change(s) still wait in review {}.\n", args.id));
    } else if !accept && outcome.rejected == 0 && outcome.accepted == 0 {
        bail!("nothing in review {} waits for a decision", args.id);
    }
    crate::output::text(&text)
}

fn summary_line(set: &ReviewSummary) -> String {
    let mut titles = set
        .titles
        .iter()
        .take(3)
        .map(|t| format!("\"{t}\""))
        .collect::<Vec<_>>()
        .join(", ");
    if set.titles.len() > 3 {
        titles.push_str(&format!(" and {} more", set.titles.len() - 3));
    }
    let mut state = format!("{} waiting", set.pending);
    if set.accepted > 0 {
        state.push_str(&format!(", {} accepted", set.accepted));
    }
    if set.rejected > 0 {
        state.push_str(&format!(", {} rejected", set.rejected));
    }
    format!("{}  {}  {}  {state}: {titles}\n", set.id, set.updated, set.client)
}

fn set_text(set: &ReviewSet) -> String {
    let mut text = format!("Review {} from {}\n", set.summary.id, set.summary.client);
    text.push_str(&summary_line(&set.summary));
    for item in &set.items {
        text.push_str(&format!(
            "\n{} \"{}\" ({}, {})\n",
            item.kind, item.title, item.change, item.id
        ));
        for hunk in &item.hunks {
            text.push_str(&hunk_text(hunk));
        }
    }
    if !set.change_sets.is_empty() {
        text.push_str(&format!(
            "\nAccepted in change set(s) {}.\n",
            set.change_sets.join(", ")
        ));
    }
    text
}

fn hunk_text(hunk: &ReviewHunk) -> String {
    let state = match hunk.state {
        HunkState::Pending => "waiting",
        HunkState::Stale => "stale: changed since, can only be rejected",
        HunkState::Accepted => "accepted",
        HunkState::Rejected => "rejected",
        HunkState::Undone => "accepted, then undone",
    };
    let mut text = format!("  [{}] {}  ({state})\n", hunk.id, hunk.what);
    let lines = |prefix: &str, value: &str| -> String {
        value
            .trim_end_matches('\n')
            .lines()
            .map(|l| format!("      {prefix}{l}\n"))
            .collect()
    };
    if hunk.field == "text" {
        if !hunk.context_before.is_empty() {
            text.push_str(&lines("  ", &hunk.context_before));
        }
        text.push_str(&lines("- ", hunk.before.as_deref().unwrap_or_default()));
        text.push_str(&lines("+ ", hunk.after.as_deref().unwrap_or_default()));
        if !hunk.context_after.is_empty() {
            text.push_str(&lines("  ", &hunk.context_after));
        }
    } else {
        if let Some(before) = &hunk.before {
            text.push_str(&lines("- ", before));
        }
        if let Some(after) = &hunk.after {
            text.push_str(&lines("+ ", after));
        }
    }
    text
}
