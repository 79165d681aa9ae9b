//! Staged writes through the MCP server: the answer says the change waits in review N, the client's reads show it,
//! `quire://review/N` tells the outcome; and a host that renders MCP Apps reviews inline through `ui://quire/review`
//! and its app-only tools, which no other client gets.

use quire_core::Actor;
use quire_mcp::{ServerOptions, WritePolicy};
use quire_test_support::mcp::{Era, connect_in_process, tool_names};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ReadResourceRequestParams, ResourceContents,
};
use serde_json::{Value, json};

use crate::{note, server};

fn call(name: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().unwrap().clone())
}

/// A client that declares MCP Apps.
fn apps_client() -> ClientConfig {
    let mut config = ClientConfig::default();
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    }))
    .unwrap();
    config.capabilities = capabilities;
    config
}

fn body(ws: &quire_core::Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| r.note(id)).unwrap().body
}

#[tokio::test]
async fn a_host_that_renders_mcp_apps_reviews_staged_changes_inline() {
    let (server, _, ws) = server(ServerOptions {
        writes: WritePolicy::Stage,
        inline_review: true,
        ..ServerOptions::default()
    });
    let id = note(&ws, "Plan", "one\n");
    let client = connect_in_process(server.clone(), apps_client(), Era::Legacy).await;
    let tools = client.list_all_tools().await.unwrap();
    let meta = |name: &str| {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no {name}"));
        serde_json::to_value(&tool.meta).unwrap()
    };
    assert_eq!(meta("update_note")["ui"]["resourceUri"], "ui://quire/review");
    assert_eq!(meta("read_note"), Value::Null, "a read is never staged");
    assert_eq!(meta("decide_review")["ui"]["visibility"], json!(["app"]));
    // The view.
    let view = client
        .read_resource(ReadResourceRequestParams::new("ui://quire/review"))
        .await
        .unwrap();
    match &view.contents[0] {
        ResourceContents::TextResourceContents { mime_type, text, .. } => {
            assert_eq!(mime_type.as_deref(), Some("text/html;profile=mcp-app"));
            assert!(text.contains("decide_review") && text.contains("ui/initialize"));
        }
        other => panic!("{other:?}"),
    }
    // A staged write, then what the view does with its result.
    let staged = client
        .call_tool(call("update_note", json!({"note_id": id, "body": "one\ntwo\n"})))
        .await
        .unwrap();
    let meta = serde_json::to_value(&staged.meta).unwrap();
    assert_eq!(
        meta["quire/review"]["reviews"],
        json!(["quire://review/1"]),
        "{staged:?}"
    );
    assert_eq!(body(&ws, &id), "one\n");
    let shown = client
        .call_tool(call("review_changes", json!({"review": 1})))
        .await
        .unwrap();
    let set = shown.structured_content.unwrap();
    assert_eq!(set["pending"], 1, "{set}");
    let hunk = set["items"][0]["hunks"][0]["id"].as_str().unwrap().to_owned();
    let done = client
        .call_tool(call(
            "decide_review",
            json!({"review": 1, "accept": true, "hunks": [hunk]}),
        ))
        .await
        .unwrap();
    let done = done.structured_content.unwrap();
    assert_eq!(done["accepted"], 1, "{done}");
    assert_eq!(body(&ws, &id), "one\ntwo\n");
    // The outcome, from the review resource.
    let review = client
        .read_resource(ReadResourceRequestParams::new("quire://review/1"))
        .await
        .unwrap();
    assert!(format!("{review:?}").contains("accepted"), "{review:?}");
}

#[tokio::test]
async fn clients_that_do_not_render_apps_never_get_the_app_only_tools() {
    let (server, _, ws) = server(ServerOptions {
        writes: WritePolicy::Stage,
        inline_review: true,
        ..ServerOptions::default()
    });
    let id = note(&ws, "Plan", "one\n");
    let client = connect_in_process(server.clone(), ClientConfig::default(), Era::Legacy).await;
    let names = tool_names(&client).await;
    assert!(
        !names.iter().any(|n| n == "decide_review" || n == "review_changes"),
        "{names:?}"
    );
    client
        .call_tool(call("update_note", json!({"note_id": id, "body": "changed"})))
        .await
        .unwrap();
    // A model that calls the tool anyway accepts nothing.
    let refused = client
        .call_tool(call("decide_review", json!({"review": 1, "accept": true})))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(body(&ws, &id), "one\n");
    // Nor with inline review turned off, even for a host that renders apps.
    let (server, _, _) = server_without_inline();
    let client = connect_in_process(server, apps_client(), Era::Legacy).await;
    let names = tool_names(&client).await;
    assert!(!names.iter().any(|n| n == "decide_review"), "{names:?}");
}

fn server_without_inline() -> (
    quire_mcp::QuireServer,
    std::sync::Arc<quire_tools::ToolRegistry>,
    quire_core::Workspace,
) {
    server(ServerOptions {
        writes: WritePolicy::Stage,
        inline_review: false,
        ..ServerOptions::default()
    })
}

#[tokio::test]
async fn another_clients_review_cannot_be_read_or_decided() {
    let (server, _, ws) = server(ServerOptions {
        writes: WritePolicy::Stage,
        inline_review: true,
        ..ServerOptions::default()
    });
    let id = note(&ws, "Plan", "one\n");
    let staged = Actor::Mcp {
        client: "someone else".into(),
    };
    ws.staged()
        .write(&staged, |w| {
            w.update_note(
                &id,
                quire_core::NoteUpdate {
                    body: Some("theirs".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    let client = connect_in_process(server, apps_client(), Era::Legacy).await;
    let decided = client
        .call_tool(call("decide_review", json!({"review": 1, "accept": true})))
        .await
        .unwrap();
    assert_eq!(decided.is_error, Some(true), "{decided:?}");
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new("quire://review/1"))
            .await
            .is_err()
    );
    assert_eq!(body(&ws, &id), "one\n");
}

#[tokio::test]
#[expect(
    deprecated,
    reason = "resources/subscribe is legacy-only, and still served to 2025-11-25 sessions"
)]
async fn a_client_subscribed_to_its_review_hears_the_decision() {
    let (server, _, ws) = server(ServerOptions {
        writes: WritePolicy::Stage,
        ..ServerOptions::default()
    });
    let id = note(&ws, "Plan", "one\n");
    let (user, mut events) = quire_test_support::mcp::Person::new(vec![]);
    let client = connect_in_process(server, user, Era::Legacy).await;
    client
        .call_tool(call("update_note", json!({"note_id": id, "body": "two\n"})))
        .await
        .unwrap();
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new("quire://review/1"))
        .await
        .unwrap();
    // Rejecting writes nothing to the change log; the client hears it all the same.
    ws.decide_review(1, false, &quire_core::review::Selection::All).unwrap();
    let heard = tokio::time::timeout(std::time::Duration::from_secs(5), events.recv())
        .await
        .expect("no notification within 5 s")
        .unwrap();
    assert!(heard.contains("quire://review/1"), "{heard}");
    let review = client
        .read_resource(ReadResourceRequestParams::new("quire://review/1"))
        .await
        .unwrap();
    assert!(format!("{review:?}").contains("rejected"), "{review:?}");
}
