//! The server the official MCP conformance suite tests (`cargo xtask conformance`): quire's production MCP server
//! over Streamable HTTP on loopback, with the suite's fixture tools registered through the public plugin API, so the
//! protocol layer under test is the shipped one while the fixtures stay out of the `quire` binary.
//!
//! `cargo run -p quire-mcp --example conformance_server` prints `listening on http://127.0.0.1:PORT/mcp` on stderr
//! and serves, without a bearer token (the suite cannot send one), until its standard input ends.
#![expect(clippy::print_stderr, reason = "the harness reads the address from stderr")]

use std::io::Read;
use std::sync::{Arc, Weak};
use std::time::Duration;

use quire_core::Workspace;
use quire_mcp::http::{ENDPOINT, HttpOptions};
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::{ContentItem, PluginOutput, PluginTool, ToolError, ToolRegistry};
use serde_json::{Value, json};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = Workspace::open_in_memory()?;
    let tools = Arc::new(ToolRegistry::builtin());
    register(&tools)?;
    let server = QuireServer::new(ws, tools, ServerOptions::default());
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
        let options = HttpOptions {
            token: None,
            allow_remote: false,
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
