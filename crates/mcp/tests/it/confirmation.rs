//! Destructive calls: the user is asked first (in a session, or in rounds in the stateless era), the configured
//! policy for clients that cannot ask, and a sealed request state that cannot be forged or reused.

use quire_mcp::{ConfirmDestructive, ServerOptions};
use quire_test_support::mcp::{Era, Person, connect_in_process};
use rmcp::model::{CallToolRequestParams, ClientConfig};
use serde_json::json;

use crate::{is_trashed, note, server};

async fn destructive_calls_ask_first(era: Era) {
    let (server, _, ws) = server(ServerOptions::default());
    let kept = note(&ws, "Keep me", "important");
    let gone = note(&ws, "Old draft", "obsolete");
    let (user, _) = Person::new(vec!["decline", "accept"]);
    let client = connect_in_process(server, user.clone(), era).await;
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
    destructive_calls_ask_first(Era::Legacy).await;
}

#[tokio::test]
async fn destructive_calls_ask_the_user_in_rounds() {
    destructive_calls_ask_first(Era::Stateless).await;
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
        let client = connect_in_process(server, ClientConfig::default(), Era::Legacy).await;
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
    let (user, _) = Person::new(vec!["accept"]);
    let client = connect_in_process(server, user.clone(), Era::Legacy).await;
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
    let client = connect_in_process(server, Person::new(vec![]).0, Era::Stateless).await;
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
