//! One call of a plugin tool: its future, started with what the registry hands it (and the call recorded for the
//! plugin's writes back, when it has a grant), a panic in it turned into an error, driven from sync code if need be.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use quire_core::Workspace;
use serde_json::{Value, json};

use crate::actor::ToolActor;
use crate::context::CallContext;
use crate::error::ToolError;
use crate::plugin::{Invocation, PluginOutput, PluginTool};
use crate::result::{ToolResult, panic_error, panic_message};

/// Starts a call of `tool`: the future of its result.
pub(crate) fn start(
    tool: &PluginTool,
    ws: &Workspace,
    actor: &ToolActor,
    args: Value,
    context: Option<Arc<dyn CallContext>>,
) -> impl std::future::Future<Output = ToolResult> + Send + 'static {
    let args = if args.is_null() { json!({}) } else { args };
    let name = tool.name.clone();
    let valid = args.is_object();
    // A plugin that may write back through its grant: its writes meanwhile are this call's (see core's plugin_calls).
    // Not recorded (the database busy): its writes are then in change sets of their own, as before the grant; but a
    // caller whose writes are staged does not call it then, or they would skip review.
    let mut unrecorded = None;
    let mark = match (&tool.plugin, tool.writes_back && valid) {
        (Some(plugin), true) => match ws.begin_plugin_call(plugin, actor.actor(), ws.is_staged()) {
            Ok(mark) => Some(mark),
            Err(e) if ws.is_staged() => {
                unrecorded = Some(e);
                None
            }
            Err(_) => None,
        },
        _ => None,
    };
    let valid = valid && unrecorded.is_none();
    let future = valid.then(|| {
        (tool.handler)(Invocation {
            args,
            caller: actor.clone(),
            workspace: ws.clone(),
            context,
        })
    });
    async move {
        let _mark = mark;
        if let Some(e) = unrecorded {
            return ToolResult::failure(ToolError::new(format!(
                "{name} did not run: its writes could not be made to wait for review ({e}). Try again in a moment."
            )));
        }
        let Some(future) = future else {
            return ToolResult::failure(ToolError::new(format!(
                "Invalid arguments for {name}: expected a JSON object of named arguments."
            )));
        };
        // A plugin that panics costs only its own call.
        match futures_catch(future).await {
            Ok(Ok(output)) if output.value.is_object() => ToolResult::from_plugin(output),
            Ok(Ok(output)) => ToolResult::from_plugin(PluginOutput {
                value: json!({ "result": output.value }),
                content: output.content,
                passed_on: output.passed_on,
            }),
            Ok(Err(error)) => ToolResult::failure(error),
            Err(panic) => ToolResult::failure(panic_error(&name, panic)),
        }
    }
}

/// Polls a future, turning a panic during any poll into an `Err` with its message.
async fn futures_catch<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let mut future = Box::pin(future);
    std::future::poll_fn(
        move |cx| match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(panic) => std::task::Poll::Ready(Err(panic_message(panic.as_ref()))),
        },
    )
    .await
}

/// Drives a plugin future to completion from synchronous code.
pub(crate) fn block_on<F: std::future::Future<Output = ToolResult> + Send + 'static>(future: F) -> ToolResult {
    match tokio::runtime::Handle::try_current() {
        // Inside a runtime: drive it on a helper thread, since this thread may be one of the runtime's own.
        Ok(handle) => std::thread::scope(|s| {
            s.spawn(move || handle.block_on(future))
                .join()
                .unwrap_or_else(|_| ToolResult::failure(ToolError::internal("The plugin tool's thread failed.")))
        }),
        Err(_) => match tokio::runtime::Builder::new_current_thread().build() {
            Ok(runtime) => runtime.block_on(future),
            Err(e) => ToolResult::failure(ToolError::internal(format!("Cannot run the plugin tool: {e}"))),
        },
    }
}
