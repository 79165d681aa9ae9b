//! The Anthropic Messages client, streaming.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::{
    ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, ModelError, StopReason, TextSink, ToolCall, Usage,
};
use quire_embed::http::{ClientConfig, client, excerpt, read_sse, send};

const PROVIDER: &str = "anthropic";
const API_VERSION: &str = "2023-06-01";

/// A client for `POST {base_url}/v1/messages`.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    config: ClientConfig,
    http: reqwest::Client,
}

impl AnthropicClient {
    /// A client for this configuration (base URL without `/v1`).
    pub fn new(config: ClientConfig) -> Result<AnthropicClient, ModelError> {
        let http = client(&config, PROVIDER)?;
        Ok(AnthropicClient { config, http })
    }
}

/// The request body, as sent (public for snapshot tests of the wire format). All results of one step's tool calls
/// go into the single user message that follows the assistant's `tool_use` blocks.
///
/// Three cache breakpoints (`cache_control`, of the four allowed) let Anthropic's prompt cache serve what repeats:
/// the last tool definition (the tools, which change with nothing), the system prompt (tools and prompt: the same
/// for every step of a turn, and across turns on the same note), and the last message (the conversation so far,
/// which the next step of the turn, or the next turn, sends again before its new messages). A prefix shorter than
/// the model's minimum is simply not cached.
pub fn request_body(model: &str, request: &ChatRequest) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    for message in &request.messages {
        match message {
            Message::User { content } => messages.push(json!({"role": "user", "content": content})),
            Message::Assistant { content, tool_calls } => {
                let mut blocks = Vec::new();
                if !content.is_empty() {
                    blocks.push(json!({"type": "text", "text": content}));
                }
                for call in tool_calls {
                    // `input` must be an object, even when the model's arguments were not valid JSON.
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                if blocks.is_empty() {
                    blocks.push(json!({"type": "text", "text": "(no answer)"}));
                }
                messages.push(json!({"role": "assistant", "content": blocks}));
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                let block =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error});
                let appended = messages.last_mut().is_some_and(|last| {
                    let is_results = last["role"] == "user"
                        && last["content"]
                            .as_array()
                            .is_some_and(|c| c.iter().all(|b| b["type"] == "tool_result"));
                    if is_results && let Some(blocks) = last["content"].as_array_mut() {
                        blocks.push(block.clone());
                    }
                    is_results
                });
                if !appended {
                    messages.push(json!({"role": "user", "content": [block]}));
                }
            }
        }
    }
    mark_last_message(&mut messages);
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens,
        "system": [{"type": "text", "text": request.system, "cache_control": ephemeral()}],
        "messages": messages,
        "stream": true,
    });
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = json!({"type": "auto"});
    }
    body
}

/// A cache breakpoint with the default lifetime (five minutes, renewed by every hit).
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Puts a cache breakpoint on the last block of the last message (a message of plain text becomes one text block,
/// the form that can carry it).
fn mark_last_message(messages: &mut [Value]) {
    let Some(last) = messages.last_mut() else {
        return;
    };
    // An empty text block is refused where an empty string is not: that message stays as it is, unmarked.
    if let Some(text) = last["content"].as_str().filter(|t| !t.is_empty()) {
        last["content"] = json!([{"type": "text", "text": text}]);
    }
    if let Some(block) = last["content"].as_array_mut().and_then(|blocks| blocks.last_mut()) {
        block["cache_control"] = ephemeral();
    }
}

/// Reads the usage of `message_start` (`message.usage`) or `message_delta` (`usage`, whose counts are cumulative)
/// into `usage`, keeping what a field left out said before. Anthropic's `input_tokens` counts only what was neither
/// read from nor written to the cache; [`Usage::input_tokens`] counts every token sent, so the three are added.
fn read_usage(u: &Value, usage: &mut Usage) {
    let field = |name: &str| u[name].as_u64();
    let fresh = field("input_tokens");
    let read = field("cache_read_input_tokens");
    let written = field("cache_creation_input_tokens");
    if fresh.is_some() || read.is_some() || written.is_some() {
        let before = usage
            .input_tokens
            .saturating_sub(usage.cached_input_tokens + usage.cache_write_tokens);
        let uncached = fresh.unwrap_or(before);
        usage.cached_input_tokens = read.unwrap_or(usage.cached_input_tokens);
        usage.cache_write_tokens = written.unwrap_or(usage.cache_write_tokens);
        usage.input_tokens = uncached + usage.cached_input_tokens + usage.cache_write_tokens;
    }
    if let Some(output) = field("output_tokens") {
        usage.output_tokens = output;
    }
}

impl ChatModel for AnthropicClient {
    fn chat<'a>(&'a self, request: &'a ChatRequest, on_text: TextSink<'a>) -> ChatFuture<'a> {
        Box::pin(async move {
            let body = request_body(&self.config.model, request);
            let url = format!("{}/v1/messages", self.config.base_url);
            let response = send(&self.config, PROVIDER, || {
                let builder = self
                    .http
                    .post(&url)
                    .header("anthropic-version", API_VERSION)
                    .json(&body);
                match &self.config.api_key {
                    Some(key) => builder.header("x-api-key", key),
                    None => builder,
                }
            })
            .await?;
            let mut text = String::new();
            let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
            let mut stop = StopReason::Other;
            let mut usage = Usage::default();
            read_sse(response, PROVIDER, |event| {
                let data: Value = match serde_json::from_str(&event.data) {
                    Ok(data) => data,
                    Err(_) if event.data.trim().is_empty() => return Ok(()),
                    Err(e) => {
                        return Err(ModelError::new(
                            PROVIDER,
                            format!("unreadable stream event ({e}): {}", excerpt(&event.data)),
                        ));
                    }
                };
                match data["type"].as_str().unwrap_or_default() {
                    "message_start" => read_usage(&data["message"]["usage"], &mut usage),
                    "content_block_start" => {
                        let block = &data["content_block"];
                        if block["type"] == "tool_use" {
                            let index = data["index"].as_u64().unwrap_or(0);
                            calls.insert(
                                index,
                                ToolCall {
                                    id: block["id"].as_str().unwrap_or_default().to_owned(),
                                    name: block["name"].as_str().unwrap_or_default().to_owned(),
                                    arguments: String::new(),
                                },
                            );
                        }
                    }
                    "content_block_delta" => {
                        let delta = &data["delta"];
                        match delta["type"].as_str() {
                            Some("text_delta") => {
                                let piece = delta["text"].as_str().unwrap_or_default();
                                text.push_str(piece);
                                on_text(piece);
                            }
                            Some("input_json_delta") => {
                                let index = data["index"].as_u64().unwrap_or(0);
                                if let Some(call) = calls.get_mut(&index) {
                                    call.arguments
                                        .push_str(delta["partial_json"].as_str().unwrap_or_default());
                                }
                            }
                            _ => {}
                        }
                    }
                    "message_delta" => {
                        stop = match data["delta"]["stop_reason"].as_str() {
                            Some("end_turn") | Some("stop_sequence") => StopReason::EndTurn,
                            Some("tool_use") => StopReason::ToolUse,
                            Some("max_tokens") => StopReason::MaxTokens,
                            _ => StopReason::Other,
                        };
                        read_usage(&data["usage"], &mut usage);
                    }
                    "error" => {
                        return Err(ModelError::new(
                            PROVIDER,
                            format!("error in stream: {}", excerpt(&data["error"].to_string())),
                        ));
                    }
                    _ => {}
                }
                Ok(())
            })
            .await?;
            let tool_calls: Vec<ToolCall> = calls
                .into_values()
                .map(|mut c| {
                    if c.arguments.trim().is_empty() {
                        c.arguments = "{}".to_owned();
                    }
                    c
                })
                .collect();
            Ok(ChatResponse {
                text,
                tool_calls,
                stop,
                usage,
            })
        })
    }

    fn name(&self) -> String {
        format!("anthropic:{}", self.config.model)
    }
}
