//! The suite's fixture tools that talk back to the client: logging, sampling, elicitation, roots, in both eras (at
//! once in a session, in rounds in the stateless one), and one that adds and removes a prompt.

use std::sync::Arc;
use std::time::Duration;

use quire_tools::{
    ClientKind, ClientReply, ClientRequest, LogLevel, PluginCall, PluginTool, PromptMessage, PromptRegistry, Reads,
    ToolError, ToolRegistry,
};
use serde_json::json;

use crate::asking::{describe, elicit, field, name_form, sample};
use crate::media::{no_arguments, text};
use crate::prompts::fixed_prompt;

type Asks = fn(&PluginCall<Reads>) -> Vec<(String, ClientRequest)>;
type Answers = fn(&[ClientReply]) -> String;

/// A read-only fixture that asks the client something and answers with text made from the replies.
fn asking(name: &str, description: &str, asks: Asks, answer: Answers) -> PluginTool {
    PluginTool::read_only(name, name, description, no_arguments(), move |call| {
        Box::pin(async move {
            let replies = call.ask_all(asks(&call)).await?;
            Ok(text(answer(&replies)))
        })
    })
}

/// The fixture tools that talk back to the client: logging, sampling, elicitation, roots, in both eras.
pub(crate) fn register(tools: &Arc<ToolRegistry>, prompts: &Arc<PromptRegistry>) -> Result<(), quire_tools::Error> {
    let logging = |name: &str| {
        PluginTool::read_only(
            name,
            name,
            "Logs three messages at info level while it runs.",
            no_arguments(),
            |call| {
                Box::pin(async move {
                    for message in [
                        "Tool execution started",
                        "Tool processing data",
                        "Tool execution completed",
                    ] {
                        call.log(LogLevel::Info, message);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Ok(text("Logged three messages."))
                })
            },
        )
    };
    let prompt_list = Arc::downgrade(prompts);
    let fixtures = vec![
        logging("test_tool_with_logging"),
        PluginTool::read_only(
            "test_reconnection",
            "test_reconnection",
            "Runs for a second: longer than the server keeps a call's stream open, so the client must resume it.",
            no_arguments(),
            |_| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok(text("Reconnection test completed."))
                })
            },
        ),
        logging("test_logging_tool"),
        PluginTool::read_only(
            "test_sampling",
            "test_sampling",
            "Asks the client's model the prompt it is given.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
            |call| {
                Box::pin(async move {
                    let prompt = call.args["prompt"].as_str().unwrap_or_default().to_owned();
                    let reply = call.sample("sample", &prompt, 100).await?;
                    Ok(text(format!("LLM response: {reply}")))
                })
            },
        ),
        PluginTool::read_only(
            "test_elicitation",
            "test_elicitation",
            "Asks the user for a user name and an email address.",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            |call| {
                Box::pin(async move {
                    let message = call.args["message"]
                        .as_str()
                        .unwrap_or("Please provide your information")
                        .to_owned();
                    let schema = json!({"type": "object", "properties": {
                        "username": {"type": "string", "description": "Your user name"},
                        "email": {"type": "string", "description": "Your email address"}
                    }, "required": ["username", "email"]});
                    let answer = call.elicit("user_info", &message, schema).await?;
                    Ok(text(format!(
                        "User response: {}",
                        describe(&ClientReply::Elicited(answer))
                    )))
                })
            },
        ),
        asking(
            "test_elicitation_sep1034_defaults",
            "Asks with a form whose fields all have defaults.",
            |_| {
                vec![(
                    "defaults".into(),
                    elicit(
                        "Please review and update the form fields with defaults",
                        json!({
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                                "age": {"type": "integer", "description": "User age", "default": 30},
                                "score": {"type": "number", "description": "User score", "default": 95.5},
                                "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                                "verified": {"type": "boolean", "description": "Verification status", "default": true}
                            }
                        }),
                    ),
                )]
            },
            |replies| format!("Elicitation completed: {}", describe(&replies[0])),
        ),
        asking(
            "test_elicitation_sep1330_enums",
            "Asks with a form using every kind of enum.",
            |_| {
                vec![(
                    "enums".into(),
                    elicit(
                        "Please select options from the enum fields",
                        json!({
                            "type": "object",
                            "properties": {
                                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                                "titledSingle": {"type": "string", "oneOf": [
                                    {"const": "value1", "title": "First Option"},
                                    {"const": "value2", "title": "Second Option"},
                                    {"const": "value3", "title": "Third Option"}
                                ]},
                                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                                "titledMulti": {"type": "array", "items": {"anyOf": [
                                    {"const": "value1", "title": "First Choice"},
                                    {"const": "value2", "title": "Second Choice"},
                                    {"const": "value3", "title": "Third Choice"}
                                ]}}
                            }
                        }),
                    ),
                )]
            },
            |replies| format!("Elicitation completed: {}", describe(&replies[0])),
        ),
        asking(
            "test_input_required_result_elicitation",
            "Asks the user's name.",
            |_| vec![("user_name".into(), name_form("What is your name?", "name"))],
            |replies| format!("Hello, {}!", field(&replies[0], "name")),
        ),
        asking(
            "test_streaming_elicitation",
            "Asks the user's name.",
            |_| vec![("user_name".into(), name_form("What is your name?", "name"))],
            |replies| format!("Hello, {}!", field(&replies[0], "name")),
        ),
        asking(
            "test_input_required_result_sampling",
            "Asks the client's model a question.",
            |_| vec![("capital_question".into(), sample("What is the capital of France?", 100))],
            |replies| format!("The model says: {}", describe(&replies[0])),
        ),
        asking(
            "test_input_required_result_list_roots",
            "Asks for the client's roots.",
            |_| vec![("client_roots".into(), ClientRequest::Roots)],
            |replies| format!("The client has {}", describe(&replies[0])),
        ),
        asking(
            "test_input_required_result_request_state",
            "Asks for a confirmation, keeping state between rounds.",
            |_| {
                vec![(
                    "confirm".into(),
                    elicit(
                        "Please confirm",
                        json!({
                            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]
                        }),
                    ),
                )]
            },
            |replies| format!("state-ok: {}", describe(&replies[0])),
        ),
        asking(
            "test_input_required_result_tampered_state",
            "Asks for a confirmation; the state between rounds is sealed.",
            |_| vec![("confirm".into(), name_form("What is your name?", "name"))],
            |replies| format!("state-ok: {}", describe(&replies[0])),
        ),
        asking(
            "test_input_required_result_multiple_inputs",
            "Asks three things at once.",
            |_| {
                vec![
                    ("user_name".into(), name_form("What is your name?", "name")),
                    ("greeting".into(), sample("Generate a greeting", 50)),
                    ("client_roots".into(), ClientRequest::Roots),
                ]
            },
            |replies| replies.iter().map(describe).collect::<Vec<_>>().join("; "),
        ),
        asking(
            "test_input_required_result_capabilities",
            "Asks only what the client supports.",
            |call| {
                let mut asks = Vec::new();
                if call.supports(ClientKind::Elicitation) {
                    asks.push(("user_name".into(), name_form("What is your name?", "name")));
                }
                if call.supports(ClientKind::Sampling) {
                    asks.push(("greeting".into(), sample("Generate a greeting", 50)));
                }
                if call.supports(ClientKind::Roots) {
                    asks.push(("client_roots".into(), ClientRequest::Roots));
                }
                asks
            },
            |replies| format!("{} answers", replies.len()),
        ),
        asking(
            "test_missing_capability",
            "Needs the client's model, whether or not the client offers it.",
            |_| vec![("needs_sampling".into(), sample("Say hello", 20))],
            |replies| describe(&replies[0]),
        ),
        PluginTool::read_only(
            "test_input_required_result_multi_round",
            "test_input_required_result_multi_round",
            "Asks two questions, one after the other.",
            no_arguments(),
            |call| {
                Box::pin(async move {
                    let name = call
                        .ask_all(vec![("step1".into(), name_form("Step 1: What is your name?", "name"))])
                        .await?;
                    let color = call
                        .ask_all(vec![(
                            "step2".into(),
                            name_form("Step 2: What is your favorite color?", "color"),
                        )])
                        .await?;
                    Ok(text(format!(
                        "{} likes {}",
                        field(&name[0], "name"),
                        field(&color[0], "color")
                    )))
                })
            },
        ),
        PluginTool::mutating(
            "test_trigger_prompt_change",
            "test_trigger_prompt_change",
            "Adds or removes a temporary prompt, so that clients hear about a prompt list change.",
            no_arguments(),
            move |_| {
                let prompts = prompt_list.clone();
                Box::pin(async move {
                    let prompts = prompts
                        .upgrade()
                        .ok_or_else(|| ToolError::new("the prompts are gone"))?;
                    let added = !prompts.unregister("test_temporary_prompt");
                    if added {
                        let prompt = fixed_prompt(
                            "test_temporary_prompt",
                            "Exists for a while.",
                            vec![PromptMessage::user_text("here")],
                        );
                        prompts.register(prompt).map_err(|e| ToolError::new(e.to_string()))?;
                    }
                    Ok(json!({"added": added}).into())
                })
            },
        ),
    ];
    for tool in fixtures {
        tools.register(tool)?;
    }
    Ok(())
}
