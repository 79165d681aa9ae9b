//! End to end: the real `quire chat --message ... --json` against a local mock of an OpenAI-compatible API.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use quire_test_support::{Script, mock_openai, sse, text, tool_calls};
use quire_tests::Quire;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

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
    let history = q.run(&["history"]).stdout;
    assert!(history.contains("the assistant in “"), "ux-2 #22 {history}");
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
    note["note_id"].as_str().unwrap().to_owned()
}

fn q_clone(q: &Quire) -> Quire {
    // The same temporary directory, for a run on another thread; the original keeps (and later removes) it.
    Quire::at(q.dir().to_path_buf())
}

#[test]
fn without_a_model_chat_says_how_to_configure_one() {
    let q = Quire::new();
    let run = q.run(&["chat", "--message", "hello"]);
    assert_eq!(run.code, 2, "a missing model is an argument to give: {run:?}");
    assert!(
        run.stderr.contains("no model is configured") && run.stderr.contains("--model PROVIDER:MODEL"),
        "{run:?}"
    );
    let unknown = q.run(&["chat", "--message", "hello", "--model", "acme:big"]);
    assert!(
        unknown.stderr.contains("unknown provider 'acme'") && unknown.code == 2,
        "{unknown:?}"
    );
    let keyless = q.run(&["chat", "--message", "hello", "--model", "openai:gpt-4.1-mini"]);
    assert!(keyless.stderr.contains("set OPENAI_API_KEY"), "{keyless:?}");
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
    let first = run_blocking(
        &q,
        chat_args(
            &q,
            &server,
            &[
                "--message",
                "friendlier greeting",
                "--note",
                &id,
                "--select-text",
                "Dear Sir",
            ],
        ),
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

    let resumed = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "what did I ask?", "--chat", &chat_id]),
        None,
    )
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

/// The arguments of a one-message chat against the mock server, as JSON.
fn chat_args(q: &Quire, server: &MockServer, extra: &[&str]) -> Vec<String> {
    let base = format!("{}/v1", server.uri());
    let ws = q.workspace().to_str().unwrap().to_owned();
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_note_is_never_focused_nor_sent_to_the_model() {
    let q = Quire::new();
    let id = add_note(&q, "Diary", "my secret plans");
    assert_eq!(q.run(&["note", "protect", &id]).code, 0);
    let server = mock_openai(vec![
        tool_calls(&[(
            "rewrite_paragraph",
            json!({"anchor": "my secret plans", "text": "rewritten by AI"}),
        )]),
        text("Tidied."),
    ])
    .await;
    let run = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "tidy this", "--note", &id, "--apply"]),
        None,
    )
    .await;
    assert_eq!(run.code, 2, "a protected --note is a usage error: {run:?}");
    assert!(
        run.stderr.contains("'Diary'") && run.stderr.contains("is protected") && run.stderr.contains(&id),
        "the error names the note and why: {run:?}"
    );
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "nothing reached the model"
    );
    let shown = q.run(&["--json", "note", "show", &id]).json();
    assert_eq!(shown["body"], "my secret plans");
    // Also with a selection: the note is refused before anything else.
    let run = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "x", "--note", &id, "--select", "0..2"]),
        None,
    )
    .await;
    assert_eq!(run.code, 2, "{run:?}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_a_turn_the_focused_note_changes_only_through_previewed_edits() {
    let q = Quire::new();
    let id = add_note(&q, "Letter", "Dear Sir, the rent is due. Yours, Ann");
    let other = add_note(&q, "Other", "Dear Sir, hello");
    let server = mock_openai(vec![
        tool_calls(&[
            ("edit_selection", json!({"text": "Hello Sam"})),
            (
                "update_note",
                json!({"note_id": id, "edits": [{"find": "the rent is due", "replace": "pay now"}]}),
            ),
            ("update_note", json!({"note_id": id, "title": "Renamed"})),
            ("manage_tags", json!({"note_id": id, "add": ["letters"]})),
            (
                "update_note",
                json!({"note_id": other, "edits": [{"find": "hello", "replace": "hi"}]}),
            ),
        ]),
        text("Done."),
    ])
    .await;
    let run = run_blocking(
        &q,
        chat_args(
            &q,
            &server,
            &[
                "--message",
                "friendlier",
                "--note",
                &id,
                "--select-text",
                "Dear Sir",
                "--apply",
            ],
        ),
        None,
    )
    .await;
    let out = run.json();
    let calls: Vec<(String, bool)> = out["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "tool_call")
        .map(|e| (e["name"].as_str().unwrap().to_owned(), e["is_error"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        calls,
        [
            ("edit_selection".to_owned(), false),
            ("update_note".to_owned(), true),
            ("update_note".to_owned(), true),
            ("manage_tags".to_owned(), false),
            ("update_note".to_owned(), false),
        ],
        "{out}"
    );
    let refusal = out["transcript"][2]["output"]["error"].as_str().unwrap();
    assert!(refusal.contains("open in the user's editor"), "{refusal}");
    let note = q.run(&["--json", "note", "show", &id]).json();
    assert_eq!(
        note["body"], "Hello Sam, the rent is due. Yours, Ann",
        "only the selection changed"
    );
    assert_eq!(note["title"], "Letter");
    assert_eq!(note["tags"], json!(["letters"]), "tags stay allowed");
    assert_eq!(
        q.run(&["--json", "note", "show", &other]).json()["body"],
        "Dear Sir, hi"
    );
}

/// A responder that, before answering request number `at`, changes the workspace through the real binary (as an
/// MCP client would while the agent works).
struct ChangeMeanwhile {
    sequence: Script,
    at: usize,
    args: Vec<String>,
    dir: std::path::PathBuf,
}

impl Respond for ChangeMeanwhile {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        if self.sequence.served() == self.at {
            let refs: Vec<&str> = self.args.iter().map(String::as_str).collect();
            let run = Quire::at(self.dir.clone()).run(&refs);
            assert_eq!(run.code, 0, "{run:?}");
        }
        self.sequence.respond(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_is_printed_when_the_edits_cannot_be_applied() {
    let q = Quire::new();
    let id = add_note(&q, "Plan", "Buy milk.\nCall Bob.\n");
    let server = MockServer::start().await;
    let change = json!({"note_id": id, "edits": [{"find": "Call Bob.", "replace": "Call Bob tomorrow."}]});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ChangeMeanwhile {
            sequence: Script::new(vec![
                tool_calls(&[(
                    "rewrite_paragraph",
                    json!({"anchor": "Call Bob.", "text": "Call Robert."}),
                )]),
                text("Renamed Bob."),
            ]),
            at: 1,
            args: vec!["tools".into(), "call".into(), "update_note".into(), change.to_string()],
            dir: q.dir().to_path_buf(),
        })
        .mount(&server)
        .await;
    let run = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "formal names", "--note", &id, "--apply"]),
        None,
    )
    .await;
    assert_eq!(run.code, 1, "{run:?}");
    let out: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {run:?}"));
    assert_eq!(out["applied"], false);
    assert_eq!(out["reply"], "Renamed Bob.");
    assert_eq!(out["edits"].as_array().unwrap().len(), 1);
    assert!(
        out["chat_id"].is_string() && out["transcript"].is_array() && out["usage"].is_object(),
        "{out}"
    );
    let reason = out["not_applied_reason"].as_str().unwrap();
    assert!(
        reason.contains("changed while the agent worked") && reason.contains("edit 1 (rewrite_paragraph)"),
        "{reason}"
    );
    assert_eq!(
        q.run(&["--json", "note", "show", &id]).json()["body"],
        "Buy milk.\nCall Bob tomorrow.\n",
        "the other writer's change is kept, nothing half-applied"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_carry_over_a_change_elsewhere_and_undo_takes_back_the_whole_turn() {
    let q = Quire::new();
    let id = add_note(&q, "Plan", "Buy milk.\nCall Bob.\n");
    let server = MockServer::start().await;
    let change = json!({"note_id": id, "edits": [{"find": "Buy milk.", "replace": "Buy oat milk."}]});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ChangeMeanwhile {
            sequence: Script::new(vec![
                tool_calls(&[
                    (
                        "rewrite_paragraph",
                        json!({"anchor": "Call Bob.", "text": "Call Robert."}),
                    ),
                    ("create_note", json!({"title": "Robert", "body": "a contact"})),
                ]),
                text("Done."),
            ]),
            at: 1,
            args: vec!["tools".into(), "call".into(), "update_note".into(), change.to_string()],
            dir: q.dir().to_path_buf(),
        })
        .mount(&server)
        .await;
    let run = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "formal names", "--note", &id, "--apply"]),
        None,
    )
    .await;
    let out = run.json();
    assert_eq!(out["applied"], true, "{out}");
    assert_eq!(
        q.run(&["--json", "note", "show", &id]).json()["body"],
        "Buy oat milk.\nCall Robert.\n"
    );
    let set = out["change_set_id"].as_str().unwrap().to_owned();
    assert_eq!(out["undo"], format!("quire undo {set}"));
    // The turn's change set holds the accepted edit and the note the agent created; undo takes both back.
    let history = q.run(&["--json", "history", "--note", &id]).json();
    let sets: Vec<&str> = history["change_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["change_set_id"].as_str().unwrap())
        .collect();
    assert!(sets.contains(&set.as_str()), "{history}");
    assert!(!history["revisions"].as_array().unwrap().is_empty(), "{history}");
    let undone = q.run(&["--json", "undo", &set]).json();
    assert_eq!(undone["undone_change_set_id"], set);
    assert_eq!(
        q.run(&["--json", "note", "show", &id]).json()["body"],
        "Buy oat milk.\nCall Bob.\n"
    );
    assert_eq!(q.run(&["--json", "search", "Robert"]).json()["total"], 0);
    let again = q.run(&["undo", &set]);
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("already reverted"), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_stopped_at_the_step_limit_says_how_to_undo_what_it_wrote() {
    let q = Quire::new();
    let responses = (0..8)
        .map(|i| tool_calls(&[("create_note", json!({"title": format!("Loop {i}"), "body": "again"}))]))
        .collect();
    let server = mock_openai(responses).await;
    let mut args = chat_args(&q, &server, &["--message", "make notes"]);
    let run = run_blocking(&q, args.clone(), None).await;
    assert_eq!(run.code, 1, "{run:?}");
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(out["error"].as_str().unwrap().contains("after 8 steps"), "{out}");
    let set = out["change_set_id"].as_str().unwrap().to_owned();
    assert_eq!(q.run(&["--json", "search", "loop"]).json()["total"], 8);
    assert_eq!(q.run(&["undo", &set]).code, 0);
    assert_eq!(q.run(&["--json", "search", "loop"]).json()["total"], 0);
    // In text mode the undo command is printed too.
    let server = mock_openai(vec![
        tool_calls(&[("create_note", json!({"title": "Once", "body": "x"}))]),
        text("Made it."),
    ])
    .await;
    args = chat_args(&q, &server, &["--message", "make one"]);
    args.retain(|a| a != "--json");
    let run = run_blocking(&q, args, None).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("undo them with: quire undo "), "{run:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_chat_arguments_exit_2_and_say_why() {
    let q = Quire::new();
    let id = add_note(&q, "Short", "tiny text");
    let server = mock_openai(vec![text("never sent")]).await;
    for (extra, expected) in [
        (
            vec!["--note", id.as_str(), "--select", "100..200"],
            "does not fit the note, which has 9 characters",
        ),
        (vec!["--note", id.as_str(), "--select", "5..2"], "does not fit the note"),
        (
            vec!["--note", id.as_str(), "--select-text", ""],
            "--select-text is empty",
        ),
        (vec!["--note", "nope"], "--note nope: Note not found"),
        (vec!["--chat", "nope"], "--chat nope: no stored chat has this id"),
    ] {
        let mut args = chat_args(&q, &server, &["--message", "x"]);
        args.extend(extra.iter().map(|s| s.to_string()));
        let run = run_blocking(&q, args, None).await;
        assert_eq!(run.code, 2, "{extra:?}: {run:?}");
        assert!(run.stderr.contains(expected), "{extra:?}: {run:?}");
        let error: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
        assert!(
            error["error"].as_str().unwrap().contains(expected),
            "--json says it too: {error}"
        );
    }
    let bad_model = q.run(&["chat", "--message", "x", "--model", "foo"]);
    assert_eq!(bad_model.code, 2, "{bad_model:?}");
    assert!(
        bad_model
            .stderr
            .starts_with("error: --model foo: 'foo' is not PROVIDER:MODEL"),
        "{bad_model:?}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_call_without_approval_is_explained() {
    let q = Quire::new();
    let id = add_note(&q, "Old", "x");
    let server = mock_openai(vec![
        tool_calls(&[("delete_note", json!({"note_id": id}))]),
        text("I could not delete it."),
    ])
    .await;
    let mut args = chat_args(&q, &server, &["--message", "delete Old"]);
    args.retain(|a| a != "--json");
    let run = run_blocking(&q, args, None).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("· delete_note (not run: it needs your approval; pass --approve-destructive"),
        "{run:?}"
    );
    let requests = server.received_requests().await.unwrap();
    let second: Value = serde_json::from_slice(&requests[1].body).unwrap();
    let told = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        told.contains("needs the user's approval, which this chat cannot ask for"),
        "{told}"
    );
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["in_trash"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_named_in_chat_models_is_picked_by_its_name() {
    let q = Quire::new();
    let server = mock_openai(vec![text("Hello from the named model.")]).await;
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[chat]\nmodel = \"openai:gpt-4.1-mini\"\n\n[[chat.models]]\nname = \"local\"\nmodel = \
             \"openai-compatible:qwen\"\nbase_url = \"{}/v1\"\n",
            server.uri()
        ),
    )
    .unwrap();
    let ws = q.workspace().to_str().unwrap().to_owned();
    let args = [
        "--workspace",
        &ws,
        "--json",
        "chat",
        "--model",
        "local",
        "--message",
        "hi",
    ];
    let run = run_blocking(&q, args.iter().map(|s| s.to_string()).collect(), None).await;
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.json()["reply"], "Hello from the named model.");
    let sent: Value = serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(sent["model"], "qwen", "the entry's model, at the entry's base URL");
}

/// A long note is sent as its outline and some lines (`[chat] note_view_tokens`); a part is read before it is changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_note_is_sent_as_its_outline_and_read_before_it_is_changed() {
    let q = Quire::new();
    let line = |l: usize, p: usize| format!("Line {l} of part {p}, which says a little about the plan.\n");
    let body: String = (0..20)
        .map(|p| format!("## Part {p}\n\n{}", (0..10).map(|l| line(l, p)).collect::<String>()))
        .collect();
    let id = add_note(&q, "Plan", &body);
    std::fs::create_dir_all(q.dir().join("home/.config/quire")).unwrap();
    std::fs::write(
        q.dir().join("home/.config/quire/config.toml"),
        "[chat]\nnote_view_tokens = 400\n",
    )
    .unwrap();
    let anchor = "Line 3 of part 17, which says a little about the plan.";
    let offset = body[..body.find("## Part 17").unwrap()].chars().count();
    let rewrite = (
        "rewrite_paragraph",
        json!({"anchor": anchor, "text": "Part 17 is done."}),
    );
    let server = mock_openai(vec![
        tool_calls(std::slice::from_ref(&rewrite)),
        tool_calls(&[("read_note", json!({"note_id": id, "offset": offset}))]),
        tool_calls(&[rewrite]),
        text("Rewritten."),
    ])
    .await;
    let out = run_blocking(
        &q,
        chat_args(&q, &server, &["--message", "mark part 17 done", "--note", &id]),
        None,
    )
    .await
    .json();
    assert!(out["diff"].as_str().unwrap().contains("+Part 17 is done."), "{out}");
    let requests = server.received_requests().await.unwrap();
    let first: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("The note is long") && system.contains("## Part 1 (line 13, offset 551)"),
        "{system}"
    );
    assert!(system.contains("(more headings: read_note lists them all)"), "{system}");
    assert!(!system.contains(anchor), "the far part is not sent");
    let second: Value = serde_json::from_slice(&requests[1].body).unwrap();
    assert!(
        second.to_string().contains("has not been read in this turn"),
        "the unseen edit was refused"
    );
}
