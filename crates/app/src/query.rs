//! `quire query` and `quire tasks`: the query engine's answers printed (the engine and the task rules are core's).

use clap::{Args, Subcommand};
use quire_core::query::QueryOptions;
use quire_core::{Actor, Period, PeriodicNote, TaskToggle, Workspace};
use quire_tools::structure::list_tasks::{self, TaskState};

use crate::output::{self, Output};
use crate::unlock::Unlocker;

pub(crate) fn query(out: &Output, ws: &Workspace, text: &str) -> anyhow::Result<()> {
    let result = ws.read(&Actor::User, |r| r.query_text(text, &QueryOptions::default()))?;
    if out.json {
        return output::json_value(&result);
    }
    output::text(&result.to_text())
}

pub(crate) fn tasks(out: &Output, ws: &Workspace, keys: &Unlocker, args: TasksArgs) -> anyhow::Result<()> {
    if let Some(TasksCommand::Done { note, line, undo }) = args.command {
        return done(out, ws, keys, &note, line, !undo);
    }
    let input = list_tasks::Input {
        state: Some(if args.all {
            TaskState::All
        } else if args.done {
            TaskState::Done
        } else {
            TaskState::Open
        }),
        due_before: args.due_before,
        due_after: args.due_after,
        tag: args.tag,
        notebook: args.notebook,
        ..Default::default()
    };
    let q = list_tasks::task_query(&input).map_err(|e| anyhow::anyhow!("{e}"))?;
    let result = ws.read(&Actor::User, |r| r.query_text(&q, &QueryOptions::default()))?;
    if out.json {
        let tasks: Vec<serde_json::Value> = result
            .rows
            .iter()
            .map(|row| serde_json::json!({ "note": row.note, "task": row.task }))
            .collect();
        return output::json_value(&tasks);
    }
    output::text(&result.to_text())
}

fn done(out: &Output, ws: &Workspace, keys: &Unlocker, note: &str, line: u64, done: bool) -> anyhow::Result<()> {
    let toggle = TaskToggle {
        note_id: ws.read(&Actor::User, |r| r.note_called(note))?.id,
        line: usize::try_from(line)?,
        done,
        ..TaskToggle::default()
    };
    let (result, change_set) = keys.write(ws, |w| {
        let result = w.set_task_done(&toggle)?;
        Ok((result, w.change_set_id().map(str::to_owned)))
    })?;
    if out.json {
        return output::json_value(&serde_json::json!({ "task": result, "change_set": change_set }));
    }
    let state = if result.done { "done" } else { "open" };
    if !result.changed {
        return output::line(&format!("Already {state}: {} (line {})", result.text, result.line));
    }
    output::line(&format!("Marked {state}: {} (line {})", result.text, result.line))?;
    if let Some(next) = &result.next {
        output::line(&format!("Next occurrence, above it: {next}"))?;
    }
    if let Some(set) = change_set {
        output::line(&format!("Undo with: quire undo {set}"))?;
    }
    Ok(())
}

pub(crate) fn today(out: &Output, ws: &Workspace, keys: &Unlocker, args: TodayArgs) -> anyhow::Result<()> {
    let period = if args.week { Period::Week } else { Period::Day };
    let now = jiff::Zoned::now().datetime();
    let p = PeriodicNote {
        period,
        day: quire_core::day_asked(args.day.as_deref(), now)?,
        now,
        settings: quire_host::settings::periodic(period)?,
        templates_notebook: quire_host::settings::templates_notebook()?,
    };
    let opened = keys.write(ws, |w| Ok(w.open_periodic_note(&p)?))?;
    output::print_opened(out, ws, keys, &opened)
}

/// `quire today`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct TodayArgs {
    /// The day: YYYY-MM-DD, today, tomorrow, yesterday (default: today).
    pub(crate) day: Option<String>,
    /// The week's note (`[weekly]` in config.toml) instead of the day's.
    #[arg(long)]
    pub(crate) week: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TasksArgs {
    #[command(subcommand)]
    pub(crate) command: Option<TasksCommand>,
    /// Only tasks due on or before this day: YYYY-MM-DD, today, tomorrow, eow (end of the week), eom.
    #[arg(long, value_name = "DATE")]
    pub(crate) due_before: Option<String>,
    /// Only tasks due on or after this day.
    #[arg(long, value_name = "DATE")]
    pub(crate) due_after: Option<String>,
    /// Only open tasks (the default).
    #[arg(long, conflicts_with_all = ["done", "all"])]
    pub(crate) open: bool,
    /// Only done tasks.
    #[arg(long, conflicts_with = "all")]
    pub(crate) done: bool,
    /// Open and done tasks.
    #[arg(long)]
    pub(crate) all: bool,
    /// Only tasks in notes with this tag.
    #[arg(long)]
    pub(crate) tag: Option<String>,
    /// Only tasks in this notebook (a path such as Work/Projects) and below.
    #[arg(long)]
    pub(crate) notebook: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum TasksCommand {
    /// Mark a task done, with today's ✅ date (a repeating task gets its next occurrence above it), as one change
    /// that `quire undo` takes back.
    Done {
        /// The note: its id or its title.
        note: String,
        /// The task's line, as `quire tasks` prints it.
        line: u64,
        /// Mark it open again instead.
        #[arg(long)]
        undo: bool,
    },
}
