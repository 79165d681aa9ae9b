//! The scheduler inside `quire serve` and `quire mcp`: it reads the `[[automations]]` entries again whenever
//! config.toml changes, runs each schedule's slot once (a slot missed while quire was not running runs when it next
//! starts, for an automation that ran before), gathers the news of its triggers (writes by this device's people and
//! AI clients: not an automation's, its own or another's, so that no two automations can start each other without
//! end, and not sync's) until its notebooks have been left alone a moment, and starts each run on
//! the runtime. A run never overlaps itself (the run log says so, across processes too); a failed one is tried again
//! after 30 s, then 1, 2, 4 ... minutes, at most an hour, until its next slot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Zoned;
use quire_core::automation_runs::RunStatus;
use quire_core::{Actor, Workspace};
use quire_core::{Change, EntityKind, Operation};
use quire_tools::ToolRegistry;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::run::{Occasion, Ran, run};
use super::when::Trigger;
use super::{Automation, list_lenient};

/// How often the scheduler looks: a scheduled run starts within this of its time.
pub const TICK: Duration = Duration::from_millis(200);

/// How long a run that another process runs is waited for before trying again.
const OVERLAP_WAIT: Duration = Duration::from_secs(5);

/// The wait before the `failures`th try again: 30 s, then 1, 2, 4 ... minutes, at most an hour.
pub fn backoff(failures: u32) -> Duration {
    let seconds = 30u64.saturating_mul(1 << failures.saturating_sub(1).min(12));
    Duration::from_secs(seconds.min(3600))
}

/// What the scheduler says of itself (the `automations` component's status).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchedulerView {
    /// How many automations run on a schedule or trigger.
    pub active: usize,
    /// Why the configuration cannot be read, when it cannot (the last good one is kept).
    pub config_error: Option<String>,
    /// Automations whose last run failed, with why.
    pub failing: Vec<String>,
}

/// The running scheduler; dropping it stops it and the runs it started (recorded as failed, their writes undone).
pub struct Scheduler {
    stop: CancellationToken,
    view: Arc<Mutex<SchedulerView>>,
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Scheduler {
    /// Starts the scheduler for `ws` on `runtime`; a model's runs use `registry`'s tools.
    pub fn start(ws: &Workspace, registry: Arc<ToolRegistry>, runtime: &tokio::runtime::Handle) -> Scheduler {
        let stop = CancellationToken::new();
        let view = Arc::new(Mutex::new(SchedulerView::default()));
        let mut looper = Looper {
            ws: ws.clone(),
            registry,
            stop: stop.clone(),
            view: view.clone(),
            states: HashMap::new(),
            automations: Vec::new(),
            config_stamp: None,
            news: None,
        };
        // The entries are read now: what the server says beside it at its start counts them.
        looper.reload();
        runtime.spawn(async move { looper.run().await });
        Scheduler { stop, view }
    }

    /// What it says of itself.
    pub fn view(&self) -> SchedulerView {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What it says of itself, as it changes.
    pub(crate) fn shared_view(&self) -> Arc<Mutex<SchedulerView>> {
        self.view.clone()
    }
}

/// One automation's state in this process.
struct State {
    /// When this process first saw it: a slot before it runs late only for an automation that ran before.
    seen: Zoned,
    /// Whether it ran before (any process).
    ran_before: bool,
    /// The last slot handled (ran, or ran elsewhere).
    handled: Option<String>,
    running: bool,
    failures: u32,
    retry_at: Option<Instant>,
    /// Trigger news not run yet: (change seq, note id, what happened).
    pending: Vec<(i64, String, String)>,
    last_news: Option<Instant>,
}

struct Finished {
    name: String,
    slot: String,
    /// The highest news seq the run covered (a trigger's).
    through: Option<i64>,
    result: anyhow::Result<Ran>,
}

struct Looper {
    ws: Workspace,
    registry: Arc<ToolRegistry>,
    stop: CancellationToken,
    view: Arc<Mutex<SchedulerView>>,
    states: HashMap<String, State>,
    automations: Vec<Automation>,
    config_stamp: Option<std::time::SystemTime>,
    news: Option<quire_core::news::NewsReceiver>,
}

impl Looper {
    async fn run(&mut self) {
        let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Finished>();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                _ = tick.tick() => {}
                Some(finished) = done_rx.recv() => self.finished(finished),
            }
            self.reload();
            self.take_news();
            self.start_due(&done_tx);
        }
    }

    /// Reads the entries again when config.toml changed (a broken file keeps the last good entries).
    fn reload(&mut self) {
        let Ok(dir) = crate::settings::config_dir() else { return };
        let stamp = std::fs::metadata(dir.join("config.toml"))
            .and_then(|m| m.modified())
            .ok();
        if stamp == self.config_stamp && self.config_stamp.is_some() {
            return;
        }
        self.config_stamp = stamp;
        match list_lenient() {
            Ok((automations, wrong)) => {
                self.automations = automations.into_iter().filter(|a| a.config.enabled).collect();
                self.states
                    .retain(|name, _| self.automations.iter().any(|a| a.name() == name));
                for automation in &self.automations {
                    if !self.states.contains_key(automation.name()) {
                        let ran_before = self
                            .ws
                            .automation_runs(Some(automation.name()), 1)
                            .is_ok_and(|runs| !runs.is_empty());
                        self.states.insert(automation.name().to_owned(), State::new(ran_before));
                    }
                }
                let wants_news = self.automations.iter().any(|a| {
                    matches!(
                        a.trigger,
                        Some(Trigger::NoteCreated | Trigger::NoteChanged | Trigger::TagAdded(_))
                    )
                });
                // Kept once started: a note written between a resume and this reading of the file is still news.
                if wants_news && self.news.is_none() {
                    self.news = self.ws.news(None).ok();
                }
                let mut view = self.view.lock().unwrap_or_else(|e| e.into_inner());
                view.active = self
                    .automations
                    .iter()
                    .filter(|a| a.schedule.is_some() || a.trigger.is_some())
                    .count();
                view.config_error = (!wrong.is_empty()).then(|| wrong.join("; "));
            }
            Err(e) => {
                tracing::warn!("automations: {e:#}");
                self.view.lock().unwrap_or_else(|e| e.into_inner()).config_error = Some(format!("{e:#}"));
            }
        }
    }

    /// Gathers the news each trigger waits for.
    fn take_news(&mut self) {
        let Some(receiver) = &mut self.news else { return };
        let news = match receiver.next_timeout(Duration::ZERO) {
            Ok(Some(news)) => news,
            _ => return,
        };
        for automation in &self.automations {
            let Some(trigger) = &automation.trigger else { continue };
            let Some(state) = self.states.get_mut(automation.name()) else {
                continue;
            };
            let client = automation.client_name();
            for change in &news.changes {
                if let Some(what) = matches(&self.ws, automation, trigger, &client, change) {
                    let note = change.note_id().unwrap_or_default().to_owned();
                    if !state.pending.iter().any(|(_, id, w)| *id == note && *w == what) {
                        state.pending.push((change.seq, note, what));
                    }
                    state.last_news = Some(Instant::now());
                }
            }
        }
    }

    fn start_due(&mut self, done: &mpsc::UnboundedSender<Finished>) {
        let now = Zoned::now();
        for automation in &self.automations {
            let Some(state) = self.states.get_mut(automation.name()) else {
                continue;
            };
            if state.running || state.retry_at.is_some_and(|at| Instant::now() < at) {
                continue;
            }
            let Some((occasion, through)) = occasion(&self.ws, automation, state, &now) else {
                continue;
            };
            state.running = true;
            let (ws, registry, automation, stop, done) = (
                self.ws.clone(),
                self.registry.clone(),
                automation.clone(),
                self.stop.clone(),
                done.clone(),
            );
            tokio::spawn(async move {
                let result = run(&ws, &registry, &automation, &occasion, &stop).await;
                let _ = done.send(Finished {
                    name: automation.name().to_owned(),
                    slot: occasion.slot,
                    through,
                    result,
                });
            });
        }
    }

    fn finished(&mut self, finished: Finished) {
        let Some(state) = self.states.get_mut(&finished.name) else {
            return;
        };
        state.running = false;
        let failed = match &finished.result {
            Ok(Ran::Ran(row)) => {
                // Told where the server tells what runs beside it (its standard error), as it ends.
                eprintln!("Automation: {}", super::run_line(row, true));
                state.ran_before = true;
                (row.status != RunStatus::Done).then(|| row.summary.clone().unwrap_or_default())
            }
            Ok(Ran::Overlaps(_)) => {
                state.retry_at = Some(Instant::now() + OVERLAP_WAIT);
                return;
            }
            Ok(Ran::SlotTaken) => None,
            Err(e) => Some(format!("{e:#}")),
        };
        let mut view = self.view.lock().unwrap_or_else(|e| e.into_inner());
        view.failing.retain(|f| !f.starts_with(&format!("{}: ", finished.name)));
        match failed {
            None => {
                state.failures = 0;
                state.retry_at = None;
                if let Some(through) = finished.through {
                    state.pending.retain(|(seq, _, _)| *seq > through);
                } else {
                    state.handled = Some(finished.slot);
                }
            }
            Some(why) => {
                state.failures += 1;
                state.retry_at = Some(Instant::now() + backoff(state.failures));
                tracing::warn!("automation {} failed: {why}", finished.name);
                view.failing.push(format!("{}: {why}", finished.name));
            }
        }
    }
}

impl State {
    fn new(ran_before: bool) -> State {
        State {
            seen: Zoned::now(),
            ran_before,
            handled: None,
            running: false,
            failures: 0,
            retry_at: None,
            pending: Vec::new(),
            last_news: None,
        }
    }
}

/// What `automation` should run for now, if anything, and the news it covers.
fn occasion(
    ws: &Workspace,
    automation: &Automation,
    state: &mut State,
    now: &Zoned,
) -> Option<(Occasion, Option<i64>)> {
    if let Some(schedule) = &automation.schedule {
        let slot = schedule.latest(now).ok()?;
        if state.handled.as_ref() == Some(&slot.key) || (slot.at < state.seen && !state.ran_before) {
            return None;
        }
        let late = now.duration_since(&slot.at).as_secs() >= 60;
        let format = if slot.at.second() == 0 {
            "%a %-d %b %H:%M"
        } else {
            "%a %-d %b %H:%M:%S"
        };
        let reason = format!(
            "scheduled for {}{}",
            slot.at.strftime(format),
            if late { ", late: quire was not running then" } else { "" }
        );
        return Some((
            Occasion {
                slot: slot.key,
                reason,
                context: Vec::new(),
            },
            None,
        ));
    }
    match automation.trigger.as_ref()? {
        Trigger::TaskDue(_) => {
            let slot = automation.trigger.as_ref()?.latest(now).ok()??;
            let key = format!("tasks:{}", slot.key);
            if state.handled.as_ref() == Some(&key) || (slot.at < state.seen && !state.ran_before) {
                return None;
            }
            let tasks = tasks_due_today(ws, automation);
            if tasks.is_empty() {
                // Nothing due: the day is handled without a run (in this process; another looks for itself).
                state.handled = Some(key);
                return None;
            }
            let reason = format!("{} open task(s) due today", tasks.len());
            let context = std::iter::once("Open tasks due today:".to_owned())
                .chain(tasks)
                .collect();
            Some((
                Occasion {
                    slot: key,
                    reason,
                    context,
                },
                None,
            ))
        }
        _ => {
            let wait = Duration::from_secs(automation.config.wait_seconds.unwrap_or(
                if automation.trigger == Some(Trigger::NoteChanged) {
                    60
                } else {
                    5
                },
            ));
            if state.pending.is_empty() || state.last_news.is_some_and(|at| at.elapsed() < wait) {
                return None;
            }
            let through = state.pending.iter().map(|(seq, _, _)| *seq).max()?;
            let context = std::iter::once("What started it:".to_owned())
                .chain(state.pending.iter().map(|(_, _, what)| format!("- {what}")))
                .collect();
            let reason = match (state.pending.len(), automation.trigger.as_ref()) {
                (1, _) => state.pending[0].2.clone(),
                (n, Some(Trigger::NoteCreated)) => format!("{n} notes created"),
                (n, Some(Trigger::TagAdded(Some(tag)))) => format!("{n} notes tagged #{tag}"),
                (n, Some(Trigger::TagAdded(None))) => format!("{n} notes tagged"),
                (n, _) => format!("{n} notes created or changed"),
            };
            Some((
                Occasion {
                    slot: format!("news:{through}"),
                    reason,
                    context,
                },
                Some(through),
            ))
        }
    }
}

/// What `change` is, in words, when it starts `automation`'s trigger: a write of a note in its notebooks, not
/// protected, by someone other than the automation itself and sync.
fn matches(
    ws: &Workspace,
    automation: &Automation,
    trigger: &Trigger,
    client: &str,
    change: &Change,
) -> Option<String> {
    match &change.actor {
        // Its own writes, and any automation's: two automations must not start each other without end.
        Actor::Mcp { client: by } if by == client || by.ends_with(super::CLIENT_SUFFIX) => return None,
        Actor::Sync { .. } => return None,
        _ => {}
    }
    let what = match (trigger, change.entity, change.operation) {
        (Trigger::NoteCreated, EntityKind::Note, Operation::Create) => "created",
        (Trigger::NoteChanged, EntityKind::Note, Operation::Create) => "created",
        (Trigger::NoteChanged, EntityKind::Note, Operation::Update) => "changed",
        (Trigger::TagAdded(_), EntityKind::NoteTag, Operation::Create) => "tagged",
        _ => return None,
    };
    let note_id = change.note_id()?;
    let scoped = super::run::handle(ws, automation).ok()?.unstaged();
    let (note, tag) = scoped
        .read(&Actor::User, |r| {
            let note = r.note_summary(note_id)?;
            let tag = match change.entity_id.split_once('/') {
                Some((_, tag_id)) => r.tags()?.into_iter().find(|t| t.id == tag_id).map(|t| t.name),
                None => None,
            };
            Ok::<_, quire_core::Error>((note, tag))
        })
        .ok()?;
    if note.is_protected || note.deleted.is_some() {
        return None;
    }
    if let Trigger::TagAdded(Some(wanted)) = trigger
        && !tag.as_ref().is_some_and(|t| t.eq_ignore_ascii_case(wanted))
    {
        return None;
    }
    Some(match tag {
        Some(tag) => format!("the note “{}” (id {}) was tagged #{tag}", note.title, note.id),
        None => format!("the note “{}” (id {}) was {what}", note.title, note.id),
    })
}

/// The open tasks of `automation`'s notebooks due today, as lines for its prompt (read as the automation: they go
/// to its model).
fn tasks_due_today(ws: &Workspace, automation: &Automation) -> Vec<String> {
    let Ok(handle) = super::run::handle(ws, automation) else {
        return Vec::new();
    };
    let actor = Actor::Mcp {
        client: automation.client_name(),
    };
    let query = "TASK WHERE !completed AND due AND due = date(today) SORT file.name, line";
    let Ok(result) = handle.read(&actor, |r| {
        r.query_text(query, &quire_core::query::QueryOptions::default())
    }) else {
        return Vec::new();
    };
    result
        .rows
        .iter()
        .filter_map(|row| {
            let task = row.task.as_ref()?;
            let title = row.note.as_ref().map(|n| n.title.as_str()).unwrap_or_default();
            Some(format!(
                "- {} (in “{title}”, note id {}, line {})",
                task.text, task.note_id, task.line
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn a_failing_run_waits_longer_each_time_and_at_most_an_hour() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(backoff(u32::MAX), Duration::from_secs(3600));
    }
}
