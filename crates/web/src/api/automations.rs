//! Automations in Settings (issue 49): `GET /api/automations` (the entries with their latest run and next time, the
//! runs, and what may run them), `POST /api/automations` (add one), `DELETE /api/automations/{name}`,
//! `POST /api/automations/{name}/run` (now, answered when it ends), `POST /api/automations/{name}/enabled`. The
//! entries live in config.toml, whose owner is quire-host: it hands the app an [`AutomationHost`]. Only the
//! computer's own session reaches them (a paired device is refused: an automation runs on the computer).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use quire_core::Workspace;
use quire_core::automation_runs::AutomationRun;
use serde::{Deserialize, Serialize};

use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

/// An automation as the page adds it and shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutomationEntry {
    /// Its name.
    pub name: String,
    /// What it asks.
    pub prompt: String,
    /// The chat model that runs it (none, and no agent: the default model).
    #[serde(default)]
    pub model: Option<String>,
    /// The external agent that runs it instead.
    #[serde(default)]
    pub agent: Option<String>,
    /// The notebooks it reaches (titles or paths); none: all.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// `daily 07:30`, `weekly monday 09:00`, `every 6 hours`.
    #[serde(default)]
    pub schedule: Option<String>,
    /// `note created`, `note changed`, `tag added #NAME`, `task due`.
    #[serde(default)]
    pub trigger: Option<String>,
    /// Seconds a trigger waits for quiet.
    #[serde(default)]
    pub wait_seconds: Option<u64>,
    /// Whether its writes are applied at once instead of staged for review.
    #[serde(default)]
    pub apply_writes: bool,
    /// Whether it runs on its schedule or trigger.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// One automation with how it stands.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AutomationView {
    /// The entry.
    pub entry: AutomationEntry,
    /// When it runs, in words.
    pub when: String,
    /// What runs it, in words.
    pub runner: String,
    /// Its next time, local (`2026-12-08 07:30`).
    pub next: Option<String>,
    /// Its latest run.
    pub last_run: Option<AutomationRun>,
}

/// The Settings section's data.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AutomationList {
    /// The automations.
    pub automations: Vec<AutomationView>,
    /// The latest runs of all of them, newest first.
    pub runs: Vec<AutomationRun>,
    /// The chat models that may run one, the default first.
    pub models: Vec<String>,
    /// The external agents that may run one.
    pub agents: Vec<String>,
    /// Why the entries cannot be read, when they cannot (config.toml has a mistake).
    pub error: Option<String>,
}

/// Why the host (config.toml's owner) could not do what the page asked, in words the page shows as they are.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct HostError(pub String);

/// A future of the host's.
pub type HostFuture<T> = Pin<Box<dyn Future<Output = Result<T, HostError>> + Send>>;

/// What the host (quire-host, config.toml's owner) does with automations for the page. Errors are said in words ([`HostError`]).
pub trait AutomationHost: Send + Sync {
    /// The entries, with their latest run and next time, and why each entry that cannot run cannot.
    fn list(&self, ws: &Workspace) -> Result<(Vec<AutomationView>, Vec<String>), HostError>;
    /// The chat models and the agents that may run one.
    fn runners(&self) -> (Vec<String>, Vec<String>);
    /// Adds an entry, checked.
    fn add(&self, ws: &Workspace, entry: AutomationEntry) -> Result<(), HostError>;
    /// Removes one and its log.
    fn remove(&self, ws: &Workspace, name: &str) -> Result<(), HostError>;
    /// Pauses or resumes one.
    fn set_enabled(&self, name: &str, enabled: bool) -> Result<(), HostError>;
    /// Runs one now; resolves to its run when it ends.
    fn run_now(&self, ws: Workspace, name: String) -> HostFuture<AutomationRun>;
}

/// The host's automations, as [`crate::WebOptions`] holds them.
#[derive(Clone)]
pub struct Automations(pub Arc<dyn AutomationHost>);

impl std::fmt::Debug for Automations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Automations")
    }
}

fn host(app: &WebApp) -> Result<Arc<dyn AutomationHost>, ApiError> {
    app.options
        .automations
        .as_ref()
        .map(|a| a.0.clone())
        .ok_or_else(|| ApiError::new(ErrorKind::NotFound, "This server runs no automations."))
}

fn invalid(why: HostError) -> ApiError {
    ApiError::new(ErrorKind::Invalid, why.0)
}

/// `GET /api/automations`.
pub(crate) async fn list(State(app): State<Arc<WebApp>>) -> Result<Json<AutomationList>, ApiError> {
    let host = host(&app)?;
    let ws = app.workspace.clone();
    let list = tokio::task::spawn_blocking(move || {
        let (models, agents) = host.runners();
        let (automations, error) = match host.list(&ws) {
            Ok((list, wrong)) => (list, (!wrong.is_empty()).then(|| wrong.join("\n"))),
            Err(e) => (Vec::new(), Some(e.0)),
        };
        Ok::<_, ApiError>(AutomationList {
            automations,
            runs: ws.automation_runs(None, 50)?,
            models,
            agents,
            error,
        })
    })
    .await??;
    Ok(Json(list))
}

/// `POST /api/automations`.
pub(crate) async fn add(
    State(app): State<Arc<WebApp>>,
    Json(entry): Json<AutomationEntry>,
) -> Result<Json<AutomationList>, ApiError> {
    let host = host(&app)?;
    let ws = app.workspace.clone();
    tokio::task::spawn_blocking(move || host.add(&ws, entry))
        .await?
        .map_err(invalid)?;
    list(State(app)).await
}

/// `DELETE /api/automations/{name}`.
pub(crate) async fn remove(
    State(app): State<Arc<WebApp>>,
    Path(name): Path<String>,
) -> Result<Json<AutomationList>, ApiError> {
    let host = host(&app)?;
    let ws = app.workspace.clone();
    tokio::task::spawn_blocking(move || host.remove(&ws, &name))
        .await?
        .map_err(invalid)?;
    list(State(app)).await
}

/// Whether an automation runs on its schedule or trigger.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EnabledRequest {
    /// Runs (true) or is paused (false).
    pub enabled: bool,
}

/// `POST /api/automations/{name}/enabled`.
pub(crate) async fn set_enabled(
    State(app): State<Arc<WebApp>>,
    Path(name): Path<String>,
    Json(request): Json<EnabledRequest>,
) -> Result<Json<AutomationList>, ApiError> {
    let host = host(&app)?;
    tokio::task::spawn_blocking(move || host.set_enabled(&name, request.enabled))
        .await?
        .map_err(invalid)?;
    list(State(app)).await
}

/// `POST /api/automations/{name}/run`: runs it now and answers with its run when it ends (a run that overlaps one
/// running is refused with a conflict).
pub(crate) async fn run(
    State(app): State<Arc<WebApp>>,
    Path(name): Path<String>,
) -> Result<Json<AutomationRun>, ApiError> {
    let host = host(&app)?;
    let run = host
        .run_now(app.workspace.clone(), name)
        .await
        .map_err(|why| ApiError::new(ErrorKind::Conflict, why.0))?;
    Ok(Json(run))
}
