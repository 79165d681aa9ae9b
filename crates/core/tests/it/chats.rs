//! A chat's usage: each turn's tokens as the provider counted them, recorded with the chat, summed back after the
//! workspace is opened again, written only by the user and the agent, and deleted with the chat.

use quire_core::{Actor, ChatUsage, TurnUsage, Workspace};

use crate::fixture::{agent, mcp};

fn turn(turn: u32, input: u64, cached: u64, output: u64, cost: Option<f64>) -> TurnUsage {
    TurnUsage {
        turn,
        model: "openai-compatible:test".into(),
        input_tokens: input,
        cached_input_tokens: cached,
        cache_write_tokens: 0,
        output_tokens: output,
        cost,
    }
}

#[test]
fn a_chats_usage_is_recorded_per_turn_and_summed_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.quire");
    let chat = {
        let ws = Workspace::open(&path).unwrap();
        let chat = ws.write(&agent(), |w| w.create_chat("Costs", None)).unwrap();
        assert_eq!(
            ws.read(&Actor::User, |r| r.chat_usage(&chat.id)).unwrap(),
            ChatUsage::default(),
            "a chat no turn of which reached the model used nothing"
        );
        ws.write(&agent(), |w| {
            w.record_chat_usage(&chat.id, &turn(1, 1_200, 1_000, 40, Some(0.002)))?;
            w.record_chat_usage(&chat.id, &turn(2, 800, 0, 60, None))
        })
        .unwrap();
        let refused = ws
            .write(&mcp(), |w| w.record_chat_usage(&chat.id, &turn(3, 1, 0, 1, None)))
            .unwrap_err();
        assert_eq!(refused.to_string(), "Only the user can write chats");
        let missing = ws
            .write(&agent(), |w| w.record_chat_usage("nope", &turn(1, 1, 0, 1, None)))
            .unwrap_err();
        assert_eq!(missing.to_string(), "Chat not found");
        chat
    };
    let ws = Workspace::open(&path).unwrap();
    let totals = ws.read(&Actor::User, |r| r.chat_usage(&chat.id)).unwrap();
    assert_eq!(
        totals,
        ChatUsage {
            turns: 2,
            input_tokens: 2_000,
            cached_input_tokens: 1_000,
            cache_write_tokens: 0,
            output_tokens: 100,
            cost: Some(0.002),
            priced_turns: 1,
        }
    );
    let turns = ws.read(&Actor::User, |r| r.chat_turn_usage(&chat.id)).unwrap();
    assert_eq!(
        turns,
        [turn(1, 1_200, 1_000, 40, Some(0.002)), turn(2, 800, 0, 60, None)]
    );
    ws.write(&Actor::User, |w| w.delete_chat(&chat.id)).unwrap();
    assert_eq!(
        ws.read(&Actor::User, |r| r.chat_usage(&chat.id))
            .unwrap_err()
            .to_string(),
        "Chat not found"
    );
}
