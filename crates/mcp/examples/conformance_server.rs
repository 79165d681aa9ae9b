//! The server the official MCP conformance suite tests (`cargo xtask conformance`): quire's production MCP server
//! over Streamable HTTP on loopback, with the suite's fixture tools registered through the public plugin API, so the
//! protocol layer under test is the shipped one while the fixtures stay out of the `quire` binary.
//!
//! `cargo run -p quire-mcp --example conformance_server` prints `listening on http://127.0.0.1:PORT/mcp` on stderr
//! and serves, without a bearer token (the suite cannot send one), until its standard input ends.
#![expect(clippy::print_stderr, reason = "the harness reads the address from stderr")]

use std::io::Read;

use base64::Engine as _;
use std::sync::{Arc, Weak};
use std::time::Duration;

use quire_core::Workspace;
use quire_mcp::http::{ENDPOINT, HttpOptions};
use quire_mcp::resources::{ResourceBody, StaticResource, TemplateResource};
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::{
    ClientKind, ClientReply, ClientRequest, Completes, ContentItem, Elicited, LogLevel, PluginCall, PluginOutput,
    PluginTool, Prompt, PromptArgument, PromptMessage, PromptOutput, PromptRegistry, Reads, SampleMessage, ToolError,
    ToolRegistry,
};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    let tools = Arc::new(ToolRegistry::builtin());
    let prompts = Arc::new(PromptRegistry::builtin());
    register(&tools)?;
    register_client_fixtures(&tools, &prompts)?;
    register_prompts(&prompts)?;
    let server = QuireServer::new(ws, tools, ServerOptions::default()).with_prompts(prompts);
    register_resources(&server);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        eprintln!("listening on http://{}{ENDPOINT}", listener.local_addr()?);
        // Serve until standard input ends: the harness keeps it open while the suite runs.
        let (done, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
            let _ = done.send(());
        });
        // Streams of calls still running after a moment are closed, so the suite can check SSE polling and
        // resumption with `Last-Event-ID`.
        let options = HttpOptions {
            close_streams_after: Some(Duration::from_millis(300)),
            ..HttpOptions::default()
        };
        quire_mcp::http::serve(listener, server, options, async move {
            let _ = stopped.await;
        })
        .await?;
        Ok(())
    })
}

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte WAV header with no samples.
const SILENT_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn fixture(name: &str, description: &str, output: PluginOutput) -> PluginTool {
    PluginTool::read_only(name, name, description, no_arguments(), move |_| {
        let output = output.clone();
        Box::pin(async move { Ok(output) })
    })
}

fn media(content: Vec<ContentItem>) -> PluginOutput {
    PluginOutput::from(json!({})).with_content(content)
}

fn image() -> ContentItem {
    ContentItem::Image {
        data: RED_PIXEL_PNG.into(),
        mime_type: "image/png".into(),
    }
}

fn text_resource(uri: &str, mime_type: &str, text: &str) -> ContentItem {
    ContentItem::Resource {
        uri: uri.into(),
        mime_type: Some(mime_type.into()),
        text: Some(text.into()),
        blob: None,
    }
}

/// Registers every fixture tool.
fn register(tools: &Arc<ToolRegistry>) -> Result<(), quire_tools::Error> {
    let registry: Weak<ToolRegistry> = Arc::downgrade(tools);
    let fixtures = vec![
        PluginTool::mutating(
            "test_trigger_tool_change",
            "test_trigger_tool_change",
            "Adds or removes a temporary tool, so that clients hear about a tool list change.",
            no_arguments(),
            move |_| {
                let registry = registry.clone();
                Box::pin(async move {
                    let registry = registry
                        .upgrade()
                        .ok_or_else(|| ToolError::new("the registry is gone"))?;
                    let added = !registry.unregister("test_temporary_tool");
                    if added {
                        registry
                            .register(fixture(
                                "test_temporary_tool",
                                "Exists for a while.",
                                json!({"text": "here"}).into(),
                            ))
                            .map_err(|e| ToolError::new(e.to_string()))?;
                    }
                    Ok(json!({"added": added}).into())
                })
            },
        ),
        PluginTool::read_only(
            "test_header_param",
            "test_header_param",
            "Echoes a region that HTTP clients also send as the Mcp-Param-Region header.",
            json!({
                "type": "object",
                "properties": {"region": {"type": "string", "description": "A region.", "x-mcp-header": "Region"}},
                "required": ["region"]
            }),
            |call| Box::pin(async move { Ok(json!({"region": call.args["region"]}).into()) }),
        ),
        fixture(
            "test_simple_text",
            "Returns a simple text response.",
            json!({"text": "This is a simple text response for testing."}).into(),
        ),
        fixture("test_image_content", "Returns an image.", media(vec![image()])),
        fixture(
            "test_audio_content",
            "Returns a sound.",
            media(vec![ContentItem::Audio {
                data: SILENT_WAV.into(),
                mime_type: "audio/wav".into(),
            }]),
        ),
        fixture(
            "test_embedded_resource",
            "Returns an embedded resource.",
            media(vec![text_resource(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]),
        ),
        fixture(
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            media(vec![
                ContentItem::Text {
                    text: "Multiple content types test:".into(),
                },
                image(),
                text_resource(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]),
        ),
        PluginTool::read_only(
            "test_error_handling",
            "test_error_handling",
            "Always fails.",
            no_arguments(),
            |_| Box::pin(async { Err(ToolError::new("This tool intentionally returns an error for testing")) }),
        ),
        PluginTool::read_only(
            "test_tool_with_progress",
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100.",
            no_arguments(),
            |call| {
                Box::pin(async move {
                    for step in [0.0, 50.0, 100.0] {
                        call.report(step, Some(100.0), Some(&format!("step {step}")));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Ok(json!({"text": "Progress complete."}).into())
                })
            },
        ),
        PluginTool::read_only(
            "json_schema_2020_12_tool",
            "json_schema_2020_12_tool",
            "Has a JSON Schema 2020-12 input schema that must reach clients unchanged.",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
            |call| Box::pin(async move { Ok(json!({"received": call.args}).into()) }),
        ),
    ];
    for tool in fixtures {
        tools.register(tool)?;
    }
    Ok(())
}

fn text(text: impl Into<String>) -> PluginOutput {
    media(vec![ContentItem::Text { text: text.into() }])
}

fn elicit(message: &str, schema: Value) -> ClientRequest {
    ClientRequest::Elicit {
        message: message.into(),
        schema,
    }
}

fn name_form(message: &str, field: &str) -> ClientRequest {
    elicit(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
}

fn sample(prompt: &str, max_tokens: u32) -> ClientRequest {
    ClientRequest::Sample {
        messages: vec![SampleMessage {
            from_user: true,
            text: prompt.into(),
        }],
        system: None,
        max_tokens,
    }
}

/// A short description of a client's answer.
fn describe(reply: &ClientReply) -> String {
    match reply {
        ClientReply::Elicited(Elicited::Accepted(content)) => format!("action=accept, content={content}"),
        ClientReply::Elicited(Elicited::Declined) => "action=decline, content={}".into(),
        ClientReply::Elicited(Elicited::Cancelled) => "action=cancel, content={}".into(),
        ClientReply::Roots(roots) => format!(
            "roots: {}",
            roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(", ")
        ),
        ClientReply::Sampled { text, .. } => text.clone(),
    }
}

fn field(reply: &ClientReply, name: &str) -> String {
    match reply {
        ClientReply::Elicited(Elicited::Accepted(content)) => content
            .get(name)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .unwrap_or_default(),
        other => describe(other),
    }
}

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
fn register_client_fixtures(
    tools: &Arc<ToolRegistry>,
    prompts: &Arc<PromptRegistry>,
) -> Result<(), quire_tools::Error> {
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

fn fixed_prompt(name: &str, description: &str, messages: Vec<PromptMessage>) -> Prompt {
    Prompt::new(name, name, description, Vec::new(), move |_| {
        let messages = messages.clone();
        Box::pin(async move {
            Ok(PromptOutput {
                description: None,
                messages,
            })
        })
    })
}

/// The suite's prompts, through the public prompt API.
fn register_prompts(prompts: &PromptRegistry) -> Result<(), quire_tools::PromptError> {
    prompts.register(fixed_prompt(
        "test_simple_prompt",
        "A prompt without arguments.",
        vec![PromptMessage::user_text("This is a simple prompt for testing.")],
    ))?;
    prompts.register(Prompt::new(
        "test_prompt_with_arguments",
        "test_prompt_with_arguments",
        "A prompt with two arguments.",
        vec![
            PromptArgument::required("arg1", "First test argument").completing(Completes::Values(vec![
                "paris".into(),
                "park".into(),
                "party".into(),
            ])),
            PromptArgument::required("arg2", "Second test argument"),
        ],
        |call| {
            Box::pin(async move {
                let arg = |name: &str| call.args[name].as_str().unwrap_or_default().to_owned();
                Ok(PromptOutput {
                    description: None,
                    messages: vec![PromptMessage::user_text(format!(
                        "Prompt with arguments: arg1='{}', arg2='{}'",
                        arg("arg1"),
                        arg("arg2")
                    ))],
                })
            })
        },
    ))?;
    prompts.register(Prompt::new(
        "test_prompt_with_embedded_resource",
        "test_prompt_with_embedded_resource",
        "A prompt embedding a resource.",
        vec![PromptArgument::required("resourceUri", "URI of the resource to embed")],
        |call| {
            Box::pin(async move {
                let uri = call.args["resourceUri"].as_str().unwrap_or_default().to_owned();
                Ok(PromptOutput {
                    description: None,
                    messages: vec![
                        PromptMessage {
                            from_user: true,
                            content: text_resource(&uri, "text/plain", "Embedded resource content for testing."),
                        },
                        PromptMessage::user_text("Please process the embedded resource above."),
                    ],
                })
            })
        },
    ))?;
    prompts.register(fixed_prompt(
        "test_prompt_with_image",
        "A prompt with an image.",
        vec![
            PromptMessage {
                from_user: true,
                content: image(),
            },
            PromptMessage::user_text("Please analyze the image above."),
        ],
    ))?;
    prompts.register(Prompt::new(
        "test_input_required_result_prompt",
        "test_input_required_result_prompt",
        "A prompt that asks the user for context first.",
        Vec::new(),
        |call| {
            Box::pin(async move {
                let form = name_form("What context should the prompt use?", "context");
                let replies = call.ask_all(vec![("user_context".into(), form)]).await?;
                Ok(PromptOutput {
                    description: None,
                    messages: vec![PromptMessage::user_text(format!(
                        "Use this context: {}",
                        field(&replies[0], "context")
                    ))],
                })
            })
        },
    ))?;
    Ok(())
}

/// The suite's resources, through the public resource API.
fn register_resources(server: &QuireServer) {
    let resources = server.resources();
    resources.add(StaticResource {
        uri: "test://static-text".into(),
        name: "Static text".into(),
        mime_type: "text/plain".into(),
        body: ResourceBody::Text("This is the content of the static text resource.".into()),
    });
    resources.add(StaticResource {
        uri: "test://static-binary".into(),
        name: "Static binary".into(),
        mime_type: "image/png".into(),
        body: ResourceBody::Blob(
            base64::engine::general_purpose::STANDARD
                .decode(RED_PIXEL_PNG)
                .unwrap_or_default(),
        ),
    });
    resources.add(StaticResource {
        uri: "test://watched-resource".into(),
        name: "Watched resource".into(),
        mime_type: "text/plain".into(),
        body: ResourceBody::Text("A resource to subscribe to.".into()),
    });
    resources.add_template(
        TemplateResource::new(
            "test://template/{id}/data",
            "Template data",
            "Data for an id.",
            "application/json",
            |values| {
                let id = values.get("id")?;
                Some(ResourceBody::Text(
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string(),
                ))
            },
        )
        .with_completion(|_, typed| {
            ["123", "124", "200"]
                .iter()
                .filter(|v| v.starts_with(typed))
                .map(|v| (*v).to_owned())
                .collect()
        }),
    );
}
