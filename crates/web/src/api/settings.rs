//! The chat models the sidebar offers (names only: keys stay on the server), and adding one from the page.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::Serialize;

use crate::error::{ApiError, ErrorKind};
use crate::{NewModel, WebApp};

/// What the sidebar needs to know of the models: names only, keys stay on the server.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Settings {
    /// The models to pick from, the default first.
    pub models: Vec<ModelChoice>,
    /// How to set a model up, when there is none.
    pub setup_hint: Option<String>,
    /// Whether the page may add a model (`POST /api/models`).
    pub can_add_models: bool,
    /// The external agents (ACP) the sidebar may run instead of a model (`quire agent add`), by name.
    pub agents: Vec<String>,
}

/// One model of the picker.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModelChoice {
    /// What the picker shows; send it back as the turn's `model`.
    pub name: String,
    /// `provider:model`.
    pub model: String,
    /// The base URL, when not the provider's own.
    pub base_url: Option<String>,
    /// Whether it is the one used when none is picked.
    pub is_default: bool,
}

/// `GET /api/settings`.
pub(super) async fn settings(State(app): State<Arc<WebApp>>) -> Json<Settings> {
    Json(settings_of(&app))
}

fn settings_of(app: &WebApp) -> Settings {
    let models: Vec<ModelChoice> = app
        .models()
        .iter()
        .enumerate()
        .map(|(i, m)| ModelChoice {
            name: m.name.clone(),
            model: m.model.clone(),
            base_url: m.base_url.clone(),
            is_default: i == 0,
        })
        .collect();
    let setup_hint = models.is_empty().then(|| app.setup_hint.clone());
    Settings {
        models,
        setup_hint,
        // A paired device adds no model (it changes nothing of the server's): it is offered no form.
        can_add_models: app.add_model.is_some() && crate::access::Access::current().device().is_none(),
        // They run on this computer: a device is offered none.
        agents: if crate::access::Access::current().device().is_none() {
            (app.agents.0)().into_iter().map(|a| a.agent.name).collect()
        } else {
            Vec::new()
        },
    }
}

/// `POST /api/models`: adds a chat model from the page. The app checks it can be used and keeps it in its
/// configuration (the key stays on the server); it is offered at once, without a restart. A model of the same name
/// is replaced.
pub(super) async fn add_model(
    State(app): State<Arc<WebApp>>,
    Json(new): Json<NewModel>,
) -> Result<Json<Settings>, ApiError> {
    let Some(add) = app.add_model.clone() else {
        return Err(ApiError::new(
            ErrorKind::NotFound,
            "This server cannot add models from the page.",
        ));
    };
    if new.name.trim().is_empty() || new.model.trim().is_empty() {
        return Err(ApiError::invalid(
            "Give the model a name and say which model it is (provider:model).",
        ));
    }
    let added = tokio::task::spawn_blocking(move || add(new))
        .await?
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    {
        let mut models = app.models.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        match models.iter_mut().find(|m| m.name == added.name) {
            Some(same) => *same = added,
            None => models.push(added),
        }
    }
    Ok(Json(settings_of(&app)))
}
