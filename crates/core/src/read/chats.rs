//! Reading chats: their messages, and the tokens their turns used.

use rusqlite::{OptionalExtension, Row, params};

use super::{Page, PageOf, Reader};
use crate::entity::{Chat, ChatMessage, ChatUsage, Timestamp, TurnUsage};
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

    /// The usage of each turn of a stored chat that reached the model, oldest first. A chat that does not exist is
    /// not found.
    pub fn chat_turn_usage(&self, id: &str) -> Result<Vec<TurnUsage>> {
        self.require_chat(id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT turn, model, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, cost \
             FROM chat_usage WHERE chat_id = ?1 ORDER BY turn, rowid",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(TurnUsage {
                turn: r.get(0)?,
                model: r.get(1)?,
                input_tokens: count(r, 2)?,
                cached_input_tokens: count(r, 3)?,
                cache_write_tokens: count(r, 4)?,
                output_tokens: count(r, 5)?,
                cost: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// A stored chat's usage summed over its turns (all zero for a chat no turn of which reached the model). A chat
    /// that does not exist is not found.
    pub fn chat_usage(&self, id: &str) -> Result<ChatUsage> {
        self.require_chat(id)?;
        let usage = self.conn.query_row(
            "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(cached_input_tokens), 0), \
             coalesce(sum(cache_write_tokens), 0), coalesce(sum(output_tokens), 0), sum(cost), count(cost) \
             FROM chat_usage WHERE chat_id = ?1",
            [id],
            |r| {
                Ok(ChatUsage {
                    turns: count(r, 0)?,
                    input_tokens: count(r, 1)?,
                    cached_input_tokens: count(r, 2)?,
                    cache_write_tokens: count(r, 3)?,
                    output_tokens: count(r, 4)?,
                    cost: r.get(5)?,
                    priced_turns: count(r, 6)?,
                })
            },
        )?;
        Ok(usage)
    }

    fn require_chat(&self, id: &str) -> Result<()> {
        self.conn
            .query_row("SELECT 1 FROM chats WHERE id = ?1", [id], |_| Ok(()))
            .optional()?
            .ok_or(Error::NotFound(Missing::Chat))
    }

    /// A stored chat's title, without reading its messages; `None` when there is no such chat (deleted since).
    pub fn chat_title(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT title FROM chats WHERE id = ?1", [id], |r| r.get(0))
            .optional()?)
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

/// A count stored as SQLite's integer (never negative as written).
fn count(r: &Row<'_>, at: usize) -> rusqlite::Result<u64> {
    Ok(u64::try_from(r.get::<_, i64>(at)?).unwrap_or(0))
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
