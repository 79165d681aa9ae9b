//! External agents (ACP) in Settings (issue 49): `GET /api/agents` (the `[[agents]]` entries, each in words, its
//! environment's names only: a value may be a key), `POST /api/agents` (add one), `DELETE /api/agents/{name}`,
//! `POST /api/agents/{name}/test` (start it and a session, then end it: what it said it is). The entries live in
//! config.toml, whose owner is quire-host: it hands the app an [`AgentAdmin`]. Only the computer's own session reaches
//! them (an agent runs on the computer).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use quire_core::Workspace;
use serde::{Deserialize, Serialize};

use super::automations::{HostError, HostFuture};
use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

/// An agent as the page adds it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAgent {
    /// Its name.
    pub name: String,
    /// The program that speaks ACP on its standard input and output.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The notebooks it reaches (titles or paths); none: all.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// Its environment: `NAME=VALUE`, or `NAME` to pass that variable of quire's on.
    #[serde(default)]
    pub env: Vec<String>,
    /// A folder whose text files it may read and write; none: no file system.
    #[serde(default)]
    pub files: Option<String>,
    /// Whether it may run commands (in its folder).
    #[serde(default)]
    pub terminal: bool,
    /// Whether its writes are applied at once instead of staged for review.
    #[serde(default)]
    pub apply_writes: bool,
}

/// An agent as Settings lists it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AgentView {
    /// Its name.
    pub name: String,
    /// The entry in one line, as `quire agent list` says it.
    pub described: String,
    /// The names of the environment variables it is given (never their values).
    pub env: Vec<String>,
}

/// The Settings section's data.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AgentList {
    /// The agents.
    pub agents: Vec<AgentView>,
    /// Why the entries cannot be read, when they cannot.
    pub error: Option<String>,
}

/// What an agent's test said.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AgentTested {
    /// In words.
    pub said: String,
}

/// What the host (quire-host, config.toml's owner) does with the agents' entries for the page.
pub trait AgentAdmin: Send + Sync {
    /// The entries.
    fn list(&self) -> Result<Vec<AgentView>, HostError>;
    /// Adds one, checked (its notebooks exist, its folder is one).
    fn add(&self, ws: &Workspace, agent: NewAgent) -> Result<(), HostError>;
    /// Removes one.
    fn remove(&self, name: &str) -> Result<(), HostError>;
    /// Starts it and a session, then ends it.
    fn test(&self, ws: Workspace, name: String) -> HostFuture<String>;
}

/// The host's agents' entries, as [`crate::WebOptions`] holds them.
#[derive(Clone)]
pub struct AgentAdmins(pub Arc<dyn AgentAdmin>);

impl std::fmt::Debug for AgentAdmins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentAdmins")
    }
}

fn admin(app: &WebApp) -> Result<Arc<dyn AgentAdmin>, ApiError> {
    app.options
        .agent_admin
        .as_ref()
        .map(|a| a.0.clone())
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, "This server manages no agents."))
}

/// `GET /api/agents`.
pub(crate) async fn list(State(app): State<Arc<WebApp>>) -> Result<Json<AgentList>, ApiError> {
    let admin = admin(&app)?;
    let list = tokio::task::spawn_blocking(move || match admin.list() {
        Ok(agents) => AgentList { agents, error: None },
        Err(e) => AgentList {
            agents: Vec::new(),
            error: Some(e.0),
        },
    })
    .await?;
    Ok(Json(list))
}

/// `POST /api/agents`.
pub(crate) async fn add(
    State(app): State<Arc<WebApp>>,
    Json(agent): Json<NewAgent>,
) -> Result<Json<AgentList>, ApiError> {
    let admin = admin(&app)?;
    let ws = app.workspace.clone();
    tokio::task::spawn_blocking(move || admin.add(&ws, agent))
        .await?
        .map_err(|e| ApiError::new(ErrorKind::Invalid, e.0))?;
    list(State(app)).await
}

/// `DELETE /api/agents/{name}`.
pub(crate) async fn remove(
    State(app): State<Arc<WebApp>>,
    Path(name): Path<String>,
) -> Result<Json<AgentList>, ApiError> {
    let admin = admin(&app)?;
    tokio::task::spawn_blocking(move || admin.remove(&name))
        .await?
        .map_err(|e| ApiError::new(ErrorKind::Invalid, e.0))?;
    list(State(app)).await
}

/// `POST /api/agents/{name}/test`.
pub(crate) async fn test(
    State(app): State<Arc<WebApp>>,
    Path(name): Path<String>,
) -> Result<Json<AgentTested>, ApiError> {
    let admin = admin(&app)?;
    let said = admin
        .test(app.workspace.clone(), name)
        .await
        .map_err(|e| ApiError::new(ErrorKind::Invalid, e.0))?;
    Ok(Json(AgentTested { said }))
}
