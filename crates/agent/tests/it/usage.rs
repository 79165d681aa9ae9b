//! What a turn cost: the provider's usage (cached tokens apart) reaches the turn's outcome and the stored chat, an
//! estimate at the model's prices, the chat's totals after a reopen, and a turn stopped by its token budget with
//! what it did kept.

use std::time::Duration;

use quire_agent::{
    AutoApprove, Chat, ChatTotals, ClientConfig, Error, NoteContext, OpenAiClient, Prices, TurnOptions, Usage,
};
use quire_test_support::{mock_openai, sse};
use serde_json::json;

use crate::scripted::{Fixture, Scripted, Step, call};

/// A streamed reply whose last chunk reports usage as OpenAI does, cached tokens in `prompt_tokens_details`.
fn reply_with_usage(text: &str, prompt: u64, cached: u64, completion: u64) -> wiremock::ResponseTemplate {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {
            "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}
        }}),
    ])
}

#[tokio::test]
async fn the_providers_usage_reaches_the_turn_and_the_stored_chat_with_its_cost() {
    let fx = Fixture::new();
    let server = mock_openai(vec![
        reply_with_usage("Hello.", 3_000, 0, 100),
        reply_with_usage("Again.", 3_200, 2_900, 50),
    ])
    .await;
    let mut config = ClientConfig::new(format!("{}/v1", server.uri()), "test-model", None);
    config.backoff = Duration::from_millis(5);
    let model = OpenAiClient::new(config).unwrap();
    let approver = AutoApprove(false);
    // Per million tokens: 2 in, 8 out, 0.5 for a cached token.
    let prices = Prices {
        input: 2.0,
        output: 8.0,
        cached_input: Some(0.5),
    };
    let options = || TurnOptions {
        prices: Some(prices),
        ..TurnOptions::new(&model, &fx.registry, &approver)
    };
    let mut chat = Chat::create(&fx.ws, NoteContext::none(), "hi").unwrap();
    let first = chat.send("hi", options()).await;
    assert!(first.error.is_none(), "{:?}", first.error);
    assert_eq!(
        first.outcome.usage,
        Usage {
            input_tokens: 3_000,
            cached_input_tokens: 0,
            cache_write_tokens: 0,
            output_tokens: 100,
        }
    );
    let second = chat.send("again", options()).await;
    assert_eq!(second.outcome.usage.cached_input_tokens, 2_900);
    // 300 fresh tokens at 2, 2,900 cached at 0.5, 50 out at 8, per million.
    let cost = second.cost.unwrap();
    assert!((cost - 0.002_45).abs() < 1e-12, "{cost}");
    let expected = ChatTotals {
        turns: 2,
        usage: Usage {
            input_tokens: 6_200,
            cached_input_tokens: 2_900,
            cache_write_tokens: 0,
            output_tokens: 150,
        },
        cost: Some(first.cost.unwrap() + cost),
        priced_turns: 2,
    };
    assert_eq!(second.totals, expected, "the totals include the turn just run");
    // Opened again (a later `quire chat --chat`, the sidebar): the same totals, from the workspace.
    assert_eq!(Chat::open(&fx.ws, chat.id()).unwrap().totals().unwrap(), expected);

    // A model without prices: its turns count, with no cost, and the chat's cost leaves them out.
    let model = Scripted::new(vec![Step::Text("Free.")]);
    let third = chat
        .send("and now?", TurnOptions::new(&model, &fx.registry, &approver))
        .await;
    assert_eq!(third.cost, None);
    assert_eq!(
        (third.totals.turns, third.totals.priced_turns, third.totals.cost),
        (3, 2, expected.cost)
    );
}

#[tokio::test]
async fn a_turn_past_its_budget_stops_before_the_next_request_and_keeps_its_edits() {
    let fx = Fixture::new();
    let focus = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n");
    let mut chat = Chat::create(&fx.ws, focus, "socks").unwrap();
    // Each call with tool calls uses 15 tokens (10 in, 5 out): over a budget of 20 after the second.
    let model = Scripted::new(vec![
        Step::Calls(vec![call("append_to_note", json!({"text": "- socks"}))]),
        Step::Calls(vec![call("append_to_note", json!({"text": "- hat"}))]),
        Step::Text("never asked"),
    ]);
    let approver = AutoApprove(false);
    let turn = chat
        .send(
            "socks",
            TurnOptions {
                max_turn_tokens: Some(20),
                ..TurnOptions::new(&model, &fx.registry, &approver)
            },
        )
        .await;
    let error = turn.error.as_ref().expect("the budget stopped the turn");
    assert!(matches!(error, Error::TurnBudget { used: 30, budget: 20 }), "{error:?}");
    let said = error.to_string();
    assert!(
        said.contains("30 tokens") && said.contains("budget of 20") && said.contains("max_turn_tokens"),
        "{said}"
    );
    assert_eq!(model.requests.lock().unwrap().len(), 2, "no third request");
    assert_eq!(turn.outcome.edits.len(), 2, "the proposed edits stay proposed");
    let diff = turn.diff().unwrap().unwrap();
    assert!(diff.contains("+- socks") && diff.contains("+- hat"), "{diff}");
    assert_eq!(turn.totals.usage.total(), 30, "its tokens are recorded with the chat");
    assert_eq!(
        Chat::open(&fx.ws, chat.id()).unwrap().history().len(),
        5,
        "the message, two calls and their results are stored"
    );

    // Within the budget, a turn runs to its end.
    let model = Scripted::new(vec![Step::Text("Done.")]);
    let turn = chat
        .send(
            "thanks",
            TurnOptions {
                max_turn_tokens: Some(20),
                ..TurnOptions::new(&model, &fx.registry, &approver)
            },
        )
        .await;
    assert!(turn.error.is_none(), "{:?}", turn.error);
}
