//! End to end: the real `quire chat --message ... --json` against a local mock of an OpenAI-compatible API.

use std::sync::atomic::{AtomicUsize, Ordering};

use quire_tests::Quire;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

struct Sequence {
    responses: Vec<ResponseTemplate>,
    next: AtomicUsize,
}

impl Respond for Sequence {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        self.responses
            .get(n)
            .cloned()
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script ended"))
    }
}

fn sse(events: &[Value]) -> ResponseTemplate {
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect::<String>() + "data: [DONE]\n\n";
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn tool_calls(calls: &[(&str, Value)]) -> ResponseTemplate {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"index": i, "id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    sse(&[json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": "tool_calls"}]})])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_message_json_edits_the_note_and_writes_the_workspace() {
    let q = Quire::new();
    let note = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Packing list",
            "--body",
            "- shoes\n- tent\n",
        ])
        .json();
    let id = note["id"].as_str().unwrap().to_owned();

    let server = MockServer::start().await;
    let responses = vec![
        tool_calls(&[
            ("insert_after_anchor", json!({"anchor": "- tent", "text": "\n- socks"})),
            (
                "create_note",
                json!({"title": "Trip checklist", "body": "book the ferry", "tags": ["trip"]}),
            ),
        ]),
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Added socks, and a checklist."}, "finish_reason": "stop"}]}),
        ]),
    ];
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence {
            responses,
            next: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    let base = format!("{}/v1", server.uri());
    let ws = q.workspace();
    let args = [
        "--workspace",
        ws.to_str().unwrap(),
        "--json",
        "chat",
        "--message",
        "Add socks and make a checklist",
        "--note",
        &id,
        "--apply",
        "--model",
        "openai-compatible:test",
        "--base-url",
        &base,
    ];
    let run = tokio::task::spawn_blocking({
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let q = q_clone(&q);
        move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            q.run_raw(&refs, None)
        }
    })
    .await
    .unwrap();
    let out = run.json();
    assert_eq!(out["reply"], "Added socks, and a checklist.");
    assert_eq!(out["edits"].as_array().unwrap().len(), 1);
    assert_eq!(out["applied"], true);
    assert!(out["diff"].as_str().unwrap().contains("+- socks"), "{out}");
    assert_eq!(out["steps"], 2);
    assert!(out["change_set_id"].is_string() && out["chat_id"].is_string());
    let names: Vec<&str> = out["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(names, ["insert_after_anchor", "create_note"]);

    // The edit was applied to the note as the user's write; the agent's workspace write is there too.
    let shown = q.run(&["--json", "note", "show", &id]).json();
    assert_eq!(shown["body"], "- shoes\n- tent\n- socks\n");
    assert_eq!(q.run(&["--json", "search", "tag:trip"]).json()["total"], 1);
    let changes = q.run(&["tools", "call", "recent_changes", r#"{"limit": 10}"#]).json();
    let actors: Vec<&str> = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["actor"].as_str().unwrap())
        .collect();
    assert!(
        actors.iter().any(|a| a.starts_with("agent (chat")) && actors.contains(&"user"),
        "{actors:?}"
    );

    // The model saw the focused note in its system prompt and got both results.
    let requests = server.received_requests().await.unwrap();
    let second: Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert!(second["messages"][0]["content"].as_str().unwrap().contains("- tent"));
    assert_eq!(
        second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count(),
        2
    );
}

fn q_clone(q: &Quire) -> Quire {
    // The same temporary directory, for a run on another thread; the original keeps (and later removes) it.
    Quire::at(q.dir().to_path_buf())
}

#[test]
fn without_a_model_chat_says_how_to_configure_one() {
    let q = Quire::new();
    let run = q.run(&["chat", "--message", "hello"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("no model is configured") && run.stderr.contains("--model PROVIDER:MODEL"),
        "{run:?}"
    );
    let unknown = q.run(&["chat", "--message", "hello", "--model", "acme:big"]);
    assert!(unknown.stderr.contains("unknown provider 'acme'"), "{unknown:?}");
    let keyless = q.run(&["chat", "--message", "hello", "--model", "openai:gpt-4.1-mini"]);
    assert!(keyless.stderr.contains("set OPENAI_API_KEY"), "{keyless:?}");
}
