//! End to end: rmcp's client against the real `quire mcp`, over stdio (both protocol eras) and Streamable HTTP. This
//! file holds the stdio tests and what every area shares; `mcp/http.rs` the HTTP server, `mcp/tokens.rs` tokens.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests stop where they fail")]

// The modules live in `tests/tests/mcp/` (a file directly in `tests/tests/` would be a test binary of its own), and
// this file stays the root so that the tools/list snapshot below keeps its name and place.
#[path = "mcp/http.rs"]
mod http;
#[path = "mcp/tokens.rs"]
mod tokens;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use quire_test_support::mcp::{Client, Era, connect_to_child, tool_names};
use quire_tests::Quire;
use rmcp::model::{CallToolRequestParams, ClientConfig};
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

/// `quire --workspace <its workspace> mcp <extra>`, ready to start as a child process.
fn mcp_command(q: &Quire, extra: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::from(q.command());
    command.arg("--workspace").arg(q.workspace()).arg("mcp").args(extra);
    command
}

/// A client of `quire mcp` over its standard input and output.
async fn connect(q: &Quire, era: Era) -> Client {
    connect_to_child(mcp_command(q, &[]), ClientConfig::default(), era).await
}

/// A `tools/call` request from `{"name": ..., "arguments": {...}}`.
fn args(value: Value) -> CallToolRequestParams {
    let name = value["name"].as_str().unwrap().to_owned();
    let mut params = CallToolRequestParams::new(name);
    if let Some(arguments) = value["arguments"].as_object() {
        params = params.with_arguments(arguments.clone());
    }
    params
}

/// A note added through the CLI; its id.
fn add_note(q: &Quire, title: &str) -> String {
    let note = q
        .run(&["--json", "note", "add", "--title", title, "--body", "text"])
        .json();
    note["note_id"].as_str().unwrap().to_owned()
}

/// Whether the note is in the trash, as the CLI lists it.
fn in_trash(q: &Quire, id: &str) -> bool {
    let trash = q.run(&["--json", "note", "list", "--trash"]).json();
    trash.to_string().contains(id)
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

async fn round_trip(era: Era) {
    let (q, secret) = workspace_with_a_protected_note();
    let client = connect(&q, era).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.len(), 24, "{names:?}");
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
    round_trip(Era::Legacy).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_round_trip_stateless_era() {
    round_trip(Era::Stateless).await;
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
    let client = connect(&q, Era::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    insta::assert_json_snapshot!("mcp_tools_list", tools);
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
            let client = connect_to_child(mcp_command(q, extra), ClientConfig::default(), Era::Legacy).await;
            let names = tool_names(&client).await;
            client.cancel().await.unwrap();
            names
        }
    };
    let from_file = names(&[]).await;
    assert_eq!(from_file.len(), 23);
    assert!(!from_file.contains(&"recent_changes".to_owned()));
    let read_only = names(&["--read-only", "--disable-tool", "read_note"]).await;
    assert_eq!(read_only.len(), 10, "{read_only:?}");
    assert!(
        read_only
            .iter()
            .all(|n| !n.starts_with("create") && n != "read_note" && n != "recent_changes")
    );

    std::fs::write(config.join("config.toml"), "[mcp]\nread_only = true\n").unwrap();
    assert_eq!(names(&[]).await.len(), 12);

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quire_mcp_notebook_scopes_a_stdio_client() {
    let q = Quire::new();
    let (work, home) = work_and_home(&q);
    // Another notebook titled Work, inside Personal: `--notebook Work` still means the one at the top.
    let nested = q.run(&["note", "add", "--title", "Nested", "--notebook", "Personal/Work"]);
    assert_eq!(nested.code, 0, "{}", nested.stderr);
    let command = mcp_command(&q, &["--notebook", "Work"]);
    let client = connect_to_child(command, ClientConfig::default(), Era::Legacy).await;
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
    let client = connect(&q, Era::Legacy).await;
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

#[test]
fn processes_making_the_token_at_once_all_get_the_one_written() {
    // `quire mcp --http` starting while `quire mcp token` runs made two tokens, and one process failed to write its
    // file (found by the browser tests, at random).
    let q = Quire::new();
    let children: Vec<_> = (0..6)
        .map(|_| {
            q.command()
                .args(["mcp", "token"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let tokens: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        })
        .collect();
    assert!(tokens.iter().all(|t| t.len() == 64 && *t == tokens[0]), "{tokens:?}");
    assert_eq!(q.run(&["mcp", "token"]).stdout.trim(), tokens[0], "the one on disk");
}

/// The read ledger (issue 49): what an MCP client reads is recorded by core, whatever the server does with it, and
/// `quire ledger` in another process lists it (by note, by client, since a time) with the part that was read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quire_ledger_lists_what_an_mcp_client_read() {
    let (q, diary) = workspace_with_a_protected_note();
    let long = "word ".repeat(2_000);
    let note = q
        .run(&["--json", "note", "add", "--title", "Long plan", "--body", &long])
        .json();
    let id = note["note_id"].as_str().unwrap().to_owned();
    assert!(q.run(&["ledger"]).stdout.contains("Nothing was read by AI yet"));
    let client = connect(&q, Era::Legacy).await;
    let read = client
        .call_tool(args(
            json!({"name": "read_note", "arguments": {"note_id": id, "max_chars": 100}}),
        ))
        .await
        .unwrap();
    assert_ne!(read.is_error, Some(true));
    let refused = client
        .call_tool(args(json!({"name": "read_note", "arguments": {"note_id": diary}})))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    // Listed from another process while the server still runs: the server writes its batch within moments.
    let mut entries = Value::Null;
    for _ in 0..300 {
        entries = q.run(&["--json", "ledger", "--note", &id]).json()["entries"].clone();
        if entries.as_array().is_some_and(|e| !e.is_empty()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let entry = &entries[0];
    assert_eq!(entry["actor"], "mcp");
    assert_eq!(entry["title"], "Long plan");
    assert_eq!(entry["part"], "characters 0-100 of 10000", "{entry}");
    let name = entry["client"].as_str().unwrap().to_owned();
    let text = q.run(&["ledger", "--client", &name, "--since", "day-1"]).stdout;
    assert!(
        text.contains(&format!("{name}  read “Long plan” [{id}], characters 0-100 of 10000")),
        "{text}"
    );
    let refused_rows = q.run(&["--json", "ledger", "--note", &diary]).json();
    assert_eq!(refused_rows["entries"], json!([]), "a refused read is no read");
    let none = q.run(&["ledger", "--client", "nobody"]);
    assert!(none.stdout.contains("Nothing was read by AI that matches"));
    let wrong = q.run(&["ledger", "--since", "whenever"]);
    assert_ne!(wrong.code, 0);
    assert!(wrong.stderr.contains("--since"), "{}", wrong.stderr);
    client.cancel().await.unwrap();
}
