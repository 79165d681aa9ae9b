//! What the fixtures ask the client (a form, a question to its model) and how they read its replies.

use quire_tools::{ClientReply, ClientRequest, Elicited, SampleMessage};
use serde_json::{Value, json};

/// A form to fill.
pub(crate) fn elicit(message: &str, schema: Value) -> ClientRequest {
    ClientRequest::Elicit {
        message: message.into(),
        schema,
    }
}

/// A form with one required text field.
pub(crate) fn name_form(message: &str, field: &str) -> ClientRequest {
    elicit(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
}

/// A question to the client's model.
pub(crate) fn sample(prompt: &str, max_tokens: u32) -> ClientRequest {
    ClientRequest::Sample {
        messages: vec![SampleMessage {
            from_user: true,
            text: prompt.into(),
        }],
        system: None,
        max_tokens,
    }
}

/// A short description of a client's answer.
pub(crate) fn describe(reply: &ClientReply) -> String {
    match reply {
        ClientReply::Elicited(Elicited::Accepted(content)) => format!("action=accept, content={content}"),
        ClientReply::Elicited(Elicited::Declined) => "action=decline, content={}".into(),
        ClientReply::Elicited(Elicited::Cancelled) => "action=cancel, content={}".into(),
        ClientReply::Roots(roots) => format!(
            "roots: {}",
            roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(", ")
        ),
        ClientReply::Sampled { text, .. } => text.clone(),
    }
}

/// A field of an accepted form, or a description of any other reply.
pub(crate) fn field(reply: &ClientReply, name: &str) -> String {
    match reply {
        ClientReply::Elicited(Elicited::Accepted(content)) => content
            .get(name)
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .unwrap_or_default(),
        other => describe(other),
    }
}
