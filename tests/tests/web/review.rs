//! The review set through the web API beside the CLI and the MCP resource (issue 44: one JSON shape per core type).

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use quire_tests::Quire;
use serde_json::{Value, json};

use super::open_session;

/// Runs JSON-RPC `requests` against `quire mcp --review` on pipes (after `initialize`); the answers by id.
fn staged_client(q: &Quire, requests: &[Value]) -> Vec<Value> {
    use std::io::Write;
    let mut child = q
        .command()
        .arg("--workspace")
        .arg(q.workspace())
        .args(["mcp", "--review"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(input, "{message}").unwrap();
    send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "Staged", "version": "1"}}}));
    let mut answer = |id: usize| loop {
        let line: Value = serde_json::from_str(&output.next().unwrap().unwrap()).unwrap();
        if line["id"] == id {
            return line;
        }
    };
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut answers = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let mut request = request.clone();
        request["jsonrpc"] = "2.0".into();
        request["id"] = (i + 1).into();
        send(request);
        answers.push(answer(i + 1));
    }
    drop(input);
    let _ = child.wait();
    answers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_set_is_one_document_in_the_cli_the_mcp_resource_and_the_api() {
    // Issue 44: one JSON shape per core type. A client staged through `quire mcp --review`; the set as `quire review
    // show --json` prints it, as the resource `quire://review/1` reads, and as `GET /api/reviews/1` answers.
    let q = Quire::new();
    let id = q
        .run(&["--json", "note", "add", "--title", "Plan", "--body", "one\ntwo\n"])
        .json()["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answers = staged_client(
        &q,
        &[
            json!({"method": "tools/call", "params": {"name": "update_note", "arguments": {"note_id": id, "body": "ONE\ntwo\n", "title": "Plan v2"}}}),
            json!({"method": "resources/read", "params": {"uri": "quire://review/1"}}),
        ],
    );
    let resource: Value = serde_json::from_str(answers[1]["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    let cli = q.run(&["--json", "review", "show", "1"]).json();
    let (_server, base, session, http) = open_session(&q, &[]).await;
    let api: Value = http
        .get(format!("{base}/api/reviews/1"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(api["id"], 1, "{api}");
    assert_eq!(
        api["items"][0]["hunks"].as_array().map(Vec::len),
        Some(2),
        "the title and one run of lines: {api}"
    );
    assert_eq!(cli, api, "the CLI and the API");
    assert_eq!(resource, api, "the MCP resource and the API");
}
