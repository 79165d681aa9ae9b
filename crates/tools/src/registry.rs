//! The registry: the one list of tools both consumers read, and the one `call` path they dispatch through.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, RwLock};

use quire_core::{Actor, Reader, Workspace};
use serde::Serialize;
use serde_json::Value;

use crate::actor::ToolActor;
use crate::context::CallContext;
use crate::declare::{BuiltinTool, Effect, Handler, TypedTool};
use crate::error::{Error, ToolError};
use crate::plugin::{Exposure, PageFuture, PluginTool, RenderSpec};
pub use crate::result::ToolResult;
use crate::result::{panic_error, panic_message};

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOrigin {
    /// Declared in this crate with `tool!`.
    Builtin,
    /// Registered at run time.
    Plugin,
}

/// A tool as consumers list it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    /// `snake_case` name, unique.
    pub name: String,
    /// Imperative title for UIs ("Create note").
    pub title: String,
    /// What the model reads to decide when and how to call it.
    pub description: String,
    /// Read-only, mutating or destructive.
    pub effect: Effect,
    /// JSON Schema of the arguments (root `type: object`). Shared: listing tools never copies a schema.
    pub input_schema: Arc<Value>,
    /// JSON Schema of a successful output, when declared.
    pub output_schema: Option<Arc<Value>>,
    /// Built-in or plugin.
    pub origin: ToolOrigin,
    /// The plugin (an MCP server the user added) the tool belongs to, for a tool of one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Whether a consumer asks the user before a call runs: every destructive tool, and a plugin's writing tools when
    /// its configuration says so.
    #[serde(skip)]
    pub needs_approval: bool,
    /// Who it is offered to: every consumer, or quire's own agent only (a plugin set to `expose = "sidebar"`).
    #[serde(skip)]
    pub exposure: Exposure,
    /// Whether it has a page (an MCP Apps view) to show with its results ([`ToolRegistry::page`] reads it).
    #[serde(skip)]
    pub has_page: bool,
    /// Whether it runs outside quire (a relayed tool, such as an MCP plugin's): what it does cannot be staged for
    /// review or undone, and its answer is passed on as it came.
    #[serde(skip)]
    pub outside: bool,
    /// Whether quire's agent may hold it back until its `find_tools` asks for it, when its first request would
    /// pass the agent's budget of tool tokens: the query and task tools, and every plugin tool. MCP clients
    /// always get every tool.
    #[serde(skip)]
    pub on_request: bool,
}

type Loader = Box<dyn FnOnce() -> Vec<PluginTool> + Send>;

/// The tools, built-in and plugin, and the dispatch both consumers use.
///
/// Built-in tools are listed once, in `catalog.rs`. The registry is shared (`Arc<ToolRegistry>`); plugin tools can be
/// registered and removed while it is in use, and subscribers hear about it.
pub struct ToolRegistry {
    builtins: BTreeMap<&'static str, (BuiltinTool, ToolInfo)>,
    plugins: RwLock<BTreeMap<String, (PluginTool, ToolInfo)>>,
    /// Loaders not run yet. The lock is held while they run, so a concurrent list or call waits for their tools.
    loaders: Mutex<Vec<Loader>>,
    /// Set once every loader registered so far has run: the common path then takes no lock.
    loaded: std::sync::atomic::AtomicBool,
    changes: tokio::sync::watch::Sender<u64>,
    /// How many sources of tools are still bringing their first tools (plugins starting): see [`ToolRegistry::arriving`].
    arriving: tokio::sync::watch::Sender<usize>,
}

/// Held while a source of tools brings its first ones (see [`ToolRegistry::arriving`]); dropping it says they are in.
#[derive(Debug)]
pub struct Arriving {
    count: tokio::sync::watch::Sender<usize>,
}

impl Drop for Arriving {
    fn drop(&mut self) {
        self.count.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

/// Opens a read transaction as the user and runs the tool's handler in it: `|f| ws.read(&Actor::User, f)`, or the
/// app's unlocked variant.
pub type UserRead<'a> =
    dyn Fn(&mut dyn FnMut(&Reader<'_>) -> Result<Value, ToolError>) -> Result<Value, ToolError> + 'a;

impl ToolRegistry {
    /// The registry with quire's whole built-in catalog.
    pub fn builtin() -> ToolRegistry {
        ToolRegistry::with_builtins(crate::catalog::BUILTIN_TOOLS)
    }

    /// A registry without built-in tools, for embedders who bring only their own.
    pub fn empty() -> ToolRegistry {
        ToolRegistry::with_builtins(&[])
    }

    fn with_builtins(tools: &[BuiltinTool]) -> ToolRegistry {
        let builtins = tools
            .iter()
            .map(|t| {
                let info = ToolInfo {
                    name: t.name.to_owned(),
                    title: t.title.to_owned(),
                    description: description(t.description),
                    effect: t.effect,
                    input_schema: Arc::new((t.input_schema)()),
                    output_schema: Some(Arc::new((t.output_schema)())),
                    origin: ToolOrigin::Builtin,
                    plugin: None,
                    needs_approval: t.effect == Effect::Destructive,
                    exposure: Exposure::All,
                    has_page: false,
                    outside: false,
                    on_request: crate::catalog::ON_REQUEST.contains(&t.name),
                };
                (t.name, (*t, info))
            })
            .collect();
        ToolRegistry {
            builtins,
            plugins: RwLock::new(BTreeMap::new()),
            loaders: Mutex::new(Vec::new()),
            loaded: std::sync::atomic::AtomicBool::new(true),
            changes: tokio::sync::watch::Sender::new(0),
            arriving: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Says that tools are on their way (a plugin starting in the background): until the returned guard is
    /// dropped, [`ToolRegistry::settled`] waits for them. A consumer whose client lists tools once, at its start,
    /// then sees them.
    pub fn arriving(&self) -> Arriving {
        self.arriving.send_modify(|n| *n += 1);
        Arriving {
            count: self.arriving.clone(),
        }
    }

    /// Waits until no tools are on their way, or `at_most` has passed.
    pub async fn settled(&self, at_most: std::time::Duration) {
        let mut count = self.arriving.subscribe();
        let _ = tokio::time::timeout(at_most, count.wait_for(|n| *n == 0)).await;
    }

    /// Every tool, sorted by name.
    pub fn list(&self) -> Vec<ToolInfo> {
        self.resolve_loaders();
        let plugins = self.plugins.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<ToolInfo> = self
            .builtins
            .values()
            .map(|(_, info)| info.clone())
            .chain(plugins.values().map(|(_, info)| info.clone()))
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The names of every tool, sorted.
    pub fn names(&self) -> Vec<String> {
        self.list().into_iter().map(|t| t.name).collect()
    }

    /// One tool's listing.
    pub fn get(&self, name: &str) -> Option<ToolInfo> {
        self.resolve_loaders();
        if let Some((_, info)) = self.builtins.get(name) {
            return Some(info.clone());
        }
        self.plugins
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|(_, info)| info.clone())
    }

    /// Calls a tool by name on behalf of `actor`, synchronously.
    ///
    /// A built-in tool runs in a read or write transaction according to its effect; a panic inside it rolls the
    /// transaction back and becomes an error result. A plugin tool's future is driven to completion here: call
    /// this from a plain thread (or use [`ToolRegistry::call_async`] from async code).
    /// Only an unknown name is an `Err`; every tool failure is an `Ok` result with `is_error` set.
    pub fn call(&self, ws: &Workspace, actor: &ToolActor, name: &str, args: Value) -> Result<ToolResult, Error> {
        self.resolve_loaders();
        if let Some((tool, _)) = self.builtins.get(name) {
            return Ok(run_builtin(*tool, ws, actor, args));
        }
        let plugin = self.plugin(name)?;
        let future = crate::plugin_run::start(&plugin, ws, actor, args, None);
        Ok(crate::plugin_run::block_on(future))
    }

    /// Runs a read-only built-in tool with the user's view of the workspace (protected content included). This is
    /// how the app's own commands print a note, a list or search results in exactly the shape the tools use
    /// (`quire note show --json` is `read_note`'s output). Tools that write never run as the user: for them, and for
    /// plugin tools, this is [`Error::InvalidTool`].
    pub fn read_as_user(&self, ws: &Workspace, name: &str, args: Value) -> Result<ToolResult, Error> {
        self.read_as_user_via(ws, name, args, &|f| ws.read(&Actor::User, f))
    }

    /// [`ToolRegistry::read_as_user`] through a read transaction the caller opens: the app passes one that holds
    /// the unlocked key when the user unlocked the workspace, so sealed notes read as the user wrote them. The key
    /// itself never reaches this crate.
    pub fn read_as_user_via(
        &self,
        ws: &Workspace,
        name: &str,
        args: Value,
        read: &UserRead<'_>,
    ) -> Result<ToolResult, Error> {
        let Some((tool, _)) = self.builtins.get(name) else {
            return Err(Error::UnknownTool { name: name.to_owned() });
        };
        let Handler::Read(handler) = tool.handler else {
            return Err(Error::InvalidTool(format!(
                "{name} writes; only read-only tools run with the user's view"
            )));
        };
        if let Some(prepare) = tool.prepare {
            prepare(ws);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            crate::budget::unlimited(|| read(&mut |r| handler(r, args.clone())))
        }));
        Ok(match outcome {
            Ok(Ok(value)) => ToolResult::success(value),
            Ok(Err(error)) => ToolResult::failure(error),
            Err(panic) => ToolResult::failure(panic_error(tool.name, panic_message(panic.as_ref()))),
        })
    }

    /// Calls a built-in tool with typed input and output, on behalf of `actor`: the same checks, budget and errors
    /// as [`ToolRegistry::call`] by name.
    pub fn call_typed<T: TypedTool>(
        &self,
        ws: &Workspace,
        actor: &ToolActor,
        input: T::Input,
    ) -> Result<T::Output, ToolError> {
        let args = typed_args::<T>(input)?;
        self.call(ws, actor, T::NAME, args)
            .map_err(|e| ToolError::internal(e.to_string()))?
            .into_typed()
    }

    /// [`ToolRegistry::read_as_user`] with typed input and output.
    pub fn read_as_user_typed<T: TypedTool>(&self, ws: &Workspace, input: T::Input) -> Result<T::Output, ToolError> {
        self.read_as_user_typed_via::<T>(ws, input, &|f| ws.read(&Actor::User, f))
    }

    /// [`ToolRegistry::read_as_user_typed`] through the caller's read transaction (see
    /// [`ToolRegistry::read_as_user_via`]).
    pub fn read_as_user_typed_via<T: TypedTool>(
        &self,
        ws: &Workspace,
        input: T::Input,
        read: &UserRead<'_>,
    ) -> Result<T::Output, ToolError> {
        let args = typed_args::<T>(input)?;
        self.read_as_user_via(ws, T::NAME, args, read)
            .map_err(|e| ToolError::internal(e.to_string()))?
            .into_typed()
    }

    /// Calls a tool from async code: built-in tools run on a blocking thread (a quick read, such as `read_note`,
    /// right here: it costs less than the hand-off), plugin tools are awaited.
    pub async fn call_async(
        &self,
        ws: &Workspace,
        actor: &ToolActor,
        name: &str,
        args: Value,
    ) -> Result<ToolResult, Error> {
        self.call_async_with(ws, actor, name, args, None).await
    }

    /// Like [`ToolRegistry::call_async`], with what the consumer offers a plugin tool while it runs: progress,
    /// logs and requests to the client (see [`CallContext`]).
    pub async fn call_async_with(
        &self,
        ws: &Workspace,
        actor: &ToolActor,
        name: &str,
        args: Value,
        context: Option<Arc<dyn CallContext>>,
    ) -> Result<ToolResult, Error> {
        self.resolve_loaders();
        if let Some((tool, _)) = self.builtins.get(name) {
            let tool = *tool;
            if tool.quick {
                return Ok(run_builtin(tool, ws, actor, args));
            }
            let (ws, actor) = (ws.clone(), actor.clone());
            let outcome = tokio::task::spawn_blocking(move || run_builtin(tool, &ws, &actor, args)).await;
            return Ok(outcome.unwrap_or_else(|e| ToolResult::failure(panic_error(name, e.to_string()))));
        }
        let plugin = self.plugin(name)?;
        Ok(crate::plugin_run::start(&plugin, ws, actor, args, context).await)
    }

    /// Adds a plugin tool. Refused when the name is taken or not a valid tool name.
    pub fn register(&self, tool: PluginTool) -> Result<(), Error> {
        validate_name(&tool.name)?;
        if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(Error::InvalidTool(format!(
                "the input schema of '{}' must have type \"object\"",
                tool.name
            )));
        }
        let mut plugins = self.plugins.write().unwrap_or_else(|e| e.into_inner());
        if self.builtins.contains_key(tool.name.as_str()) || plugins.contains_key(&tool.name) {
            return Err(Error::NameTaken(tool.name));
        }
        let info = ToolInfo {
            name: tool.name.clone(),
            title: tool.title.clone(),
            description: tool.description.clone(),
            effect: tool.effect,
            input_schema: Arc::new(tool.input_schema.clone()),
            output_schema: tool.output_schema.clone().map(Arc::new),
            origin: ToolOrigin::Plugin,
            plugin: tool.plugin.clone(),
            needs_approval: tool.effect == Effect::Destructive || tool.ask_first,
            exposure: tool.exposure,
            has_page: tool.page.is_some(),
            outside: tool.outside,
            on_request: true,
        };
        plugins.insert(tool.name.clone(), (tool, info));
        drop(plugins);
        self.changes.send_modify(|version| *version += 1);
        Ok(())
    }

    /// Removes a plugin tool; returns whether it was there. Built-in tools cannot be removed.
    pub fn unregister(&self, name: &str) -> bool {
        let removed = self
            .plugins
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
            .is_some();
        if removed {
            self.changes.send_modify(|version| *version += 1);
        }
        removed
    }

    /// Registers tools that are expensive to set up: `loader` runs once, on the first list or call, so a consumer
    /// that never lists tools (or answers `initialize` first) never pays for it.
    pub fn register_loader(&self, loader: impl FnOnce() -> Vec<PluginTool> + Send + 'static) {
        let mut loaders = self.loaders.lock().unwrap_or_else(|e| e.into_inner());
        loaders.push(Box::new(loader));
        self.loaded.store(false, std::sync::atomic::Ordering::Release);
    }

    /// A receiver that changes whenever the tool list changes (its value is a version number).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// How a UI should show a call of `name` with this input and output, if the tool says.
    pub fn render(&self, name: &str, input: &Value, output: &Value) -> Option<RenderSpec> {
        let plugins = self.plugins.read().unwrap_or_else(|e| e.into_inner());
        let (tool, _) = plugins.get(name)?;
        tool.render.as_ref().map(|render| render(input, output))
    }

    /// Reads the page (an MCP Apps view) of the tool `name`, when it has one: `None` for a tool without a page.
    pub fn page(&self, name: &str) -> Option<PageFuture> {
        self.resolve_loaders();
        let plugins = self.plugins.read().unwrap_or_else(|e| e.into_inner());
        let (tool, _) = plugins.get(name)?;
        tool.page.as_ref().map(|read| read())
    }

    fn plugin(&self, name: &str) -> Result<PluginTool, Error> {
        self.plugins
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|(tool, _)| tool.clone())
            .ok_or_else(|| Error::UnknownTool { name: name.to_owned() })
    }

    /// Runs the loaders not run yet. The lock stays held while they run: a caller arriving meanwhile waits and then
    /// sees their tools, instead of listing without them.
    fn resolve_loaders(&self) {
        if self.loaded.load(std::sync::atomic::Ordering::Acquire) {
            return;
        }
        let mut loaders = self.loaders.lock().unwrap_or_else(|e| e.into_inner());
        for loader in loaders.drain(..) {
            for tool in loader() {
                // A loader's tool that collides is dropped rather than failing the list or call that resolved it.
                let _ = self.register(tool);
            }
        }
        self.loaded.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// Turns a doc comment into a description: each `///` line arrives with its leading space; wrapped lines join into
/// one paragraph, blank lines separate paragraphs.
fn description(doc: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in doc.lines().map(str::trim) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    paragraphs.join("\n\n")
}

fn validate_name(name: &str) -> Result<(), Error> {
    let valid = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if valid {
        Ok(())
    } else {
        Err(Error::InvalidTool(format!(
            "'{name}' is not a valid tool name: use 1 to 128 of A-Z a-z 0-9 _ - ."
        )))
    }
}

fn run_builtin(tool: BuiltinTool, ws: &Workspace, actor: &ToolActor, args: Value) -> ToolResult {
    if let Some(prepare) = tool.prepare {
        prepare(ws);
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| match tool.handler {
        Handler::Read(handler) => ws.read(actor.actor(), |r| handler(r, args)),
        Handler::Write(handler) => ws.write(actor.actor(), |w| {
            if let Some(note) = actor.note_in_editor() {
                w.set_open_in_editor(note);
            }
            if let Some(call) = actor.plugin_call() {
                w.join_plugin_call(call)?;
            }
            let value = handler(w, args)?;
            if let Some(call) = actor.plugin_call() {
                w.keep_plugin_call(call)?;
            }
            Ok(value)
        }),
    }));
    match outcome {
        Ok(Ok(value)) => ToolResult::success(value),
        Ok(Err(error)) => ToolResult::failure(error),
        Err(panic) => ToolResult::failure(panic_error(tool.name, panic_message(panic.as_ref()))),
    }
}

fn typed_args<T: TypedTool>(input: T::Input) -> Result<Value, ToolError> {
    serde_json::to_value(input)
        .map_err(|e| ToolError::internal(format!("The arguments of {} could not be written ({e}).", T::NAME)))
}

#[cfg(test)]
#[allow(
    unreachable_pub,
    reason = "the test tool's types must be as public as the typed marker the macro declares"
)]
mod tests {
    use quire_core::{Page, ROOT_NOTEBOOK_ID, Workspace};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use super::{ToolActor, ToolRegistry};
    use crate::error::ToolError;

    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct Input {
        /// A title.
        title: String,
    }

    #[derive(Serialize, Deserialize, JsonSchema)]
    pub struct Output {
        /// Never produced.
        ok: bool,
    }

    #[allow(
        unreachable_pub,
        dead_code,
        reason = "the macro's typed marker is not used by this test"
    )]
    mod buggy_tool {
        use super::*;

        tool! {
            /// Creates a note, then panics: a handler bug.
            name: "buggy_tool",
            title: "Create a note badly",
            effect: mutating,
            input: Input,
            output: Output,
            run: run,
        }

        fn run(w: &mut quire_core::Writer<'_>, input: Input) -> Result<Output, ToolError> {
            w.create_note(quire_core::NewNote::new(input.title, "half written"))?;
            panic!("handler bug after a write");
        }
    }

    #[test]
    fn a_panicking_handler_is_an_error_and_its_writes_are_rolled_back() {
        let ws = Workspace::open_in_memory().unwrap();
        let tools = ToolRegistry::with_builtins(&[buggy_tool::TOOL]);
        let result = tools
            .call(&ws, &ToolActor::mcp("t"), "buggy_tool", json!({"title": "Ghost"}))
            .unwrap();
        assert_eq!(
            result.value,
            json!({"error": "The tool buggy_tool failed unexpectedly (handler bug after a write); nothing it started \
                             was saved. This is a bug, not something to retry with other arguments."})
        );
        let notes = ws
            .read(&quire_core::Actor::User, |r| {
                r.notes_in_notebook(ROOT_NOTEBOOK_ID, Page::default())
            })
            .unwrap();
        assert_eq!(notes.total, 0, "the note written before the panic is gone");
        let changes = ws
            .read(&quire_core::Actor::User, |r| r.changes(None, Page::default()))
            .unwrap();
        assert_eq!(changes.total, 0);
    }
}
