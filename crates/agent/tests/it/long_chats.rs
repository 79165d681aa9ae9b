//! A long chat stays small: past the history budget the model is sent a summary of the earlier turns (which it
//! wrote, kept with the chat) and the last turns whole, so no request of a 40-turn chat grows without bound.

use std::sync::Mutex;

use quire_agent::{
    AutoApprove, Chat, ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, NoteContext, StopReason, TextSink,
    TurnOptions, Usage,
};

use crate::scripted::Fixture;

/// A model that answers at length, and writes a summary when asked for one (a request without tools).
#[derive(Default)]
struct Talker {
    requests: Mutex<Vec<ChatRequest>>,
}

impl ChatModel for Talker {
    fn chat<'a>(&'a self, request: &'a ChatRequest, _on_text: TextSink<'a>) -> ChatFuture<'a> {
        self.requests.lock().unwrap().push(request.clone());
        let summary = request.tools.is_empty();
        Box::pin(async move {
            let text = if summary {
                "SUMMARY: the user plans a trip; we listed what to pack.".to_owned()
            } else {
                "Here is a long and careful answer about packing for the trip. ".repeat(40)
            };
            Ok(ChatResponse {
                text,
                tool_calls: Vec::new(),
                stop: StopReason::EndTurn,
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 50,
                    ..Usage::default()
                },
            })
        })
    }

    fn name(&self) -> String {
        "talker".into()
    }
}

fn tokens(request: &ChatRequest) -> usize {
    quire_tools::estimate_tokens(&request.system)
        + quire_tools::estimate_tokens(&serde_json::to_string(&request.messages).unwrap())
}

#[tokio::test]
async fn a_forty_turn_chat_sends_a_summary_and_the_last_turns() {
    let fx = Fixture::new();
    let focus = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n");
    let mut chat = Chat::create(&fx.ws, focus, "Turn 0").unwrap();
    let model = Talker::default();
    let approver = AutoApprove(false);
    let mut summarised_at = None;
    for turn in 0..40 {
        let done = chat
            .send(
                &format!("Turn {turn}: what else should I pack?"),
                TurnOptions::new(&model, &fx.registry, &approver),
            )
            .await;
        assert!(done.error.is_none(), "{:?}", done.error);
        if done.summarised.is_some() && summarised_at.is_none() {
            summarised_at = Some(turn);
        }
    }
    let requests = model.requests.lock().unwrap();
    let largest = requests.iter().map(tokens).max().unwrap();
    // Without summaries the last request would carry 40 long answers (some 20,000 tokens).
    assert!(
        largest < 9_000,
        "the largest request (tools aside) takes {largest} tokens"
    );
    assert!(summarised_at.is_some_and(|t| t > 3), "summarised at {summarised_at:?}");
    let last = serde_json::to_string(&requests.last().unwrap().messages).unwrap();
    assert!(
        last.contains("SUMMARY: the user plans a trip") && last.contains("summarised"),
        "{}",
        &last[..300]
    );
    assert!(
        !last.contains("Turn 0:"),
        "the first turn is in the summary, not sent again"
    );
    assert!(last.contains("Turn 39:"));
    drop(requests);

    // Kept with the chat, the history whole beside it; dropped, the next turn sends the chat anew.
    let mut resumed = Chat::open(&fx.ws, chat.id()).unwrap();
    assert_eq!(resumed.history().len(), 80, "every message is kept");
    let summary = resumed.summary().cloned().expect("a summary is kept with the chat");
    assert!(summary.covers > 0 && summary.covers < 80);
    assert_eq!(resumed.next_turn(), 41);
    resumed.drop_summary().unwrap();
    assert!(resumed.summary().is_none());
    assert!(Chat::open(&fx.ws, chat.id()).unwrap().summary().is_none());
    assert!(
        resumed
            .history()
            .iter()
            .all(|m| !matches!(m, Message::Assistant { content, .. } if content.starts_with("SUMMARY"))),
        "the summary is not a message of the history"
    );
}
