//! The provider-neutral conversation: messages, tool calls, requests, responses, and the `ChatModel` trait.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

/// One message of a conversation, in the shape both wire formats are built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// What the user typed.
    User {
        /// The text.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The text (may be empty).
        content: String,
        /// The tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answering its id.
    Tool {
        /// The id of the call this answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The result as text (JSON for workspace tools).
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolCall {
    /// The call's id, to be answered exactly once.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (they may not be valid JSON).
    pub arguments: String,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What the model reads to decide when to call it.
    pub description: String,
    /// The JSON Schema of its arguments (root `type: object`), shared with the tool registry.
    pub parameters: std::sync::Arc<serde_json::Value>,
}

/// One call to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The most tokens to generate.
    pub max_tokens: u32,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran out of tokens.
    MaxTokens,
    /// Anything else the provider reported.
    Other,
}

/// Token counts, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// Tokens sent, those read from or written to the provider's prompt cache included.
    pub input_tokens: u64,
    /// Of the tokens sent, those the provider read from its prompt cache (cheaper, when it says so).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Of the tokens sent, those the provider wrote to its prompt cache (Anthropic reports them; OpenAI does not).
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
}

impl Usage {
    /// Every token counted, sent or generated: what a turn's budget is measured in.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// What a model's tokens cost, in currency units (whichever the person gave them in) per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prices {
    /// A million tokens sent.
    pub input: f64,
    /// A million tokens generated.
    pub output: f64,
    /// A million tokens read from the prompt cache; the input price when not given.
    pub cached_input: Option<f64>,
}

impl Prices {
    /// The estimated cost of `usage`: cache reads at the cached price, every other token sent (cache writes
    /// included) at the input price, generated tokens at the output price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per_token(uncached, self.input)
            + per_token(cached, self.cached_input.unwrap_or(self.input))
            + per_token(usage.output_tokens, self.output)
    }
}

/// What the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Its text.
    pub text: String,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Tokens used by this call.
    pub usage: Usage,
}

pub use quire_embed::ModelError;

/// Receives text as the model streams it.
pub type TextSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// The future a [`ChatModel`] returns.
pub type ChatFuture<'a> = Pin<Box<dyn Future<Output = Result<ChatResponse, ModelError>> + Send + 'a>>;

/// A language model that can call tools. The loop only ever talks to this trait, so any provider (or a scripted
/// test double) fits.
pub trait ChatModel: Send + Sync {
    /// Sends one request; text deltas go to `on_text` while the answer streams in.
    fn chat<'a>(&'a self, request: &'a ChatRequest, on_text: TextSink<'a>) -> ChatFuture<'a>;

    /// A short name for logs and errors, such as `openai:gpt-4.1-mini`.
    fn name(&self) -> String;
}
