//! Parsing a tool's JSON arguments into its input type, with errors that name the field and say what is expected.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;

/// Parses `args` (an object; `null` counts as `{}`) into `T`. On failure the message names the field, what was
/// wrong, and lists the arguments the tool takes. The agent's session tools parse through it too, so a model gets
/// the same kind of message from every tool.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Value, schema: fn() -> Value) -> Result<T, ToolError> {
    let args = match args {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(map) => Value::Object(map),
        other => {
            return Err(ToolError::new(format!(
                "Invalid arguments for {tool}: expected a JSON object of named arguments, got {}. Expected arguments: {}.",
                kind_of(&other),
                expected(&schema())
            )));
        }
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path.is_empty() {
            String::new()
        } else {
            format!("`{path}`: ")
        };
        let inner = e.inner().to_string();
        let inner = inner.split(" at line ").next().unwrap_or(&inner);
        ToolError::new(format!(
            "Invalid arguments for {tool}: {field}{inner}. Expected arguments: {}.",
            expected(&schema())
        ))
    })
}

/// Turns a tool's output into the JSON object it returns.
pub(crate) fn output<T: Serialize>(output: T) -> Result<Value, ToolError> {
    match serde_json::to_value(output) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(ToolError::new(format!(
            "The tool produced {} instead of an object; this is a bug in quire.",
            kind_of(&other)
        ))),
        Err(e) => Err(ToolError::new(format!(
            "The tool's output could not be serialised ({e}); this is a bug in quire."
        ))),
    }
}

/// `note_id (string, required), max_chars (integer)`: a one-line summary of an input schema.
pub(crate) fn expected(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema["properties"].as_object() else {
        return "none".into();
    };
    if properties.is_empty() {
        return "none".into();
    }
    properties
        .iter()
        .map(|(name, prop)| {
            let kind = match (&prop["type"], &prop["enum"]) {
                (_, Value::Array(values)) => values.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
                (Value::String(t), _) if t == "array" => {
                    format!("array of {}", prop["items"]["type"].as_str().unwrap_or("object"))
                }
                (Value::String(t), _) => t.clone(),
                _ => "value".into(),
            };
            let required = if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            };
            format!("{name} ({kind}{required})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
