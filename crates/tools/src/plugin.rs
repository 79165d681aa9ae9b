//! Plugin tools: tools added at run time, with an async handler and an optional rendering for UIs.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use quire_core::{Actor, Reader, Workspace, Writer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actor::ToolActor;
use crate::context::{
    CallContext, ClientError, ClientKind, ClientReply, ClientRequest, Elicited, LogLevel, Progress, Root,
    SampleMessage, request_one, wrong_kind,
};
use crate::declare::Effect;
use crate::error::ToolError;

/// What a plugin handler returns: its output, or a failure the model can act on.
pub type PluginFuture = Pin<Box<dyn Future<Output = Result<PluginOutput, ToolError>> + Send + 'static>>;

/// A plugin tool's successful output: a JSON object, and media for the consumer to show besides it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginOutput {
    /// The output object (what the model reads, and MCP's `structuredContent`).
    pub value: Value,
    /// Images, sounds, resources and extra text blocks.
    pub content: Vec<ContentItem>,
    /// The answer as the tool's own protocol gave it (an MCP plugin's `CallToolResult`, as JSON), when it passed
    /// whole under the output cap: what a consumer speaking that protocol (quire's MCP server) sends on unchanged.
    pub passed_on: Option<Value>,
}

impl PluginOutput {
    /// An output with media besides the JSON object.
    pub fn with_content(mut self, content: Vec<ContentItem>) -> PluginOutput {
        self.content = content;
        self
    }
}

impl From<Value> for PluginOutput {
    fn from(value: Value) -> PluginOutput {
        PluginOutput {
            value,
            content: Vec::new(),
            passed_on: None,
        }
    }
}

/// One call of a plugin tool. It runs outside any workspace transaction; `workspace` is what the tool's effect
/// allows: [`Reads`] for a read-only tool, [`Writes`] for a mutating or destructive one. Either acts as the plugin
/// (`Actor::Plugin { id: <tool name> }`), so quire-core's guards apply as to any AI actor.
pub struct PluginCall<A> {
    /// The arguments, a JSON object.
    pub args: Value,
    /// Who called the tool (an agent turn, an MCP client; never the user).
    pub caller: ToolActor,
    /// The workspace, with the access the tool's effect allows.
    pub workspace: A,
    pub(crate) context: Option<Arc<dyn CallContext>>,
}

impl<A> PluginCall<A> {
    /// What the consumer offers this call (progress, logs, requests to its client), to pass on to a process that
    /// runs the tool (an MCP plugin); `None` when the consumer offers nothing.
    pub fn context(&self) -> Option<Arc<dyn CallContext>> {
        self.context.clone()
    }

    /// Reports progress (it must grow from report to report), with the total when known. Reports go nowhere when
    /// the consumer does not listen.
    pub fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(context) = &self.context {
            context.progress(Progress {
                progress,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Logs a message about this call to the consumer (an MCP client that asked for logs at this level).
    pub fn log(&self, level: LogLevel, message: &str) {
        if let Some(context) = &self.context {
            context.log(level, message);
        }
    }

    /// Whether the client can answer this kind of request; ask only what it supports.
    pub fn supports(&self, kind: ClientKind) -> bool {
        self.context.as_ref().is_some_and(|c| c.supports(kind))
    }

    /// Sends several requests to the client at once, under keys that stay the same from run to run (see
    /// [`crate::context`]), and returns the answers in order.
    pub async fn ask_all(&self, requests: Vec<(String, ClientRequest)>) -> Result<Vec<ClientReply>, ClientError> {
        let Some(context) = &self.context else {
            let kind = requests.first().map_or(ClientKind::Elicitation, |(_, r)| r.kind());
            return Err(ClientError::Unsupported(kind));
        };
        context.request_all(requests).await
    }

    /// Asks the user to fill in a form (`schema`: a JSON Schema object of flat properties).
    pub async fn elicit(&self, key: &str, message: &str, schema: Value) -> Result<Elicited, ClientError> {
        let request = ClientRequest::Elicit {
            message: message.to_owned(),
            schema,
        };
        match request_one(self.context.as_deref(), key, request).await? {
            ClientReply::Elicited(answer) => Ok(answer),
            _ => Err(wrong_kind(ClientKind::Elicitation)),
        }
    }

    /// The client's roots.
    pub async fn roots(&self, key: &str) -> Result<Vec<Root>, ClientError> {
        match request_one(self.context.as_deref(), key, ClientRequest::Roots).await? {
            ClientReply::Roots(roots) => Ok(roots),
            _ => Err(wrong_kind(ClientKind::Roots)),
        }
    }

    /// Asks the client's model one question and returns its text.
    pub async fn sample(&self, key: &str, prompt: &str, max_tokens: u32) -> Result<String, ClientError> {
        let request = ClientRequest::Sample {
            messages: vec![SampleMessage {
                from_user: true,
                text: prompt.to_owned(),
            }],
            system: None,
            max_tokens,
        };
        match request_one(self.context.as_deref(), key, request).await? {
            ClientReply::Sampled { text, .. } => Ok(text),
            _ => Err(wrong_kind(ClientKind::Sampling)),
        }
    }
}

/// Read access for a plugin call: snapshots as the plugin actor sees them (protected content withheld).
pub struct Reads {
    ws: Workspace,
    actor: Actor,
}

impl Reads {
    pub(crate) fn new(ws: Workspace, actor: Actor) -> Reads {
        Reads { ws, actor }
    }

    /// Runs `f` in a read transaction.
    pub fn read<T, E: From<quire_core::Error>>(&self, f: impl FnOnce(&Reader<'_>) -> Result<T, E>) -> Result<T, E> {
        self.ws.read(&self.actor, f)
    }
}

/// Read and write access for a call of a mutating or destructive plugin tool. Each `write` is one synchronous
/// transaction through quire-core's guards (nothing async can run inside it); all writes of one call form one
/// change set, undone as a whole. Called by an agent turn, they join the turn's change set instead, so undoing or
/// cancelling the turn takes them back with the rest of it.
pub struct Writes {
    reads: Reads,
    in_editor: Option<String>,
    /// The agent turn that called the tool, if one did.
    turn: Option<Actor>,
    change_set: Mutex<Option<String>>,
}

impl Writes {
    /// Runs `f` in a read transaction.
    pub fn read<T, E: From<quire_core::Error>>(&self, f: impl FnOnce(&Reader<'_>) -> Result<T, E>) -> Result<T, E> {
        self.reads.read(f)
    }

    /// Runs `f` in one write transaction as the plugin; an `Err` or a panic inside rolls it back.
    pub fn write<T, E: From<quire_core::Error>>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut change_set = self.change_set.lock().unwrap_or_else(|e| e.into_inner());
        self.reads.ws.write(&self.reads.actor, |w| {
            match (&self.turn, change_set.as_deref()) {
                // Called by an agent turn: its writes are the turn's, undone (or cancelled) with it.
                (Some(turn), _) => {
                    w.join_turn(turn)?;
                }
                (None, Some(id)) => w.join_change_set(id)?,
                (None, None) => {}
            }
            if let Some(note) = &self.in_editor {
                w.set_open_in_editor(note);
            }
            let value = f(w)?;
            if let Some(id) = w.change_set_id() {
                *change_set = Some(id.to_owned());
            }
            Ok(value)
        })
    }

    /// The change set holding this call's writes so far, if it wrote anything.
    pub fn change_set_id(&self) -> Option<String> {
        self.change_set.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Everything the registry hands a plugin handler; the handler's constructor decides which access it gets.
pub(crate) struct Invocation {
    pub(crate) args: Value,
    pub(crate) caller: ToolActor,
    pub(crate) workspace: Workspace,
    pub(crate) context: Option<Arc<dyn CallContext>>,
}

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
    /// A link to a resource the tool did not include (a file, a page).
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is, when the tool says.
        description: Option<String>,
        /// Its media type, when known.
        mime_type: Option<String>,
    },
}

type Handler = Arc<dyn Fn(Invocation) -> PluginFuture + Send + Sync>;
type Renderer = Arc<dyn Fn(&Value, &Value) -> RenderSpec + Send + Sync>;

/// Reads a tool's page (an MCP Apps `ui://` view): its HTML as a [`ContentItem::Resource`].
pub type PageFuture = Pin<Box<dyn Future<Output = Result<ContentItem, ToolError>> + Send + 'static>>;
pub(crate) type PageReader = Arc<dyn Fn() -> PageFuture + Send + Sync>;

/// Who a tool is offered to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exposure {
    /// Every consumer: the sidebar's agent and quire's MCP clients.
    #[default]
    All,
    /// quire's own agent only (the sidebar, `quire chat`), never an MCP client.
    Sidebar,
}

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
    pub(crate) plugin: Option<String>,
    pub(crate) ask_first: bool,
    pub(crate) exposure: Exposure,
    pub(crate) page: Option<PageReader>,
    pub(crate) outside: bool,
    pub(crate) writes_back: bool,
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
    /// A read-only plugin tool: its name (`[A-Za-z0-9_.-]{1,128}`), title, description for the model, JSON Schema
    /// of its input (an object schema) and async handler, which can read the workspace but has no way to write.
    ///
    /// ```
    /// use quire_tools::PluginTool;
    /// use serde_json::json;
    ///
    /// let echo = PluginTool::read_only(
    ///     "echo_text",
    ///     "Echo text",
    ///     "Returns the text it is given.",
    ///     json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo."}}}),
    ///     |call| Box::pin(async move { Ok(json!({"text": call.args["text"]}).into()) }),
    /// );
    /// assert_eq!(echo.name(), "echo_text");
    /// ```
    pub fn read_only(
        name: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(PluginCall<Reads>) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        let name = name.into();
        let id = name.clone();
        let handler = move |call: Invocation| {
            handler(PluginCall {
                args: call.args,
                caller: call.caller,
                workspace: Reads {
                    ws: call.workspace,
                    actor: Actor::Plugin { id: id.clone() },
                },
                context: call.context,
            })
        };
        PluginTool::with_handler(
            name,
            title.into(),
            description.into(),
            input_schema,
            Effect::ReadOnly,
            handler,
        )
    }

    /// A plugin tool that writes: its handler gets [`Writes`], whose writes of one call form one change set.
    pub fn mutating(
        name: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(PluginCall<Writes>) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        PluginTool::writing(
            name.into(),
            title.into(),
            description.into(),
            input_schema,
            Effect::Mutating,
            handler,
        )
    }

    /// A plugin tool that removes or overwrites something: like [`PluginTool::mutating`], and consumers ask the
    /// user before it runs.
    pub fn destructive(
        name: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: impl Fn(PluginCall<Writes>) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        PluginTool::writing(
            name.into(),
            title.into(),
            description.into(),
            input_schema,
            Effect::Destructive,
            handler,
        )
    }

    /// A tool whose calls go elsewhere (an MCP plugin's tools: the plugin is called and never gets the workspace),
    /// with the effect its declaration gives: `call` receives the arguments and the caller's [`CallContext`], where
    /// it reports progress and logs. The one constructor for a tool whose effect is known only at run time.
    pub fn relayed(
        name: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        effect: Effect,
        call: impl Fn(Value, Option<Arc<dyn CallContext>>) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        PluginTool::with_handler(
            name.into(),
            title.into(),
            description.into(),
            input_schema,
            effect,
            move |invocation: Invocation| call(invocation.args, invocation.context),
        )
        .running_outside()
    }

    /// Marks a tool whose effects happen outside quire (nothing of it can be staged for review or undone).
    fn running_outside(mut self) -> PluginTool {
        self.outside = true;
        self
    }

    fn writing(
        name: String,
        title: String,
        description: String,
        input_schema: Value,
        effect: Effect,
        handler: impl Fn(PluginCall<Writes>) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        let id = name.clone();
        let handler = move |call: Invocation| {
            let in_editor = call.caller.note_in_editor().map(str::to_owned);
            let turn = matches!(call.caller.actor(), Actor::Agent { .. }).then(|| call.caller.actor().clone());
            handler(PluginCall {
                args: call.args,
                caller: call.caller,
                workspace: Writes {
                    reads: Reads {
                        ws: call.workspace,
                        actor: Actor::Plugin { id: id.clone() },
                    },
                    in_editor,
                    turn,
                    change_set: Mutex::new(None),
                },
                context: call.context,
            })
        };
        PluginTool::with_handler(name, title, description, input_schema, effect, handler)
    }

    fn with_handler(
        name: String,
        title: String,
        description: String,
        input_schema: Value,
        effect: Effect,
        handler: impl Fn(Invocation) -> PluginFuture + Send + Sync + 'static,
    ) -> PluginTool {
        PluginTool {
            name,
            title,
            description,
            effect,
            input_schema,
            output_schema: None,
            handler: Arc::new(handler),
            render: None,
            plugin: None,
            ask_first: false,
            exposure: Exposure::All,
            page: None,
            outside: false,
            writes_back: false,
        }
    }

    /// Names the plugin (an MCP server the user added) this tool belongs to: UIs group its tools, a chat can leave
    /// the plugin out, and the agent may load its tools on demand instead of offering them all at once.
    pub fn in_plugin(mut self, plugin: impl Into<String>) -> PluginTool {
        self.plugin = Some(plugin.into());
        self
    }

    /// Asks the user before each call even if the tool is only mutating (destructive tools always ask).
    pub fn asking_first(mut self, ask: bool) -> PluginTool {
        self.ask_first = ask;
        self
    }

    /// Who the tool is offered to (default: every consumer, MCP clients too).
    pub fn exposed_to(mut self, exposure: Exposure) -> PluginTool {
        self.exposure = exposure;
        self
    }

    /// Gives the tool a page (an MCP Apps view): hosts that render them show it with the tool's results, and quire's
    /// MCP server offers it to them under its own address. `read` fetches the HTML when a host asks.
    pub fn with_page(mut self, read: impl Fn() -> PageFuture + Send + Sync + 'static) -> PluginTool {
        self.page = Some(Arc::new(read));
        self
    }

    /// Says that the tool's process may write into the workspace through quire's MCP server (a plugin with a
    /// grant) while a call runs: each call is then recorded, so that those writes join it (one change set in the
    /// plugin's name, or the calling turn's; staged when the caller's writes are).
    pub fn writing_back(mut self, writes_back: bool) -> PluginTool {
        self.writes_back = writes_back;
        self
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListItem {
    /// The main line.
    pub title: String,
    /// A second line.
    pub subtitle: Option<String>,
    /// An image URL or `data:` URI.
    pub thumbnail: Option<String>,
}
