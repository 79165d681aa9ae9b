//! The workspace as resources: notes (`quire://note/{id}`, Markdown), notebooks (`quire://notebook/{id}`, JSON),
//! attachments (`quire://attachment/{id}`, their bytes) and the client's own review sets of staged changes
//! (`quire://review/{id}`, JSON), and saved views (`quire://view/{id}`: a note's ```` ```dataview ```` and
//! ```` ```query ```` blocks run, JSON), listed, described by templates and read as the client's actor, beside the
//! extra resources of the [`ResourceRegistry`].

use quire_core::Page;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::content::resource_contents;
use crate::resources::{REVIEW_URI, ResourceBody, ResourceRegistry};
use crate::server::{Access, QuireServer, invalid_cursor};

/// Notes per `resources/list` page.
const RESOURCE_PAGE: u64 = 100;
/// The URI of a note resource, before its id.
pub(crate) const NOTE_URI: &str = "quire://note/";
/// The URI of a notebook resource, before its id.
pub(crate) const NOTEBOOK_URI: &str = "quire://notebook/";
/// The URI of an attachment resource, before its id.
const ATTACHMENT_URI: &str = "quire://attachment/";
/// The URI of a saved view (a note's queries run), before the note's id.
pub(crate) const VIEW_URI: &str = "quire://view/";
/// Rows of one query a view resource gives at most (`rows_total` says how many there were).
const VIEW_ROWS: usize = 200;

/// The kinds of `quire://` resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QuireResource {
    Note,
    Notebook,
    Attachment,
    Review,
    View,
}

/// The kind and id a `quire://` URI names, when it names one.
pub(crate) fn quire_uri(uri: &str) -> Option<(QuireResource, &str)> {
    let (kind, id) = if let Some(id) = uri.strip_prefix(NOTE_URI) {
        (QuireResource::Note, id)
    } else if let Some(id) = uri.strip_prefix(NOTEBOOK_URI) {
        (QuireResource::Notebook, id)
    } else if let Some(id) = uri.strip_prefix(REVIEW_URI) {
        (QuireResource::Review, id)
    } else if let Some(id) = uri.strip_prefix(VIEW_URI) {
        (QuireResource::View, id)
    } else {
        (QuireResource::Attachment, uri.strip_prefix(ATTACHMENT_URI)?)
    };
    (!id.is_empty() && !id.contains('/')).then_some((kind, id))
}

/// Whether a URI names a resource a client can subscribe to or read: a note, notebook or attachment id that
/// exists and that it can reach, or an extra resource.
pub(crate) fn resource_exists(resources: &ResourceRegistry, uri: &str, access: &Access) -> bool {
    if access.revoked() {
        return false;
    }
    if resources.knows(uri) {
        return true;
    }
    let Some((kind, id)) = quire_uri(uri) else { return false };
    // Through a scope, the top level holds nothing of the client's: watching it would only tell of others' notes.
    if kind == QuireResource::Notebook && id == quire_core::ROOT_NOTEBOOK_ID && access.workspace.scope().is_some() {
        return false;
    }
    access
        .workspace
        .read(access.actor.actor(), |r| match kind {
            QuireResource::Note | QuireResource::View => r.note_summary(id).map(|_| ()),
            QuireResource::Notebook => r.notebook(id).map(|_| ()),
            QuireResource::Attachment => r.attachment(id).map(|_| ()),
            QuireResource::Review => r.review_client(review_number(id)?).map(|_| ()),
        })
        .is_ok()
}

/// One page of `resources/list`: the extra static resources first, then the notes the client may read.
pub(crate) async fn list(
    server: &QuireServer,
    request: Option<PaginatedRequestParams>,
    ctx: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    let offset = match request.and_then(|r| r.cursor) {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("offset:")
            .and_then(|n| n.parse().ok())
            .ok_or_else(invalid_cursor)?,
    };
    let access = server.access(&ctx);
    let page = access
        .workspace
        .read(access.actor.actor(), |r| {
            r.all_notes(Page {
                offset,
                limit: RESOURCE_PAGE,
            })
        })
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut resources: Vec<Resource> = Vec::new();
    if offset == 0 {
        resources.extend(server.resources.statics().into_iter().map(|r| {
            Resource::new(r.uri, r.name.clone())
                .with_title(r.name)
                .with_mime_type(r.mime_type)
        }));
    }
    resources.extend(page.items.iter().filter(|n| !n.is_protected).map(|n| {
        Resource::new(format!("{NOTE_URI}{}", n.id), n.title.clone())
            .with_title(n.title.clone())
            .with_mime_type("text/markdown")
    }));
    let mut result = ListResourcesResult::with_all_items(resources);
    if page.has_more {
        result.next_cursor = Some(format!("offset:{}", offset + page.items.len() as u64));
    }
    Ok(result)
}

/// `resources/templates/list`: quire's three templates, then the extra ones.
pub(crate) fn templates(server: &QuireServer) -> ListResourceTemplatesResult {
    let mut templates = vec![
        ResourceTemplate::new(format!("{NOTE_URI}{{id}}"), "note")
            .with_title("Note")
            .with_description("A note's Markdown body, by note id (search_notes and list_notes return ids).")
            .with_mime_type("text/markdown"),
        ResourceTemplate::new(format!("{NOTEBOOK_URI}{{id}}"), "notebook")
            .with_title("Notebook")
            .with_description("A notebook's path, sub-notebooks and notes (their ids and titles), as JSON.")
            .with_mime_type("application/json"),
        ResourceTemplate::new(format!("{ATTACHMENT_URI}{{id}}"), "attachment")
            .with_title("Attachment")
            .with_description("An attachment's bytes, with its own MIME type (read_note lists attachment ids).")
            .with_mime_type("application/octet-stream"),
        ResourceTemplate::new(format!("{REVIEW_URI}{{id}}"), "review")
            .with_title("Staged changes under review")
            .with_description(
                "One of your review sets (a write answered with 'waits in review N'): each change and whether \
                 the user accepted, rejected or has not decided it yet, as JSON. Subscribe to hear the decision.",
            )
            .with_mime_type("application/json"),
        ResourceTemplate::new(format!("{VIEW_URI}{{id}}"), "view")
            .with_title("Saved view")
            .with_description(
                "A note's saved queries (its dataview and query blocks, Dataview's language) run now, each with its \
                 rows, as JSON; by note id.",
            )
            .with_mime_type("application/json"),
    ];
    templates.extend(server.resources.templates().into_iter().map(|t| {
        ResourceTemplate::new(t.uri_template, t.name.clone())
            .with_title(t.name)
            .with_description(t.description)
            .with_mime_type(t.mime_type)
    }));
    ListResourceTemplatesResult::with_all_items(templates)
}

/// `resources/read`: an extra resource, or a note, notebook or attachment read as the client's actor.
pub(crate) async fn read(
    server: &QuireServer,
    request: ReadResourceRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, ErrorData> {
    let uri = request.uri;
    let not_found = || {
        ErrorData::resource_not_found(
            format!("Resource not found: {uri}"),
            Some(serde_json::json!({ "uri": uri })),
        )
    };
    if let Some((body, mime_type)) = server.resources.read(&uri) {
        return Ok(ReadResourceResult::new(vec![resource_contents(body, &uri, &mime_type)]).into());
    }
    if let Some(page) = crate::plugin_tools::read_page(server, &uri, &ctx).await {
        return page;
    }
    if uri == crate::review_app::REVIEW_APP_URI {
        let body = ResourceBody::Text(crate::review_app::REVIEW_APP_HTML.to_owned());
        return Ok(ReadResourceResult::new(vec![resource_contents(body, &uri, crate::review_app::APP_MIME)]).into());
    }
    let (kind, id) = quire_uri(&uri).ok_or_else(not_found)?;
    let Access {
        workspace: ws, actor, ..
    } = server.access(&ctx);
    // A review is read as it stands in the workspace, not through the client's own pending changes (against which
    // every change would look stale); the set is still only the client's own.
    let ws = if kind == QuireResource::Review {
        ws.unstaged()
    } else {
        ws
    };
    let id = id.to_owned();
    let staged = ws.clone();
    let read = tokio::task::spawn_blocking(move || {
        ws.read(actor.actor(), |r| match kind {
            QuireResource::Note => r
                .note(&id)
                .map(|note| (ResourceBody::Text(note.body), "text/markdown".to_owned())),
            QuireResource::Notebook => {
                notebook_listing(r, &id).map(|json| (ResourceBody::Text(json), "application/json".to_owned()))
            }
            QuireResource::Attachment => {
                let info = r.attachment(&id)?;
                let data = r.attachment_data(&id)?;
                Ok((ResourceBody::Blob(data), info.mime))
            }
            QuireResource::View => {
                view_json(r, &id).map(|json| (ResourceBody::Text(json), "application/json".to_owned()))
            }
            QuireResource::Review => {
                let set = r.review_set(review_number(&id)?)?;
                let json = serde_json::to_string_pretty(&set).map_err(|e| quire_core::Error::Invalid(e.to_string()))?;
                Ok((ResourceBody::Text(json), "application/json".to_owned()))
            }
        })
    })
    .await
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    match read {
        Ok((body, mime_type)) => {
            let mut contents = resource_contents(body, &uri, &mime_type);
            // A staged client reading its pending version is told so, as its tool results are.
            if let Some(report) = staged.staging_report().filter(|r| !r.shown.is_empty())
                && let ResourceContents::TextResourceContents { meta, .. } = &mut contents
            {
                let reviews: Vec<String> = report.shown.iter().map(|id| format!("{REVIEW_URI}{id}")).collect();
                *meta =
                    serde_json::from_value(json!({"quire/review": {"status": "shows_pending", "reviews": reviews}}))
                        .ok();
            }
            Ok(ReadResourceResult::new(vec![contents]).into())
        }
        Err(quire_core::Error::NotFound(_)) => Err(not_found()),
        Err(quire_core::Error::ProtectedContent) => Err(ErrorData::invalid_params(
            format!("{uri} is protected; its content cannot be read."),
            None,
        )),
        Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
    }
}

/// A saved view as JSON: the note, and each of its queries with its rows (at most [`VIEW_ROWS`] each).
fn view_json(r: &quire_core::Reader<'_>, id: &str) -> quire_core::Result<String> {
    let note = r.note_summary(id)?;
    let runs = r.run_view(id, &quire_core::query::QueryOptions::default())?;
    let mut views = Vec::with_capacity(runs.len());
    for run in runs {
        let mut value = serde_json::to_value(&run).map_err(|e| quire_core::Error::Invalid(e.to_string()))?;
        if let Some(rows) = value.pointer_mut("/result/rows").and_then(Value::as_array_mut)
            && rows.len() > VIEW_ROWS
        {
            let total = rows.len();
            rows.truncate(VIEW_ROWS);
            value["result"]["rows_total"] = json!(total);
        }
        views.push(value);
    }
    Ok(json!({
        "note_id": note.id,
        "title": note.title,
        "uri": format!("{NOTE_URI}{}", note.id),
        "views": views,
    })
    .to_string())
}

/// A review set's number in a URI.
fn review_number(id: &str) -> quire_core::Result<i64> {
    id.parse()
        .map_err(|_| quire_core::Error::NotFound(quire_core::Missing::ReviewSet))
}

/// A notebook as JSON: its path, sub-notebooks and notes.
fn notebook_listing(r: &quire_core::Reader<'_>, id: &str) -> quire_core::Result<String> {
    let notebook = r.notebook(id)?;
    let path = r.notebook_path_text(id)?;
    let children: Vec<Value> = r
        .notebooks()?
        .into_iter()
        .filter(|b| b.parent_id.as_deref() == Some(id))
        .map(|b| json!({"id": b.id, "title": b.title, "uri": format!("{NOTEBOOK_URI}{}", b.id)}))
        .collect();
    let notes = r.notes_in_notebook(id, Page { offset: 0, limit: 1000 })?;
    let note_list: Vec<Value> = notes
        .items
        .iter()
        .map(|n| json!({"id": n.id, "title": n.title, "uri": format!("{NOTE_URI}{}", n.id), "protected": n.is_protected}))
        .collect();
    Ok(json!({
        "id": notebook.id,
        "title": notebook.title,
        "path": path,
        "protected": notebook.effectively_protected,
        "notebooks": children,
        "notes": note_list,
        "notes_total": notes.total,
    })
    .to_string())
}
