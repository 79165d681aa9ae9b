//! What a tool reports while it runs (a plugin's progress and log messages), as events of the turn.

use tokio::sync::mpsc::WeakUnboundedSender;

use crate::event::AgentEvent;

/// One call's [`quire_tools::CallContext`] in a turn: what its tool reports becomes the turn's events, which the
/// sidebar and `quire chat` show under the call.
/// The turn's events are held weakly: a plugin's host keeps a call's context a moment after its answer (for reports
/// handled late), and that must not keep the turn's stream open.
pub(crate) struct SidebarCall {
    pub(crate) call_id: String,
    pub(crate) events: WeakUnboundedSender<AgentEvent>,
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
}
