//! The outcome of a tool call as consumers read it, and the error a panicking tool becomes.

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::plugin::{ContentItem, PluginOutput};

/// The outcome of a call: the tool's output object, or `{"error": "..."}` with `is_error` set. A success never
/// has an `error` key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// The output, or `{"error": message}`.
    pub value: Value,
    /// Whether `value` is an error object.
    pub is_error: bool,
    /// Media besides the output (plugin tools only; built-in tools return none).
    pub content: Vec<ContentItem>,
    /// A plugin's answer as its protocol gave it, when it passed whole (see [`PluginOutput::passed_on`]).
    #[serde(skip)]
    pub passed_on: Option<Value>,
    /// The failure, with its kind, for an error result.
    #[serde(skip)]
    error: Option<ToolError>,
}

impl ToolResult {
    pub(crate) fn success(value: Value) -> ToolResult {
        // A plugin that reports failure inside a success is still a failure: consumers key off `error`.
        if let Some(message) = value.get("error").and_then(Value::as_str) {
            return ToolResult::failure(ToolError::new(message));
        }
        ToolResult {
            value,
            is_error: false,
            content: Vec::new(),
            passed_on: None,
            error: None,
        }
    }

    pub(crate) fn failure(error: ToolError) -> ToolResult {
        ToolResult {
            value: json!({ "error": error.message() }),
            is_error: true,
            content: Vec::new(),
            passed_on: None,
            error: Some(error),
        }
    }

    /// A plugin's output with its media.
    pub(crate) fn from_plugin(output: PluginOutput) -> ToolResult {
        let mut result = ToolResult::success(output.value);
        if !result.is_error {
            result.content = output.content;
            result.passed_on = output.passed_on;
        }
        result
    }

    /// The error message, for an error result.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_ref().map(ToolError::message)
    }

    /// The failure (its message and kind), for an error result.
    pub fn error(&self) -> Option<&ToolError> {
        self.error.as_ref()
    }

    /// The result as Rust: the output parsed into `T`, or the failure.
    pub fn into_typed<T: serde::de::DeserializeOwned>(self) -> Result<T, ToolError> {
        match self.error {
            Some(error) => Err(error),
            None => serde_json::from_value(self.value).map_err(|e| {
                ToolError::internal(format!(
                    "The tool's output did not have the shape its type declares ({e})."
                ))
            }),
        }
    }
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

pub(crate) fn panic_error(tool: &str, message: String) -> ToolError {
    ToolError::internal(format!(
        "The tool {tool} failed unexpectedly ({message}); nothing it started was saved. This is a bug, not something \
         to retry with other arguments."
    ))
}
