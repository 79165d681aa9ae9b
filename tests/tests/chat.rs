//! End to end: the real `quire chat --message ... --json` against a local mock of an OpenAI-compatible API.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

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
    let id = add_note(&q, "Packing list", "- shoes\n- tent\n");

    let server = mock_openai(vec![
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
    ])
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
    let run = run_blocking(&q, args.iter().map(|s| s.to_string()).collect(), None).await;
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

/// Adds a note through the CLI, as the user, and returns its id.
fn add_note(q: &Quire, title: &str, body: &str) -> String {
    let note = q
        .run(&["--json", "note", "add", "--title", title, "--body", body])
        .json();
    note["id"].as_str().unwrap().to_owned()
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

async fn mock_openai(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Sequence {
            responses,
            next: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    server
}

fn text(reply: &str) -> ResponseTemplate {
    sse(&[json!({"choices": [{"index": 0, "delta": {"content": reply}, "finish_reason": "stop"}]})])
}

/// Runs the binary on a blocking thread, so the mock server keeps answering on this runtime.
async fn run_blocking(q: &Quire, args: Vec<String>, stdin: Option<&str>) -> quire_tests::Run {
    let q = q_clone(q);
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        q.run_raw(&refs, stdin.as_deref())
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selection_limits_the_edit_and_a_chat_can_be_resumed() {
    let q = Quire::new();
    let id = add_note(&q, "Draft", "Dear Sir, thanks a lot.");
    let server = mock_openai(vec![
        tool_calls(&[("edit_selection", json!({"text": "Hello Ana"}))]),
        text("Changed the greeting."),
        text("You asked me to change the greeting."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let ws = q.workspace().to_str().unwrap().to_owned();
    let common = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "--workspace",
            &ws,
            "--json",
            "chat",
            "--model",
            "openai-compatible:test",
            "--base-url",
            &base,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let first = run_blocking(
        &q,
        common(&[
            "--message",
            "friendlier greeting",
            "--note",
            &id,
            "--select-text",
            "Dear Sir",
        ]),
        None,
    )
    .await
    .json();
    assert_eq!(first["applied"], false, "without --apply the edits are only proposed");
    assert!(
        first["diff"].as_str().unwrap().contains("+Hello Ana, thanks a lot."),
        "{first}"
    );
    let chat_id = first["chat_id"].as_str().unwrap().to_owned();

    // The first request offered only edit_selection among the session tools.
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let offered: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"edit_selection") && !offered.contains(&"append_to_note"),
        "{offered:?}"
    );

    let resumed = run_blocking(&q, common(&["--message", "what did I ask?", "--chat", &chat_id]), None)
        .await
        .json();
    assert_eq!(resumed["reply"], "You asked me to change the greeting.");
    let requests = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[2].body).unwrap();
    let users: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(
        users,
        ["friendlier greeting", "what did I ask?"],
        "the stored history was sent again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interactive_chat_streams_asks_and_applies() {
    let q = Quire::new();
    let id = add_note(&q, "List", "- a\n");
    let server = mock_openai(vec![
        tool_calls(&[("append_to_note", json!({"text": "- b"}))]),
        text("Appended b."),
    ])
    .await;
    let base = format!("{}/v1", server.uri());
    let ws = q.workspace().to_str().unwrap().to_owned();
    let args: Vec<String> = [
        "--workspace",
        &ws,
        "chat",
        "--note",
        &id,
        "--model",
        "openai-compatible:test",
        "--base-url",
        &base,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // One message, yes to applying the edits, then the end of input.
    let run = run_blocking(&q, args, Some("add b\ny\n")).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Appended b."), "{run:?}");
    assert!(run.stdout.contains("+- b"), "the diff is shown: {run:?}");
    assert!(
        run.stderr.contains("Append to note (append_to_note)") && run.stderr.contains("Apply these edits?"),
        "{run:?}"
    );
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "- a\n- b");
}
