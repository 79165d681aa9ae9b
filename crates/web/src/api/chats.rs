//! Stored chats: the list (all, or about one note) and one chat's messages, with the titles of the tools it called.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use serde::Serialize;

use super::history::NoteQuery;
use super::{blocking, user_read};
use crate::WebApp;
use crate::error::ApiError;

/// Chats, the most recently continued first.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatList {
    /// The chats.
    pub chats: Vec<ChatSummary>,
}

/// A stored chat, without its messages.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatSummary {
    /// Its id, to open or continue it.
    pub chat_id: String,
    /// Its title (the first message, shortened).
    pub title: String,
    /// The note it is about, if any.
    pub note_id: Option<String>,
    /// When it was last continued (RFC 3339).
    pub updated: String,
}

/// A chat's messages as the agent stores them (`role` user, assistant with its tool calls, tool with the result).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChatHistory {
    /// Its id.
    pub chat_id: String,
    /// The messages, oldest first.
    pub messages: Vec<quire_agent::Message>,
    /// The title of each tool it called, by name, so a resumed chat's cards read like the live ones.
    pub tool_titles: BTreeMap<String, String>,
    /// The summary that stands for its earlier turns in requests, when it grew long.
    pub summary: Option<quire_agent::Summary>,
    /// The tokens its turns used and their estimated cost, as stored with it.
    pub usage: quire_agent::ChatTotals,
}

/// `GET /api/chats`: the newest 200, or those about `?note_id=`.
pub(super) async fn chats(
    State(app): State<Arc<WebApp>>,
    query: Result<Query<NoteQuery>, QueryRejection>,
) -> Result<Json<ChatList>, ApiError> {
    let Query(query) = query?;
    let page = user_read(&app, |r| r.chats(quire_core::Page { offset: 0, limit: 200 })).await?;
    let limited = crate::access::limited();
    let mut list: Vec<quire_core::Chat> = page
        .items
        .into_iter()
        .filter(|c| !limited && (query.note_id.is_none() || c.note_id == query.note_id))
        .collect();
    list.sort_by_key(|c| std::cmp::Reverse(c.updated));
    let chats = list
        .into_iter()
        .map(|c| ChatSummary {
            chat_id: c.id,
            title: c.title,
            note_id: c.note_id,
            updated: c.updated.to_rfc3339(),
        })
        .collect();
    Ok(Json(ChatList { chats }))
}

/// `GET /api/chats/{id}`.
pub(super) async fn chat(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<Json<ChatHistory>, ApiError> {
    let chat_id = id.clone();
    let (messages, usage, summary) = blocking(&app, move |ws| {
        Ok::<_, quire_core::Error>((
            quire_agent::load_history(ws, &chat_id)?,
            quire_agent::chat_totals(ws, &chat_id)?,
            quire_agent::chat_summary(ws, &chat_id)?,
        ))
    })
    .await?;
    let mut tool_titles = BTreeMap::new();
    for message in &messages {
        let names: Vec<&str> = match message {
            quire_agent::Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.name.as_str()).collect(),
            quire_agent::Message::Tool { name, .. } => vec![name.as_str()],
            quire_agent::Message::User { .. } => Vec::new(),
        };
        for name in names {
            let title = quire_agent::SessionTool::from_name(name)
                .map(|t| t.title().to_owned())
                .or_else(|| app.tools.get(name).map(|t| t.title));
            if let Some(title) = title {
                tool_titles.insert(name.to_owned(), title);
            }
        }
    }
    Ok(Json(ChatHistory {
        chat_id: id,
        messages,
        summary,
        tool_titles,
        usage,
    }))
}

/// `DELETE /api/chats/{id}/summary`: drops the chat's summary; its next turn sends the whole chat.
pub(super) async fn drop_summary(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<String>,
) -> Result<axum::http::StatusCode, ApiError> {
    blocking(&app, move |ws| quire_agent::drop_chat_summary(ws, &id)).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}
