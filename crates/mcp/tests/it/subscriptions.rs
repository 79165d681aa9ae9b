//! What a client hears: resource subscriptions and listen streams following the change log (other processes'
//! writes included), and log messages at the level a session asks.

use std::sync::Arc;
use std::time::Duration;

use quire_core::{Actor, Workspace, testing};
use quire_mcp::{QuireServer, ServerOptions};
use quire_test_support::mcp::{Era, Person, connect_in_process};
use quire_tools::ToolRegistry;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use serde_json::json;

use crate::{note, server};

#[expect(
    deprecated,
    reason = "resources/subscribe is legacy-only, and still served to 2025-11-25 sessions"
)]
async fn subscriptions_follow_the_change_log(era: Era) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let ws = Workspace::open(&path).unwrap();
    let watched = note(&ws, "Watched", "v1");
    let other = note(&ws, "Other", "v1");
    let server = QuireServer::new(ws, Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    let (user, mut events) = Person::new(vec![]);
    let client = connect_in_process(server, user, era).await;
    let uri = format!("quire://note/{watched}");
    let mut subscription = if era == Era::Stateless {
        let mut filter = SubscriptionFilter::default();
        filter.resource_subscriptions = Some(vec![uri.clone()]);
        Some(client.peer().listen(filter).await.unwrap())
    } else {
        client
            .subscribe(SubscribeRequestParams::new(uri.clone()))
            .await
            .unwrap();
        None
    };
    // Another connection to the same file, as another process would write it.
    let elsewhere = Workspace::open(&path).unwrap();
    let edit = |id: &str, body: &str| {
        elsewhere
            .write(&Actor::User, |w| {
                let update = quire_core::NoteUpdate {
                    body: Some(body.to_owned()),
                    ..Default::default()
                };
                w.update_note(id, update)
            })
            .unwrap();
    };
    edit(&other, "v2");
    edit(&watched, "v2");
    let _ = &elsewhere;
    let wait = Duration::from_secs(5);
    let heard = match &mut subscription {
        Some(subscription) => format!(
            "{:?}",
            tokio::time::timeout(wait, subscription.next()).await.unwrap().unwrap()
        ),
        None => tokio::time::timeout(wait, events.recv()).await.unwrap().unwrap(),
    };
    assert!(heard.contains(&watched) && !heard.contains(&other), "{heard}");
    if era == Era::Legacy {
        client.unsubscribe(UnsubscribeRequestParams::new(uri)).await.unwrap();
        edit(&watched, "v3");
        assert!(
            tokio::time::timeout(Duration::from_millis(800), events.recv())
                .await
                .is_err(),
            "no news after unsubscribing"
        );
        let missing = client
            .subscribe(SubscribeRequestParams::new("quire://note/nope"))
            .await
            .unwrap_err();
        assert!(format!("{missing:?}").contains("Resource not found"), "{missing:?}");
    }
}

#[tokio::test]
#[expect(
    deprecated,
    reason = "resources/subscribe is legacy-only, and still served to 2025-11-25 sessions"
)]
async fn a_notebook_subscription_hears_about_notes_added_to_it() {
    let (server, _, ws) = server(ServerOptions::default());
    let book = ws.write(&Actor::User, |w| testing::notebook(w, "Inbox")).unwrap();
    let (user, mut events) = Person::new(vec![]);
    let client = connect_in_process(server, user, Era::Legacy).await;
    let uri = format!("quire://notebook/{book}");
    client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    testing::note("Arrived", "").notebook(&book).create_in(&ws).unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(heard, format!("updated {uri}"));
}

#[tokio::test]
#[expect(
    deprecated,
    reason = "resources/subscribe is legacy-only, and still served to 2025-11-25 sessions"
)]
async fn a_scoped_client_cannot_watch_the_top_level() {
    let ws = Workspace::open_in_memory().unwrap();
    let book = ws.write(&Actor::User, |w| testing::notebook(w, "Work")).unwrap();
    let scoped = ws.scoped(quire_core::Scope::notebooks([book.clone()]));
    let server = QuireServer::new(scoped, Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
    let top = client
        .subscribe(SubscribeRequestParams::new("quire://notebook/_root"))
        .await
        .unwrap_err();
    assert!(format!("{top:?}").contains("Resource not found"), "{top:?}");
    client
        .subscribe(SubscribeRequestParams::new(format!("quire://notebook/{book}")))
        .await
        .unwrap();
}

#[tokio::test]
async fn subscribed_sessions_hear_about_changes_from_other_processes() {
    subscriptions_follow_the_change_log(Era::Legacy).await;
}

#[tokio::test]
async fn listeners_hear_about_changes_from_other_processes() {
    subscriptions_follow_the_change_log(Era::Stateless).await;
}

#[tokio::test]
async fn sessions_get_logs_at_the_level_they_ask() {
    let (server, _, ws) = server(ServerOptions::default());
    let id = note(&ws, "Doomed", "x");
    let (user, mut events) = Person::new(vec!["decline"]);
    let client = connect_in_process(server, user, Era::Legacy).await;
    let args = json!({"id": id}).as_object().unwrap().clone();
    client
        .call_tool(CallToolRequestParams::new("list_notebooks"))
        .await
        .unwrap();
    assert!(events.try_recv().is_err(), "nothing is logged before logging/setLevel");
    #[expect(deprecated, reason = "logging is still served to 2025-11-25 sessions")]
    client
        .set_level(rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info))
        .await
        .unwrap();
    client
        .call_tool(CallToolRequestParams::new("list_notebooks"))
        .await
        .unwrap();
    client
        .call_tool(CallToolRequestParams::new("delete_note").with_arguments(args))
        .await
        .unwrap();
    let wait = Duration::from_secs(5);
    let first = tokio::time::timeout(wait, events.recv()).await.unwrap().unwrap();
    let second = tokio::time::timeout(wait, events.recv()).await.unwrap().unwrap();
    assert_eq!(first, "log list_notebooks done");
    assert_eq!(second, "log the user refused delete_note");
}

#[tokio::test]
async fn sessions_that_ask_for_info_hear_how_the_index_progresses() {
    let (server, _, ws) = server(ServerOptions::default());
    note(&ws, "To index", "words to embed");
    let (user, mut events) = Person::new(vec![]);
    let client = connect_in_process(server, user, Era::Legacy).await;
    #[expect(deprecated, reason = "logging is still served to 2025-11-25 sessions")]
    client
        .set_level(rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info))
        .await
        .unwrap();
    let wait = Duration::from_secs(10);
    let pending = tokio::time::timeout(wait, events.recv()).await.unwrap().unwrap();
    assert!(
        pending.starts_with("log semantic index: 1 changes to index"),
        "{pending}"
    );
    ws.index_pending(100).unwrap();
    let done = tokio::time::timeout(wait, events.recv()).await.unwrap().unwrap();
    assert!(done.starts_with("log semantic index caught up: 1 notes"), "{done}");
}
