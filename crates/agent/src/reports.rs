//! What a tool reports while it runs (a plugin's progress and log messages), as events of the turn.

use tokio::sync::mpsc::WeakUnboundedSender;

use quire_tools::{BoxFuture, ClientError, ClientKind, ClientReply, ClientRequest};

use crate::event::AgentEvent;
use crate::question::Question;

/// One call's [`quire_tools::CallContext`] in a turn: what its tool reports becomes the turn's events, which the
/// sidebar and `quire chat` show under the call.
/// The turn's events are held weakly: a plugin's host keeps a call's context a moment after its answer (for reports
/// handled late), and that must not keep the turn's stream open.
pub(crate) struct SidebarCall {
    pub(crate) call_id: String,
    pub(crate) events: WeakUnboundedSender<AgentEvent>,
    /// Who answers the call's questions, when the turn has someone to ask.
    pub(crate) asker: Option<std::sync::Arc<dyn crate::question::Asker>>,
}

impl SidebarCall {
    fn send(&self, event: AgentEvent) {
        if let Some(events) = self.events.upgrade() {
            let _ = events.send(event);
        }
    }
}

impl quire_tools::CallContext for SidebarCall {
    fn progress(&self, report: quire_tools::Progress) {
        self.send(AgentEvent::ToolProgress {
            call_id: self.call_id.clone(),
            progress: report.progress,
            total: report.total,
            message: report.message,
        });
    }

    fn log(&self, level: quire_tools::LogLevel, message: &str) {
        let level = serde_json::to_value(level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        self.send(AgentEvent::ToolLog {
            call_id: self.call_id.clone(),
            level,
            message: message.to_owned(),
        });
    }

    fn supports(&self, kind: ClientKind) -> bool {
        kind == ClientKind::Elicitation && self.asker.is_some()
    }

    /// Questions (MCP elicitation) go to the person, one after another, each a `question_asked` event of the turn;
    /// nothing else is asked of the sidebar (it has no roots, and it is not a model for the plugin to sample).
    fn request_all(
        &self,
        requests: Vec<(String, ClientRequest)>,
    ) -> BoxFuture<'_, Result<Vec<ClientReply>, ClientError>> {
        Box::pin(async move {
            let mut replies = Vec::with_capacity(requests.len());
            for (key, request) in requests {
                let (ClientRequest::Elicit { message, schema }, Some(asker)) = (&request, &self.asker) else {
                    return Err(ClientError::Unsupported(request.kind()));
                };
                let question = Question {
                    call_id: self.call_id.clone(),
                    question_id: format!("{}/{key}", self.call_id),
                    message: message.clone(),
                    schema: schema.clone(),
                };
                self.send(AgentEvent::QuestionAsked {
                    question: question.clone(),
                });
                replies.push(ClientReply::Elicited(asker.ask(question).await));
            }
            Ok(replies)
        })
    }
}
