//! The run log of automations (issue 49): one row per run, written by whichever process runs it (`quire serve`,
//! `quire mcp`, `quire automation run`). The log is also what keeps a run from overlapping itself: at most one row
//! of an automation is running (a unique index), a row whose process is gone stops counting (it becomes
//! abandoned), and a slot (a schedule's time, a trigger's news) that ran or runs is not run again by another
//! process. Schema: `migrations/022_automation_runs.sql`.
//!
//! The rows are bookkeeping, not workspace content: written outside the change log, never synced.

use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use crate::entity::Timestamp;
use crate::error::Result;
use crate::plugin_calls::{alive, process_start};
use crate::workspace::Workspace;

/// The most runs kept per automation (older ones are removed when a run begins).
pub const RUNS_KEPT: i64 = 200;

/// How a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// It runs now.
    Running,
    /// It ended as it should.
    Done,
    /// It stopped on an error.
    Failed,
    /// Its process ended while it ran (killed, or the machine stopped).
    Abandoned,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Abandoned => "abandoned",
        }
    }

    fn parse(s: &str) -> RunStatus {
        match s {
            "running" => RunStatus::Running,
            "done" => RunStatus::Done,
            "failed" => RunStatus::Failed,
            _ => RunStatus::Abandoned,
        }
    }
}

/// A run about to begin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStart {
    /// The automation's name.
    pub automation: String,
    /// What it runs for: a schedule's time, a trigger's news, a run by hand. A slot that ran (done) or runs is not
    /// begun again; a failed one may be.
    pub slot: String,
    /// Why, in words ("scheduled for 07:30", "run by hand", "note “Inbox” created").
    pub reason: String,
    /// What runs it: `model NAME` or `agent NAME`.
    pub runner: String,
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEnd {
    /// Whether it failed.
    pub failed: bool,
    /// What it said at the end, or why it failed.
    pub summary: String,
    /// Its steps (tool calls, messages) as JSON, for the log.
    pub steps: Option<String>,
    /// The review set its staged writes joined.
    pub review_set: Option<i64>,
    /// The change set of its applied writes.
    pub change_set: Option<String>,
    /// Tokens sent to the model.
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote.
    pub output_tokens: Option<u64>,
    /// Its estimated cost in dollars, when the model's prices are known.
    pub cost: Option<f64>,
}

/// One run, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AutomationRun {
    /// Its number.
    pub id: i64,
    /// The automation's name.
    pub automation: String,
    /// What it ran for.
    pub slot: String,
    /// Why, in words.
    pub reason: String,
    /// What ran it.
    pub runner: String,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    pub ended_at: Option<Timestamp>,
    /// How it stands.
    pub status: RunStatus,
    /// What it said, or why it failed.
    pub summary: Option<String>,
    /// Its steps (tool calls and texts), as they were logged.
    pub steps: Option<serde_json::Value>,
    /// The review set of its staged writes.
    pub review_set: Option<i64>,
    /// The change sets of its applied writes, oldest first, separated by spaces.
    pub change_set: Option<String>,
    /// Tokens sent.
    pub input_tokens: Option<u64>,
    /// Tokens written.
    pub output_tokens: Option<u64>,
    /// Estimated cost in dollars.
    pub cost: Option<f64>,
}

/// What [`Workspace::begin_automation_run`] found.
#[derive(Debug)]
pub enum Begun {
    /// The run began: end it with [`RunMark::end`] (dropped unended, it is recorded as failed).
    Started(RunMark),
    /// Another run of the automation runs now (in this process or another): this one does not begin.
    Overlaps(AutomationRun),
    /// This slot ran already, or runs now.
    SlotTaken,
}

/// A running run; dropped without [`RunMark::end`], it is recorded as failed ("stopped").
#[derive(Debug)]
pub struct RunMark {
    ws: Workspace,
    id: i64,
    ended: bool,
}

impl RunMark {
    /// The run's number.
    pub fn id(&self) -> i64 {
        self.id
    }

    /// Records how the run ended.
    pub fn end(mut self, end: &RunEnd) -> Result<()> {
        self.ended = true;
        self.ws.end_automation_run(self.id, end)
    }
}

impl Drop for RunMark {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.ws.end_automation_run(
                self.id,
                &RunEnd {
                    failed: true,
                    summary: "stopped before it ended".into(),
                    ..RunEnd::default()
                },
            );
        }
    }
}

const COLUMNS: &str = "id, automation, slot, reason, runner, started_at, ended_at, status, summary, steps, review_set, \
                       change_set, input_tokens, output_tokens, cost";

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<AutomationRun> {
    Ok(AutomationRun {
        id: r.get(0)?,
        automation: r.get(1)?,
        slot: r.get(2)?,
        reason: r.get(3)?,
        runner: r.get(4)?,
        started_at: Timestamp(r.get(5)?),
        ended_at: r.get::<_, Option<i64>>(6)?.map(Timestamp),
        status: RunStatus::parse(&r.get::<_, String>(7)?),
        summary: r.get(8)?,
        steps: r
            .get::<_, Option<String>>(9)?
            .and_then(|text| serde_json::from_str(&text).ok()),
        review_set: r.get(10)?,
        change_set: r.get(11)?,
        input_tokens: r.get::<_, Option<i64>>(12)?.map(|n| n.unsigned_abs()),
        output_tokens: r.get::<_, Option<i64>>(13)?.map(|n| n.unsigned_abs()),
        cost: r.get(14)?,
    })
}

impl Workspace {
    /// Begins a run of `start.automation` for `start.slot`, in this process, unless another run of it runs (in
    /// any process that still runs) or the slot ran already. Runs of processes that are gone become abandoned first.
    pub fn begin_automation_run(&self, start: &RunStart) -> Result<Begun> {
        let mut conn = self.pool.get()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let running = {
            let mut stmt = tx.prepare_cached(&format!(
                "SELECT {COLUMNS}, pid, pid_start FROM automation_runs WHERE automation = ?1 AND status = 'running'"
            ))?;
            stmt.query_row([&start.automation], |r| {
                Ok((run_row(r)?, r.get::<_, i64>(15)?, r.get::<_, Option<i64>>(16)?))
            })
            .optional()?
        };
        if let Some((run, pid, pid_start)) = running {
            if alive(pid, pid_start) {
                return Ok(Begun::Overlaps(run));
            }
            tx.execute(
                "UPDATE automation_runs SET status = 'abandoned', ended_at = ?2, \
                 summary = 'its process ended while it ran' WHERE id = ?1",
                params![run.id, Timestamp::now().0],
            )?;
        }
        let taken: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM automation_runs WHERE automation = ?1 AND slot = ?2 \
             AND status IN ('done', 'running'))",
            params![start.automation, start.slot],
            |r| r.get(0),
        )?;
        if taken {
            tx.commit()?;
            return Ok(Begun::SlotTaken);
        }
        let pid = i64::from(std::process::id());
        tx.execute(
            "INSERT INTO automation_runs (automation, slot, reason, runner, pid, pid_start, started_at, status) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running')",
            params![
                start.automation,
                start.slot,
                start.reason,
                start.runner,
                pid,
                process_start(pid),
                Timestamp::now().0
            ],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "DELETE FROM automation_runs WHERE automation = ?1 AND id NOT IN \
             (SELECT id FROM automation_runs WHERE automation = ?1 ORDER BY id DESC LIMIT ?2)",
            params![start.automation, RUNS_KEPT],
        )?;
        tx.commit()?;
        Ok(Begun::Started(RunMark {
            ws: self.clone(),
            id,
            ended: false,
        }))
    }

    fn end_automation_run(&self, id: i64, end: &RunEnd) -> Result<()> {
        let conn = self.pool.get()?;
        let as_i64 = |n: Option<u64>| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        conn.execute(
            "UPDATE automation_runs SET status = ?2, ended_at = ?3, summary = ?4, steps = ?5, review_set = ?6, \
             change_set = ?7, input_tokens = ?8, output_tokens = ?9, cost = ?10 WHERE id = ?1",
            params![
                id,
                if end.failed { RunStatus::Failed } else { RunStatus::Done }.as_str(),
                Timestamp::now().0,
                end.summary,
                end.steps,
                end.review_set,
                end.change_set,
                as_i64(end.input_tokens),
                as_i64(end.output_tokens),
                end.cost,
            ],
        )?;
        Ok(())
    }

    /// The runs of `automation` (of every automation when `None`), newest first, at most `limit`. A run shown as
    /// running whose process is gone is shown abandoned.
    pub fn automation_runs(&self, automation: Option<&str>, limit: u32) -> Result<Vec<AutomationRun>> {
        let conn = self.pool.get()?;
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS}, pid, pid_start FROM automation_runs WHERE ?1 IS NULL OR automation = ?1 \
             ORDER BY id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![automation, limit], |r| {
            let mut run = run_row(r)?;
            if run.status == RunStatus::Running && !alive(r.get(15)?, r.get(16)?) {
                run.status = RunStatus::Abandoned;
                run.summary = Some("its process ended while it ran".into());
            }
            Ok(run)
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Removes the log of `automation` (when it is removed), a running run's row too: that run's end then records
    /// nothing, and an automation added later under the same name starts with no log.
    pub fn forget_automation_runs(&self, automation: &str) -> Result<()> {
        let conn = self.pool.get()?;
        conn.execute("DELETE FROM automation_runs WHERE automation = ?1", [automation])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(slot: &str) -> RunStart {
        RunStart {
            automation: "morning".into(),
            slot: slot.into(),
            reason: "test".into(),
            runner: "model test".into(),
        }
    }

    #[test]
    fn a_run_does_not_overlap_itself_and_a_slot_that_ran_does_not_run_again() {
        let ws = Workspace::open_in_memory().unwrap();
        let Begun::Started(mark) = ws.begin_automation_run(&start("a")).unwrap() else {
            panic!("the first run begins")
        };
        assert!(matches!(ws.begin_automation_run(&start("b")).unwrap(), Begun::Overlaps(r) if r.slot == "a"));
        mark.end(&RunEnd {
            summary: "did it".into(),
            input_tokens: Some(10),
            ..RunEnd::default()
        })
        .unwrap();
        assert!(matches!(
            ws.begin_automation_run(&start("a")).unwrap(),
            Begun::SlotTaken
        ));
        let Begun::Started(second) = ws.begin_automation_run(&start("b")).unwrap() else {
            panic!("another slot begins")
        };
        drop(second);
        // A failed slot may run again.
        assert!(matches!(
            ws.begin_automation_run(&start("b")).unwrap(),
            Begun::Started(_)
        ));
        let runs = ws.automation_runs(Some("morning"), 10).unwrap();
        let statuses: Vec<_> = runs.iter().map(|r| (r.slot.as_str(), r.status)).collect();
        assert_eq!(
            statuses,
            [
                ("b", RunStatus::Failed),
                ("b", RunStatus::Failed),
                ("a", RunStatus::Done)
            ]
        );
        assert_eq!(runs[1].summary.as_deref(), Some("stopped before it ended"));
        assert_eq!(runs[2].input_tokens, Some(10));
    }

    #[test]
    fn a_run_of_an_automation_removed_meanwhile_leaves_no_log() {
        let ws = Workspace::open_in_memory().unwrap();
        let Begun::Started(mark) = ws.begin_automation_run(&start("a")).unwrap() else {
            panic!("the run begins")
        };
        ws.forget_automation_runs("morning").unwrap();
        mark.end(&RunEnd::default()).unwrap();
        assert!(ws.automation_runs(Some("morning"), 5).unwrap().is_empty());
    }

    #[test]
    fn a_run_of_a_process_that_is_gone_is_abandoned_and_another_begins() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let ws = Workspace::open_in_memory().unwrap();
        let Begun::Started(mark) = ws.begin_automation_run(&start("a")).unwrap() else {
            panic!("the first run begins")
        };
        ws.pool
            .get()
            .unwrap()
            .execute("UPDATE automation_runs SET pid_start = -1 WHERE id = ?1", [mark.id()])
            .unwrap();
        std::mem::forget(mark);
        assert_eq!(ws.automation_runs(None, 5).unwrap()[0].status, RunStatus::Abandoned);
        assert!(matches!(
            ws.begin_automation_run(&start("a")).unwrap(),
            Begun::Started(_)
        ));
        let runs = ws.automation_runs(None, 5).unwrap();
        assert_eq!(runs[1].status, RunStatus::Abandoned);
        assert_eq!(runs[0].status, RunStatus::Failed);
    }
}
