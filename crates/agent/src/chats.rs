//! Conversations kept in the workspace through quire-core's chat storage, so a chat can be resumed.

use quire_core::{Actor, ChatMessage, Workspace};

use crate::model::Message;

/// The messages of a stored chat, oldest first. Messages this version cannot read are skipped.
pub fn load_history(workspace: &Workspace, chat_id: &str) -> Result<Vec<Message>, quire_core::Error> {
    let chat = workspace.read(&Actor::User, |r| r.chat(chat_id))?;
    Ok(chat
        .messages
        .into_iter()
        .filter_map(|m| serde_json::from_value(m.content).ok())
        .collect())
}

/// The turn number the next message of a chat gets: one more than the user messages so far.
pub fn next_turn(history: &[Message]) -> u32 {
    let users = history.iter().filter(|m| matches!(m, Message::User { .. })).count();
    u32::try_from(users + 1).unwrap_or(u32::MAX)
}

/// Appends a turn's messages to a chat, creating the chat (titled after the first message) when `chat_id` is
/// `None`. Returns the chat's id.
pub fn save_turn(
    workspace: &Workspace,
    chat_id: Option<&str>,
    note_id: Option<&str>,
    messages: &[Message],
) -> Result<String, quire_core::Error> {
    let stored: Vec<ChatMessage> = messages
        .iter()
        .map(|m| ChatMessage {
            role: match m {
                Message::User { .. } => "user",
                Message::Assistant { .. } => "assistant",
                Message::Tool { .. } => "tool",
            }
            .to_owned(),
            content: serde_json::to_value(m).unwrap_or_default(),
        })
        .collect();
    // Chats are not workspace content (they never enter the change log); they are written as the agent, not the user.
    workspace.write(&crate::turn::reading_agent(), |w| {
        let id = match chat_id {
            Some(id) => id.to_owned(),
            None => {
                let first = messages.iter().find_map(|m| match m {
                    Message::User { content } => Some(content.as_str()),
                    _ => None,
                });
                w.create_chat(&chat_title(first.unwrap_or("")), note_id)?.id
            }
        };
        w.append_chat_messages(&id, &stored)?;
        Ok(id)
    })
}

/// Starts an empty chat about `note_id`, titled after the message that opens it (a UI that streams the first turn
/// needs the chat's id before the turn's messages exist).
pub fn start_chat(
    workspace: &Workspace,
    note_id: Option<&str>,
    first_message: &str,
) -> Result<String, quire_core::Error> {
    workspace.write(&crate::turn::reading_agent(), |w| {
        Ok(w.create_chat(&chat_title(first_message), note_id)?.id)
    })
}

/// The first line of the opening message, at most 80 characters; "Chat" when it is blank.
fn chat_title(first_message: &str) -> String {
    let title: String = first_message.lines().next().unwrap_or("").chars().take(80).collect();
    if title.trim().is_empty() {
        "Chat".to_owned()
    } else {
        title
    }
}
