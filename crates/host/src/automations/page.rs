//! The automations as the web app's Settings reach them ([`quire_web::AutomationHost`]): the entries of config.toml
//! read and changed here, a run by hand started on the server's runtime (it goes on when the page leaves).

use std::sync::Arc;

use quire_core::Workspace;
use quire_core::automation_runs::AutomationRun;
use quire_tools::ToolRegistry;
use quire_web::{AutomationEntry, AutomationView, HostError, HostFuture};

use super::run::{Occasion, Ran};
use crate::settings::AgentWrites;

/// The web app's automations: runs by hand use `registry`'s tools (the page's plugins included).
pub struct PageAutomations {
    /// The tools a model's run may use.
    pub registry: Arc<ToolRegistry>,
}

fn said(e: anyhow::Error) -> HostError {
    HostError(format!("{e:#}"))
}

impl quire_web::AutomationHost for PageAutomations {
    fn list(&self, ws: &Workspace) -> Result<(Vec<AutomationView>, Vec<String>), HostError> {
        let (shown, wrong) = super::overview(ws).map_err(said)?;
        let shown = shown
            .into_iter()
            .map(|o| AutomationView {
                entry: AutomationEntry {
                    name: o.config.name,
                    prompt: o.config.prompt,
                    model: o.config.model,
                    agent: o.config.agent,
                    notebooks: o.config.notebooks,
                    schedule: o.config.schedule,
                    trigger: o.config.trigger,
                    wait_seconds: o.config.wait_seconds,
                    apply_writes: o.config.writes == AgentWrites::Apply,
                    enabled: o.config.enabled,
                },
                when: o.when,
                runner: o.runner,
                next: o.next,
                last_run: o.last_run,
            })
            .collect();
        Ok((shown, wrong))
    }

    fn runners(&self) -> (Vec<String>, Vec<String>) {
        let models = crate::chat_models::configured_models(None, None)
            .map(|models| models.into_iter().map(|m| m.name).collect())
            .unwrap_or_default();
        let agents = crate::agents::list()
            .map(|agents| agents.into_iter().map(|a| a.name).collect())
            .unwrap_or_default();
        (models, agents)
    }

    fn add(&self, ws: &Workspace, entry: AutomationEntry) -> Result<(), HostError> {
        let blank = |text: Option<String>| text.filter(|t| !t.trim().is_empty());
        let config = super::AutomationConfig {
            name: entry.name,
            prompt: entry.prompt,
            model: blank(entry.model),
            agent: blank(entry.agent),
            notebooks: entry.notebooks.into_iter().filter(|n| !n.trim().is_empty()).collect(),
            schedule: blank(entry.schedule),
            trigger: blank(entry.trigger),
            wait_seconds: entry.wait_seconds,
            writes: if entry.apply_writes {
                AgentWrites::Apply
            } else {
                AgentWrites::Stage
            },
            enabled: entry.enabled,
        };
        super::add(ws, config).map(drop).map_err(said)
    }

    fn remove(&self, ws: &Workspace, name: &str) -> Result<(), HostError> {
        super::remove(ws, name).map_err(said)
    }

    fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), HostError> {
        super::set_enabled(name, enabled).map_err(said)
    }

    fn run_now(&self, ws: Workspace, name: String) -> HostFuture<AutomationRun> {
        let registry = self.registry.clone();
        let running = tokio::spawn(async move {
            let automation = super::find(&name).map_err(said)?;
            let cancel = tokio_util::sync::CancellationToken::new();
            match super::run::run(&ws, &registry, &automation, &Occasion::by_hand(), &cancel).await {
                Ok(Ran::Ran(row)) => Ok(*row),
                Ok(Ran::Overlaps(other)) => Err(HostError(format!(
                    "{name} runs now (since {}): a run never overlaps itself; try again when it ends",
                    crate::ledger::local_time(other.started_at.0)
                        .split_whitespace()
                        .last()
                        .unwrap_or_default()
                ))),
                Ok(Ran::SlotTaken) => Err(HostError(format!("{name} ran for this already"))),
                Err(e) => Err(said(e)),
            }
        });
        Box::pin(async move { running.await.map_err(|e| HostError(format!("the run stopped: {e}")))? })
    }
}
