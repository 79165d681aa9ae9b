//! End to end: `quire index`, semantic search through `quire tools call`, and an HTTP embedder from config.toml.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use quire_tests::Quire;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn add(q: &Quire, title: &str, body: &str) -> String {
    q.run(&["--json", "note", "add", "--title", title, "--body", body])
        .json()["note_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn status_rebuild_and_semantic_search_with_the_fallback() {
    let q = Quire::new();
    add(&q, "Packing list", "tent, sleeping bag, hiking boots");
    add(&q, "Bread", "sourdough starter and flour");
    let status = q.run(&["--json", "index", "status"]).json();
    assert_eq!(
        (status["embedder"].as_str(), status["pending_changes"].as_u64()),
        (Some("hashed-ngrams-v1"), Some(2))
    );
    let rebuilt = q.run(&["--json", "index", "rebuild"]).json();
    assert_eq!(
        (rebuilt["indexed_notes"].as_u64(), rebuilt["pending_changes"].as_u64()),
        (Some(2), Some(0))
    );
    let text = q.run(&["index", "status"]).stdout;
    assert!(
        text.contains("indexed notes: 2") && text.contains("embed_url"),
        "{text}"
    );

    add(&q, "Camping trip", "bring the tent");
    let hits = q
        .run(&[
            "tools",
            "call",
            "semantic_search_notes",
            r#"{"query": "tent sleeping", "relevance": "loose"}"#,
        ])
        .json();
    let titles: Vec<&str> = hits["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles[0], "Packing list");
    assert!(
        titles.contains(&"Camping trip"),
        "a note added after the rebuild is indexed before the call: {titles:?}"
    );
}

struct Embeddings;

impl Respond for Embeddings {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        // A toy vector space: [mentions camping, mentions baking].
        let data: Vec<Value> = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let t = t.as_str().unwrap().to_lowercase();
                let camping = ["tent", "camp", "outdoors", "hiking"].iter().any(|w| t.contains(w)) as u8 as f64;
                let baking = ["bread", "flour", "oven", "dough"].iter().any(|w| t.contains(w)) as u8 as f64;
                json!({"index": i, "embedding": [camping, baking]})
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({"data": data}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_embedder_from_the_configuration() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(Embeddings)
        .mount(&server)
        .await;
    let q = Quire::new();
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    let toml = format!(
        "[index]\nembed_url = \"{}/v1\"\nembed_model = \"toy\"\nembed_dimensions = 2\n",
        server.uri()
    );
    std::fs::write(config.join("config.toml"), toml).unwrap();
    let dir = q.dir().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        let q = Quire::at(dir);
        add(&q, "Weekend", "sleeping outdoors by the lake");
        add(&q, "Baking day", "the oven and the dough");
        q.run(&[
            "tools",
            "call",
            "semantic_search_notes",
            r#"{"query": "camping gear", "relevance": "strict"}"#,
        ])
        .json()
    })
    .await
    .unwrap();
    let titles: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Weekend"], "found by meaning, without a shared word");
    assert!(!server.received_requests().await.unwrap().is_empty());
}

#[test]
fn the_local_model_finds_paraphrases() {
    let model = std::env::var("QUIRE_TEST_MODEL_DIR")
        .unwrap_or_else(|_| format!("{}/../target/models/all-MiniLM-L6-v2", env!("CARGO_MANIFEST_DIR")));
    let q = Quire::new();
    add(&q, "Weekend plans", "We will sleep under the stars next to the lake.");
    add(&q, "Bread", "Mix flour, water and salt; let the dough rise overnight.");
    add(&q, "Taxes", "Quarterly payments are due in April.");
    let ws = q.workspace();
    let mut command = q.command();
    command
        .env("QUIRE_EMBED_MODEL", &model)
        .args(["--workspace", ws.to_str().unwrap(), "tools", "call"]);
    let out = command
        .args(["semantic_search_notes", r#"{"query": "camping outdoors", "limit": 1}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits["results"][0]["title"], "Weekend plans", "found by meaning: {hits}");
    let mut status = q.command();
    let out = status
        .env("QUIRE_EMBED_MODEL", &model)
        .args(["--workspace", ws.to_str().unwrap(), "--json", "index", "status"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["embedder"], "local:all-MiniLM-L6-v2:384");
}

#[test]
fn a_wrong_model_setting_fails_only_search_by_meaning() {
    let q = Quire::new();
    let ws = q.workspace();
    let run = |args: &[&str]| {
        let mut command = q.command();
        command
            .env("QUIRE_EMBED_MODEL", q.dir().join("no-model"))
            .arg("--workspace")
            .arg(&ws)
            .args(args);
        command.output().unwrap()
    };
    assert!(run(&["note", "add", "--title", "still works"]).status.success());
    // Tools that do not embed work as if no model were configured.
    let tags = run(&["tools", "call", "list_tags", "{}"]);
    assert!(tags.status.success(), "{}", String::from_utf8_lossy(&tags.stderr));
    let found = run(&["tools", "call", "search_notes", r#"{"query": "still"}"#]);
    assert!(found.status.success(), "{}", String::from_utf8_lossy(&found.stderr));
    // Search by meaning says why it cannot work, as a tool error.
    let semantic = run(&["tools", "call", "semantic_search_notes", r#"{"query": "works"}"#]);
    assert_eq!(semantic.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&semantic.stdout).unwrap();
    let message = error["error"].as_str().unwrap();
    assert!(
        message.starts_with("Search by meaning is unavailable: the embedding model could not be loaded")
            && message.contains("config.json"),
        "{message}"
    );
    assert!(
        semantic.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&semantic.stderr)
    );
    // So does `quire index status`.
    let status = run(&["index", "status"]);
    assert_eq!(status.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&status.stderr);
    assert!(
        stderr.starts_with("error: search by meaning is unavailable: cannot load the embedding model in ")
            && stderr.contains("config.json"),
        "{stderr}"
    );
}

#[test]
fn mcp_starts_and_serves_with_a_broken_model_setting() {
    let q = Quire::new();
    let mut command = q.command();
    command
        .env("QUIRE_EMBED_MODEL", q.dir().join("no-model"))
        .arg("--workspace")
        .arg(q.workspace())
        .arg("mcp")
        .stdin(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let requests = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_tags","arguments":{}}}"#,
        "\n",
    );
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(requests.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer: Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no answer to the call: {stdout}"));
    assert_eq!(answer["result"]["isError"], false, "{answer}");
}
