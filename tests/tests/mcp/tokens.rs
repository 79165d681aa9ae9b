//! Tokens: the server's own (private, rotated), named tokens that reach some notebooks or only read, revoked at once,
//! and sessions that answer only the token that opened them.

use quire_test_support::mcp::{Era, Person, connect_over_http, tool_names};
use quire_tests::Quire;
use rmcp::model::ClientConfig;
use serde_json::{Value, json};

use crate::http::{initialize_body, start_http};
use crate::{args, work_and_home};

#[test]
fn the_token_is_private_and_can_be_rotated() {
    let q = Quire::new();
    let first = q.run_raw(&["mcp", "token"], None).stdout.trim().to_owned();
    assert_eq!(
        q.run_raw(&["mcp", "token"], None).stdout.trim(),
        first,
        "stable until rotated"
    );
    let rotated = q.run_raw(&["mcp", "token", "--rotate"], None).stdout.trim().to_owned();
    assert_ne!(rotated, first);
    assert_eq!(rotated.len(), 64);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = q.dir().join("home/.config/quire/mcp-token");
        assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_token_reaches_only_its_notebooks() {
    let q = Quire::new();
    let (work, home) = work_and_home(&q);
    let added = q.run(&["mcp", "token", "add", "work-laptop", "--notebook", "Work"]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let named = added.stdout.trim().to_owned();
    assert_eq!(named.len(), 64);
    assert!(added.stderr.contains("only time"), "{}", added.stderr);
    let stored = std::fs::read_to_string(q.dir().join("home/.config/quire/mcp-tokens.json")).unwrap();
    assert!(!stored.contains(&named), "only the hash is stored");
    let listed = q.run(&["mcp", "token", "list"]);
    assert!(listed.stdout.contains("work-laptop  reaches Work"), "{}", listed.stdout);
    let readonly = q.run(&["mcp", "token", "add", "reader", "--read-only"]);
    let readonly = readonly.stdout.trim().to_owned();

    let server = start_http(&q);
    let scoped = connect_over_http(&server.url, &named, ClientConfig::default(), Era::Legacy).await;
    let call = |name: &str, arguments: Value| args(json!({"name": name, "arguments": arguments}));
    let read = scoped
        .call_tool(call("read_note", json!({"note_id": work})))
        .await
        .unwrap();
    assert_ne!(read.is_error, Some(true), "{read:?}");
    let hidden = scoped
        .call_tool(call("read_note", json!({"note_id": home})))
        .await
        .unwrap();
    assert_eq!(hidden.is_error, Some(true));
    assert!(format!("{hidden:?}").contains("not found"), "{hidden:?}");
    let search = scoped
        .call_tool(call("search_notes", json!({"query": "plan"})))
        .await
        .unwrap();
    assert_eq!(
        search.structured_content.unwrap()["total"],
        1,
        "search sees the scope only"
    );
    let write = scoped
        .call_tool(call("update_note", json!({"note_id": home, "append": "hacked"})))
        .await
        .unwrap();
    assert_eq!(write.is_error, Some(true));
    let created = scoped
        .call_tool(call("create_note", json!({"title": "From the laptop"})))
        .await
        .unwrap();
    assert_eq!(
        created.structured_content.unwrap()["notebook_path"],
        "Work",
        "created inside the scope"
    );
    let resources = scoped.list_all_resources().await.unwrap();
    assert!(resources.iter().all(|r| !r.uri.contains(&home)), "{resources:?}");
    scoped.cancel().await.unwrap();

    let reader = connect_over_http(&server.url, &readonly, ClientConfig::default(), Era::Legacy).await;
    let names = tool_names(&reader).await;
    assert!(!names.iter().any(|n| n == "create_note") && names.iter().any(|n| n == "read_note"));
    reader.cancel().await.unwrap();
    let body = q.run(&["--json", "note", "show", &home]).json();
    assert_eq!(body["body"], "paint the kitchen");

    // Revoked, the token stops working at once, on the server already running, and a subscription made with it
    // hears nothing more.
    let (person, mut updates) = Person::new(Vec::new());
    let watcher = connect_over_http(&server.url, &named, person, Era::Legacy).await;
    #[expect(deprecated, reason = "resources/subscribe is how 2025-11-25 clients subscribe")]
    watcher
        .subscribe(rmcp::model::SubscribeRequestParams::new(format!("quire://note/{work}")))
        .await
        .unwrap();
    assert_eq!(q.run(&["mcp", "token", "revoke", "work-laptop"]).code, 0);
    // The running server reads the token file again within half a second: wait until it refuses the token (a
    // condition, however slow the machine), then write.
    let status = || async {
        reqwest::Client::new()
            .post(&server.url)
            .header("authorization", format!("Bearer {named}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize_body())
            .send()
            .await
            .unwrap()
            .status()
    };
    let mut refused = status().await;
    for _ in 0..300 {
        if refused == 401 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        refused = status().await;
    }
    assert_eq!(refused, 401);
    let edit = q.run(&[
        "tools",
        "call",
        "update_note",
        &json!({"note_id": work, "append": "later"}).to_string(),
    ]);
    assert_eq!(edit.code, 0, "{}", edit.stderr);
    let heard = tokio::time::timeout(std::time::Duration::from_millis(1500), updates.recv()).await;
    assert!(heard.is_err(), "a revoked token's subscription went on: {heard:?}");
}

/// A session belongs to the credential that opened it (security finding 9): another token that learns its id can
/// neither post into it, nor open its stream, nor replay its events; the owner still can.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_token_that_opened_it() {
    let q = Quire::new();
    work_and_home(&q);
    let added = q.run(&["mcp", "token", "add", "work-laptop", "--notebook", "Work"]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let named = added.stdout.trim().to_owned();
    let server = start_http(&q);
    let http = reqwest::Client::new();
    let request = |method: reqwest::Method, token: &str, session: &str| {
        http.request(method, &server.url)
            .header("authorization", format!("Bearer {token}"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session)
    };
    let init = http
        .post(&server.url)
        .header("authorization", format!("Bearer {}", server.token))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_body())
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    drop(init);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    // Another token, even a valid one, finds no such session: not for a message, a stream, a replay or a delete.
    let foreign = request(reqwest::Method::POST, &named, &session)
        .body(list.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 404);
    let stream = request(reqwest::Method::GET, &named, &session).send().await.unwrap();
    assert_eq!(stream.status(), 404);
    let replay = request(reqwest::Method::GET, &named, &session)
        .header("last-event-id", "1-00")
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 404);
    let delete = request(reqwest::Method::DELETE, &named, &session).send().await.unwrap();
    assert_eq!(delete.status(), 404);
    // The owner's session still works.
    let ok = request(reqwest::Method::POST, &server.token, &session)
        .body(initialized)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 202);
    let tools = request(reqwest::Method::POST, &server.token, &session)
        .body(list)
        .send()
        .await
        .unwrap();
    assert_eq!(tools.status(), 200);
    assert!(tools.text().await.unwrap().contains("read_note"));
}
