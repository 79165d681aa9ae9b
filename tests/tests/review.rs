//! Staged writes end to end (issue 35), with the official Python MCP SDK as the client (`tests/review/
//! review_client.py`, which declares no elicitation, as Claude Desktop and ChatGPT do not): over stdio with `quire mcp
//! --review`, and over HTTP with a named token made with `--review` beside one without. The client's writes change
//! nothing until `quire review accept`; its reads show them as pending; a destructive call from a client that cannot
//! ask is staged by default; accepting merges onto later edits, is attributed to the client and undoes.
//!
//! `cargo xtask ci` installs the SDK (`QUIRE_PLUGIN_RUNTIMES`), which makes these tests mandatory; elsewhere they
//! skip and say so.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::path::{Path, PathBuf};
use std::process::Command;

use quire_tests::Quire;
use serde_json::{Value, json};

fn python() -> Option<PathBuf> {
    let Ok(dir) = std::env::var("QUIRE_PLUGIN_RUNTIMES") else {
        eprintln!("skipped: QUIRE_PLUGIN_RUNTIMES is not set (`cargo xtask ci` installs the Python MCP SDK)");
        return None;
    };
    let python = PathBuf::from(dir).join("bin/python");
    assert!(python.exists(), "{} is missing", python.display());
    Some(python)
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("review/review_client.py")
}

/// The Python SDK client, in the test's environment, running `steps`; one answer per step.
fn client(q: &Quire, python: &Path, transport: &[&str], steps: Value) -> Vec<Value> {
    let mut command = Command::new(python);
    for (key, value) in q.command().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command
        .arg(client_script())
        .arg("--steps")
        .arg(steps.to_string())
        .args(transport);
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stdio<'a>(q: &'a Quire, binary: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let _ = q;
    let mut args = vec!["--stdio", binary, "mcp"];
    args.extend_from_slice(extra);
    args
}

fn add_note(q: &Quire, title: &str, body: &str) -> String {
    let run = q.run(&["--json", "note", "add", "--title", title, "--body", body]);
    run.json()["note_id"].as_str().unwrap().to_owned()
}

fn note(q: &Quire, id: &str) -> Value {
    q.run(&["--json", "note", "show", id]).json()
}

fn texts(answer: &Value) -> String {
    answer["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_staged_client_changes_nothing_until_accepted_and_reads_its_pending_version() {
    let Some(python) = python() else { return };
    let q = Quire::new();
    let plan = add_note(&q, "Plan", "one\ntwo\nthree\n");
    let binary = quire_tests::binary();
    let binary = binary.to_str().unwrap();
    let workspace = q.workspace();
    let ws = workspace.to_str().unwrap();
    let over = stdio(&q, binary, &["--review"]);
    let mut transport = over.clone();
    transport.splice(2..2, ["--workspace", ws]);
    let answers = client(
        &q,
        &python,
        &transport,
        json!([
            {"call": "update_note", "args": {"note_id": plan, "body": "ONE\ntwo\nthree\nfour\n"}},
            {"call": "create_note", "args": {"title": "Shopping", "body": "- milk", "tags": ["errands"]}},
            {"call": "read_note", "args": {"note_id": plan}},
            {"call": "search_notes", "args": {"query": "milk"}},
        ]),
    );
    for staged in &answers[..2] {
        assert!(texts(staged).contains("waits in review 1"), "{staged}");
        assert_eq!(staged["meta"]["quire/review"]["status"], "staged");
    }
    // Its reads see its pending version, and say so.
    assert_eq!(answers[2]["structured"]["body"], "ONE\ntwo\nthree\nfour\n");
    assert_eq!(answers[2]["meta"]["quire/review"]["status"], "shows_pending");
    assert_eq!(answers[3]["structured"]["total"], 1, "{}", answers[3]);
    // Nothing was written.
    assert_eq!(note(&q, &plan)["body"], "one\ntwo\nthree\n");
    assert!(!q.run(&["note", "list"]).stdout.contains("Shopping"));
    // The user changes the note meanwhile; the review shows the changes by note, with ids.
    assert_eq!(q.run(&["note", "add", "--title", "Other"]).code, 0);
    let shown = q.run(&["review", "show", "1"]);
    assert!(
        shown.stdout.contains("note \"Plan\"") && shown.stdout.contains("+ four"),
        "{shown:?}"
    );
    let review = q.run(&["--json", "review", "show", "1"]).json();
    let hunks = &review["items"][0]["hunks"];
    assert_eq!(hunks.as_array().unwrap().len(), 2, "{review}");
    // Accept only the added line: the note gets it, the first line stays.
    let added = hunks[1]["id"].as_str().unwrap();
    let accepted = q.run(&["review", "accept", "1", "--change", added]);
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert!(
        accepted.stdout.contains("Accepted 1 change(s) as change set"),
        "{accepted:?}"
    );
    assert_eq!(note(&q, &plan)["body"], "one\ntwo\nthree\nfour\n");
    // The rest rejected; the new note never appears.
    let rejected = q.run(&["review", "reject", "1"]);
    assert!(rejected.stdout.contains("Rejected 3 change(s)"), "{rejected:?}");
    assert!(!q.run(&["note", "list"]).stdout.contains("Shopping"));
    assert!(q.run(&["review", "list"]).stdout.contains("Nothing waits for review."));
    // The accepted change is the client's in the history, and undoes.
    let history = q.run(&["--json", "history"]).json();
    let set = &history["change_sets"][0];
    assert_eq!(set["actor"], "mcp client mcp", "{set}");
    let id = set["change_set_id"].as_str().unwrap().to_owned();
    assert_eq!(q.run(&["undo", &id]).code, 0);
    assert_eq!(note(&q, &plan)["body"], "one\ntwo\nthree\n");
    // The client hears the outcome from its review resource.
    let outcome = client(&q, &python, &transport, json!([{"read": "quire://review/1"}]));
    let review: Value = serde_json::from_str(outcome[0]["text"].as_str().unwrap()).unwrap();
    let states: Vec<&str> = review["items"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|i| {
            i["hunks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["state"].as_str().unwrap())
        })
        .collect();
    assert!(states.contains(&"undone") && states.contains(&"rejected"), "{states:?}");
    // Another client's review is not there for it.
    let missing = client(&q, &python, &transport, json!([{"read": "quire://review/99"}]));
    assert!(
        missing[0]["error"].as_str().unwrap().contains("not found"),
        "{missing:?}"
    );
}

#[test]
fn a_destructive_call_from_a_client_that_cannot_ask_is_staged_by_default() {
    let Some(python) = python() else { return };
    let q = Quire::new();
    let old = add_note(&q, "Old idea", "obsolete");
    let keep = add_note(&q, "Keep", "as it is");
    let binary = quire_tests::binary();
    let workspace = q.workspace();
    let transport = [
        "--stdio",
        binary.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
        "mcp",
    ];
    let answers = client(
        &q,
        &python,
        &transport,
        json!([
            {"call": "delete_note", "args": {"note_id": old}},
            {"call": "update_note", "args": {"note_id": keep, "title": "Kept"}},
        ]),
    );
    assert!(texts(&answers[0]).contains("waits in review 1"), "{}", answers[0]);
    assert_eq!(note(&q, &old)["in_trash"], false, "staged, not run");
    // Its other writes apply as they did.
    assert!(!texts(&answers[1]).contains("review"), "{}", answers[1]);
    assert_eq!(note(&q, &keep)["title"], "Kept");
    assert_eq!(q.run(&["review", "accept", "1"]).code, 0);
    assert_eq!(note(&q, &old)["in_trash"], true);
    // `confirm_destructive = "ask"` runs it, as before.
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[mcp]\nconfirm_destructive = \"ask\"\n").unwrap();
    let answers = client(
        &q,
        &python,
        &transport,
        json!([{"call": "delete_note", "args": {"note_id": keep}}]),
    );
    assert!(!texts(&answers[0]).contains("review"), "{}", answers[0]);
    assert_eq!(note(&q, &keep)["in_trash"], true);
}

#[test]
fn a_named_token_made_with_review_stages_over_http_and_another_token_applies() {
    let Some(python) = python() else { return };
    let q = Quire::new();
    let plan = add_note(&q, "Plan", "draft");
    let reviewed = q
        .run(&["mcp", "token", "add", "laptop", "--review"])
        .stdout
        .trim()
        .to_owned();
    let direct = q.run(&["mcp", "token", "add", "desk"]).stdout.trim().to_owned();
    let listed = q.run(&["mcp", "token", "list"]).stdout;
    assert!(
        listed.contains("laptop  reaches the whole workspace, writes staged for review"),
        "{listed}"
    );
    let server = quire_tests::McpHttp::start(&q);
    let staged = client(
        &q,
        &python,
        &["--http", &server.url, "--token", &reviewed],
        json!([{"call": "update_note", "args": {"note_id": plan, "body": "final"}}, {"call": "read_note", "args": {"note_id": plan}}]),
    );
    assert!(texts(&staged[0]).contains("waits in review 1"), "{}", staged[0]);
    assert_eq!(staged[1]["structured"]["body"], "final");
    assert_eq!(note(&q, &plan)["body"], "draft");
    let listed = q.run(&["review", "list"]).stdout;
    assert!(listed.contains("mcp (token laptop)"), "{listed}");
    // The other token writes at once, and does not see the first client's pending change.
    let applied = client(
        &q,
        &python,
        &["--http", &server.url, "--token", &direct],
        json!([{"call": "read_note", "args": {"note_id": plan}}, {"call": "create_note", "args": {"title": "Direct"}}]),
    );
    assert_eq!(applied[0]["structured"]["body"], "draft");
    assert!(q.run(&["note", "list"]).stdout.contains("Direct"));
    // Accepted, the change is there for everyone.
    assert_eq!(q.run(&["review", "accept", "1"]).code, 0);
    assert_eq!(note(&q, &plan)["body"], "final");
}
