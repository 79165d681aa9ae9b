//! `quire mcp --http`: the token and the origin, tool calls and confirmations in both eras, subscriptions that hear
//! other processes' edits, and a dropped stream resumed.

use quire_test_support::mcp::{Era, Person, connect_over_http};
use quire_tests::Quire;
use rmcp::model::ClientConfig;
use serde_json::json;

use crate::{add_note, args, in_trash, workspace_with_a_protected_note};

/// `quire mcp --http` on a free loopback port, with its token; killed when dropped.
pub(crate) struct HttpServer {
    /// Stopped when dropped.
    _server: quire_tests::McpHttp,
    pub(crate) url: String,
    pub(crate) token: String,
}

pub(crate) fn start_http(q: &Quire) -> HttpServer {
    // Every HTTP test starts here before it builds a client (its own, or the one inside rmcp's transport).
    quire_test_support::install_tls();
    let server = quire_tests::McpHttp::start(q);
    let token = q.run_raw(&["mcp", "token"], None).stdout.trim().to_owned();
    assert_eq!(token.len(), 64);
    HttpServer {
        url: server.url.clone(),
        _server: server,
        token,
    }
}

/// The body of a legacy `initialize` request.
pub(crate) fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
           "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_requires_the_token_and_a_local_origin() {
    let q = Quire::new();
    let server = start_http(&q);
    let http = reqwest::Client::new();
    let post = |token: Option<&str>, origin: Option<&str>| {
        let mut request = http
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize_body());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let without = post(None, None).await.unwrap();
    assert_eq!(without.status(), 401);
    assert_eq!(without.headers()["www-authenticate"], "Bearer realm=\"quire\"");
    assert_eq!(post(Some("wrong"), None).await.unwrap().status(), 401);
    assert_eq!(
        post(Some(&server.token), Some("http://evil.example.com"))
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(None, Some("http://evil.example.com")).await.unwrap().status(),
        403,
        "origin is checked first"
    );
    // A page on another loopback port is another site; a program sends no Origin, a page of the server's own the
    // server's origin.
    assert_eq!(
        post(Some(&server.token), Some("http://localhost:5173"))
            .await
            .unwrap()
            .status(),
        403
    );
    let own = server.url.trim_end_matches("/mcp");
    let local = post(Some(&server.token), Some(own)).await.unwrap();
    assert_eq!(local.status(), 200);
    assert!(
        local.headers().contains_key("mcp-session-id"),
        "legacy clients get a session"
    );
    // Ending the session answers 200 (clients such as the Python SDK report 202 as a failed termination).
    let session = local.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let ended = http
        .delete(&server.url)
        .header("authorization", format!("Bearer {}", server.token))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), 200);

    let huge = http
        .post(&server.url)
        .header("authorization", format!("Bearer {}", server.token))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(vec![b' '; 5 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(huge.status(), 413, "bodies are size-limited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_tool_calls_in_both_eras() {
    let (q, secret) = workspace_with_a_protected_note();
    let server = start_http(&q);
    for era in Era::BOTH {
        let client = connect_over_http(&server.url, &server.token, ClientConfig::default(), era).await;
        assert_eq!(client.list_all_tools().await.unwrap().len(), 24);
        let title = format!("Via HTTP ({era:?})");
        let created = client
            .call_tool(args(json!({"name": "create_note", "arguments": {"title": title}})))
            .await
            .unwrap();
        assert_eq!(created.structured_content.unwrap()["title"], title);
        let refused = client
            .call_tool(args(json!({"name": "read_note", "arguments": {"note_id": secret}})))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true));
        client.cancel().await.unwrap();
    }
    let hits = q.run(&["--json", "search", "title:http"]).json();
    assert_eq!(hits["total"], 2);
}

#[test]
fn a_non_loopback_address_needs_an_explicit_flag() {
    let q = Quire::new();
    // `--addr` as `quire serve` takes it, alone or after `--http` (ux-2 #14), is the address served.
    for args in [
        &["mcp", "--http", "0.0.0.0:0"][..],
        &["mcp", "--addr", "0.0.0.0:0"],
        &["mcp", "--http", "--addr", "0.0.0.0:0"],
    ] {
        let refused = q.run(args);
        assert_eq!(refused.code, 1, "{args:?}: {refused:?}");
        assert!(
            refused
                .stderr
                .contains("reachable from other machines; pass --allow-remote"),
            "{args:?}: {refused:?}"
        );
    }
    let two = q.run(&["mcp", "--http", "127.0.0.1:0", "--addr", "127.0.0.1:1"]);
    assert_eq!(two.code, 1, "{two:?}");
    assert!(two.stderr.contains("name two addresses; give one"), "{two:?}");
    assert!(
        !two.stderr.contains("Beside the server"),
        "refused before anything started: {two:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_deletes_are_confirmed_by_the_person_in_both_eras() {
    let q = Quire::new();
    let server = start_http(&q);
    for era in Era::BOTH {
        let kept = add_note(&q, "Keep");
        let gone = add_note(&q, "Drop");
        let (person, _) = Person::new(vec!["decline", "accept"]);
        let client = connect_over_http(&server.url, &server.token, person, era).await;
        let refused = client
            .call_tool(args(json!({"name": "delete_note", "arguments": {"id": kept}})))
            .await
            .unwrap();
        assert_eq!(refused.is_error, Some(true), "{refused:?}");
        assert!(format!("{refused:?}").contains("The user refused"), "{refused:?}");
        let done = client
            .call_tool(args(json!({"name": "delete_note", "arguments": {"id": gone}})))
            .await
            .unwrap();
        assert_ne!(done.is_error, Some(true), "{done:?}");
        assert!(!in_trash(&q, &kept) && in_trash(&q, &gone), "{era:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_file_can_refuse_destructive_calls() {
    let q = Quire::new();
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[mcp]\nconfirm_destructive = \"deny\"\n").unwrap();
    let id = add_note(&q, "Keep");
    let server = start_http(&q);
    let (person, _) = Person::new(vec!["accept"]);
    let client = connect_over_http(&server.url, &server.token, person, Era::Legacy).await;
    let refused = client
        .call_tool(args(json!({"name": "delete_note", "arguments": {"id": id}})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(!in_trash(&q, &id));
    std::fs::write(
        config.join("config.toml"),
        "[mcp]\nconfirm_destructive = \"sometimes\"\n",
    )
    .unwrap();
    let bad = q.run(&["mcp"]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("confirm_destructive"), "{}", bad.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_hears_about_an_edit_made_by_another_process() {
    let q = Quire::new();
    let watched = add_note(&q, "Watched");
    let server = start_http(&q);
    let (person, mut updates) = Person::new(Vec::new());
    let client = connect_over_http(&server.url, &server.token, person, Era::Legacy).await;
    let uri = format!("quire://note/{watched}");
    #[expect(deprecated, reason = "resources/subscribe is how 2025-11-25 clients subscribe")]
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    // Another process: the CLI, as an AI tool call.
    let edit = q.run(&[
        "tools",
        "call",
        "update_note",
        &json!({"note_id": watched, "append": "more"}).to_string(),
    ]);
    assert_eq!(edit.code, 0, "{}", edit.stderr);
    let heard = tokio::time::timeout(std::time::Duration::from_secs(10), updates.recv())
        .await
        .expect("a notification in time")
        .unwrap();
    assert_eq!(heard, format!("updated {uri}"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumes_with_last_event_id() {
    let q = Quire::new();
    let id = add_note(&q, "Resumable");
    let server = start_http(&q);
    let http = reqwest::Client::new();
    let post = |body: String, session: Option<String>| {
        let mut request = http
            .post(&server.url)
            .header("authorization", format!("Bearer {}", server.token))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = post(initialize_body(), None).await.unwrap();
    let session = init.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(init);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(post(initialized, Some(session.clone())).await.unwrap().status(), 202);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "read_note", "arguments": {"note_id": id}}});
    let mut stream = post(call.to_string(), Some(session.clone())).await.unwrap();
    // Read only the first event (the stream's priming event, which carries an id), then drop the connection.
    let mut seen = String::new();
    let event_id = loop {
        let chunk = stream.chunk().await.unwrap().expect("an event before the end");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(line) = seen.lines().find(|l| l.starts_with("id:")) {
            break line.trim_start_matches("id:").trim().to_owned();
        }
    };
    drop(stream);
    let resumed = http
        .get(&server.url)
        .header("authorization", format!("Bearer {}", server.token))
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &event_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let mut replay = String::new();
    let mut resumed = resumed;
    while !replay.contains("\"id\":7") {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), resumed.chunk())
            .await
            .expect("the answer in time")
            .unwrap()
            .unwrap_or_else(|| panic!("the answer before the end; first stream {seen:?}, replay {replay:?}"));
        replay.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(replay.contains("Resumable"), "{replay}");
}
