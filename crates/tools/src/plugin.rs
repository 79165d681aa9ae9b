//! Plugin tools: tools added at run time, with an async handler and an optional rendering for UIs.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use quire_core::Workspace;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::declare::Effect;
use crate::registry::ToolActor;

/// What a plugin handler returns: its output object, or a message for the model.
pub type PluginFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'static>>;

/// One call of a plugin tool. It runs outside any workspace transaction; a plugin that writes opens its own
/// `workspace.write(actor, ..)`, where quire-core's guards apply to it like to any other non-user actor.
///
/// Besides its JSON output, a plugin may return media for the consumer to show: an output object with a
/// `"_content"` array of [`ContentItem`]s (as JSON) has it moved into [`crate::ToolResult::content`].
pub struct PluginCall {
    /// The arguments, a JSON object.
    pub args: Value,
    /// Who is calling (never the user).
    pub actor: ToolActor,
    /// The workspace the call is about.
    pub workspace: Workspace,
    /// Where to report progress, when the consumer listens (an MCP client that sent a progress token).
    pub progress: Option<ProgressReporter>,
}

impl PluginCall {
    /// Reports progress (it must grow from report to report), with the total when known.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(reporter) = &self.progress {
            reporter(Progress {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }
}

/// One progress report of a running tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// How far along, growing with each report.
    pub progress: f64,
    /// The value `progress` reaches at the end, when known.
    pub total: Option<f64>,
    /// What is happening now.
    pub message: Option<String>,
}

/// Receives a tool's progress reports.
pub type ProgressReporter = Arc<dyn Fn(Progress) + Send + Sync>;

/// Media a tool result carries besides its JSON output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The bytes, base64-encoded.
        data: String,
        /// Its media type, such as `image/png`.
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The bytes, base64-encoded.
        data: String,
        /// Its media type, such as `audio/wav`.
        mime_type: String,
    },
    /// A resource embedded in the result: text or base64 bytes, with its URI.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its media type.
        mime_type: Option<String>,
        /// Its text, for a text resource.
        text: Option<String>,
        /// Its bytes, base64-encoded, for a binary resource.
        blob: Option<String>,
    },
}

type Handler = Arc<dyn Fn(PluginCall) -> PluginFuture + Send + Sync>;
type Renderer = Arc<dyn Fn(&Value, &Value) -> RenderSpec + Send + Sync>;

/// A tool declared at run time. It appears next to the built-in tools in every consumer.
#[derive(Clone)]
pub struct PluginTool {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) effect: Effect,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) handler: Handler,
    pub(crate) render: Option<Renderer>,
}

impl std::fmt::Debug for PluginTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginTool")
            .field("name", &self.name)
            .field("effect", &self.effect)
            .finish_non_exhaustive()
    }
}

impl PluginTool {
    /// A plugin tool with its name (`[A-Za-z0-9_.-]{1,128}`), title, description for the model, JSON Schema of its
    /// input (an object schema), effect and async handler.
    ///
    /// ```
    /// use quire_tools::{Effect, PluginTool};
    /// use serde_json::json;
    ///
    /// let echo = PluginTool::new(
    ///     "echo_text",
    ///     "Echo text",
    ///     "Returns the text it is given.",
    ///     json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo."}}}),
    ///     Effect::ReadOnly,
    ///     |call| Box::pin(async move { Ok(json!({"text": call.args["text"]})) }),
    /// );
    /// assert_eq!(echo.name(), "echo_text");
    /// ```
    pub fn new(
        name: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        effect: Effect,
        handler: impl Fn(PluginCall) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        PluginTool {
            name: name.into(),
            title: title.into(),
            description: description.into(),
            effect,
            input_schema,
            output_schema: None,
            handler: Arc::new(handler),
            render: None,
        }
    }

    /// Declares the JSON Schema of the output object.
    pub fn with_output_schema(mut self, schema: Value) -> PluginTool {
        self.output_schema = Some(schema);
        self
    }

    /// Says how a UI shows a call of this tool instead of collapsed JSON.
    pub fn with_render(mut self, render: impl Fn(&Value, &Value) -> RenderSpec + Send + Sync + 'static) -> PluginTool {
        self.render = Some(Arc::new(render));
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What a UI shows for a tool call instead of collapsed JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RenderSpec {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Markdown.
    Markdown {
        /// The Markdown source.
        markdown: String,
    },
    /// A table.
    Table {
        /// Column headings.
        columns: Vec<String>,
        /// Rows of cells, each as long as `columns`.
        rows: Vec<Vec<String>>,
    },
    /// A list of items, each with an optional thumbnail.
    List {
        /// The items.
        items: Vec<ListItem>,
    },
}

/// One item of a [`RenderSpec::List`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListItem {
    /// The main line.
    pub title: String,
    /// A second line.
    pub subtitle: Option<String>,
    /// An image URL or `data:` URI.
    pub thumbnail: Option<String>,
}
