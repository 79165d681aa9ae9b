//! quire-agent: the brain of the chat sidebar.
//!
//! A [`Chat`] owns a conversation's lifecycle: it opens a stored chat or creates one, holds the focused note, runs
//! each message as the chat's next turn and stores what the turn said; consumers (the terminal's `quire chat`, the
//! web sidebar) only choose what to send and show the outcome. Proposed [`Edit`]s of the focused note are saved only
//! through [`accept_edits`] ([`Chat::accept`] for a chat that keeps its focus).
//!
//! [`run_note_chat`] runs one turn: it offers the model the tools of [`build_tool_list`] (workspace tools from the
//! [`quire_tools::ToolRegistry`], plus session tools that edit the focused note's text), calls the model at most
//! [`MAX_STEPS`] times through the [`ChatModel`] trait, dispatches each tool call to the session tools or the
//! registry (as `Actor::Agent { chat, turn }`, so the guards apply and the turn's writes form one change set), and
//! returns the reply, the proposed [`Edit`]s and a transcript. Destructive calls wait for an [`Approver`]; a
//! [`tokio_util::sync::CancellationToken`] stops a turn and reverts its writes; [`AgentEvent`]s stream out.
//!
//! Every turn's token usage, as the provider reports it (cached tokens apart), is stored with its chat
//! ([`ChatTotals`]); [`Prices`] turn it into an estimated cost, and [`TurnOptions::max_turn_tokens`] bounds a turn.
//!
//! Two clients implement [`ChatModel`] on reqwest: [`OpenAiClient`] for OpenAI-compatible chat completions
//! (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) and [`AnthropicClient`] for Anthropic Messages, both
//! streaming, with timeouts and retries.
//!
//! It depends on `quire-tools`, `quire-core` and `quire-embed` (for the HTTP plumbing its clients share with the
//! HTTP embedder). It must not depend on `quire-mcp`, `quire-web` or the app, nor on `rusqlite`, `r2d2`, `rmcp`,
//! `axum` or `candle`.

pub mod acp;
mod anthropic;
mod approval;
mod chat;
mod compact;
mod context;
mod edit;
mod error;
mod event;
mod model;
mod openai;
mod prompt;
mod provider;
mod question;
mod reports;
mod session;
mod toollist;
mod turn;
mod view;

pub use anthropic::{AnthropicClient, request_body as anthropic_request_body};
pub use approval::{ApprovalRequest, Approver, AutoApprove, Refusal};
pub use chat::{Chat, ChatTotals, ChatTurn, MAX_TOKENS, TurnOptions, chat_totals, load_history};
pub use compact::{HISTORY_TOKENS, Summary, chat_summary, drop_chat_summary};
pub use context::{DEFAULT_VIEW_TOKENS, FocusedNote, NoteContext, Selection, focus_note};
pub use edit::{AcceptRequest, Accepted, Edit, accept_edits, apply_edits, unified_diff};
pub use error::Error;
pub use event::PlanStep;
pub use model::{
    ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, ModelError, Prices, StopReason, TextSink, ToolCall,
    ToolSpec, Usage,
};
pub use openai::{OpenAiClient, request_body as openai_request_body};
pub use prompt::system_prompt;
pub use provider::{HOW_TO_CONFIGURE, ModelSettings, model_from_settings};
pub use question::{Asker, Question};
pub use quire_embed::http::ClientConfig;
pub use session::SessionTool;
pub use toollist::{
    FIND_TOOLS, OfferedTool, TOOL_TOKENS, Tier, ToolOffer, ToolPolicy, build_tool_list, build_tool_offer,
    estimate_tokens, search_deferred,
};
pub use turn::{AgentDeps, AgentEvent, MAX_STEPS, TranscriptEntry, TurnError, TurnOutcome, run_note_chat};
