//! Notebooks: the tree (`list_notebooks`), and the user's create (a `/` makes the path), rename, move and delete.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use quire_tools::builtin::ListNotebooks;
use quire_tools::notebooks::list_notebooks;
use serde::{Deserialize, Serialize};

use super::{read_tool, user_write};
use crate::WebApp;
use crate::error::ApiError;

/// A notebook just made.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct CreatedNotebook {
    /// Its id.
    pub notebook_id: String,
    /// Its title.
    pub title: String,
}

/// A notebook renamed or moved.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct NotebookChanged {
    /// Its id.
    pub notebook_id: String,
}

/// Something deleted for good (an empty notebook, a note from the trash).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Deleted {
    /// Always true: a refusal is an error instead.
    pub deleted: bool,
}

/// `GET /api/notebooks`: `list_notebooks` with the query string as its arguments.
pub(super) async fn list(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<list_notebooks::Input>, QueryRejection>,
) -> Result<Json<list_notebooks::Output>, ApiError> {
    let Query(input) = query?;
    Ok(Json(read_tool::<ListNotebooks>(&app, input).await?))
}

/// A new notebook.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewNotebookRequest {
    title: String,
    parent_id: Option<String>,
}

/// `POST /api/notebooks`: a `/` in the title makes the path, as `quire notebook add` does (the notebooks of
/// `Work/Projects` that are missing are created); a path that exists already is refused rather than made twice.
pub(super) async fn create(
    State(app): State<Arc<WebApp>>,
    Json(request): Json<NewNotebookRequest>,
) -> Result<(StatusCode, Json<CreatedNotebook>), ApiError> {
    let notebook = user_write(&app, move |w| {
        if !request.title.contains('/') {
            return w.create_notebook(quire_core::NewNotebook {
                title: request.title,
                parent_id: request.parent_id,
                icon: None,
            });
        }
        let made = w.create_notebook_path(request.parent_id.as_deref(), &request.title)?;
        if made.created.is_empty() {
            return Err(quire_core::Error::Invalid(format!(
                "The notebook {} exists already.",
                w.notebook_path_text(&made.notebook.id)?
            )));
        }
        Ok(made.notebook)
    })
    .await?;
    let created = CreatedNotebook {
        notebook_id: notebook.id,
        title: notebook.title,
    };
    Ok((StatusCode::CREATED, Json(created)))
}

/// A rename, a move, or both.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NotebookChange {
    title: Option<String>,
    parent_id: Option<String>,
}

/// `PATCH /api/notebooks/{id}`.
pub(super) async fn change(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
    Json(change): Json<NotebookChange>,
) -> Result<Json<NotebookChanged>, ApiError> {
    let notebook_id = user_write(&app, move |w| {
        if let Some(title) = &change.title {
            w.rename_notebook(&id, title)?;
        }
        if let Some(parent) = &change.parent_id {
            w.move_notebook(&id, parent)?;
        }
        Ok(id)
    })
    .await?;
    Ok(Json(NotebookChanged { notebook_id }))
}

/// `DELETE /api/notebooks/{id}`: only an empty notebook.
pub(super) async fn delete(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Json<Deleted>, ApiError> {
    user_write(&app, move |w| w.delete_notebook(&id)).await?;
    Ok(Json(Deleted { deleted: true }))
}
