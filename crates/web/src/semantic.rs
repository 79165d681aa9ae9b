//! Search by meaning's model in the web app: which one is in use, and installing one from quire-embed's catalog
//! with a progress the page polls. The app decides what "use it" means (it writes the configuration and gives the
//! workspace the new embedder) through [`SemanticModels::activate`].

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use quire_embed::{CatalogModel, InstallProgress, ModelStore};
use serde::{Deserialize, Serialize};

use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

/// Makes an installed catalog model the one search by meaning uses; returns what it uses now, in words.
pub type Activate = Arc<dyn Fn(&'static CatalogModel) -> Result<String, crate::SetupError> + Send + Sync>;

/// What the web app needs to show and install search by meaning's model.
#[derive(Clone)]
pub struct SemanticModels {
    /// Where models are installed.
    pub store: ModelStore,
    /// The hub models are downloaded from ([`quire_embed::hub_endpoint`]).
    pub endpoint: String,
    /// The catalog model in use, if one is.
    pub active: Option<String>,
    /// What search by meaning uses, in words.
    pub uses: String,
    /// Whether it is the built-in fallback (then the page offers the install).
    pub builtin: bool,
    /// Makes an installed model the one in use.
    pub activate: Activate,
}

impl std::fmt::Debug for SemanticModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SemanticModels")
            .field("store", &self.store)
            .field("active", &self.active)
            .field("uses", &self.uses)
            .finish_non_exhaustive()
    }
}

/// The page's view of search by meaning.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SemanticSettings {
    /// What search by meaning uses, in words.
    pub uses: String,
    /// The catalog model in use, if one is.
    pub active: Option<String>,
    /// Whether it is the built-in fallback, which matches words rather than meaning.
    pub builtin: bool,
    /// Whether this server can install models.
    pub can_install: bool,
    /// Whether the page should offer an install: search by meaning has no sentence model, or the configured one is
    /// not installed.
    pub offer_install: bool,
    /// The models quire can install.
    pub catalog: Vec<CatalogEntry>,
    /// The install running or last finished, if any.
    pub install: Option<InstallState>,
}

/// One model of the catalog.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CatalogEntry {
    /// Its name.
    pub name: String,
    /// What it is good at.
    pub summary: String,
    /// Bytes to download.
    pub size: u64,
    /// Its licence.
    pub licence: String,
    /// Whether it is installed.
    pub installed: bool,
}

/// An install's progress.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InstallState {
    /// The model.
    pub model: String,
    /// `downloading`, `checking`, `done` or `failed`.
    pub state: String,
    /// Bytes done.
    pub done: u64,
    /// Bytes in all.
    pub total: u64,
    /// Why it failed.
    pub error: Option<String>,
}

/// The state behind the page's view: what is in use and the install's progress.
#[derive(Debug, Default)]
pub(crate) struct Semantic {
    pub(crate) config: Option<SemanticModels>,
    pub(crate) now: Mutex<Now>,
}

#[derive(Debug, Default)]
pub(crate) struct Now {
    active: Option<String>,
    uses: String,
    builtin: bool,
    install: Option<InstallState>,
}

impl Semantic {
    pub(crate) fn new(config: Option<SemanticModels>) -> Semantic {
        let now = Now {
            active: config.as_ref().and_then(|c| c.active.clone()),
            uses: config
                .as_ref()
                .map_or_else(|| "the embedder this server was given".to_owned(), |c| c.uses.clone()),
            builtin: config.as_ref().is_some_and(|c| c.builtin),
            install: None,
        };
        Semantic {
            config,
            now: Mutex::new(now),
        }
    }

    fn view(&self) -> SemanticSettings {
        let now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let installed = |name: &str| {
            self.config
                .as_ref()
                .zip(quire_embed::find_model(name))
                .is_some_and(|(c, m)| c.store.is_installed(m))
        };
        let offer_install =
            self.config.is_some() && (now.builtin || now.active.as_deref().is_some_and(|a| !installed(a)));
        SemanticSettings {
            offer_install,
            uses: now.uses.clone(),
            active: now.active.clone(),
            builtin: now.builtin,
            can_install: self.config.is_some(),
            catalog: quire_embed::catalog()
                .iter()
                .map(|m| CatalogEntry {
                    name: m.name.to_owned(),
                    summary: m.summary.to_owned(),
                    size: m.size(),
                    licence: m.licence.to_owned(),
                    installed: self.config.as_ref().is_some_and(|c| c.store.is_installed(m)),
                })
                .collect(),
            install: now.install.clone(),
        }
    }
}

/// `GET /api/semantic` and `POST /api/semantic/install`, for the router in `lib.rs` to put under `/api`.
pub(crate) fn routes() -> Router<Arc<WebApp>> {
    Router::new()
        .route("/semantic", get(settings))
        .route("/semantic/install", post(install))
}

pub(crate) async fn settings(State(app): State<Arc<WebApp>>) -> Json<SemanticSettings> {
    Json(app.semantic.view())
}

/// `POST /api/semantic/install {"model": NAME}`: starts installing a catalog model (the default when none is
/// named) and answers at once; the page polls `GET /api/semantic`. When the install succeeds the model is used.
#[derive(Debug, Deserialize)]
pub(crate) struct InstallRequest {
    model: Option<String>,
}

pub(crate) async fn install(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<InstallRequest>,
) -> Result<(StatusCode, Json<SemanticSettings>), ApiError> {
    let Some(config) = app.semantic.config.clone() else {
        return Err(ApiError::new(
            ErrorKind::Conflict,
            "This server was started without a model store; install models with `quire model install`.",
        ));
    };
    let name = request.model.as_deref().unwrap_or(quire_embed::models::DEFAULT_MODEL);
    let Some(model) = quire_embed::find_model(name) else {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            format!("There is no model called {name:?} in the catalog."),
        ));
    };
    {
        let mut now = app.semantic.now.lock().unwrap_or_else(|e| e.into_inner());
        if now
            .install
            .as_ref()
            .is_some_and(|i| i.state == "downloading" || i.state == "checking")
        {
            return Err(ApiError::new(
                ErrorKind::Conflict,
                "A model is being installed already.",
            ));
        }
        now.install = Some(InstallState {
            model: model.name.to_owned(),
            state: "downloading".to_owned(),
            done: 0,
            total: model.size(),
            error: None,
        });
    }
    let task_app = app.clone();
    tokio::spawn(async move {
        let semantic = &task_app.semantic;
        let progress = |p: InstallProgress| {
            let mut now = semantic.now.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(install) = now.install.as_mut() {
                install.done = p.done;
                install.state = if p.file.is_some() { "downloading" } else { "checking" }.to_owned();
            }
        };
        let installed = if config.store.is_installed(model) {
            Ok(config.store.dir(model))
        } else {
            config.store.download(model, &config.endpoint, &progress).await
        };
        let outcome = match installed {
            Ok(_) => {
                let activate = config.activate.clone();
                tokio::task::spawn_blocking(move || activate(model).map_err(|e| e.to_string()))
                    .await
                    .unwrap_or_else(|e| Err(format!("the model could not be put in use: {e}")))
            }
            Err(e) => Err(e.to_string()),
        };
        let mut now = semantic.now.lock().unwrap_or_else(|e| e.into_inner());
        match outcome {
            Ok(uses) => {
                tracing::info!(model = model.name, "installed a sentence model from the web app");
                now.active = Some(model.name.to_owned());
                now.uses = uses;
                now.builtin = false;
                if let Some(install) = now.install.as_mut() {
                    install.state = "done".to_owned();
                    install.done = install.total;
                }
            }
            Err(message) => {
                tracing::warn!(model = model.name, %message, "installing a sentence model failed");
                if let Some(install) = now.install.as_mut() {
                    install.state = "failed".to_owned();
                    install.error = Some(message);
                }
            }
        }
    });
    Ok((StatusCode::ACCEPTED, Json(app.semantic.view())))
}
