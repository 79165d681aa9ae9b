//! quire-agent: the brain of the chat sidebar.
//!
//! [`run_note_chat`] runs one turn: it offers the model the tools of [`build_tool_list`] (workspace tools from the
//! [`quire_tools::ToolRegistry`], plus session tools that edit the focused note's text), calls the model at most
//! [`MAX_STEPS`] times through the [`ChatModel`] trait, dispatches each tool call to the session tools or the
//! registry (as `Actor::Agent { chat, turn }`, so the guards apply and the turn's writes form one change set), and
//! returns the reply, the proposed [`Edit`]s and a transcript. Destructive calls wait for an [`Approver`]; a
//! [`tokio_util::sync::CancellationToken`] stops a turn and reverts its writes; [`AgentEvent`]s stream out.
//!
//! Two clients implement [`ChatModel`] on reqwest: [`OpenAiClient`] for OpenAI-compatible chat completions
//! (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) and [`AnthropicClient`] for Anthropic Messages, both
//! streaming, with timeouts and retries.
//!
//! It depends on `quire-tools`, `quire-core` and `quire-embed` (for the HTTP plumbing its clients share with the
//! HTTP embedder). It must not depend on `quire-mcp`, `quire-web` or the app, nor on `rusqlite`, `r2d2`, `rmcp`,
//! `axum` or `candle`.

mod accept;
mod anthropic;
mod chats;
mod context;
mod error;
mod model;
mod openai;
mod prompt;
mod provider;
mod session;
mod toollist;
mod turn;

pub use accept::{AcceptRequest, Accepted, accept_edits};
pub use anthropic::{AnthropicClient, request_body as anthropic_request_body};
pub use chats::{load_history, next_turn, save_turn, start_chat};
pub use context::{FocusedNote, NoteContext, Selection, focus_note};
pub use error::Error;
pub use model::{
    ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, ModelError, StopReason, TextSink, ToolCall, ToolSpec,
    Usage,
};
pub use openai::{OpenAiClient, request_body as openai_request_body};
pub use prompt::system_prompt;
pub use provider::{HOW_TO_CONFIGURE, ModelSettings, model_from_settings};
pub use quire_embed::http::ClientConfig;
pub use session::{Edit, SessionTool, apply_edits, unified_diff};
pub use toollist::{OfferedTool, Tier, ToolPolicy, build_tool_list};
pub use turn::{
    AgentDeps, AgentEvent, ApprovalRequest, Approver, AutoApprove, MAX_STEPS, TranscriptEntry, TurnError, TurnOutcome,
    run_note_chat,
};
