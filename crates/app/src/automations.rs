//! `quire automation add|list|run|log|pause|resume|remove`: prompts that run on a schedule or a trigger inside
//! `quire serve` and `quire mcp`, or now. quire-host's `automations` keeps the entries, runs them and schedules
//! them; this says it in words.

use clap::Subcommand;
use quire_core::Workspace;
use quire_host::automations::run::Ran;

use crate::output::{Output, json_value, line};

#[derive(Debug, Subcommand)]
pub(crate) enum AutomationCommand {
    /// Add an automation: a prompt, what runs it, where, and when. It runs inside `quire serve` and `quire mcp`;
    /// its writes wait for your review under its name.
    Add {
        /// What to call it.
        name: String,
        /// What it asks, such as "Summarise yesterday's notes into today's daily note".
        #[arg(long)]
        prompt: String,
        /// When: "daily 07:30", "weekly monday 09:00", "every 6 hours", "every 30 minutes".
        #[arg(long, conflicts_with = "trigger")]
        schedule: Option<String>,
        /// Or what starts it: "note created", "note changed", "tag added #NAME", "task due [at 08:00]".
        #[arg(long)]
        trigger: Option<String>,
        /// The chat model that runs it (`quire model list`); default: your default model.
        #[arg(long, conflicts_with = "agent")]
        model: Option<String>,
        /// An external agent that runs it instead (`quire agent list`).
        #[arg(long)]
        agent: Option<String>,
        /// Limit it to this notebook (title or path); repeat for more. Its trigger watches these only.
        #[arg(long = "notebook", short = 'n', value_name = "NOTEBOOK")]
        notebooks: Vec<String>,
        /// Seconds a trigger waits for its notebooks to be left alone (default 60 for "note changed", else 5).
        #[arg(long, value_name = "SECONDS")]
        wait: Option<u64>,
        /// Apply its writes at once (each undoable) instead of staging them for review.
        #[arg(long)]
        apply_writes: bool,
        /// Add it paused: it runs only by hand until `quire automation resume`.
        #[arg(long)]
        paused: bool,
    },
    /// The automations, with their latest run and next time.
    List,
    /// Run an automation now and wait for it (also what a system scheduler such as cron can call).
    Run {
        /// Its name.
        name: String,
    },
    /// What the runs did, newest first.
    Log {
        /// Only this automation's runs.
        name: Option<String>,
        /// How many runs.
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Stop running an automation on its schedule or trigger (it still runs by hand).
    Pause {
        /// Its name.
        name: String,
    },
    /// Run a paused automation on its schedule or trigger again.
    Resume {
        /// Its name.
        name: String,
    },
    /// Remove an automation and its log.
    Remove {
        /// Its name.
        name: String,
    },
}

pub(crate) fn run(
    out: &Output,
    ws: impl FnOnce() -> anyhow::Result<Workspace>,
    command: AutomationCommand,
) -> anyhow::Result<std::process::ExitCode> {
    use quire_host::automations as host;
    let ok = std::process::ExitCode::SUCCESS;
    let command_kind = match &command {
        AutomationCommand::Resume { .. } => Kind::Resume,
        _ => Kind::Other,
    };
    match command {
        AutomationCommand::Add {
            name,
            prompt,
            schedule,
            trigger,
            model,
            agent,
            notebooks,
            wait,
            apply_writes,
            paused,
        } => {
            let entry = host::AutomationConfig {
                name,
                prompt,
                model,
                agent,
                notebooks,
                schedule,
                trigger,
                wait_seconds: wait,
                writes: if apply_writes {
                    quire_host::settings::AgentWrites::Apply
                } else {
                    quire_host::settings::AgentWrites::Stage
                },
                enabled: !paused,
            };
            let ws = ws()?;
            let added = host::add(&ws, entry)?;
            let name = added.name();
            if out.json {
                let (all, _) = host::overview(&ws)?;
                let shown = all.iter().find(|a| a.config.name == name);
                json_value(&shown)?;
            } else {
                let word = host::shell_word(name);
                line(&if added.schedule.is_none() && added.trigger.is_none() {
                    format!("Added {name}: it runs by hand only, `quire automation run {word}` (from cron too).")
                } else {
                    format!(
                        "Added {name}: it runs {} inside `quire serve` and `quire mcp`; `quire automation run {word}` runs it now.",
                        added.when()
                    )
                })?;
            }
        }
        AutomationCommand::List => {
            let (all, wrong) = host::overview(&ws()?)?;
            for why in &wrong {
                eprintln!("error: {why}");
            }
            if out.json {
                json_value(&all)?;
            } else if all.is_empty() && wrong.is_empty() {
                line(
                    "No automation yet: `quire automation add NAME --prompt TEXT --schedule \"daily 07:30\"` adds one.",
                )?;
            }
            for a in all.iter().filter(|_| !out.json) {
                let automation = host::Automation::of(a.config.clone())?;
                line(&automation.describe())?;
                if let Some(next) = &a.next {
                    line(&format!("    next: {next}"))?;
                }
                if let Some(run) = &a.last_run {
                    line(&format!("    last: {}", host::run_line(run, false)))?;
                }
            }
        }
        AutomationCommand::Run { name } => {
            let ran = host::run::by_hand(&ws()?, &name);
            match ran? {
                Ran::Ran(row) => {
                    if out.json {
                        json_value(&row)?;
                    } else {
                        line(&host::run_line(&row, true))?;
                        if let Some(summary) = &row.summary {
                            line("")?;
                            line(summary.trim())?;
                        }
                    }
                    if row.status != quire_core::automation_runs::RunStatus::Done {
                        return Ok(std::process::ExitCode::FAILURE);
                    }
                }
                Ran::Overlaps(other) => anyhow::bail!(
                    "{name} runs now (since {}, {}); a run never overlaps itself: try again when it ends",
                    quire_host::ledger::local_time(other.started_at.0),
                    other.reason
                ),
                Ran::SlotTaken => anyhow::bail!("{name} ran for this already"),
            }
        }
        AutomationCommand::Log { name, limit } => {
            let runs = ws()?.automation_runs(name.as_deref(), limit.max(1))?;
            // A name that is neither configured nor in the log is a typo, not an automation that never ran.
            if let Some(name) = &name
                && runs.is_empty()
            {
                host::find(name)?;
            }
            if out.json {
                json_value(&runs)?;
            } else if runs.is_empty() {
                line("No run yet.")?;
            }
            for run in runs.iter().filter(|_| !out.json) {
                line(&host::run_line(run, true))?;
            }
        }
        AutomationCommand::Pause { name } | AutomationCommand::Resume { name } => {
            let resume = matches!(command_kind, Kind::Resume);
            host::set_enabled(&name, resume)?;
            if out.json {
                json_value(&serde_json::json!({ "name": name, "enabled": resume }))?;
            } else if resume {
                line(&format!("{name} runs on its schedule or trigger again."))?;
            } else {
                line(&format!(
                    "Paused {name}: it runs only by hand (`quire automation resume {}`).",
                    host::shell_word(&name)
                ))?;
            }
        }
        AutomationCommand::Remove { name } => {
            host::remove(&ws()?, &name)?;
            if out.json {
                json_value(&serde_json::json!({ "removed": name }))?;
            } else {
                line(&format!("Removed {name} and its log."))?;
            }
        }
    }
    Ok(ok)
}

/// Which command ran, where two share an arm.
enum Kind {
    Resume,
    Other,
}
