//! End to end: rmcp's client against the real `quire mcp`, over stdio (both protocol eras) and Streamable HTTP.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests stop where they fail")]

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use quire_tests::Quire;
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A workspace with one protected note, made through the CLI as the user.
fn workspace_with_a_protected_note() -> (Quire, String) {
    let q = Quire::new();
    let note = q
        .run(&["--json", "note", "add", "--title", "Diary", "--body", "secret thoughts"])
        .json();
    let id = note["note_id"].as_str().unwrap().to_owned();
    assert_eq!(q.run(&["note", "protect", &id]).code, 0);
    (q, id)
}

async fn connect(q: &Quire, modern: bool) -> RunningService<RoleClient, ClientConfig> {
    let mut command = tokio::process::Command::from(q.command());
    command.arg("--workspace").arg(q.workspace()).arg("mcp");
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ClientConfig::default();
    if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        client.serve_with_lifecycle(transport, lifecycle).await.unwrap()
    } else {
        client.serve(transport).await.unwrap()
    }
}

fn args(value: Value) -> CallToolRequestParams {
    let name = value["name"].as_str().unwrap().to_owned();
    let mut params = CallToolRequestParams::new(name);
    if let Some(arguments) = value["arguments"].as_object() {
        params = params.with_arguments(arguments.clone());
    }
    params
}

async fn round_trip(modern: bool) {
    let (q, secret) = workspace_with_a_protected_note();
    let client = connect(&q, modern).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.len(), 21, "{names:?}");
    assert!(names.windows(2).all(|w| w[0] < w[1]), "deterministic order");
    let delete = tools.iter().find(|t| t.name == "delete_note").unwrap();
    let hints = delete.annotations.as_ref().unwrap();
    assert_eq!(
        (hints.read_only_hint, hints.destructive_hint),
        (Some(false), Some(true))
    );
    assert_eq!(delete.title.as_deref(), Some("Delete note"));
    assert!(delete.output_schema.is_some());

    let created = client
        .call_tool(args(
            json!({"name": "create_note", "arguments": {"title": "Launch plan", "body": "Ship in May."}}),
        ))
        .await
        .unwrap();
    assert_ne!(created.is_error, Some(true));
    let id = created.structured_content.as_ref().unwrap()["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let text = created.content[0].as_text().unwrap().text.clone();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        *created.structured_content.as_ref().unwrap()
    );

    let found = client
        .call_tool(args(json!({"name": "search_notes", "arguments": {"query": "may"}})))
        .await
        .unwrap();
    assert_eq!(found.structured_content.as_ref().unwrap()["results"][0]["note_id"], id);

    let edit =
        json!({"name": "update_note", "arguments": {"note_id": id, "edits": [{"find": "May", "replace": "June"}]}});
    assert_ne!(client.call_tool(args(edit)).await.unwrap().is_error, Some(true));
    let read = client
        .call_tool(args(json!({"name": "read_note", "arguments": {"note_id": id}})))
        .await
        .unwrap();
    assert_eq!(read.structured_content.as_ref().unwrap()["body"], "Ship in June.");

    // A guard is a tool error the model can read, not a protocol error.
    let refused = client
        .call_tool(args(
            json!({"name": "update_note", "arguments": {"note_id": secret, "body": "x"}}),
        ))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.structured_content.unwrap(),
        json!({"error": "Note is protected and cannot be modified"})
    );

    // An unknown tool is a JSON-RPC error, -32602.
    let unknown = client
        .call_tool(args(json!({"name": "drop_tables", "arguments": {}})))
        .await
        .unwrap_err();
    let message = format!("{unknown:?}");
    assert!(
        message.contains("-32602") && message.contains("Unknown tool: drop_tables"),
        "{message}"
    );

    // Notes are resources; protected ones are not readable.
    let resource = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(format!(
            "quire://note/{id}"
        )))
        .await
        .unwrap();
    assert!(format!("{resource:?}").contains("Ship in June."));
    let protected = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(format!(
            "quire://note/{secret}"
        )))
        .await;
    assert!(protected.is_err());
    client.cancel().await.unwrap();

    // The writes were made as an MCP client: the user's CLI sees them in the change log, with revisions.
    let changes = q.run(&["tools", "call", "recent_changes", r#"{"limit": 1}"#]).json();
    assert!(
        changes["changes"][0]["actor"]
            .as_str()
            .unwrap()
            .starts_with("mcp client"),
        "{changes}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_round_trip_legacy_era() {
    round_trip(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_round_trip_stateless_era() {
    round_trip(true).await;
}

/// Raw stdio: only protocol messages on stdout, and a clean exit when the client closes its end. Pipes are read
/// through the event loop and anything else (here, files) through tokio's blocking stdin and stdout: both work.
fn raw_stdio_session(through_files: bool) {
    let q = Quire::new();
    let mut command = q.command();
    command
        .arg("--workspace")
        .arg(q.workspace())
        .args(["mcp"])
        .env("QUIRE_LOG", "debug");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
               "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_tags", "arguments": {}}}),
    ];
    let (stdout, stderr, status) = if through_files {
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        std::fs::write(&input, text).unwrap();
        command
            .stdin(std::fs::File::open(&input).unwrap())
            .stdout(std::fs::File::create(&output).unwrap());
        let result = command.output().unwrap();
        (std::fs::read_to_string(&output).unwrap(), result.stderr, result.status)
    } else {
        command.stdin(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for message in &messages {
            writeln!(stdin, "{message}").unwrap();
        }
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        (String::from_utf8(output.stdout).unwrap(), output.stderr, output.status)
    };
    assert!(status.success(), "{status:?}: {}", String::from_utf8_lossy(&stderr));
    let ids: Vec<i64> = BufReader::new(stdout.as_bytes())
        .lines()
        .map(|line| {
            let message: Value = serde_json::from_str(&line.unwrap()).expect("every stdout line is a JSON-RPC message");
            assert_eq!(message["jsonrpc"], "2.0");
            message["id"].as_i64().unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 3, "{stdout}");
    assert!(!String::from_utf8_lossy(&stderr).is_empty(), "logs go to stderr");
}

#[test]
fn stdio_writes_only_protocol_messages_and_exits_on_end_of_input() {
    raw_stdio_session(false);
}

#[test]
fn stdio_also_works_when_input_and_output_are_files() {
    raw_stdio_session(true);
}

/// The `tools/list` answer as a client sees it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_snapshot() {
    let q = Quire::new();
    let client = connect(&q, false).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    insta::assert_json_snapshot!("mcp_tools_list", tools);
}

/// `quire mcp --http` on a free loopback port, with its token; killed when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
    token: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_http(q: &Quire) -> HttpServer {
    // Every HTTP test starts here before it builds a client (its own, or the one inside rmcp's transport).
    quire_test_support::install_tls();
    let mut command = q.command();
    command
        .arg("--workspace")
        .arg(q.workspace())
        .args(["mcp", "--http", "127.0.0.1:0"]);
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("quire MCP server on ") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server stopped before listening"
        );
    }
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in stderr.lines() {});
    let token = q.run_raw(&["mcp", "token"], None).stdout.trim().to_owned();
    assert_eq!(token.len(), 64);
    HttpServer { child, url, token }
}

fn initialize_body() -> String {
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

async fn http_client(server: &HttpServer, modern: bool) -> RunningService<RoleClient, ClientConfig> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(server.token.clone());
    let transport = StreamableHttpClientTransport::from_config(config);
    if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        ClientConfig::default()
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .unwrap()
    } else {
        ClientConfig::default().serve(transport).await.unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_tool_calls_in_both_eras() {
    let (q, secret) = workspace_with_a_protected_note();
    let server = start_http(&q);
    for modern in [false, true] {
        let client = http_client(&server, modern).await;
        assert_eq!(client.list_all_tools().await.unwrap().len(), 21);
        let title = format!("Via HTTP (modern: {modern})");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_and_disabled_tools_from_flags_and_the_config_file() {
    let q = Quire::new();
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[mcp]\ndisabled_tools = [\"recent_changes\"]\n",
    )
    .unwrap();

    let names = |extra: &'static [&'static str]| {
        let q = &q;
        async move {
            let mut command = tokio::process::Command::from(q.command());
            command.arg("--workspace").arg(q.workspace()).arg("mcp").args(extra);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let client = ClientConfig::default().serve(transport).await.unwrap();
            let names: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            client.cancel().await.unwrap();
            names
        }
    };
    let from_file = names(&[]).await;
    assert_eq!(from_file.len(), 20);
    assert!(!from_file.contains(&"recent_changes".to_owned()));
    let read_only = names(&["--read-only", "--disable-tool", "read_note"]).await;
    assert_eq!(read_only.len(), 8, "{read_only:?}");
    assert!(
        read_only
            .iter()
            .all(|n| !n.starts_with("create") && n != "read_note" && n != "recent_changes")
    );

    std::fs::write(config.join("config.toml"), "[mcp]\nread_only = true\n").unwrap();
    assert_eq!(names(&[]).await.len(), 10);

    let unknown = q.run(&["mcp", "--disable-tool", "no_such_tool"]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown
            .stderr
            .contains("--disable-tool no_such_tool: there is no such tool"),
        "{unknown:?}"
    );
    std::fs::write(config.join("config.toml"), "[mcp]\nread_onyl = true\n").unwrap();
    let typo = q.run(&["mcp"]);
    assert_eq!(typo.code, 1);
    assert!(
        typo.stderr.contains("config.toml") && typo.stderr.contains("read_onyl"),
        "{typo:?}"
    );
}

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

#[test]
fn a_non_loopback_address_needs_an_explicit_flag() {
    let q = Quire::new();
    let refused = q.run(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stderr
            .contains("reachable from other machines; pass --allow-remote"),
        "{refused:?}"
    );
}

/// An MCP client with a person behind it: it answers confirmations with the actions it is given and reports
/// resource updates.
#[derive(Clone)]
struct Person {
    answers: std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>,
    updates: tokio::sync::mpsc::UnboundedSender<String>,
}

impl rmcp::handler::client::ClientHandler for Person {
    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _ctx: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let action = self.answers.lock().unwrap().remove(0);
        Ok(serde_json::from_value(json!({"action": action})).unwrap())
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _ctx: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let _ = self.updates.send(params.uri);
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        config
    }
}

/// A person's client over HTTP with a given token, answering nothing.
async fn person_over_http_with(
    server: &HttpServer,
    token: &str,
) -> (
    RunningService<RoleClient, Person>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let (updates, receiver) = tokio::sync::mpsc::unbounded_channel();
    let person = Person {
        answers: std::sync::Arc::default(),
        updates,
    };
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(token.to_owned());
    let client = person
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    (client, receiver)
}

async fn person_over_http(
    server: &HttpServer,
    answers: Vec<&'static str>,
    modern: bool,
) -> (
    RunningService<RoleClient, Person>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let (updates, receiver) = tokio::sync::mpsc::unbounded_channel();
    let person = Person {
        answers: std::sync::Arc::new(std::sync::Mutex::new(answers)),
        updates,
    };
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(server.token.clone());
    let transport = StreamableHttpClientTransport::from_config(config);
    let client = if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        person.serve_with_lifecycle(transport, lifecycle).await.unwrap()
    } else {
        person.serve(transport).await.unwrap()
    };
    (client, receiver)
}

fn add_note(q: &Quire, title: &str) -> String {
    let note = q
        .run(&["--json", "note", "add", "--title", title, "--body", "text"])
        .json();
    note["note_id"].as_str().unwrap().to_owned()
}

fn in_trash(q: &Quire, id: &str) -> bool {
    let trash = q.run(&["--json", "note", "list", "--trash"]).json();
    trash.to_string().contains(id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_deletes_are_confirmed_by_the_person_in_both_eras() {
    let q = Quire::new();
    let server = start_http(&q);
    for modern in [false, true] {
        let kept = add_note(&q, "Keep");
        let gone = add_note(&q, "Drop");
        let (client, _) = person_over_http(&server, vec!["decline", "accept"], modern).await;
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
        assert!(!in_trash(&q, &kept) && in_trash(&q, &gone), "modern: {modern}");
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
    let (client, _) = person_over_http(&server, vec!["accept"], false).await;
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
    let (client, mut updates) = person_over_http(&server, Vec::new(), false).await;
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
    assert_eq!(heard, uri);
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

async fn client_with_token(server: &HttpServer, token: &str) -> RunningService<RoleClient, ClientConfig> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone()).auth_header(token.to_owned());
    ClientConfig::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap()
}

/// A workspace with a note in Work and one at the top level, to scope clients to Work.
fn work_and_home(q: &Quire) -> (String, String) {
    let work = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Work plan",
            "--body",
            "ship in May",
            "--notebook",
            "Work",
        ])
        .json();
    let home = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Home plan",
            "--body",
            "paint the kitchen",
        ])
        .json();
    (
        work["note_id"].as_str().unwrap().to_owned(),
        home["note_id"].as_str().unwrap().to_owned(),
    )
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
    let scoped = client_with_token(&server, &named).await;
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

    let reader = client_with_token(&server, &readonly).await;
    let names: Vec<String> = reader
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!names.iter().any(|n| n == "create_note") && names.iter().any(|n| n == "read_note"));
    reader.cancel().await.unwrap();
    let body = q.run(&["--json", "note", "show", &home]).json();
    assert_eq!(body["body"], "paint the kitchen");

    // Revoked, the token stops working at once, on the server already running, and a subscription made with it
    // hears nothing more.
    let (watcher, mut updates) = person_over_http_with(&server, &named).await;
    #[expect(deprecated, reason = "resources/subscribe is how 2025-11-25 clients subscribe")]
    watcher
        .subscribe(rmcp::model::SubscribeRequestParams::new(format!("quire://note/{work}")))
        .await
        .unwrap();
    assert_eq!(q.run(&["mcp", "token", "revoke", "work-laptop"]).code, 0);
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let edit = q.run(&[
        "tools",
        "call",
        "update_note",
        &json!({"note_id": work, "append": "later"}).to_string(),
    ]);
    assert_eq!(edit.code, 0, "{}", edit.stderr);
    let heard = tokio::time::timeout(std::time::Duration::from_millis(1500), updates.recv()).await;
    assert!(heard.is_err(), "a revoked token's subscription went on: {heard:?}");
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
    for _ in 0..40 {
        if refused == 401 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        refused = status().await;
    }
    assert_eq!(refused, 401);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quire_mcp_notebook_scopes_a_stdio_client() {
    let q = Quire::new();
    let (work, home) = work_and_home(&q);
    // Another notebook titled Work, inside Personal: `--notebook Work` still means the one at the top.
    let nested = q.run(&["note", "add", "--title", "Nested", "--notebook", "Personal/Work"]);
    assert_eq!(nested.code, 0, "{}", nested.stderr);
    let mut command = tokio::process::Command::from(q.command());
    command
        .arg("--workspace")
        .arg(q.workspace())
        .args(["mcp", "--notebook", "Work"]);
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ClientConfig::default().serve(transport).await.unwrap();
    let notebooks = client
        .call_tool(args(json!({"name": "list_notebooks", "arguments": {}})))
        .await
        .unwrap();
    let notebooks = notebooks.structured_content.unwrap().to_string();
    assert!(notebooks.contains("Work") && !notebooks.contains("Home"), "{notebooks}");
    let hidden = client
        .call_tool(args(json!({"name": "read_note", "arguments": {"note_id": home}})))
        .await
        .unwrap();
    assert_eq!(hidden.is_error, Some(true));
    let seen = client
        .call_tool(args(json!({"name": "read_note", "arguments": {"note_id": work}})))
        .await
        .unwrap();
    assert_ne!(seen.is_error, Some(true));
    client.cancel().await.unwrap();
    let bad = q.run(&["mcp", "--notebook", "Nowhere"]);
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("Nowhere"), "{}", bad.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_complete_and_render_over_stdio() {
    let q = Quire::new();
    let (work, _) = work_and_home(&q);
    let client = connect(&q, false).await;
    let titles = client
        .complete_prompt_simple("summarize_note", "note", "work")
        .await
        .unwrap();
    assert_eq!(titles, ["Work plan"]);
    let books = client
        .complete_prompt_simple("draft_from_notes", "notebook", "wo")
        .await
        .unwrap();
    assert_eq!(books, ["Work"]);
    let arguments = json!({"note": "Work plan"}).as_object().unwrap().clone();
    let prompt = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("summarize_note").with_arguments(arguments))
        .await
        .unwrap();
    let prompt = serde_json::to_string(&prompt).unwrap();
    assert!(
        prompt.contains(&format!("quire://note/{work}")) && prompt.contains("ship in May"),
        "{prompt}"
    );
    let draft = json!({"topic": "plan", "notebook": "Work"})
        .as_object()
        .unwrap()
        .clone();
    let draft = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("draft_from_notes").with_arguments(draft))
        .await
        .unwrap();
    let draft = serde_json::to_string(&draft).unwrap();
    assert!(draft.contains("ship in May") && !draft.contains("kitchen"), "{draft}");
    client.cancel().await.unwrap();
}
