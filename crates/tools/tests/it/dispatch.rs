//! Dispatch: argument errors, aliases, unknown tools, all-or-nothing writes, actors and change sets, async calls.

use quire_core::{Actor, Page};
use quire_tools::{Error, ToolActor, ToolRegistry};
use serde_json::json;

use crate::fixture::Fixture;

#[test]
fn unknown_tools_are_their_own_error() {
    let fx = Fixture::new();
    let err = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("t"), "drop_database", json!({}))
        .unwrap_err();
    assert!(matches!(err, Error::UnknownTool { ref name } if name == "drop_database"));
    assert_eq!(
        err.to_string(),
        "Unknown tool 'drop_database'. Call one of the listed tools."
    );
}

#[test]
fn argument_errors_name_the_field_and_list_the_arguments() {
    let fx = Fixture::new();
    let check = |tool: &str, args: serde_json::Value, expected: &str| {
        let result = fx.call(tool, args);
        assert_eq!(result["error"].as_str().unwrap(), expected, "{tool}");
    };
    check(
        "read_note",
        json!({"note_id": true}),
        "Invalid arguments for read_note: `note_id`: invalid type: boolean `true`, expected a string. Expected \
         arguments: max_chars (integer), note_id (string, required), offset (integer).",
    );
    check(
        "update_note",
        json!({"note_id": "x", "edits": [{"find": "a", "replace": 1}]}),
        "Invalid arguments for update_note: `edits[0].replace`: invalid type: integer `1`, expected a string. \
         Expected arguments: append (string), body (string), completed (boolean), edits (array of object), note_id \
         (string, required), prepend (string), title (string), update_links (boolean).",
    );
    check(
        "list_tags",
        json!({"limit": -1}),
        "Invalid arguments for list_tags: `limit`: invalid value: integer `-1`, expected u64. Expected arguments: \
         limit (integer), offset (integer).",
    );
    check(
        "move_note",
        json!("x"),
        "Invalid arguments for move_note: expected a JSON object of named arguments, got a string. Expected \
         arguments: note_id (string, required), notebook_id (string, required).",
    );
}

#[test]
fn null_arguments_mean_none() {
    let fx = Fixture::new();
    assert!(fx.call("list_notebooks", serde_json::Value::Null)["notebooks"].is_array());
}

#[test]
fn a_failed_edit_list_changes_nothing() {
    let fx = Fixture::new();
    let before = fx.call("read_note", fx.args(json!({"note_id": "{plain}"})));
    let result = fx.call(
        "update_note",
        fx.args(json!({"note_id": "{plain}", "edits": [{"find": "March", "replace": "April"}, {"find": "absent", "replace": "x"}]})),
    );
    assert_eq!(
        result["error"],
        "Edit 2 of 2: find matches 0 times. It must match the note exactly, including spaces, line breaks and \
         punctuation, after the earlier edits; read the note again with read_note and copy the text. No edit was \
         applied."
    );
    assert_eq!(fx.call("read_note", fx.args(json!({"note_id": "{plain}"}))), before);
    let revisions = fx.ws.read(&Actor::User, |r| r.revisions(&fx.plain)).unwrap();
    assert!(revisions.is_empty(), "a refused update saves no revision");
}

#[test]
fn writes_are_logged_as_the_calling_actor_with_a_revision() {
    let fx = Fixture::new();
    let actor = ToolActor::agent("chat-1", 4);
    let args = fx.args(json!({"note_id": "{plain}", "append": "More."}));
    let result = fx.tools.call(&fx.ws, &actor, "update_note", args).unwrap();
    assert!(!result.is_error, "{:?}", result.value);
    fx.tools
        .call(
            &fx.ws,
            &actor,
            "manage_tags",
            fx.args(json!({"note_id": "{plain}", "add": ["x"]})),
        )
        .unwrap();
    let (changes, revisions) = fx
        .ws
        .read(&Actor::User, |r| {
            Ok::<_, quire_core::Error>((r.changes(None, Page::first(3))?, r.revisions(&fx.plain)?))
        })
        .unwrap();
    assert!(changes.items.iter().take(3).all(|c| c.actor == *actor.actor()));
    let sets: std::collections::BTreeSet<_> = changes.items.iter().take(3).map(|c| c.change_set_id.clone()).collect();
    assert_eq!(sets.len(), 1, "one agent turn is one change set");
    assert_eq!(revisions.len(), 1);
    assert_eq!(revisions[0].actor, *actor.actor());
}

#[test]
fn success_never_has_an_error_key_and_errors_have_only_that() {
    let fx = Fixture::new();
    let ok = fx
        .tools
        .call(&fx.ws, &ToolActor::mcp("t"), "list_tags", json!({}))
        .unwrap();
    assert!(!ok.is_error && ok.value.get("error").is_none() && ok.error_message().is_none());
    let failed = fx
        .tools
        .call(
            &fx.ws,
            &ToolActor::mcp("t"),
            "read_note",
            fx.args(json!({"note_id": "{secret}"})),
        )
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(
        failed.value,
        json!({"error": "Note is protected; its content cannot be read"})
    );
    assert_eq!(
        failed.error_message(),
        Some("Note is protected; its content cannot be read")
    );
}

#[tokio::test(flavor = "current_thread")]
async fn call_async_runs_the_same_call() {
    let fx = Fixture::new();
    let tools = ToolRegistry::builtin();
    let actor = ToolActor::mcp("async");
    let created = tools
        .call_async(
            &fx.ws,
            &actor,
            "create_note",
            json!({"title": "Async", "body": "works"}),
        )
        .await
        .unwrap();
    assert!(!created.is_error, "{:?}", created.value);
    let id = created.value["note_id"].as_str().unwrap().to_owned();
    let read = tools
        .call_async(&fx.ws, &actor, "read_note", json!({"note_id": id}))
        .await
        .unwrap();
    assert_eq!(read.value["body"], "works");
    assert!(matches!(
        tools.call_async(&fx.ws, &actor, "nope", json!({})).await,
        Err(Error::UnknownTool { .. })
    ));
}

/// A quick read (`read_note`) answers on the first poll, on the caller's thread: over MCP, the hand-off to a
/// blocking thread and back cost more than the read. Any other built-in tool is handed off.
#[tokio::test(flavor = "current_thread")]
async fn quick_reads_run_where_they_are_called() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let fx = Fixture::new();
    let tools = ToolRegistry::builtin();
    let actor = ToolActor::mcp("async");
    let id = fx.call("create_note", json!({"title": "Quick", "body": "read"}))["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let poll_once = |name: &str, args: serde_json::Value| {
        let mut call = Box::pin(tools.call_async(&fx.ws, &actor, name, args));
        call.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    };
    let Poll::Ready(Ok(read)) = poll_once("read_note", json!({"note_id": id})) else {
        panic!("read_note did not answer on the first poll");
    };
    assert_eq!(read.value["body"], "read");
    let Poll::Ready(Ok(attributes)) = poll_once("get_attributes", json!({"note_id": id})) else {
        panic!("get_attributes did not answer on the first poll");
    };
    assert_eq!(attributes.value["note_id"], id.as_str());
    // The calls below are dropped after one poll; their blocking tasks still run to the end (create_note writes).
    // A call on the async task answers at its first poll, always; one on a blocking task is pending at least once
    // in a few tries (a blocking thread may, rarely, finish before the first poll on a busy machine).
    for (name, args) in [
        ("search_notes", json!({"query": "read"})),
        ("list_notes", json!({})),
        ("create_note", json!({"title": "Later"})),
    ] {
        let offloaded = (0..5).any(|_| poll_once(name, args.clone()).is_pending());
        assert!(offloaded, "{name} ran on the async task");
    }
}

#[test]
fn recent_changes_name_the_notes_and_notebooks_they_touched() {
    let fx = Fixture::new();
    let notebook = fx.call("create_notebook", json!({"title": "Archive"}));
    assert!(notebook["notebook_id"].is_string(), "{notebook}");
    let note = fx.call(
        "create_note",
        json!({"title": "Filed", "notebook_id": notebook["notebook_id"]}),
    );
    assert!(note["note_id"].is_string(), "{note}");
    let changes = fx.call("recent_changes", json!({"limit": 2}));
    let seen: Vec<(&str, &str, &str)> = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["entity"].as_str().unwrap(),
                c["operation"].as_str().unwrap(),
                c["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [("note", "create", "Filed"), ("notebook", "create", "Archive")],
        "{changes}"
    );
}

/// quire-core's freshness rule, applied by the tool for every caller: a search by meaning right after a write finds
/// what was written, though no background indexer runs.
#[test]
fn a_search_by_meaning_finds_the_callers_own_edit() {
    use std::sync::Arc;

    let ws = quire_core::Workspace::open_in_memory()
        .unwrap()
        .with_embedder(Arc::new(quire_core::HashedNgramEmbedder));
    let tools = quire_tools::ToolRegistry::builtin();
    let agent = quire_tools::ToolActor::agent("chat", 1);
    let created = tools
        .call(
            &ws,
            &agent,
            "create_note",
            serde_json::json!({"title": "Sourdough", "body": "starter, flour, water and patience"}),
        )
        .unwrap();
    assert!(!created.is_error, "{:?}", created.value);
    let found = tools
        .call(
            &ws,
            &agent,
            "semantic_search_notes",
            serde_json::json!({"query": "sourdough starter flour", "relevance": "loose"}),
        )
        .unwrap();
    assert!(!found.is_error, "{:?}", found.value);
    assert_eq!(found.value["results"][0]["title"], "Sourdough", "{:#}", found.value);
}
