//! Search (by words with `search_notes`, by meaning with `semantic_search_notes`) and the tag list.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, RawQuery, State};
use axum::http::Uri;
use quire_tools::builtin::{ListTags, SearchNotes, SemanticSearchNotes};
use quire_tools::notes::{search_notes, semantic_search_notes};
use quire_tools::tags::list_tags;

use super::read_tool;
use crate::WebApp;
use crate::error::ApiError;

/// `GET /api/search?query=...`: the query string is `search_notes`'s arguments, or with `semantic=true`
/// `semantic_search_notes`'s (which first catches the index up by core's rule, as for every caller); both answer a
/// page of results in the same shape.
pub(super) async fn search(
    State(app): State<Arc<WebApp>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<search_notes::Output>, ApiError> {
    // `semantic` chooses the tool; the rest, still encoded as sent, are the tool's arguments.
    let (flags, rest): (Vec<&str>, Vec<&str>) = raw
        .as_deref()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
        .partition(|pair| pair.split('=').next() == Some("semantic"));
    let semantic = flags.contains(&"semantic=true");
    let arguments: Uri = format!("/?{}", rest.join("&"))
        .parse()
        .map_err(|_| ApiError::invalid("The query string could not be read."))?;
    let output = if semantic {
        let Query(input) = Query::<semantic_search_notes::Input>::try_from_uri(&arguments)?;
        read_tool::<SemanticSearchNotes>(&app, input).await?
    } else {
        let Query(input) = Query::<search_notes::Input>::try_from_uri(&arguments)?;
        read_tool::<SearchNotes>(&app, input).await?
    };
    Ok(Json(output))
}

/// `GET /api/tags`: the first hundred tags by name.
pub(super) async fn tags(State(app): State<Arc<WebApp>>) -> Result<Json<list_tags::Output>, ApiError> {
    let input = list_tags::Input {
        limit: Some(100),
        offset: None,
    };
    Ok(Json(read_tool::<ListTags>(&app, input).await?))
}
