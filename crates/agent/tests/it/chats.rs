//! `Chat`: creating, titling, storing and resuming a conversation, its turn numbers, a stopped turn, accepting a
//! turn's edits, and a refused destructive call as the transcript records it.

use std::future::Future;
use std::pin::Pin;

use quire_agent::{
    ApprovalRequest, Approver, AutoApprove, Chat, Message, NoteContext, Refusal, TranscriptEntry, TurnOptions,
};
use quire_core::Actor;
use serde_json::json;

use crate::scripted::{Fixture, Scripted, Step, call};

/// The stored chat's title and note.
fn stored(fx: &Fixture, id: &str) -> (String, Option<String>) {
    let chat = fx.ws.read(&Actor::User, |r| r.chat(id)).unwrap();
    (chat.title, chat.note_id)
}

#[tokio::test]
async fn a_chat_is_titled_stored_and_resumed_turn_after_turn() {
    let fx = Fixture::new();
    let focus = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n");
    let mut chat = Chat::create(&fx.ws, focus, "Pack for the trip\nand more").unwrap();
    assert_eq!(
        stored(&fx, chat.id()),
        ("Pack for the trip".to_owned(), Some(fx.plain.clone())),
        "titled after the first line, about the focused note"
    );
    assert_eq!(chat.next_turn(), 1);
    let model = Scripted::new(vec![Step::Text("Socks?")]);
    let approver = AutoApprove(false);
    let first = chat
        .send(
            "Pack for the trip\nand more",
            TurnOptions::new(&model, &fx.registry, &approver),
        )
        .await;
    assert!(first.error.is_none(), "{:?}", first.error);
    assert_eq!(
        first.actor,
        Actor::Agent {
            chat: chat.id().to_owned(),
            turn: 1
        }
    );
    assert_eq!(chat.history().len(), 2, "the user's message and the reply");

    // Opened again (another window, a later `quire chat --chat`): the same history, the next turn number.
    let mut resumed = Chat::open(&fx.ws, chat.id()).unwrap();
    assert_eq!(resumed.history(), chat.history());
    assert_eq!(resumed.next_turn(), 2);
    assert_eq!(
        resumed.focused(),
        &NoteContext::none(),
        "an opened chat focuses nothing by itself"
    );
    let model = Scripted::new(vec![Step::Text("You asked about packing.")]);
    let second = resumed
        .send("What did I ask?", TurnOptions::new(&model, &fx.registry, &approver))
        .await;
    let sent = &model.requests.lock().unwrap()[0].messages;
    assert_eq!(sent.len(), 3, "the stored history, then the new message: {sent:?}");
    assert!(
        matches!(second.actor, Actor::Agent { turn: 2, .. }),
        "{:?}",
        second.actor
    );
    assert_eq!(Chat::open(&fx.ws, chat.id()).unwrap().history().len(), 4);
}

#[test]
fn a_blank_first_message_titles_the_chat_chat_and_a_missing_chat_is_not_found() {
    let fx = Fixture::new();
    let chat = Chat::create(&fx.ws, NoteContext::none(), "  \nsecond line").unwrap();
    assert_eq!(stored(&fx, chat.id()), ("Chat".to_owned(), None));
    let missing = Chat::open(&fx.ws, "nope").unwrap_err();
    assert!(
        matches!(missing, quire_agent::Error::Workspace(quire_core::Error::NotFound(_))),
        "{missing:?}"
    );
}

#[tokio::test]
async fn a_turn_that_stopped_early_is_stored_with_why() {
    let fx = Fixture::new();
    let mut chat = Chat::create(&fx.ws, NoteContext::none(), "tags?").unwrap();
    let model = Scripted::new(vec![Step::Calls(vec![call("list_tags", json!({}))]), Step::Fail(529)]);
    let approver = AutoApprove(false);
    let turn = chat
        .send("tags?", TurnOptions::new(&model, &fx.registry, &approver))
        .await;
    let error = turn.error.expect("the model failed");
    assert_eq!(error.to_string(), "scripted returned HTTP 529: overloaded");
    let history = Chat::open(&fx.ws, chat.id()).unwrap().history().to_vec();
    assert_eq!(history.len(), 3, "the message, the call and its result: {history:?}");
    assert!(matches!(&history[0], Message::User { content } if content == "tags?"));
}

#[tokio::test]
async fn accepting_a_turns_edits_saves_them_in_its_change_set_and_moves_the_focus_on() {
    let fx = Fixture::new();
    let focus = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n").with_selection(2, 7);
    let mut chat = Chat::create(&fx.ws, focus, "boots").unwrap();
    let model = Scripted::new(vec![
        Step::Calls(vec![call("edit_selection", json!({"text": "boots"}))]),
        Step::Text("Boots it is."),
    ]);
    let approver = AutoApprove(false);
    let turn = chat
        .send("boots", TurnOptions::new(&model, &fx.registry, &approver))
        .await;
    let diff = turn.diff().unwrap().expect("an edit was proposed");
    assert!(diff.contains("-- shoes") && diff.contains("+- boots"), "{diff}");
    let accepted = chat.accept(&turn).unwrap();
    assert_eq!(accepted.body, "- boots\n- tent\n");
    let open = fx
        .ws
        .read(&Actor::User, |r| r.open_change_set_of(&turn.actor))
        .unwrap()
        .unwrap();
    assert_eq!(
        accepted.change_set_id,
        Some(open.id),
        "recorded in the turn's change set"
    );
    let focused = chat.focused().note.as_ref().unwrap();
    assert_eq!(
        (focused.body.as_str(), focused.selection),
        ("- boots\n- tent\n", None),
        "the next turn works on what was saved"
    );

    // A turn without a focused note has no diff, and nothing to accept.
    let mut unfocused = Chat::create(&fx.ws, NoteContext::none(), "hi").unwrap();
    let model = Scripted::new(vec![Step::Text("Hello.")]);
    let turn = unfocused
        .send("hi", TurnOptions::new(&model, &fx.registry, &approver))
        .await;
    assert_eq!(turn.diff().unwrap(), None);
    assert!(unfocused.accept(&turn).is_err());
}

/// Asks "the user", who says no.
struct Declines;

impl Approver for Declines {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        Box::pin(std::future::ready(false))
    }
}

#[tokio::test]
async fn a_refused_destructive_call_says_why_in_the_transcript() {
    for (approver, expected, told) in [
        (
            &AutoApprove(false) as &dyn Approver,
            Refusal::NeedsApproval,
            "delete_note needs the user's approval",
        ),
        (&Declines, Refusal::Declined, "The user declined to run delete_note."),
    ] {
        let fx = Fixture::new();
        let mut chat = Chat::create(&fx.ws, NoteContext::none(), "delete it").unwrap();
        let model = Scripted::new(vec![
            Step::Calls(vec![
                call("delete_note", json!({"note_id": fx.plain})),
                call("list_tags", json!({})),
            ]),
            Step::Text("I did not delete it."),
        ]);
        let turn = chat
            .send("delete it", TurnOptions::new(&model, &fx.registry, approver))
            .await;
        let refusals: Vec<(Option<Refusal>, String)> = turn
            .outcome
            .transcript
            .iter()
            .filter_map(|e| match e {
                TranscriptEntry::ToolCall { refused, output, .. } => {
                    Some((*refused, output["error"].as_str().unwrap_or("").to_owned()))
                }
                TranscriptEntry::ModelText { .. } => None,
            })
            .collect();
        assert_eq!(refusals.len(), 2);
        assert_eq!(refusals[0].0, Some(expected));
        assert!(refusals[0].1.starts_with(told), "{}", refusals[0].1);
        assert_eq!(refusals[1].0, None, "a call that ran was not refused");
    }
}
