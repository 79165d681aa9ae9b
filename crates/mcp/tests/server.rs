//! The server in process, through rmcp's client over an in-memory pipe: paging, options, list-change
//! notifications in both protocol eras, resources.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests stop where they fail")]

use std::sync::Arc;
use std::time::Duration;

use quire_core::{Actor, NewNote, Workspace};
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::{PluginTool, ToolRegistry};
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    ClientConfig, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::sync::mpsc;

/// A client that forwards every tools/list_changed notification to a channel.
#[derive(Clone)]
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }
}

async fn connect<C: ClientHandler>(server: QuireServer, client: C, modern: bool) -> RunningService<RoleClient, C> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        client.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
    } else {
        client.serve(client_io).await.unwrap()
    }
}

fn server(options: ServerOptions) -> (QuireServer, Arc<ToolRegistry>, Workspace) {
    let ws = Workspace::open_in_memory().unwrap();
    let tools = Arc::new(ToolRegistry::builtin());
    (QuireServer::new(ws.clone(), tools.clone(), options), tools, ws)
}

#[tokio::test]
async fn tools_are_paged_with_opaque_cursors() {
    let (server, _, _) = server(ServerOptions {
        tool_page_size: 5,
        ..ServerOptions::default()
    });
    let client = connect(server, ClientConfig::default(), false).await;
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
    assert_eq!((pages, names.len()), (5, 21));
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
        },
        ..ServerOptions::default()
    };
    let (server, _, _) = server(options);
    let client = connect(server, ClientConfig::default(), false).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names.len(), 9, "{names:?}");
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

async fn list_changes_reach(modern: bool) {
    let (server, tools, _) = server(ServerOptions::default());
    let (sender, mut changes) = mpsc::unbounded_channel();
    let client = connect(server, Listener(sender), modern).await;
    // 2026-07-28 clients open a subscriptions/listen stream for list changes; legacy sessions get them pushed.
    let mut subscription = if modern {
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
        None => tokio::time::timeout(wait, changes.recv())
            .await
            .expect("a list_changed notification")
            .unwrap(),
    }
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"echo_text".to_owned()));
}

#[tokio::test]
async fn list_changes_reach_legacy_sessions() {
    list_changes_reach(false).await;
}

#[tokio::test]
async fn list_changes_reach_stateless_subscribers() {
    list_changes_reach(true).await;
}

#[tokio::test]
async fn notes_are_resources() {
    let (server, _, ws) = server(ServerOptions::default());
    let (open, secret) = ws
        .write(&Actor::User, |w| {
            let open = w.create_note(NewNote::new("Open", "# Open\nhello"))?.summary.id;
            let secret = w.create_note(NewNote::new("Secret", "hidden"))?.summary.id;
            w.set_note_protected(&secret, true)?;
            Ok::<_, quire_core::Error>((open, secret))
        })
        .unwrap();
    for modern in [false, true] {
        let client = connect(server.clone(), ClientConfig::default(), modern).await;
        let listed = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            vec![format!("quire://note/{open}")],
            "protected notes are not listed"
        );
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates[0].uri_template, "quire://note/{id}");
        let read = client
            .read_resource(ReadResourceRequestParams::new(format!("quire://note/{open}")))
            .await
            .unwrap();
        assert!(format!("{read:?}").contains("# Open\\nhello"));
        let missing = client
            .read_resource(ReadResourceRequestParams::new("quire://note/nope"))
            .await
            .unwrap_err();
        let expected = if modern { "-32602" } else { "-32002" };
        assert!(format!("{missing:?}").contains(expected), "{modern}: {missing:?}");
        let protected = client
            .read_resource(ReadResourceRequestParams::new(format!("quire://note/{secret}")))
            .await;
        assert!(format!("{protected:?}").contains("protected note"), "{protected:?}");
    }
}
