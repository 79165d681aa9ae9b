//! The agents' entries as the web app's Settings reach them ([`quire_web::AgentAdmin`]): listed, added, removed and
//! tested as `quire agent` does, through [`crate::agents`].

use quire_core::Workspace;
use quire_web::{AgentView, HostError, HostFuture, NewAgent};

fn said(e: anyhow::Error) -> HostError {
    HostError(format!("{e:#}"))
}

/// The web app's agents' entries.
pub struct PageAgents;

impl quire_web::AgentAdmin for PageAgents {
    fn list(&self) -> Result<Vec<AgentView>, HostError> {
        Ok(super::list()
            .map_err(said)?
            .iter()
            .map(|a| AgentView {
                name: a.name.clone(),
                described: super::describe(a),
                env: a.env.keys().cloned().chain(a.inherit_env.iter().cloned()).collect(),
            })
            .collect())
    }

    fn add(&self, ws: &Workspace, agent: NewAgent) -> Result<(), HostError> {
        let mut command = vec![agent.command];
        command.extend(agent.args);
        let files = agent
            .files
            .filter(|f| !f.trim().is_empty())
            .map(std::path::PathBuf::from);
        let entry = super::entry(
            agent.name.trim().to_owned(),
            agent.notebooks,
            agent.apply_writes,
            &agent.env,
            (files, agent.terminal),
            command,
        )
        .map_err(said)?;
        super::add(ws, &entry).map_err(said)
    }

    fn remove(&self, name: &str) -> Result<(), HostError> {
        super::remove(name).map_err(said)
    }

    fn test(&self, ws: Workspace, name: String) -> HostFuture<String> {
        let testing = tokio::spawn(async move { super::test(&ws, &name).await.map_err(said) });
        Box::pin(async move { testing.await.map_err(|e| HostError(format!("the test stopped: {e}")))? })
    }
}
