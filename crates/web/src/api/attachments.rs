//! An attachment's bytes, for images in the preview (`quire://attachment/ID`), with the user's view (a sealed note's
//! open while the workspace is unlocked).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::content_read;
use crate::WebApp;
use crate::error::ApiError;

/// `GET /api/attachments/{id}`: an image inline; anything else (an SVG can carry script) as a download, never run.
pub(super) async fn attachment(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let (info, data) = content_read(&app, move |r| Ok((r.attachment(&id)?, r.attachment_data(&id)?))).await?;
    if info.mime.starts_with("image/") && info.mime != "image/svg+xml" {
        return Ok(([(header::CONTENT_TYPE, info.mime)], data).into_response());
    }
    let name: String = info
        .title
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
        (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
    ];
    Ok((headers, data).into_response())
}
