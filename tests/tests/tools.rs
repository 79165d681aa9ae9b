//! End to end: `quire tools list` and `quire tools call`, which call tools exactly as an AI client would.

use quire_tests::Quire;
use serde_json::json;

#[test]
fn list_shows_every_tool() {
    let q = Quire::new();
    let tools = q.run(&["--json", "tools", "list"]).json();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 24);
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    assert!(tools[0]["input_schema"]["type"] == "object");
    let text = q.run(&["tools", "list"]).stdout;
    assert!(
        text.contains("delete_note            destructive  Delete note"),
        "{text}"
    );
    assert!(text.ends_with("24 tools. Call one with: quire tools call NAME '{\"arg\": \"value\"}'\n"));
}

#[test]
fn call_runs_as_an_ai_client_with_the_guards() {
    let q = Quire::new();
    let created = q
        .run(&[
            "tools",
            "call",
            "create_note",
            r#"{"title": "Plan", "content": "draft one"}"#,
        ])
        .json();
    let id = created["note_id"].as_str().unwrap().to_owned();
    let edit = json!({"note_id": id, "edits": [{"find": "one", "replace": "two"}]}).to_string();
    assert_eq!(
        q.run(&["tools", "call", "update_note", &edit]).json()["changed"],
        json!(["body"])
    );

    // The change is logged as an MCP client's, with a revision, not as the user's.
    let changes = q.run(&["tools", "call", "recent_changes", r#"{"limit": 1}"#]).json();
    assert_eq!(changes["changes"][0]["actor"], "mcp client quire cli");

    // Protected by the user, the note is out of the tools' reach.
    assert_eq!(q.run(&["note", "protect", &id]).code, 0);
    let refused = q.run(&["tools", "call", "update_note", &edit]);
    assert_eq!(refused.code, 1);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&refused.stdout).unwrap(),
        json!({"error": "Note is protected and cannot be modified"})
    );
    let read = q.run(&["tools", "call", "read_note", &json!({"note_id": id}).to_string()]);
    assert_eq!((read.code, read.stdout.contains("draft")), (1, false));
    assert!(
        q.run(&["note", "show", &id]).stdout.contains("draft two"),
        "the user still reads it"
    );
}

#[test]
fn bad_calls_fail_clearly() {
    let q = Quire::new();
    let unknown = q.run(&["tools", "call", "drop_everything"]);
    // Every failure is the `{"error": ...}` object on stdout, as `quire tools call --help` promises.
    assert_eq!(unknown.code, 1);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&unknown.stdout).unwrap(),
        json!({"error": "Unknown tool 'drop_everything'. Call one of the listed tools. See `quire tools list`."})
    );
    let bad_json = q.run(&["tools", "call", "read_note", "{oops"]);
    assert_eq!(bad_json.code, 1);
    let error: serde_json::Value = serde_json::from_str(&bad_json.stdout).unwrap();
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .starts_with("The arguments are not valid JSON"),
        "{bad_json:?}"
    );
    let ws = q.workspace();
    let piped = q.run_raw(
        &["--workspace", ws.to_str().unwrap(), "tools", "call", "list_tags", "-"],
        Some("{\"limit\": 5}"),
    );
    assert_eq!(piped.json()["total"], 0);
}
