//! The fixture workspace for tool tests, and helpers to call tools and redact ids and times.

use std::ops::Deref;

use quire_core::testing::{self, Sample};
use quire_tools::{ToolActor, ToolRegistry};
use serde_json::{Value, json};

/// The sample workspace of `quire_core::testing` (shared with core's tests) and the built-in tools.
pub(crate) struct Fixture {
    sample: Sample,
    pub(crate) tools: ToolRegistry,
}

impl Deref for Fixture {
    type Target = Sample;

    fn deref(&self) -> &Sample {
        &self.sample
    }
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        Fixture {
            sample: Sample::new(),
            tools: ToolRegistry::builtin(),
        }
    }

    /// Calls a tool as an MCP client; panics on an unknown tool.
    pub(crate) fn call(&self, name: &str, args: Value) -> Value {
        self.tools
            .call(&self.ws, &ToolActor::mcp("tests"), name, args)
            .unwrap()
            .value
    }

    /// Replaces `{name}` placeholders in a JSON template with fixture ids.
    pub(crate) fn args(&self, template: Value) -> Value {
        let text = template.to_string();
        let text = [
            ("{work}", &self.work),
            ("{projects}", &self.projects),
            ("{vault}", &self.vault),
            ("{plain}", &self.plain),
            ("{secret}", &self.secret),
            ("{in_vault}", &self.in_vault),
            ("{todo}", &self.todo),
            ("{attachment}", &self.attachment),
            ("{label}", &self.label),
            ("{trashed}", &self.trashed),
            ("{secret_attachment}", &self.secret_attachment),
            ("{secret_label}", &self.secret_label),
        ]
        .iter()
        .fold(text, |t, (k, v)| t.replace(k, v));
        serde_json::from_str(&text).unwrap()
    }
}

/// Replaces generated ids (32 hex digits) with `[id]` and times with `[time]`, wherever they appear.
pub(crate) fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let is_time = matches!(k.as_str(), "created" | "updated" | "at" | "todo_completed");
                    let v = if is_time && v.is_string() {
                        json!("[time]")
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) => Value::String(testing::redact_ids(s)),
        other => other.clone(),
    }
}
