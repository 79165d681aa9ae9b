//! The OpenAI-compatible chat completions client: OpenAI, Ollama (`/v1`), llama.cpp server, vLLM, LM Studio,
//! OpenRouter, by base URL.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::{
    ChatFuture, ChatModel, ChatRequest, ChatResponse, Message, ModelError, StopReason, TextSink, ToolCall, Usage,
};
use quire_embed::http::{ClientConfig, client, read_sse, send};

const PROVIDER: &str = "openai-compatible";

/// A client for `POST {base_url}/chat/completions`, streaming.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: ClientConfig,
    http: reqwest::Client,
}

impl OpenAiClient {
    /// A client for this configuration.
    pub fn new(config: ClientConfig) -> Result<OpenAiClient, ModelError> {
        let http = client(&config, PROVIDER)?;
        Ok(OpenAiClient { config, http })
    }
}

/// The request body, as sent (public for snapshot tests of the wire format).
pub fn request_body(model: &str, request: &ChatRequest) -> Value {
    let mut messages = vec![json!({"role": "system", "content": request.system})];
    for message in &request.messages {
        messages.push(match message {
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant { content, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": content})
            }
            // Content goes as "" rather than null: several OpenAI-compatible servers reject null.
            Message::Assistant { content, tool_calls } => json!({
                "role": "assistant",
                "content": content,
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}
                })).collect::<Vec<_>>(),
            }),
            // There is no error flag in this format; the content says it ({"error": ...}).
            Message::Tool { call_id, content, .. } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({
        "model": model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tool_choice"] = json!("auto");
    }
    body
}

/// The usage of a chunk (the last one, when `stream_options.include_usage` is sent). `prompt_tokens` counts the
/// cached tokens too; `prompt_tokens_details.cached_tokens` says how many were (servers without a cache leave it
/// out). This format reports no cache writes: caching is automatic and writes cost nothing extra.
fn read_usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
        cached_input_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap_or(0),
        cache_write_tokens: 0,
        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
    }
}

impl ChatModel for OpenAiClient {
    fn chat<'a>(&'a self, request: &'a ChatRequest, on_text: TextSink<'a>) -> ChatFuture<'a> {
        Box::pin(async move {
            let body = request_body(&self.config.model, request);
            let url = format!("{}/chat/completions", self.config.base_url);
            let response = send(&self.config, PROVIDER, || {
                let builder = self.http.post(&url).json(&body);
                match &self.config.api_key {
                    Some(key) => builder.bearer_auth(key),
                    None => builder,
                }
            })
            .await?;
            let mut text = String::new();
            let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
            let mut finish = None;
            let mut usage = Usage::default();
            let mut done = false;
            read_sse(response, PROVIDER, |event| {
                if event.data.trim() == "[DONE]" {
                    done = true;
                    return Ok(());
                }
                let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                    ModelError::new(
                        PROVIDER,
                        format!(
                            "unreadable stream chunk ({e}): {}",
                            quire_embed::http::excerpt(&event.data)
                        ),
                    )
                })?;
                if let Some(error) = chunk.get("error") {
                    return Err(ModelError::new(
                        PROVIDER,
                        format!("error in stream: {}", quire_embed::http::excerpt(&error.to_string())),
                    ));
                }
                if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
                    usage = read_usage(u);
                }
                let Some(choice) = chunk["choices"].get(0) else {
                    return Ok(());
                };
                let delta = &choice["delta"];
                if let Some(piece) = delta["content"].as_str().filter(|p| !p.is_empty()) {
                    text.push_str(piece);
                    on_text(piece);
                }
                for fragment in delta["tool_calls"].as_array().into_iter().flatten() {
                    let index = fragment["index"].as_u64().unwrap_or(calls.len() as u64);
                    let call = calls.entry(index).or_insert_with(|| ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: String::new(),
                    });
                    if let Some(id) = fragment["id"].as_str() {
                        call.id = id.to_owned();
                    }
                    if let Some(name) = fragment["function"]["name"].as_str() {
                        call.name.push_str(name);
                    }
                    if let Some(arguments) = fragment["function"]["arguments"].as_str() {
                        call.arguments.push_str(arguments);
                    }
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    finish = Some(reason.to_owned());
                }
                Ok(())
            })
            .await?;
            // A stream cut before its end (no finish reason, no `[DONE]`) is no answer, even an empty one.
            if !done && finish.is_none() {
                return Err(ModelError::new(
                    PROVIDER,
                    "the answer ended before it finished (no finish reason, no [DONE]): the connection was cut, or \
                     the server does not stream as OpenAI's API does",
                ));
            }
            let tool_calls: Vec<ToolCall> = calls
                .into_values()
                .enumerate()
                .map(|(i, mut c)| {
                    if c.id.is_empty() {
                        c.id = format!("call_{i}");
                    }
                    c
                })
                .collect();
            let stop = match finish.as_deref() {
                _ if !tool_calls.is_empty() => StopReason::ToolUse,
                Some("stop") => StopReason::EndTurn,
                Some("length") => StopReason::MaxTokens,
                Some("tool_calls") => StopReason::ToolUse,
                _ => StopReason::Other,
            };
            Ok(ChatResponse {
                text,
                tool_calls,
                stop,
                usage,
            })
        })
    }

    fn name(&self) -> String {
        format!("openai-compatible:{}", self.config.model)
    }
}
