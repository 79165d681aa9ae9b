//! Stored chats: rows of their own, outside the change log.

use rusqlite::params;

use crate::entity::{Actor, Chat, ChatMessage, TurnUsage};
use crate::error::{Error, Missing, Result};
use crate::guard;

use super::Writer;

impl<'a> Writer<'a> {
    //
    // A chat is the record of a conversation, not workspace content: its rows never enter the change log (so no
    // tool reports them as changes and no undo touches them), and messages are appended as rows of their own.

    /// Starts a stored chat.
    pub fn create_chat(&mut self, title: &str, note_id: Option<&str>) -> Result<Chat> {
        self.require_chat_writer()?;
        let title = guard::title("Chat", title)?;
        let id = self.new_id()?;
        self.conn.execute(
            "INSERT INTO chats (id, title, note_id, created, updated) VALUES (?1, ?2, ?3, ?4, ?4)",
            params![id, title, note_id, self.now.as_millis()],
        )?;
        self.chat(&id)
    }

    /// Marks a stored chat as continued now; `NotFound` when there is none.
    fn touch_chat(&mut self, id: &str) -> Result<()> {
        let updated = self.conn.execute(
            "UPDATE chats SET updated = ?2 WHERE id = ?1",
            params![id, self.now.as_millis()],
        )?;
        if updated == 0 {
            return Err(Error::NotFound(Missing::Chat));
        }
        Ok(())
    }

    /// Appends messages to a stored chat; returns how many it holds now.
    pub fn append_chat_messages(&mut self, id: &str, messages: &[ChatMessage]) -> Result<u64> {
        self.require_chat_writer()?;
        self.touch_chat(id)?;
        let mut next: i64 = self.conn.query_row(
            "SELECT coalesce(max(seq) + 1, 0) FROM chat_messages WHERE chat_id = ?1",
            [id],
            |r| r.get(0),
        )?;
        let mut insert = self
            .conn
            .prepare_cached("INSERT INTO chat_messages (chat_id, seq, role, content) VALUES (?1, ?2, ?3, ?4)")?;
        for message in messages {
            insert.execute(params![id, next, message.role, message.content.to_string()])?;
            next += 1;
        }
        Ok(u64::try_from(next).unwrap_or(0))
    }

    /// Records the tokens a turn of a stored chat used. Every turn that reached the model is recorded, also one
    /// that stopped early (its tokens were spent), so the chat's totals ([`crate::Reader::chat_usage`]) are what
    /// its provider counted.
    pub fn record_chat_usage(&mut self, id: &str, usage: &TurnUsage) -> Result<()> {
        self.require_chat_writer()?;
        self.touch_chat(id)?;
        let cost = usage.cost.filter(|c| c.is_finite());
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.conn.execute(
            "INSERT INTO chat_usage (chat_id, turn, model, input_tokens, cached_input_tokens, cache_write_tokens, \
             output_tokens, cost) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                usage.turn,
                usage.model,
                count(usage.input_tokens),
                count(usage.cached_input_tokens),
                count(usage.cache_write_tokens),
                count(usage.output_tokens),
                cost
            ],
        )?;
        Ok(())
    }

    /// Deletes a stored chat with its messages and usage. Only the user deletes chats.
    pub fn delete_chat(&mut self, id: &str) -> Result<()> {
        self.require_user("delete chats")?;
        self.conn
            .execute("DELETE FROM chat_messages WHERE chat_id = ?1", [id])?;
        self.conn.execute("DELETE FROM chat_usage WHERE chat_id = ?1", [id])?;
        if self.conn.execute("DELETE FROM chats WHERE id = ?1", [id])? == 0 {
            return Err(Error::NotFound(Missing::Chat));
        }
        Ok(())
    }

    /// Chats are written by the user and by the agent whose conversation they record; tools of MCP clients and
    /// plugins have no business in them.
    fn require_chat_writer(&self) -> Result<()> {
        match self.actor {
            Actor::User | Actor::Agent { .. } => Ok(()),
            _ => Err(Error::UserOnly("write chats")),
        }
    }
}
