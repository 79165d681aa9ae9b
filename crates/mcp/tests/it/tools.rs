//! Tools: `tools/list` in pages, what the options hide, and list changes in both eras.

use std::time::Duration;

use quire_mcp::ServerOptions;
use quire_test_support::mcp::{Era, Person, connect_in_process, tool_names};
use quire_tools::PluginTool;
use rmcp::model::{ClientConfig, PaginatedRequestParams, SubscriptionFilter};
use serde_json::json;

use crate::server;

#[tokio::test]
async fn tools_are_paged_with_opaque_cursors() {
    let (server, _, _) = server(ServerOptions {
        tool_page_size: 5,
        ..ServerOptions::default()
    });
    let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
    let mut names = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor.clone())))
            .await
            .unwrap();
        pages += 1;
        names.extend(page.tools.into_iter().map(|t| t.name.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!((pages, names.len()), (5, 24));
    assert!(names.windows(2).all(|w| w[0] < w[1]));
    let bad = client
        .list_tools(Some(PaginatedRequestParams::default().with_cursor(Some("12".into()))))
        .await;
    assert!(
        format!("{bad:?}").contains("-32602"),
        "an invalid cursor is -32602: {bad:?}"
    );
}

#[tokio::test]
async fn read_only_and_disabled_tools_are_neither_listed_nor_callable() {
    let options = ServerOptions {
        filter: quire_tools::ToolFilter {
            read_only: true,
            disabled: ["search_notes".to_owned()].into(),
            ..quire_tools::ToolFilter::default()
        },
        ..ServerOptions::default()
    };
    let (server, _, _) = server(options);
    let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
    let names = tool_names(&client).await;
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(!names.contains(&"create_note".to_owned()) && !names.contains(&"search_notes".to_owned()));
    for hidden in ["create_note", "search_notes"] {
        let err = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new(hidden)
                    .with_arguments(json!({"title": "x", "query": "x"}).as_object().unwrap().clone()),
            )
            .await
            .unwrap_err();
        assert!(
            format!("{err:?}").contains(&format!("Unknown tool: {hidden}")),
            "{err:?}"
        );
    }
}

async fn list_changes_reach(era: Era) {
    let (server, tools, _) = server(ServerOptions::default());
    let (person, mut heard) = Person::new(Vec::new());
    let client = connect_in_process(server, person, era).await;
    // 2026-07-28 clients open a subscriptions/listen stream for list changes; legacy sessions get them pushed.
    let mut subscription = if era == Era::Stateless {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        Some(client.peer().listen(filter).await.expect("listen accepted"))
    } else {
        None
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let plugin = PluginTool::read_only(
        "echo_text",
        "Echo text",
        "Echoes.",
        json!({"type": "object", "properties": {}}),
        |call| Box::pin(async move { Ok(call.args.into()) }),
    );
    tools.register(plugin).unwrap();
    let wait = Duration::from_secs(5);
    match &mut subscription {
        Some(subscription) => {
            let notification = tokio::time::timeout(wait, subscription.next())
                .await
                .expect("in time")
                .unwrap();
            assert!(
                format!("{notification:?}").contains("ToolListChanged"),
                "{notification:?}"
            );
        }
        None => {
            let heard = tokio::time::timeout(wait, heard.recv())
                .await
                .expect("a list_changed notification")
                .unwrap();
            assert_eq!(heard, "tools changed");
        }
    }
    let names = tool_names(&client).await;
    assert!(names.contains(&"echo_text".to_owned()));
}

#[tokio::test]
async fn list_changes_reach_legacy_sessions() {
    list_changes_reach(Era::Legacy).await;
}

#[tokio::test]
async fn list_changes_reach_stateless_subscribers() {
    list_changes_reach(Era::Stateless).await;
}
