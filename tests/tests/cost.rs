//! End to end: what `quire chat` says a turn cost. The provider's usage (cached tokens apart) from a local mock of an
//! OpenAI-compatible API reaches the line printed after each turn and `--json`, with an estimate at the prices of
//! config.toml and the chat's totals, which a reopened chat keeps; `[chat] max_turn_tokens` stops a turn; a
//! configuration without prices still loads, and half a price is refused with how to fix it.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

/// Automations (issue 49), run by the same mock model: their runs' tokens and cost are logged too.
#[path = "cost/automations.rs"]
mod automations;

use quire_test_support::{mock_openai, sse};
use quire_tests::Quire;
use serde_json::{Value, json};
use wiremock::{MockServer, ResponseTemplate};

/// A streamed reply, then the usage chunk OpenAI sends with `stream_options.include_usage`.
fn reply(text: &str, prompt: u64, cached: u64, completion: u64) -> ResponseTemplate {
    sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
               "total_tokens": prompt + completion, "prompt_tokens_details": {"cached_tokens": cached}}}),
    ])
}

/// Writes config.toml: `[chat]` holding `chat`, and one `[[chat.models]]` entry, `test`, at the mock server, holding
/// `entry`.
fn configure(q: &Quire, server: &MockServer, chat: &str, entry: &str) {
    let dir = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "[chat]\n{chat}\n\n[[chat.models]]\nname = \"test\"\nmodel = \"openai-compatible:test\"\nbase_url = \
         \"{}/v1\"\n{entry}\n",
        server.uri()
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

/// `quire [--json] chat --model test ARGS`, on a blocking thread so that the mock server keeps answering.
async fn chat(q: &Quire, json: bool, args: &[&str]) -> quire_tests::Run {
    let dir = q.dir().to_path_buf();
    let mut full: Vec<String> = if json { vec!["--json".into()] } else { vec![] };
    full.extend(["chat", "--model", "test"].map(String::from));
    full.extend(args.iter().map(|a| a.to_string()));
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = full.iter().map(String::as_str).collect();
        Quire::at(dir).run(&refs)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_turn_shows_its_tokens_and_cost_and_a_reopened_chat_its_totals() {
    let q = Quire::new();
    let server = mock_openai(vec![reply("Hello.", 3_000, 0, 100), reply("Again.", 3_200, 3_000, 50)]).await;
    // Per million tokens: 2 sent, 8 generated, 0.5 read from the cache.
    configure(
        &q,
        &server,
        "",
        "price_in = 2.0\nprice_out = 8.0\nprice_cached_in = 0.5",
    );

    let out = chat(&q, true, &["--message", "hi"]).await.json();
    assert_eq!(
        out["usage"],
        json!({"input_tokens": 3_000, "cached_input_tokens": 0, "cache_write_tokens": 0, "output_tokens": 100})
    );
    // 3,000 in at 2 and 100 out at 8, per million.
    assert!((out["cost"].as_f64().unwrap() - 0.0068).abs() < 1e-9, "{out}");
    assert_eq!(out["chat_usage"]["turns"], 1);
    let id = out["chat_id"].as_str().unwrap().to_owned();

    // The chat continued, in text: one line after the reply. 200 fresh tokens at 2, 3,000 cached at 0.5, 50 out
    // at 8: 0.0023; the chat's totals count both turns.
    let run = chat(&q, false, &["--chat", &id, "--message", "again"]).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.ends_with(
            "Again.\n\nThis turn: 3,200 tokens in (3,000 cached), 50 out, est. cost 0.0023 · This chat: 2 turns, \
             6,200 tokens in (3,000 cached), 150 out, est. cost 0.0091\n"
        ),
        "{run:?}"
    );
    let sent: Value = serde_json::from_slice(&server.received_requests().await.unwrap()[1].body).unwrap();
    assert_eq!(
        sent["stream_options"],
        json!({"include_usage": true}),
        "usage is asked for"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_past_max_turn_tokens_stops_and_says_how_to_raise_it() {
    let q = Quire::new();
    let calls = sse(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_0", "type": "function",
               "function": {"name": "list_tags", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 200}}),
    ]);
    let server = mock_openai(vec![calls, reply("never sent", 1, 0, 1)]).await;
    configure(&q, &server, "max_turn_tokens = 1000", "");
    let run = chat(&q, true, &["--message", "tags?"]).await;
    assert_eq!(run.code, 1, "{run:?}");
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let error = out["error"].as_str().unwrap();
    assert!(
        error.contains("1100 tokens") && error.contains("budget of 1000") && error.contains("max_turn_tokens"),
        "{error}"
    );
    assert!(run.stderr.contains("raise max_turn_tokens under [chat]"), "{run:?}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        1,
        "no request past the budget"
    );
    assert_eq!(
        (out["usage"]["input_tokens"].as_u64(), out["steps"].as_u64()),
        (Some(900), Some(1))
    );
    // A model without prices: tokens, and no cost.
    assert_eq!((&out["cost"], &out["chat_usage"]["cost"]), (&Value::Null, &Value::Null));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_a_price_is_refused_with_how_to_fix_it() {
    let q = Quire::new();
    let server = mock_openai(vec![]).await;
    configure(&q, &server, "", "price_in = 2.0");
    let run = chat(&q, false, &["--message", "hi"]).await;
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("the [[chat.models]] entry test: give both price_in and price_out"),
        "{run:?}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}
