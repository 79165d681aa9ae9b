//! A long chat kept small: every request carries the chat so far, so past a budget the history the model is sent
//! is compacted. The tool results of older turns are shortened (the model can call a tool again); when that is not
//! enough, the older turns are replaced by a summary the model writes of them, kept in the chat (a stored message of
//! its own) and shown to the person as such; they can read it and drop it.

use quire_core::{ChatMessage, Workspace};

use crate::model::{ChatModel, ChatRequest, Message, Usage};

/// The most tokens the history sent with a request should take before older turns are summarised.
pub const HISTORY_TOKENS: usize = 6_000;

/// The turns at the end of a chat that are always sent whole.
pub(crate) const RECENT_TURNS: usize = 2;

/// A tool result of an older turn longer than this many characters is shortened.
const OLD_RESULT_CHARS: usize = 600;

/// What a summary replaces: the first `covers` messages of the chat.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Summary {
    /// The summary, as the model wrote it.
    pub text: String,
    /// How many of the chat's messages (from the first) it stands for.
    pub covers: usize,
}

/// Tokens a history is likely to take in a request.
pub(crate) fn estimate(history: &[Message]) -> usize {
    serde_json::to_string(history).map_or(0, |s| quire_tools::estimate_tokens(&s))
}

/// Where the last `turns` turns start (the index of their first user message), or 0.
pub(crate) fn recent_start(history: &[Message], turns: usize) -> usize {
    history
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::User { .. }))
        .map(|(i, _)| i)
        .rev()
        .nth(turns.saturating_sub(1))
        .unwrap_or(0)
}

/// The history as sent: the summary (when there is one) in place of what it covers, then the rest, with the tool
/// results of all but the last [`RECENT_TURNS`] turns shortened.
pub(crate) fn sent_history(history: &[Message], summary: Option<&Summary>) -> Vec<Message> {
    let mut out = Vec::new();
    let from = match summary {
        Some(s) if s.covers > 0 && s.covers <= history.len() => {
            out.extend(summary_messages(&s.text));
            s.covers
        }
        _ => 0,
    };
    let rest = &history[from..];
    let recent = recent_start(rest, RECENT_TURNS);
    for (i, message) in rest.iter().enumerate() {
        match message {
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
            } if i < recent && content.chars().count() > OLD_RESULT_CHARS => {
                let kept: String = content.chars().take(OLD_RESULT_CHARS / 2).collect();
                out.push(Message::Tool {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    content: format!(
                        "{kept}… [an older result, shortened from {} characters: call {name} again for all of it]",
                        content.chars().count()
                    ),
                    is_error: *is_error,
                });
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// The two messages a summary is sent as: the person's question, the model's summary (it wrote it).
pub(crate) fn summary_messages(text: &str) -> [Message; 2] {
    [
        Message::User {
            content: "(The earlier part of this chat, summarised.)".to_owned(),
        },
        Message::Assistant {
            content: text.to_owned(),
            tool_calls: Vec::new(),
        },
    ]
}

/// The request that asks the model to summarise `older` (the messages to replace, after any earlier summary).
pub(crate) fn summary_request(older: &[Message], earlier: Option<&Summary>, max_tokens: u32) -> ChatRequest {
    let mut messages = Vec::new();
    if let Some(earlier) = earlier {
        messages.extend(summary_messages(&earlier.text));
    }
    // Tool results as text the summary can draw on, shortened; calls kept as what was asked.
    messages.extend(sent_history(older, None));
    messages.push(Message::User {
        content: "Summarise our conversation so far for your own later use, in at most 250 words: what I asked and \
                  decided, what you found in my notes (titles and ids), what you changed or proposed, and what is \
                  still open. Write only the summary."
            .to_owned(),
    });
    ChatRequest {
        system: "You are the assistant in quire, a notes app. You write a summary of a chat with the user that will \
                 stand in for its earlier turns."
            .to_owned(),
        messages,
        tools: Vec::new(),
        max_tokens,
    }
}

/// The history to send with a turn: [`sent_history`], and when that is over [`HISTORY_TOKENS`], the turns before the
/// last [`RECENT_TURNS`] summarised by the model first. Returns the history, the new summary to keep (if one was
/// written) and the tokens writing it took. A summary that cannot be written leaves the history as it was: the turn
/// goes on, larger.
pub(crate) async fn prepare(
    model: &dyn ChatModel,
    history: &[Message],
    summary: Option<&Summary>,
    max_tokens: u32,
) -> (Vec<Message>, Option<Summary>, Usage) {
    let sent = sent_history(history, summary);
    let covered = summary.map_or(0, |s| s.covers);
    let split = recent_start(history, RECENT_TURNS);
    if estimate(&sent) <= HISTORY_TOKENS || split <= covered {
        return (sent, None, Usage::default());
    }
    let request = summary_request(&history[covered..split], summary, max_tokens.min(1_000));
    match model.chat(&request, &|_| {}).await {
        Ok(response) if !response.text.trim().is_empty() => {
            let new = Summary {
                text: response.text.trim().to_owned(),
                covers: split,
            };
            (sent_history(history, Some(&new)), Some(new), response.usage)
        }
        Ok(response) => (sent, None, response.usage),
        Err(_) => (sent, None, Usage::default()),
    }
}

/// The chat's summary in force: the last one stored, unless it was dropped since.
pub(crate) fn load_summary(workspace: &Workspace, chat_id: &str) -> Result<Option<Summary>, quire_core::Error> {
    let chat = workspace.read(&crate::context::reading_agent(), |r| r.chat(chat_id))?;
    Ok(chat
        .messages
        .iter()
        .rev()
        .find(|m| m.role == SUMMARY_ROLE)
        .and_then(|m| serde_json::from_value::<Summary>(m.content.clone()).ok())
        .filter(|s| s.covers > 0))
}

/// Keeps `summary` with the chat (a message of its own, which the history leaves out); a summary that covers
/// nothing drops the one before.
pub(crate) fn store_summary(workspace: &Workspace, chat_id: &str, summary: &Summary) -> Result<(), quire_core::Error> {
    let message = ChatMessage {
        role: SUMMARY_ROLE.to_owned(),
        content: serde_json::to_value(summary).unwrap_or_default(),
    };
    workspace.write(&crate::context::reading_agent(), |w| {
        w.append_chat_messages(chat_id, &[message]).map(drop)
    })
}

/// The summary standing for a stored chat's earlier turns, if it has one (what [`crate::Chat::summary`] says).
pub fn chat_summary(workspace: &Workspace, chat_id: &str) -> Result<Option<Summary>, quire_core::Error> {
    load_summary(workspace, chat_id)
}

/// Drops a stored chat's summary (what [`crate::Chat::drop_summary`] does): its next turn sends the whole chat.
pub fn drop_chat_summary(workspace: &Workspace, chat_id: &str) -> Result<(), quire_core::Error> {
    if load_summary(workspace, chat_id)?.is_some() {
        store_summary(
            workspace,
            chat_id,
            &Summary {
                text: String::new(),
                covers: 0,
            },
        )?;
    }
    Ok(())
}

/// The role a summary is stored under.
pub(crate) const SUMMARY_ROLE: &str = "summary";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    fn turn(n: usize, result_chars: usize) -> Vec<Message> {
        vec![
            Message::User {
                content: format!("question {n}"),
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("c{n}"),
                    name: "read_note".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::Tool {
                call_id: format!("c{n}"),
                name: "read_note".into(),
                content: "x".repeat(result_chars),
                is_error: false,
            },
            Message::Assistant {
                content: format!("answer {n}"),
                tool_calls: Vec::new(),
            },
        ]
    }

    #[test]
    fn older_tool_results_are_shortened_and_the_last_turns_kept_whole() {
        let history: Vec<Message> = (0..4).flat_map(|n| turn(n, 5_000)).collect();
        let sent = sent_history(&history, None);
        assert_eq!(sent.len(), history.len());
        let lengths: Vec<usize> = sent
            .iter()
            .filter_map(|m| match m {
                Message::Tool { content, .. } => Some(content.chars().count()),
                _ => None,
            })
            .collect();
        assert!(lengths[0] < 500 && lengths[1] < 500, "{lengths:?}");
        assert_eq!(&lengths[2..], [5_000, 5_000]);
        assert!(estimate(&sent) < estimate(&history));
    }

    #[test]
    fn a_summary_stands_for_what_it_covers() {
        let history: Vec<Message> = (0..3).flat_map(|n| turn(n, 10)).collect();
        let summary = Summary {
            text: "We talked.".into(),
            covers: 8,
        };
        let sent = sent_history(&history, Some(&summary));
        assert_eq!(sent.len(), 2 + 4);
        assert_eq!(sent[1], summary_messages("We talked.")[1]);
        assert_eq!(sent[2], history[8]);
        assert_eq!(recent_start(&history, 2), 4);
        let request = summary_request(&history[..8], Some(&summary), 500);
        assert!(request.tools.is_empty());
        assert!(matches!(request.messages.last(), Some(Message::User { content }) if content.contains("Summarise")));
    }
}
