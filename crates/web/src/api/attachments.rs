//! Attachments: their bytes, for images in the preview (`quire://attachment/ID`), with the user's view (a sealed
//! note's open while the workspace is unlocked); and a file the person pastes, drops or picks in the editor, added
//! to the note (`POST /api/notes/{id}/attachments`), with the Markdown that shows it.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use super::{content_read, user_write};
use crate::WebApp;
use crate::error::ApiError;

/// The largest request that carries an attachment: core's limit on one, and a little for the rest.
pub(crate) const ATTACHMENT_REQUEST_LIMIT: usize = quire_core::MAX_ATTACHMENT_BYTES + 64 * 1024;

/// A file added to a note from the editor.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AddedAttachment {
    /// The attachment's id.
    pub attachment_id: String,
    /// Its title: the file's name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// The Markdown that shows it where the cursor is: an image (`![name](quire://attachment/ID)`), or a link to
    /// any other file.
    pub markdown: String,
}

/// The query of an upload: the file's name as the person's system gave it.
#[derive(Debug, Deserialize)]
pub(super) struct UploadQuery {
    #[serde(default)]
    name: String,
}

/// `POST /api/notes/{id}/attachments?name=NAME`: the request's body is the file, its `Content-Type` the file's type.
/// An empty file, one over the limit and a note in the trash are refused; nothing is added then.
pub(super) async fn upload(
    State(app): State<Arc<WebApp>>,
    Path(note_id): Path<String>,
    query: Result<Query<UploadQuery>, QueryRejection>,
    headers: HeaderMap,
    data: Bytes,
) -> Result<Json<AddedAttachment>, ApiError> {
    let Query(query) = query?;
    if data.is_empty() {
        return Err(ApiError::invalid("the file is empty."));
    }
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let title = file_title(&query.name, declared);
    let mime = media_type(declared, &title);
    let new = quire_core::NewAttachment {
        title,
        mime,
        data: data.to_vec(),
        text: None,
    };
    let info = user_write(&app, move |w| {
        // A note in the trash is read-only in the page: its files too.
        if w.note_summary(&note_id)?.deleted.is_some() {
            return Err(quire_core::Error::Invalid(
                "The note is in the trash: restore it to attach files to it.".into(),
            ));
        }
        w.add_attachment(&note_id, new)
    })
    .await?;
    let label: String = info
        .title
        .chars()
        .flat_map(|c| match c {
            '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let shown = info.mime.starts_with("image/");
    let markdown = format!(
        "{}[{label}](quire://attachment/{})",
        if shown { "!" } else { "" },
        info.id
    );
    Ok(Json(AddedAttachment {
        attachment_id: info.id,
        title: info.title,
        mime: info.mime,
        size: info.size,
        markdown,
    }))
}

/// A file's title from the name the browser gave (its last part, without control characters); a pasted image
/// without a name is `pasted image.png`.
fn file_title(name: &str, mime: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let clean: String = last.chars().filter(|c| !c.is_control()).collect();
    let clean = clean.trim();
    if !clean.is_empty() {
        return clean.chars().take(200).collect();
    }
    let extension = match mime {
        "image/png" => ".png",
        "image/jpeg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "application/pdf" => ".pdf",
        "text/plain" => ".txt",
        _ => "",
    };
    if mime.starts_with("image/") {
        format!("pasted image{extension}")
    } else {
        format!("pasted file{extension}")
    }
}

/// The file's media type: the one the browser declared when it is one, else from the name's extension.
fn media_type(declared: &str, title: &str) -> String {
    let declared = declared
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if let Some((kind, sub)) = declared.split_once('/')
        && !kind.is_empty()
        && !sub.is_empty()
        && !declared.contains(char::is_whitespace)
        && declared != "application/octet-stream"
    {
        return declared;
    }
    let extension = title
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "txt" | "md" => "text/plain",
        _ => "application/octet-stream",
    }
    .to_owned()
}

/// `GET /api/attachments/{id}`: an image or a PDF inline; anything else (an SVG can carry script) as a download,
/// never run.
pub(super) async fn attachment(State(app): State<Arc<WebApp>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let (info, data) = content_read(&app, move |r| Ok((r.attachment(&id)?, r.attachment_data(&id)?))).await?;
    if info.mime.starts_with("image/") && info.mime != "image/svg+xml" {
        return Ok(([(header::CONTENT_TYPE, info.mime)], data).into_response());
    }
    // A PDF opens in the browser's own viewer, at the page a search cites (`#page=N`); only what is one.
    if info.mime == "application/pdf" && data.starts_with(b"%PDF-") {
        let headers = [
            (header::CONTENT_TYPE, "application/pdf".to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            // The app's policy forbids plugins (`object-src 'none'`), which is how Chromium shows a PDF: this
            // response allows its own viewer and nothing else (no script of the app's origin, no framing).
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; object-src 'self'; plugin-types application/pdf; frame-ancestors 'none'"
                    .to_owned(),
            ),
        ];
        return Ok((headers, data).into_response());
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
