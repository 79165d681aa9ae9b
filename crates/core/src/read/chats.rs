//! Reading chats.

use rusqlite::{OptionalExtension, Row, params};

use super::{Page, PageOf, Reader};
use crate::entity::{Chat, ChatMessage, Timestamp};
use crate::error::{Error, Missing, Result};

impl Reader<'_> {
    /// One stored chat.
    pub fn chat(&self, id: &str) -> Result<Chat> {
        let mut chat = self
            .conn
            .query_row(
                "SELECT id, title, note_id, created, updated FROM chats WHERE id = ?1",
                [id],
                chat_from_row,
            )
            .optional()?
            .ok_or(Error::NotFound(Missing::Chat))?;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT role, content FROM chat_messages WHERE chat_id = ?1 ORDER BY seq")?;
        let rows = stmt.query_map([id], |r| {
            let content: String = r.get(1)?;
            Ok(ChatMessage {
                role: r.get(0)?,
                content: serde_json::from_str(&content).unwrap_or(serde_json::Value::Null),
            })
        })?;
        chat.messages = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(chat)
    }

    /// The stored chats, most recently updated first, without their messages (read one with [`Reader::chat`]).
    pub fn chats(&self, page: Page) -> Result<PageOf<Chat>> {
        let total: i64 = self.conn.query_row("SELECT count(*) FROM chats", [], |r| r.get(0))?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, title, note_id, created, updated FROM chats ORDER BY updated DESC, id LIMIT ?1 OFFSET ?2",
        )?;
        let rows = stmt.query_map(params![page.sql_limit(), page.sql_offset()], chat_from_row)?;
        let items = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(PageOf::new(items, u64::try_from(total).unwrap_or(0), page))
    }
}

fn chat_from_row(r: &Row<'_>) -> rusqlite::Result<Chat> {
    Ok(Chat {
        id: r.get(0)?,
        title: r.get(1)?,
        note_id: r.get(2)?,
        messages: Vec::new(),
        created: Timestamp(r.get(3)?),
        updated: Timestamp(r.get(4)?),
    })
}
