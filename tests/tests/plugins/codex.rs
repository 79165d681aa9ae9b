//! End to end (issue 49): Codex through its ACP adapter (`@zed-industries/codex-acp` from npm, a real agent), added
//! with `quire agent add` and run with `quire chat --agent` and as an automation, its model a local mock of OpenAI's
//! Responses API (the API Codex speaks: `POST /v1/responses`, streamed events). Codex is given quire's MCP server and
//! calls its tools by name through it: a search, then a note written, which waits for review under its name, and
//! its reads are in the ledger.

use std::path::Path;
use std::sync::{Arc, Mutex};

use quire_tests::Quire;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::runtimes;

/// The mock model: a search through quire's tools, then a note written with what it found, then its answer. It reads
/// quire's tools from the request (Codex groups an MCP server's tools in a namespace) and what the calls returned.
struct Responses {
    /// The requests, as sent.
    seen: Arc<Mutex<Vec<Value>>>,
}

fn event(kind: &str, mut data: Value) -> String {
    data["type"] = json!(kind);
    format!("event: {kind}\ndata: {data}\n\n")
}

impl Respond for Responses {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        self.seen.lock().unwrap().push(body.clone());
        let namespace = body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "namespace" && t["name"].as_str().is_some_and(|n| n.ends_with("quire")))
            .and_then(|t| t["name"].as_str())
            .unwrap_or("mcp__quire")
            .to_owned();
        let answered: Vec<&str> = body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "function_call_output")
            .filter_map(|i| i["call_id"].as_str())
            .collect();
        let call = |id: &str, name: &str, arguments: Value| {
            json!({ "output_index": 0, "item": { "type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                    "namespace": namespace, "name": name, "arguments": arguments.to_string() } })
        };
        let mut stream = event("response.created", json!({ "response": { "id": "resp_1" } }));
        match answered.as_slice() {
            [] => {
                stream += &event(
                    "response.output_item.done",
                    call("c1", "search_notes", json!({ "query": "tomatoes" })),
                )
            }
            ["c1"] => {
                stream += &event(
                    "response.output_item.done",
                    call(
                        "c2",
                        "create_note",
                        json!({ "title": "Codex summary", "body": "Notes about tomatoes." }),
                    ),
                )
            }
            _ => {
                let text = "Codex found the tomato notes and wrote a summary.";
                stream += &event(
                    "response.output_text.delta",
                    json!({ "output_index": 0, "content_index": 0, "item_id": "m1", "delta": text }),
                );
                stream += &event(
                    "response.output_item.done",
                    json!({ "output_index": 0, "item": { "type": "message", "id": "m1", "role": "assistant",
                            "content": [{ "type": "output_text", "text": text }] } }),
                );
            }
        }
        stream += &event(
            "response.completed",
            json!({ "response": { "id": "resp_1", "usage": { "input_tokens": 100, "output_tokens": 10, "total_tokens": 110 } } }),
        );
        ResponseTemplate::new(200).set_body_raw(stream, "text/event-stream")
    }
}

/// A workspace with two notes about tomatoes and Codex added as `codex`, its configuration (`CODEX_HOME`) pointing
/// at `server`.
fn with_codex(runtimes: &Path, server: &MockServer) -> Quire {
    let q = Quire::new();
    for (title, body) in [
        ("Tomato plan", "tomatoes in May"),
        ("Balcony", "tomatoes on the balcony"),
    ] {
        assert_eq!(q.run(&["note", "add", "--title", title, "--body", body]).code, 0);
    }
    let codex_home = q.dir().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"gpt-5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"Mock\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let env = format!("CODEX_HOME={}", codex_home.display());
    let program = runtimes.join("node_modules/.bin/codex-acp");
    let added = q.run(&["agent", "add", "codex", "--env", &env, "--", program.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{added:?}");
    q
}

async fn mock_codex_model() -> (MockServer, Arc<Mutex<Vec<Value>>>) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(Responses { seen: seen.clone() })
        .mount(&server)
        .await;
    (server, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_searches_and_writes_through_quire_in_a_chat_and_an_automation() {
    let Some(runtimes) = runtimes() else { return };
    let (server, seen) = mock_codex_model().await;
    let q = with_codex(&runtimes, &server);
    let dir = q.dir().to_path_buf();
    let run = tokio::task::spawn_blocking(move || {
        let q = Quire::at(dir);
        let workspace = q.workspace();
        let tested = q.run(&["agent", "test", "codex"]);
        assert!(tested.stdout.contains("codex works: codex-acp"), "{tested:?}");
        q.run_raw(
            &[
                "--workspace",
                workspace.to_str().unwrap(),
                "chat",
                "--agent",
                "codex",
                "-m",
                "Summarise my tomato notes",
            ],
            None,
        )
    })
    .await
    .unwrap();
    assert_eq!(run.code, 0, "{run:?}");
    // Codex says first, in its message, that it knows nothing of the mock's model: its own words, kept.
    assert!(
        run.stdout
            .trim()
            .ends_with("Codex found the tomato notes and wrote a summary."),
        "{run:?}"
    );
    for shown in ["quire/search_notes", "quire/create_note"] {
        assert!(run.stderr.contains(shown), "{shown:?} in {}", run.stderr);
    }
    // Codex was offered quire's tools (and quire's own instructions for them), and got the search's results back.
    let requests = seen.lock().unwrap().clone();
    let quire = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"].as_str().unwrap_or("").ends_with("quire"))
        .cloned()
        .expect("quire's tools in a namespace");
    let names: Vec<&str> = quire["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"search_notes") && names.contains(&"create_note"),
        "{names:?}"
    );
    assert!(
        requests[1].to_string().contains("Tomato plan"),
        "the search's results reached the model"
    );
    // The note waits for review, under Codex's name; its reads are in the ledger.
    let review = q.run(&["review", "list"]).stdout;
    assert!(
        review.contains("codex (ACP agent)") && review.contains("Codex summary"),
        "{review}"
    );
    assert!(!q.run(&["note", "list"]).stdout.contains("Codex summary"));
    let ledger = q.run(&["--json", "ledger", "--client", "codex (ACP agent)"]).json();
    assert!(!ledger["entries"].as_array().unwrap().is_empty(), "{ledger:#}");

    // The same as an automation: under the automation's name.
    let dir = q.dir().to_path_buf();
    let ran = tokio::task::spawn_blocking(move || {
        let q = Quire::at(dir);
        let added = q.run(&[
            "automation",
            "add",
            "weekly",
            "--agent",
            "codex",
            "--prompt",
            "Summarise my tomato notes",
        ]);
        assert_eq!(added.code, 0, "{added:?}");
        q.run(&["--json", "automation", "run", "weekly"]).json()
    })
    .await
    .unwrap();
    assert_eq!(ran["status"], "done", "{ran:#}");
    assert!(
        ran["summary"]
            .as_str()
            .unwrap()
            .ends_with("Codex found the tomato notes and wrote a summary."),
        "{ran:#}"
    );
    assert!(ran["review_set"].is_i64(), "{ran:#}");
    assert!(q.run(&["review", "list"]).stdout.contains("weekly (automation)"));
}
