//! The server in process, through rmcp's client over an in-memory pipe: paging, options, list-change
//! notifications in both protocol eras, resources.
#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests stop where they fail")]

use std::sync::Arc;
use std::time::Duration;

use quire_core::{Actor, NewNote, Workspace};
use quire_mcp::{ConfirmDestructive, QuireServer, ServerOptions};
use quire_tools::{PluginTool, ToolRegistry};
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientConfig, ElicitRequestParams, ElicitResult, GetPromptRequestParams,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceUpdatedNotificationParam,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient, ServiceExt};
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
        assert!(format!("{protected:?}").contains("is protected"), "{protected:?}");
    }
}

/// A client that answers every elicitation from a list of actions ("accept", "decline", "cancel"), remembers the
/// questions, and forwards resource updates and log messages.
#[derive(Clone)]
struct User {
    answers: Arc<std::sync::Mutex<Vec<&'static str>>>,
    questions: Arc<std::sync::Mutex<Vec<String>>>,
    events: mpsc::UnboundedSender<String>,
}

impl User {
    fn new(answers: Vec<&'static str>) -> (User, mpsc::UnboundedReceiver<String>) {
        let (events, receiver) = mpsc::unbounded_channel();
        let user = User {
            answers: Arc::new(std::sync::Mutex::new(answers)),
            questions: Arc::default(),
            events,
        };
        (user, receiver)
    }

    fn questions(&self) -> Vec<String> {
        self.questions.lock().unwrap().clone()
    }
}

impl ClientHandler for User {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _ctx: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(&request).unwrap();
        self.questions
            .lock()
            .unwrap()
            .push(request["message"].as_str().unwrap_or_default().to_owned());
        let action = self.answers.lock().unwrap().remove(0);
        Ok(serde_json::from_value(json!({"action": action, "content": {}})).unwrap())
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(format!("updated {}", params.uri));
    }

    #[expect(deprecated, reason = "logging is still served to 2025-11-25 sessions")]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        let _ = self
            .events
            .send(format!("log {}", params.data.as_str().unwrap_or_default()));
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.capabilities = serde_json::from_value(json!({"elicitation": {}})).unwrap();
        config
    }
}

fn note(ws: &Workspace, title: &str, body: &str) -> String {
    ws.write(&Actor::User, |w| w.create_note(NewNote::new(title, body)))
        .unwrap()
        .summary
        .id
}

fn is_trashed(ws: &Workspace, id: &str) -> bool {
    ws.read(&Actor::User, |r| r.note_summary(id)).is_err()
        || ws
            .read(&Actor::User, |r| r.trashed_notes(quire_core::Page::first(100)))
            .unwrap()
            .items
            .iter()
            .any(|n| n.id == id)
}

async fn destructive_calls_ask_first(modern: bool) {
    let (server, _, ws) = server(ServerOptions::default());
    let kept = note(&ws, "Keep me", "important");
    let gone = note(&ws, "Old draft", "obsolete");
    let (user, _) = User::new(vec!["decline", "accept"]);
    let client = connect(server, user.clone(), modern).await;
    let delete = |id: &str| {
        CallToolRequestParams::new("delete_note").with_arguments(json!({"id": id}).as_object().unwrap().clone())
    };
    let refused = client.call_tool(delete(&kept)).await.unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(format!("{refused:?}").contains("The user refused"), "{refused:?}");
    assert!(!is_trashed(&ws, &kept), "a refused delete changes nothing");
    let done = client.call_tool(delete(&gone)).await.unwrap();
    assert_ne!(done.is_error, Some(true), "{done:?}");
    assert!(is_trashed(&ws, &gone));
    let questions = user.questions();
    assert_eq!(questions.len(), 2, "{questions:?}");
    assert!(
        questions[0].contains("\"Keep me\"") && questions[1].contains("\"Old draft\""),
        "{questions:?}"
    );
}

#[tokio::test]
async fn destructive_calls_ask_the_user_in_a_session() {
    destructive_calls_ask_first(false).await;
}

#[tokio::test]
async fn destructive_calls_ask_the_user_in_rounds() {
    destructive_calls_ask_first(true).await;
}

#[tokio::test]
async fn clients_that_cannot_ask_get_the_configured_policy() {
    for (policy, runs) in [
        (ConfirmDestructive::Ask, true),
        (ConfirmDestructive::Allow, true),
        (ConfirmDestructive::AskOrDeny, false),
        (ConfirmDestructive::Deny, false),
    ] {
        let (server, _, ws) = server(ServerOptions {
            confirm_destructive: policy,
            ..ServerOptions::default()
        });
        let id = note(&ws, "Scratch", "x");
        let client = connect(server, ClientConfig::default(), false).await;
        let args = json!({"id": id}).as_object().unwrap().clone();
        let result = client
            .call_tool(CallToolRequestParams::new("delete_note").with_arguments(args))
            .await
            .unwrap();
        assert_eq!(is_trashed(&ws, &id), runs, "{policy:?}: {result:?}");
        assert_eq!(result.is_error == Some(true), !runs, "{policy:?}: {result:?}");
    }
    // Deny refuses even a client that could ask.
    let (server, _, ws) = server(ServerOptions {
        confirm_destructive: ConfirmDestructive::Deny,
        ..ServerOptions::default()
    });
    let id = note(&ws, "Scratch", "x");
    let (user, _) = User::new(vec!["accept"]);
    let client = connect(server, user.clone(), false).await;
    let args = json!({"id": id}).as_object().unwrap().clone();
    let result = client
        .call_tool(CallToolRequestParams::new("delete_note").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(user.questions().is_empty() && !is_trashed(&ws, &id));
}

#[tokio::test]
async fn a_tampered_request_state_is_refused() {
    let (server, _, ws) = server(ServerOptions::default());
    let id = note(&ws, "Keep me", "important");
    let client = connect(server, User::new(vec![]).0, true).await;
    let args = json!({"id": id}).as_object().unwrap().clone();
    let first = client
        .peer()
        .call_tool_once(CallToolRequestParams::new("delete_note").with_arguments(args.clone()))
        .await
        .unwrap();
    let rmcp::model::CallToolResponse::InputRequired(first) = first else {
        panic!("a confirmation first: {first:?}");
    };
    let state = first.request_state.clone().unwrap();
    let mut tampered = state.clone();
    tampered.insert(5, 'x');
    let answers: rmcp::model::InputResponses =
        serde_json::from_value(json!({"quire_confirm": {"action": "accept", "content": {}}})).unwrap();
    let err = client
        .peer()
        .call_tool_once(
            CallToolRequestParams::new("delete_note")
                .with_arguments(args.clone())
                .with_input_responses(answers.clone())
                .with_request_state(tampered),
        )
        .await
        .unwrap_err();
    assert!(format!("{err:?}").contains("requestState is not valid"), "{err:?}");
    // An answer to the server's own question without the state that asked it does not count either.
    let unasked = client
        .peer()
        .call_tool_once(
            CallToolRequestParams::new("delete_note")
                .with_arguments(args.clone())
                .with_input_responses(answers.clone()),
        )
        .await
        .unwrap();
    assert!(format!("{unasked:?}").contains("InputRequired"), "{unasked:?}");
    // Nor does a state sealed for another call.
    let other = json!({"id": "another"}).as_object().unwrap().clone();
    let err = client
        .peer()
        .call_tool_once(
            CallToolRequestParams::new("delete_note")
                .with_arguments(other)
                .with_input_responses(answers)
                .with_request_state(state),
        )
        .await
        .unwrap_err();
    assert!(format!("{err:?}").contains("requestState is not valid"), "{err:?}");
    assert!(!is_trashed(&ws, &id));
}

async fn prompts_and_completions(modern: bool) {
    let (server, _, ws) = server(ServerOptions::default());
    let meeting = note(&ws, "Meeting notes March", "We decided to ship on Friday.");
    let secret = note(&ws, "Meeting salaries", "confidential numbers");
    ws.write(&Actor::User, |w| w.set_note_protected(&secret, true)).unwrap();
    let client = connect(server, ClientConfig::default(), modern).await;
    let names: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        names,
        ["draft_from_notes", "recent_changes", "related_notes", "summarize_note"]
    );
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("summarize_note")
                .with_arguments(json!({"note": "meeting notes march"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = serde_json::to_string(&prompt).unwrap();
    assert!(
        text.contains(&format!("quire://note/{meeting}")) && text.contains("ship on Friday"),
        "{text}"
    );
    let protected = client
        .get_prompt(
            GetPromptRequestParams::new("summarize_note")
                .with_arguments(json!({"note": secret}).as_object().unwrap().clone()),
        )
        .await;
    assert!(!format!("{protected:?}").contains("confidential"), "{protected:?}");
    let missing = client
        .get_prompt(GetPromptRequestParams::new("summarize_note"))
        .await
        .unwrap_err();
    assert!(
        format!("{missing:?}").contains("The argument note is required"),
        "{missing:?}"
    );
    let recent = client
        .get_prompt(GetPromptRequestParams::new("recent_changes"))
        .await
        .unwrap();
    let recent = serde_json::to_string(&recent).unwrap();
    assert!(
        recent.contains("ship on Friday") && !recent.contains("confidential"),
        "{recent}"
    );

    let titles = client
        .complete_prompt_simple("summarize_note", "note", "meet")
        .await
        .unwrap();
    assert_eq!(
        titles,
        ["Meeting notes March", "Meeting salaries"],
        "titles of protected notes are visible"
    );
    let ids = client
        .complete_resource_simple("quire://note/{id}", "id", "march")
        .await
        .unwrap();
    assert_eq!(ids, [meeting]);
    let none = client
        .complete_prompt_simple("summarize_note", "nothing", "x")
        .await
        .unwrap();
    assert!(none.is_empty());
}

#[tokio::test]
async fn prompts_and_completions_in_a_session() {
    prompts_and_completions(false).await;
}

#[tokio::test]
async fn prompts_and_completions_without_a_session() {
    prompts_and_completions(true).await;
}

#[tokio::test]
async fn notebooks_and_attachments_are_resources() {
    let (server, _, ws) = server(ServerOptions::default());
    let (book, attachment) = ws
        .write(&Actor::User, |w| {
            let book = w
                .create_notebook(quire_core::NewNotebook {
                    title: "Work".into(),
                    ..Default::default()
                })?
                .id;
            let mut new = NewNote::new("Plan", "body");
            new.notebook_id = Some(book.clone());
            let note = w.create_note(new)?.summary.id;
            let png = quire_core::NewAttachment {
                title: "pixel.png".into(),
                mime: "image/png".into(),
                data: vec![137, 80, 78, 71],
                text: None,
            };
            let attachment = w.add_attachment(&note, png)?.id;
            Ok::<_, quire_core::Error>((book, attachment))
        })
        .unwrap();
    let client = connect(server, ClientConfig::default(), false).await;
    let listing = client
        .read_resource(ReadResourceRequestParams::new(format!("quire://notebook/{book}")))
        .await
        .unwrap();
    let listing = serde_json::to_string(&listing).unwrap();
    assert!(
        listing.contains("\\\"path\\\":\\\"Work\\\"") && listing.contains("Plan"),
        "{listing}"
    );
    let blob = client
        .read_resource(ReadResourceRequestParams::new(format!(
            "quire://attachment/{attachment}"
        )))
        .await
        .unwrap();
    let blob = serde_json::to_value(&blob).unwrap();
    assert_eq!(blob["contents"][0]["blob"], "iVBORw==");
    assert_eq!(blob["contents"][0]["mimeType"], "image/png");
}

#[expect(
    deprecated,
    reason = "resources/subscribe is legacy-only, and still served to 2025-11-25 sessions"
)]
async fn subscriptions_follow_the_change_log(modern: bool) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.db");
    let ws = Workspace::open(&path).unwrap();
    let watched = note(&ws, "Watched", "v1");
    let other = note(&ws, "Other", "v1");
    let server = QuireServer::new(ws, Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    let (user, mut events) = User::new(vec![]);
    let client = connect(server, user, modern).await;
    let uri = format!("quire://note/{watched}");
    let mut subscription = if modern {
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
    if !modern {
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
    let book = ws
        .write(&Actor::User, |w| {
            w.create_notebook(quire_core::NewNotebook {
                title: "Inbox".into(),
                ..Default::default()
            })
        })
        .unwrap()
        .id;
    let (user, mut events) = User::new(vec![]);
    let client = connect(server, user, false).await;
    let uri = format!("quire://notebook/{book}");
    client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .unwrap();
    ws.write(&Actor::User, |w| {
        let mut new = NewNote::new("Arrived", "");
        new.notebook_id = Some(book.clone());
        w.create_note(new)
    })
    .unwrap();
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
    let book = ws
        .write(&Actor::User, |w| {
            w.create_notebook(quire_core::NewNotebook {
                title: "Work".into(),
                ..Default::default()
            })
        })
        .unwrap()
        .id;
    let scoped = ws.scoped(quire_core::Scope::notebooks([book.clone()]));
    let server = QuireServer::new(scoped, Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    let client = connect(server, ClientConfig::default(), false).await;
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
    subscriptions_follow_the_change_log(false).await;
}

#[tokio::test]
async fn listeners_hear_about_changes_from_other_processes() {
    subscriptions_follow_the_change_log(true).await;
}

#[tokio::test]
async fn sessions_get_logs_at_the_level_they_ask() {
    let (server, _, ws) = server(ServerOptions::default());
    let id = note(&ws, "Doomed", "x");
    let (user, mut events) = User::new(vec!["decline"]);
    let client = connect(server, user, false).await;
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
    let (user, mut events) = User::new(vec![]);
    let client = connect(server, user, false).await;
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
