//! Both wire formats against a local mock server speaking the real protocols: streaming, tool calls, results,
//! errors and retries. The exact requests are snapshotted.

use std::time::Duration;

use quire_agent::{
    AgentDeps, AnthropicClient, AutoApprove, ChatModel, ClientConfig, NoteContext, OpenAiClient, ToolPolicy,
    run_note_chat,
};
use quire_test_support::{Script, sse};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::scripted::Fixture;

fn anthropic_sse(events: &[Value]) -> ResponseTemplate {
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn config(server: &MockServer, base: &str) -> ClientConfig {
    let mut config = ClientConfig::new(format!("{}{base}", server.uri()), "test-model", Some("sk-test".into()));
    config.backoff = Duration::from_millis(5);
    config
}

async fn turn(model: &dyn ChatModel, fx: &Fixture, context: &NoteContext) -> quire_agent::TurnOutcome {
    let deps = AgentDeps {
        model,
        client: None,
        registry: &fx.registry,
        workspace: &fx.ws,
        chat_id: "wire".into(),
        turn: 1,
        policy: ToolPolicy {
            filter: quire_tools::ToolFilter {
                read_only: true,
                ..quire_tools::ToolFilter::default()
            },
            ..ToolPolicy::default()
        },
        approver: &AutoApprove(false),
        asker: None,
        events: None,
        cancel: CancellationToken::new(),
        interrupt: CancellationToken::new(),
        max_tokens: 512,
        max_turn_tokens: None,
    };
    run_note_chat(context, &[], "Add socks to my packing list", &deps)
        .await
        .unwrap()
}

/// The requests as sent, with the tools reduced to their names (their schemas are snapshotted elsewhere).
async fn sent(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let mut body: Value = serde_json::from_slice(&r.body).unwrap();
            if let Some(tools) = body.get_mut("tools") {
                let names: Vec<Value> = tools
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| {
                        t.get("function")
                            .and_then(|f| f.get("name"))
                            .or_else(|| t.get("name"))
                            .cloned()
                            .unwrap()
                    })
                    .collect();
                *tools = Value::Array(names);
            }
            body
        })
        .collect()
}

#[tokio::test]
async fn openai_compatible_streaming_turn() {
    let server = MockServer::start().await;
    let fx = Fixture::new();
    let tool_call = sse(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_note", "arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": format!("{{\"note_id\": \"{}", fx.plain)}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "append_to_note", "arguments": "{\"text\": \"- socks\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}}}),
    ]);
    let text = sse(&[
        json!({"choices": [{"index": 0, "delta": {"content": "Added "}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "socks."}, "finish_reason": "stop"}]}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script::new(vec![tool_call, text]))
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, "/v1")).unwrap();
    let context = NoteContext::focused(fx.plain.clone(), "Packing list", "- shoes\n- tent\n");
    let outcome = turn(&client, &fx, &context).await;
    assert_eq!(outcome.reply, "Added socks.");
    assert_eq!(outcome.edits.len(), 1);
    // The second reply reported no usage (a server may not): the turn's usage is the first one's.
    assert_eq!(
        outcome.usage,
        quire_agent::Usage {
            input_tokens: 100,
            cached_input_tokens: 64,
            cache_write_tokens: 0,
            output_tokens: 20,
        }
    );
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests[0].headers["authorization"], "Bearer sk-test");
    let mut bodies = sent(&server).await;
    for body in &mut bodies {
        body["messages"][0]["content"] = json!("[system prompt]");
    }
    insta::assert_json_snapshot!("openai_requests", bodies, {
        ".**.tool_call_id" => "[call]",
        ".**.content" => insta::dynamic_redaction(|value, _| redact_ids(value)),
        ".**.arguments" => insta::dynamic_redaction(|value, _| redact_ids(value)),
    });
}

#[tokio::test]
async fn anthropic_streaming_turn() {
    let server = MockServer::start().await;
    let fx = Fixture::new();
    let tool_use = anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 90, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_note", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"note_id\": \"nope\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "list_tags", "input": {}}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]);
    let text = anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 120, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 2000, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "That note does not exist."}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 8}}),
    ]);
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(Script::new(vec![tool_use, text]))
        .mount(&server)
        .await;
    let client = AnthropicClient::new(config(&server, "")).unwrap();
    let outcome = turn(&client, &fx, &NoteContext::none()).await;
    assert_eq!(outcome.reply, "That note does not exist.");
    // Anthropic's input_tokens leaves out what the cache served or stored; the turn counts every token sent.
    assert_eq!(
        outcome.usage,
        quire_agent::Usage {
            input_tokens: 90 + 2_000 + 120 + 2_000,
            cached_input_tokens: 2_000,
            cache_write_tokens: 2_000,
            output_tokens: 38,
        }
    );
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests[0].headers["x-api-key"], "sk-test");
    assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
    let mut bodies = sent(&server).await;
    for body in &mut bodies {
        body["system"][0]["text"] = json!("[system prompt]");
    }
    // Cache breakpoints: the system prompt, the last tool (only), the last block of the last message.
    for request in &requests {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let ephemeral = json!({"type": "ephemeral"});
        assert_eq!(body["system"][0]["cache_control"], ephemeral);
        let tools = body["tools"].as_array().unwrap();
        let marked: Vec<usize> = (0..tools.len())
            .filter(|&i| tools[i].get("cache_control").is_some())
            .collect();
        assert_eq!(marked, [tools.len() - 1]);
        assert_eq!(tools[tools.len() - 1]["cache_control"], ephemeral);
        let last = body["messages"].as_array().unwrap().last().unwrap()["content"]
            .as_array()
            .unwrap();
        assert_eq!(last.last().unwrap()["cache_control"], ephemeral);
    }
    // Both results answer the two tool_use blocks in one user message, the failed one with is_error.
    let results = &bodies[1]["messages"][2]["content"];
    assert_eq!(results.as_array().unwrap().len(), 2);
    assert_eq!(
        (results[0]["is_error"].as_bool(), results[1]["is_error"].as_bool()),
        (Some(true), Some(false))
    );
    insta::assert_json_snapshot!("anthropic_requests", bodies);
}

#[tokio::test]
async fn errors_carry_the_status_and_an_excerpt_and_busy_servers_are_retried() {
    let server = MockServer::start().await;
    let text = sse(&[json!({"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]})]);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script::new(vec![
            ResponseTemplate::new(429).insert_header("retry-after", "0"),
            ResponseTemplate::new(503).set_body_string("busy"),
            text,
            ResponseTemplate::new(401)
                .set_body_string("{\"error\": {\"message\": \"Incorrect API key provided: sk-te****\"}}"),
        ]))
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, "/v1")).unwrap();
    let request = quire_agent::ChatRequest {
        system: "s".into(),
        messages: vec![],
        tools: vec![],
        max_tokens: 10,
    };
    let ok = client.chat(&request, &|_| {}).await.unwrap();
    assert_eq!(ok.text, "ok");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        3,
        "429 and 503 were retried"
    );
    let error = client.chat(&request, &|_| {}).await.unwrap_err();
    assert_eq!(error.status, Some(401));
    assert_eq!(
        error.to_string(),
        "openai-compatible returned HTTP 401: {\"error\": {\"message\": \"Incorrect API key provided: sk-te****\"}}"
    );
    assert!(!format!("{client:?}").contains("sk-test"), "keys are never printed");
}

/// Replaces generated ids (32 hex digits) with `[id]` and RFC 3339 times with `[time]`.
fn redact_ids(value: insta::internals::Content) -> String {
    quire_core::testing::redact_ids(&redact_times(value.as_str().unwrap_or_default()))
}

fn redact_times(text: &str) -> String {
    let bytes = text.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd.dddZ";
    let mut out = String::new();
    let mut i = 0;
    while i < text.len() {
        let fits = bytes.len() >= i + shape.len()
            && shape
                .iter()
                .zip(&bytes[i..i + shape.len()])
                .all(|(s, b)| if *s == b'd' { b.is_ascii_digit() } else { s == b });
        if fits {
            out.push_str("[time]");
            i += shape.len();
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[tokio::test]
async fn an_openai_stream_cut_before_its_end_is_an_error_not_an_empty_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("", "text/event-stream"))
        .mount(&server)
        .await;
    let client = OpenAiClient::new(config(&server, "/v1")).unwrap();
    let request = quire_agent::ChatRequest {
        system: String::new(),
        messages: vec![quire_agent::Message::User {
            content: "hello".into(),
        }],
        tools: Vec::new(),
        max_tokens: 16,
    };
    let error = client.chat(&request, &|_: &str| {}).await.unwrap_err();
    assert!(error.to_string().contains("ended before it finished"), "{error}");
}
