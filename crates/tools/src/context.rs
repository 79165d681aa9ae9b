//! What the consumer running a tool offers it besides the workspace: progress reports, log messages, and requests to
//! the client (ask the user through a form, list the client's roots, ask the client's model).
//!
//! A consumer implements [`CallContext`]; a plugin handler reaches it through [`crate::PluginCall`]. The MCP server
//! implements it for both protocol eras: in a session (`2025-11-25`) a request goes to the client at once and the
//! handler awaits the answer; in the stateless era (`2026-07-28`) the call ends with "input required", the client
//! answers, and the call is run again from the start with the answers at hand, so a handler asks the same questions
//! under the same keys in the same order and must not write before it has every answer it needs.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ToolError;

/// A boxed future that can move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How severe a log message is (syslog's levels, as MCP uses them), from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for debugging.
    Debug,
    /// Something happened.
    Info,
    /// Something worth noticing happened.
    Notice,
    /// Something was refused or went wrong and was handled.
    Warning,
    /// Something failed.
    Error,
    /// A component cannot work.
    Critical,
    /// Someone must act now.
    Alert,
    /// Nothing works.
    Emergency,
}

/// One progress report of a running tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// How far along, growing with each report.
    pub progress: f64,
    /// The value `progress` reaches at the end, when known.
    pub total: Option<f64>,
    /// What is happening now.
    pub message: Option<String>,
}

/// The kinds of request a tool can make to the client. Clients declare which they offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientKind {
    /// Asking the user to fill in a form (MCP elicitation).
    Elicitation,
    /// Listing the client's roots (MCP roots).
    Roots,
    /// Asking the client's model (MCP sampling).
    Sampling,
}

impl ClientKind {
    /// The capability's name in MCP.
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Elicitation => "elicitation",
            ClientKind::Roots => "roots",
            ClientKind::Sampling => "sampling",
        }
    }
}

/// One message of a sampling request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleMessage {
    /// `true` for the user's turn, `false` for the assistant's.
    pub from_user: bool,
    /// The text.
    pub text: String,
}

/// A request a tool makes to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientRequest {
    /// Ask the user: a message, and a JSON Schema object of flat properties (strings, numbers, booleans, enums)
    /// for the form; `{"type": "object", "properties": {}}` asks for a yes or no.
    Elicit {
        /// What the user is asked, in a sentence.
        message: String,
        /// The form.
        schema: Value,
    },
    /// The client's roots.
    Roots,
    /// Ask the client's model.
    Sample {
        /// The conversation so far.
        messages: Vec<SampleMessage>,
        /// An optional system prompt.
        system: Option<String>,
        /// The most tokens the answer may take.
        max_tokens: u32,
    },
}

impl ClientRequest {
    /// Which capability the request needs.
    pub fn kind(&self) -> ClientKind {
        match self {
            ClientRequest::Elicit { .. } => ClientKind::Elicitation,
            ClientRequest::Roots => ClientKind::Roots,
            ClientRequest::Sample { .. } => ClientKind::Sampling,
        }
    }
}

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    /// Submitted it: the values, a JSON object.
    Accepted(Value),
    /// Said no.
    Declined,
    /// Dismissed it without choosing.
    Cancelled,
}

/// One of the client's roots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (usually `file://`).
    pub uri: String,
    /// Its name, when the client gives one.
    pub name: Option<String>,
}

/// The client's answer to a [`ClientRequest`], of the same kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientReply {
    /// The answer to [`ClientRequest::Elicit`].
    Elicited(Elicited),
    /// The answer to [`ClientRequest::Roots`].
    Roots(Vec<Root>),
    /// The answer to [`ClientRequest::Sample`]: the model's text.
    Sampled {
        /// What the model said.
        text: String,
        /// Which model said it, when the client tells.
        model: Option<String>,
    },
}

/// Why a request to the client got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The client does not offer this kind of request (or the consumer has no client).
    #[error("the client does not support {}", .0.name())]
    Unsupported(ClientKind),
    /// The stateless era: the request went to the client with the call's result, and the call runs again once
    /// the client answers. A handler passes this on (`?`) and does nothing more.
    #[error("waiting for the client's answer")]
    InputRequired,
    /// The client failed to answer, or answered with something of the wrong kind.
    #[error("the client could not answer: {0}")]
    Failed(String),
}

impl From<ClientError> for ToolError {
    fn from(e: ClientError) -> ToolError {
        ToolError::of_kind(
            crate::ToolErrorKind::Unavailable,
            match e {
                ClientError::Unsupported(kind) => format!(
                    "This tool needs the client to support {}, and this client does not.",
                    kind.name()
                ),
                other => other.to_string(),
            },
        )
    }
}

/// What a consumer offers a running tool. Every method has a default that does nothing or refuses, so a consumer
/// implements only what it has.
pub trait CallContext: Send + Sync {
    /// Receives a progress report.
    fn progress(&self, report: Progress) {
        let _ = report;
    }

    /// Receives a log message about the call.
    fn log(&self, level: LogLevel, message: &str) {
        let _ = (level, message);
    }

    /// Whether the client offers this kind of request.
    fn supports(&self, kind: ClientKind) -> bool {
        let _ = kind;
        false
    }

    /// Sends requests to the client, each under a key the handler chooses (stable from run to run), and answers
    /// them in order. All or nothing: in the stateless era every request still unanswered goes to the client
    /// together and the result is [`ClientError::InputRequired`].
    fn request_all(
        &self,
        requests: Vec<(String, ClientRequest)>,
    ) -> BoxFuture<'_, Result<Vec<ClientReply>, ClientError>> {
        let kind = requests.first().map_or(ClientKind::Elicitation, |(_, r)| r.kind());
        Box::pin(async move { Err(ClientError::Unsupported(kind)) })
    }
}

/// The client's answer to one request, checked to be of the request's kind.
pub(crate) async fn request_one(
    context: Option<&dyn CallContext>,
    key: &str,
    request: ClientRequest,
) -> Result<ClientReply, ClientError> {
    let kind = request.kind();
    let Some(context) = context else {
        return Err(ClientError::Unsupported(kind));
    };
    let mut replies = context.request_all(vec![(key.to_owned(), request)]).await?;
    replies
        .pop()
        .ok_or_else(|| ClientError::Failed("no answer came back".into()))
}

/// Fails unless a reply is of the expected kind.
pub(crate) fn wrong_kind(kind: ClientKind) -> ClientError {
    ClientError::Failed(format!("the answer is not a {} result", kind.name()))
}
