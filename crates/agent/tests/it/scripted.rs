//! A `ChatModel` that plays back a script and records every request, and a small fixture workspace.

use std::sync::Mutex;

use quire_agent::{
    AgentDeps, AgentEvent, Approver, AutoApprove, ChatFuture, ChatModel, ChatRequest, ChatResponse, ModelError,
    NoteContext, StopReason, TextSink, ToolCall, ToolPolicy, TurnError, TurnOutcome, Usage, run_note_chat,
};
use quire_core::{Actor, Workspace, testing};
use quire_tools::ToolRegistry;
use tokio_util::sync::CancellationToken;

/// One scripted answer.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    Text(&'static str),
    Calls(Vec<(&'static str, String)>),
    Fail(u16),
    /// Cancels (or interrupts) the turn through this token, then waits until it stops: the turn is under way then,
    /// with every step before this one done, however slow the machine.
    Hang(CancellationToken),
}

pub(crate) fn call(name: &'static str, args: serde_json::Value) -> (&'static str, String) {
    (name, args.to_string())
}

pub(crate) struct Scripted {
    steps: Mutex<Vec<Step>>,
    pub(crate) requests: Mutex<Vec<ChatRequest>>,
    counter: Mutex<usize>,
}

impl Scripted {
    pub(crate) fn new(steps: Vec<Step>) -> Scripted {
        Scripted {
            steps: Mutex::new(steps.into_iter().rev().collect()),
            requests: Mutex::new(Vec::new()),
            counter: Mutex::new(0),
        }
    }
}

impl ChatModel for Scripted {
    fn chat<'a>(&'a self, request: &'a ChatRequest, on_text: TextSink<'a>) -> ChatFuture<'a> {
        self.requests.lock().unwrap().push(request.clone());
        let step = self.steps.lock().unwrap().pop().unwrap_or(Step::Text("(script ended)"));
        let n = {
            let mut counter = self.counter.lock().unwrap();
            *counter += 1;
            *counter
        };
        Box::pin(async move {
            match step {
                Step::Text(text) => {
                    on_text(text);
                    Ok(ChatResponse {
                        text: text.to_owned(),
                        tool_calls: vec![],
                        stop: StopReason::EndTurn,
                        usage: Usage {
                            input_tokens: 10,
                            output_tokens: 2,
                            ..Usage::default()
                        },
                    })
                }
                Step::Calls(calls) => Ok(ChatResponse {
                    text: String::new(),
                    tool_calls: calls
                        .into_iter()
                        .enumerate()
                        .map(|(i, (name, arguments))| ToolCall {
                            id: format!("call_{n}_{i}"),
                            name: name.to_owned(),
                            arguments,
                        })
                        .collect(),
                    stop: StopReason::ToolUse,
                    usage: Usage {
                        input_tokens: 10,
                        output_tokens: 5,
                        ..Usage::default()
                    },
                }),
                Step::Fail(status) => Err(ModelError {
                    provider: "scripted".into(),
                    status: Some(status),
                    message: "overloaded".into(),
                }),
                Step::Hang(stop) => {
                    stop.cancel();
                    std::future::pending::<()>().await;
                    unreachable!()
                }
            }
        })
    }

    fn name(&self) -> String {
        "scripted".into()
    }
}

pub(crate) struct Fixture {
    pub(crate) ws: Workspace,
    pub(crate) registry: ToolRegistry,
    pub(crate) plain: String,
    pub(crate) secret: String,
    /// Stops a running turn and keeps its writes.
    pub(crate) interrupt: CancellationToken,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let ws = Workspace::open_in_memory().unwrap();
        let (plain, secret) = ws
            .write(&Actor::User, |w| {
                let plain = testing::note("Packing list", "- shoes\n- tent\n").create(w)?;
                let secret = testing::note("Diary", "secret").protected().create(w)?;
                Ok::<_, quire_core::Error>((plain, secret))
            })
            .unwrap();
        Fixture {
            ws,
            registry: ToolRegistry::builtin(),
            plain,
            secret,
            interrupt: CancellationToken::new(),
        }
    }

    /// Runs one turn with the script; returns the result, the model (for its requests) and the events.
    pub(crate) async fn run(
        &self,
        context: &NoteContext,
        steps: Vec<Step>,
        approver: &dyn Approver,
        cancel: CancellationToken,
    ) -> (Result<TurnOutcome, TurnError>, Scripted, Vec<AgentEvent>) {
        let model = Scripted::new(steps);
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let deps = AgentDeps {
            model: &model,
            client: None,
            registry: &self.registry,
            workspace: &self.ws,
            chat_id: "chat-1".into(),
            turn: 1,
            policy: ToolPolicy::default(),
            approver,
            asker: None,
            events: Some(sender),
            cancel,
            interrupt: self.interrupt.clone(),
            max_tokens: 1000,
            max_turn_tokens: None,
        };
        let result = run_note_chat(context, &[], "please help", &deps).await;
        drop(deps);
        let mut events = Vec::new();
        while let Ok(event) = receiver.try_recv() {
            events.push(event);
        }
        (result, model, events)
    }

    pub(crate) async fn simple(
        &self,
        context: &NoteContext,
        steps: Vec<Step>,
    ) -> (Result<TurnOutcome, TurnError>, Scripted) {
        let (result, model, _) = self
            .run(context, steps, &AutoApprove(false), CancellationToken::new())
            .await;
        (result, model)
    }
}
