//! Automations: prompts that run on a schedule, on a trigger or by hand, with a chat model or an external agent, in
//! some notebooks. The `[[automations]]` entries of config.toml (`quire automation add|list|run|remove`, the web
//! app's Settings), one run ([`run`]), and the scheduler that runs them inside `quire serve` and `quire mcp`
//! ([`scheduler`]). Every run writes a row of core's run log (`quire_core::automation_runs`), which also keeps a run
//! from overlapping itself across processes; its writes wait for review under "NAME (automation)" unless the entry
//! says `writes = "apply"`.

pub mod page;
pub mod run;
pub mod scheduler;
pub mod when;

use anyhow::{Context, bail};
use quire_core::Workspace;

pub use crate::settings::AutomationConfig;
use crate::settings::{AgentWrites, config_dir, read_config};
use when::{Schedule, Trigger};

/// An entry read and checked: its schedule or trigger understood.
#[derive(Debug, Clone, PartialEq)]
pub struct Automation {
    /// The entry as written.
    pub config: AutomationConfig,
    /// Its schedule.
    pub schedule: Option<Schedule>,
    /// Its trigger.
    pub trigger: Option<Trigger>,
}

impl Automation {
    /// Reads `config`'s schedule and trigger; an entry quire cannot run is an error.
    pub fn of(config: AutomationConfig) -> anyhow::Result<Automation> {
        let name = config.name.trim();
        if name.is_empty() || name.chars().any(char::is_control) || name.chars().count() > 60 {
            bail!("an automation's name is 1 to 60 characters, with no line breaks");
        }
        if config.prompt.trim().is_empty() {
            bail!("the automation {name} has no prompt: what should it do?");
        }
        if config.model.is_some() && config.agent.is_some() {
            bail!("the automation {name} names a model and an agent: which runs it?");
        }
        let schedule = config
            .schedule
            .as_deref()
            .map(str::parse::<Schedule>)
            .transpose()
            .with_context(|| format!("the automation {name}"))?;
        let trigger = config
            .trigger
            .as_deref()
            .map(str::parse::<Trigger>)
            .transpose()
            .with_context(|| format!("the automation {name}"))?;
        if schedule.is_some() && trigger.is_some() {
            bail!("the automation {name} has a schedule and a trigger: give one (or make two automations)");
        }
        let waits = matches!(
            trigger,
            Some(Trigger::NoteCreated | Trigger::NoteChanged | Trigger::TagAdded(_))
        );
        if config.wait_seconds.is_some() && !waits {
            bail!(
                "the automation {name}: a wait is for a trigger on notes (note created, note changed, tag added), \
                 which waits for its notebooks to be left alone"
            );
        }
        Ok(Automation {
            config,
            schedule,
            trigger,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The name its reads and writes are recorded under, and its review sets listed under.
    pub fn client_name(&self) -> String {
        client_name(&self.config.name)
    }

    /// What runs it, in words: `model NAME`, `agent NAME`, or `the default model`.
    pub fn runner(&self) -> String {
        match (&self.config.agent, &self.config.model) {
            (Some(agent), _) => format!("agent {agent}"),
            (None, Some(model)) => format!("model {model}"),
            (None, None) => "the default model".to_owned(),
        }
    }

    /// When it runs, in words.
    pub fn when(&self) -> String {
        let when = match (&self.schedule, &self.trigger) {
            (Some(schedule), _) => schedule.to_string(),
            (None, Some(trigger)) => trigger.to_string(),
            (None, None) => "by hand only".to_owned(),
        };
        if self.config.enabled {
            when
        } else {
            format!("paused ({when})")
        }
    }

    /// Whether its writes are applied at once rather than staged.
    pub fn applies_writes(&self) -> bool {
        self.config.writes == AgentWrites::Apply
    }

    /// The entry in one line, as `quire automation list` shows it.
    pub fn describe(&self) -> String {
        let reach = if self.config.notebooks.is_empty() {
            "all notebooks".to_owned()
        } else {
            self.config.notebooks.join(", ")
        };
        let writes = if self.applies_writes() {
            "writes applied"
        } else {
            "writes staged for review"
        };
        format!(
            "{}  {}  by {}  ({reach}; {writes})",
            self.name(),
            self.when(),
            self.runner()
        )
    }
}

/// What ends the name an automation's reads and writes are recorded under.
pub const CLIENT_SUFFIX: &str = " (automation)";

/// The name an automation's reads and writes are recorded under.
pub fn client_name(name: &str) -> String {
    format!("{name}{CLIENT_SUFFIX}")
}

/// The entries quire can run, and why each other one cannot (a mistake made by hand in config.toml leaves the rest
/// running and listed); an error only when the file cannot be read.
pub fn list_lenient() -> anyhow::Result<(Vec<Automation>, Vec<String>)> {
    list_lenient_in(&config_dir()?)
}

fn list_lenient_in(dir: &std::path::Path) -> anyhow::Result<(Vec<Automation>, Vec<String>)> {
    let entries = read_config(dir)?.automations;
    let file = dir.join("config.toml");
    let (mut automations, mut wrong): (Vec<Automation>, Vec<String>) = (Vec::new(), Vec::new());
    for entry in entries {
        match Automation::of(entry) {
            Err(e) => wrong.push(format!("{}: {e:#}", file.display())),
            Ok(a) if automations.iter().any(|b| b.name().eq_ignore_ascii_case(a.name())) => wrong.push(format!(
                "{}: two [[automations]] entries are named {:?}: rename or remove one",
                file.display(),
                a.name()
            )),
            Ok(a) => automations.push(a),
        }
    }
    Ok((automations, wrong))
}

/// The automation named `name`.
pub fn find(name: &str) -> anyhow::Result<Automation> {
    let (all, wrong) = list_lenient()?;
    if let Some(found) = all.into_iter().find(|a| a.name() == name) {
        return Ok(found);
    }
    // Its entry may be there, written wrong: that is what to say.
    match wrong
        .iter()
        .find(|why| why.contains(&format!("the automation {name}:")))
    {
        Some(why) => bail!("{why}"),
        None => bail!("no automation is named {name:?} (`quire automation list`)"),
    }
}

/// Adds `entry` to config.toml, checking it can run: its notebooks exist in `ws`, its model or agent is configured.
pub fn add(ws: &Workspace, entry: AutomationConfig) -> anyhow::Result<Automation> {
    let mut entry = entry;
    entry.name = entry.name.trim().to_owned();
    let automation = Automation::of(entry)?;
    let name = automation.name().to_owned();
    for notebook in &automation.config.notebooks {
        let found = ws.read(&quire_core::Actor::User, |r| r.find_notebook(notebook))?;
        if found.is_none() {
            bail!("no notebook is named {notebook:?} (`quire notebook list`)");
        }
    }
    if let Some(agent) = &automation.config.agent {
        crate::agents::find(agent)?;
    } else {
        let models = crate::chat_models::configured_models(None, None)?;
        match &automation.config.model {
            Some(model) if !models.iter().any(|m| &m.name == model) => bail!(
                "no chat model is named {model:?}: `quire model list` shows them ({})",
                models.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            None if models.is_empty() => bail!(
                "no chat model is configured to run {name}: add one (`quire model add`), or name an agent (--agent)"
            ),
            _ => {}
        }
    }
    crate::settings::edit_entries(&config_dir()?, "automations", |list| {
        if list.iter().any(|t| {
            t.get("name")
                .and_then(|n| n.as_str())
                .is_some_and(|n| n.eq_ignore_ascii_case(&name))
        }) {
            bail!("an automation is named {name:?} already: remove it first (`quire automation remove {name}`)");
        }
        list.push(table_of(&automation.config));
        Ok(())
    })?;
    Ok(automation)
}

/// Drops the automation named `name` and its run log; refused when there is none.
pub fn remove(ws: &Workspace, name: &str) -> anyhow::Result<()> {
    crate::settings::edit_entries(&config_dir()?, "automations", |list| {
        let before = list.len();
        list.retain(|t| t.get("name").and_then(|n| n.as_str()) != Some(name));
        if list.len() == before {
            bail!("no automation is named {name:?} (`quire automation list`)");
        }
        Ok(())
    })?;
    ws.forget_automation_runs(name)?;
    Ok(())
}

/// Pauses or resumes the automation named `name` (a paused one still runs by hand).
pub fn set_enabled(name: &str, enabled: bool) -> anyhow::Result<()> {
    crate::settings::edit_entries(&config_dir()?, "automations", |list| {
        let entry = list
            .iter_mut()
            .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
            .with_context(|| format!("no automation is named {name:?} (`quire automation list`)"))?;
        if enabled {
            entry.remove("enabled");
        } else {
            entry.insert("enabled", toml_edit::value(false));
        }
        Ok(())
    })
}

fn table_of(entry: &AutomationConfig) -> toml_edit::Table {
    use toml_edit::{Array, Table, value};
    let mut table = Table::new();
    table.insert("name", value(entry.name.as_str()));
    table.insert("prompt", value(entry.prompt.as_str()));
    let optional = [
        ("model", &entry.model),
        ("agent", &entry.agent),
        ("schedule", &entry.schedule),
        ("trigger", &entry.trigger),
    ];
    for (key, text) in optional {
        if let Some(text) = text {
            table.insert(key, value(text.as_str()));
        }
    }
    if !entry.notebooks.is_empty() {
        let mut notebooks = Array::new();
        notebooks.extend(entry.notebooks.iter().map(String::as_str));
        table.insert("notebooks", value(notebooks));
    }
    if let Some(wait) = entry.wait_seconds {
        table.insert("wait_seconds", value(i64::try_from(wait).unwrap_or(i64::MAX)));
    }
    if entry.writes == AgentWrites::Apply {
        table.insert("writes", value("apply"));
    }
    if !entry.enabled {
        table.insert("enabled", value(false));
    }
    table
}

/// An automation as `quire automation list` and the web app's Settings show it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Overview {
    /// The entry as written.
    #[serde(flatten)]
    pub config: AutomationConfig,
    /// When it runs, in words.
    pub when: String,
    /// What runs it, in words.
    pub runner: String,
    /// Its next scheduled time (local, `2026-12-08 07:30`), for a schedule that is not paused.
    pub next: Option<String>,
    /// Its latest run.
    pub last_run: Option<quire_core::automation_runs::AutomationRun>,
}

/// The configured automations with their latest run and next time, and why each entry quire cannot run cannot.
pub fn overview(ws: &Workspace) -> anyhow::Result<(Vec<Overview>, Vec<String>)> {
    let now = jiff::Zoned::now();
    let (automations, wrong) = list_lenient()?;
    let shown = automations
        .into_iter()
        .map(|a| {
            let next = match (&a.schedule, &a.trigger) {
                _ if !a.config.enabled => None,
                (Some(schedule), _) => Some(schedule.next(&now)?),
                (None, Some(trigger)) => trigger.next(&now)?,
                (None, None) => None,
            };
            Ok(Overview {
                when: a.when(),
                runner: a.runner(),
                next: next.map(|slot| slot.at.strftime("%Y-%m-%d %H:%M").to_string()),
                last_run: ws.automation_runs(Some(a.name()), 1)?.into_iter().next(),
                config: a.config,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok((shown, wrong))
}

/// A run in one line: when, how it ended, why it ran, what it said (cut short unless it failed), the steps that
/// failed or were refused, its review set or the change sets it applied, its tokens and cost.
pub fn run_line(run: &quire_core::automation_runs::AutomationRun, named: bool) -> String {
    use quire_core::automation_runs::RunStatus;
    let at = crate::ledger::local_time(run.started_at.0);
    let status = match run.status {
        RunStatus::Running => "running",
        RunStatus::Done => "done",
        RunStatus::Failed => "FAILED",
        RunStatus::Abandoned => "abandoned",
    };
    let summary: String = run
        .summary
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let summary = match run.status {
        RunStatus::Running => "it runs now".to_owned(),
        RunStatus::Done if summary.chars().count() > 120 => {
            format!("{}…", summary.chars().take(120).collect::<String>())
        }
        _ => summary,
    };
    let mut extra = Vec::new();
    let steps = run.steps.as_ref().and_then(|s| s.as_array());
    let count = |key: &str| steps.map_or(0, |s| s.iter().filter(|step| step[key] == true).count());
    let (failed, refused) = (count("failed"), count("refused"));
    if refused > 0 {
        extra.push(format!("{refused} step(s) refused"));
    }
    if failed > refused {
        extra.push(format!("{} step(s) failed", failed - refused));
    }
    if let Some(set) = run.review_set {
        extra.push(format!("review {set}: `quire review show {set}`"));
    }
    if let Some(sets) = &run.change_set {
        extra.push(format!("applied {sets}: `quire undo ID` takes one back"));
    }
    if let (Some(i), Some(o)) = (run.input_tokens, run.output_tokens) {
        extra.push(format!("{} tokens", i + o));
    }
    if let Some(cost) = run.cost {
        extra.push(format!("${cost:.4}"));
    }
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(" [{}]", extra.join("; "))
    };
    let name = if named {
        format!("{}  ", run.automation)
    } else {
        String::new()
    };
    format!("{at}  {name}{status} ({}): {summary}{extra}", run.reason)
}

/// A name as a command line takes it back: quoted when it holds a space or a quote.
pub fn shell_word(name: &str) -> String {
    if name.chars().all(|c| c.is_alphanumeric() || "-_.".contains(c)) {
        name.to_owned()
    } else {
        format!("'{}'", name.replace('\'', "'\\''"))
    }
}
