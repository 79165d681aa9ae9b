//! Prompts and completions, in both eras.

use quire_core::Actor;
use quire_mcp::ServerOptions;
use quire_test_support::mcp::{Era, connect_in_process};
use rmcp::model::{ClientConfig, GetPromptRequestParams};
use serde_json::json;

use crate::{note, server};

async fn prompts_and_completions(era: Era) {
    let (server, _, ws) = server(ServerOptions::default());
    let meeting = note(&ws, "Meeting notes March", "We decided to ship on Friday.");
    let secret = note(&ws, "Meeting salaries", "confidential numbers");
    ws.write(&Actor::User, |w| w.set_note_protected(&secret, true)).unwrap();
    let client = connect_in_process(server, ClientConfig::default(), era).await;
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
    prompts_and_completions(Era::Legacy).await;
}

#[tokio::test]
async fn prompts_and_completions_without_a_session() {
    prompts_and_completions(Era::Stateless).await;
}
