//! quire-test-support: what several test suites share, so that no suite copies it: a local mock of an
//! OpenAI-compatible chat-completions API that streams scripted answers over server-sent events, as the real APIs
//! do (the production clients above it are the real ones), and, in `mcp` (features `mcp-in-process` and
//! `mcp-remote`), the one way tests connect rmcp's client to an MCP server.
//!
//! It depends on no quire crate (the end-to-end tests, which link none, use it too), and only dev-dependencies may
//! point at it.
//!
//! ```
//! use quire_test_support::{Script, text, tool_calls};
//! use serde_json::json;
//!
//! let script = Script::new(vec![tool_calls(&[("list_tags", json!({}))]), text("Done.")]);
//! assert_eq!(script.served(), 0);
//! ```

#[cfg(any(feature = "mcp-in-process", feature = "mcp-remote"))]
pub mod mcp;

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Installs rustls's crypto provider (ring, as quire's `quire_embed::http::builder` does) so that a test can build a
/// reqwest client, its own or one inside rmcp's HTTP client transport: reqwest is compiled without a provider of its
/// own and panics when none is installed. Call it before building any client; calling it again does nothing.
pub fn install_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Answers the n-th request with the n-th response, and with HTTP 500 once the script has ended.
#[derive(Debug)]
pub struct Script {
    responses: Vec<ResponseTemplate>,
    next: AtomicUsize,
}

impl Script {
    /// A script of responses, in order.
    pub fn new(responses: Vec<ResponseTemplate>) -> Script {
        Script {
            responses,
            next: AtomicUsize::new(0),
        }
    }

    /// How many requests it has answered.
    pub fn served(&self) -> usize {
        self.next.load(Ordering::SeqCst)
    }
}

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        self.responses
            .get(n)
            .cloned()
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script ended"))
    }
}

/// An OpenAI-style stream: each event as a `data:` line, then `data: [DONE]`.
pub fn sse(events: &[Value]) -> ResponseTemplate {
    let body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect::<String>() + "data: [DONE]\n\n";
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

/// A streamed answer that calls tools: `(name, arguments)`, with ids `call_0`, `call_1`, ...
pub fn tool_calls(calls: &[(&str, Value)]) -> ResponseTemplate {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"index": i, "id": format!("call_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    sse(&[json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": "tool_calls"}]})])
}

/// A streamed text answer that ends the turn.
pub fn text(reply: &str) -> ResponseTemplate {
    sse(&[json!({"choices": [{"index": 0, "delta": {"content": reply}, "finish_reason": "stop"}]})])
}

/// A local server answering `POST /v1/chat/completions` with `responses`, in order.
pub async fn mock_openai(responses: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script::new(responses))
        .mount(&server)
        .await;
    server
}
