//! The suite's fixture tools that only answer: text, media, errors, progress, a schema to pass on unchanged, and one
//! that adds and removes a tool.

use std::sync::{Arc, Weak};
use std::time::Duration;

use quire_tools::{ContentItem, PluginOutput, PluginTool, ToolError, ToolRegistry};
use serde_json::json;

use crate::media::{SILENT_WAV, image, media, no_arguments, text_resource};

/// A read-only tool without arguments that always answers `output`.
fn fixture(name: &str, description: &str, output: PluginOutput) -> PluginTool {
    PluginTool::read_only(name, name, description, no_arguments(), move |_| {
        let output = output.clone();
        Box::pin(async move { Ok(output) })
    })
}

/// Registers every fixture tool.
pub(crate) fn register(tools: &Arc<ToolRegistry>) -> Result<(), quire_tools::Error> {
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
