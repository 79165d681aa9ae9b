//! What happens during a turn, as the caller (the sidebar, `quire chat`) receives it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::ApprovalRequest;
use crate::edit::Edit;

/// What happens during a turn, streamed to the caller as it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A piece of the model's reply.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A tool call is about to run.
    ToolStarted {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The tool's title.
        title: String,
        /// The arguments as the model sent them (raw JSON text, possibly invalid).
        arguments: String,
    },
    /// A tool call finished.
    ToolFinished {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// Whether it failed.
        is_error: bool,
        /// The result the model got (the output object, or `{"error": ...}`).
        output: Value,
        /// How a UI shows the call instead of collapsed JSON, when the tool (a plugin) says.
        render: Option<quire_tools::RenderSpec>,
        /// Media the tool returned for the user (a plugin's images, links, an MCP Apps `ui://` page): the model reads
        /// only a line about each.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[schemars(with = "Vec<serde_json::Value>")]
        content: Vec<quire_tools::ContentItem>,
    },
    /// A running call (a plugin's) reported how far it is.
    ToolProgress {
        /// The call's id.
        call_id: String,
        /// How far along, growing with each report.
        progress: f64,
        /// The value `progress` reaches at the end, when known.
        total: Option<f64>,
        /// What it is doing now.
        message: Option<String>,
    },
    /// A running call (a plugin's) logged a message.
    ToolLog {
        /// The call's id.
        call_id: String,
        /// `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.
        level: String,
        /// The message.
        message: String,
    },
    /// A running call (a plugin's) asks the person something; the turn waits for the answer (see
    /// [`crate::Asker`]).
    QuestionAsked {
        /// The question.
        question: crate::question::Question,
    },
    /// A session tool proposed an edit of the focused note.
    EditProposed {
        /// The edit.
        edit: Edit,
    },
    /// A destructive call waits for the user's approval.
    ApprovalNeeded {
        /// The call.
        request: ApprovalRequest,
    },
    /// An external agent's plan for the turn, whole, each time it changes (ACP agents only).
    Plan {
        /// Its steps, in order.
        steps: Vec<PlanStep>,
    },
}

/// A step of an external agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanStep {
    /// What the step does.
    pub text: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}
