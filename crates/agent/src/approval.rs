//! Approval of destructive calls: what a waiting call looks like, who decides, and why a refused call did not run.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A destructive call waiting for the user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovalRequest {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The tool's title.
    pub title: String,
    /// The arguments.
    pub arguments: Value,
}

/// Decides whether a destructive call may run. A UI asks the user; scripts decide up front.
pub trait Approver: Send + Sync {
    /// Resolves to `true` to run the call, `false` to refuse it.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

    /// Why a call this approver refuses did not run. By default the user was asked and declined it.
    fn refusal(&self) -> Refusal {
        Refusal::Declined
    }
}

/// Approves (or refuses) every destructive call without asking.
#[derive(Debug, Clone, Copy)]
pub struct AutoApprove(pub bool);

impl Approver for AutoApprove {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>> {
        Box::pin(std::future::ready(self.0))
    }

    /// Nobody was asked: the call needs an approval this chat does not give.
    fn refusal(&self) -> Refusal {
        Refusal::NeedsApproval
    }
}

/// Why a destructive call was not run, recorded with the call in the turn's transcript so that a consumer can say
/// it in its own words without reading the message the model got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The user was asked and said no.
    Declined,
    /// It needs the user's approval, and nobody could be asked (a script, a one-message chat).
    NeedsApproval,
}

impl Refusal {
    /// What the model is told about a refused call of `tool`: a sentence that says how to go on.
    pub fn message(self, tool: &str) -> String {
        match self {
            Refusal::Declined => {
                format!("The user declined to run {tool}. Do not try it again; go on without it or ask the user.")
            }
            Refusal::NeedsApproval => format!(
                "{tool} needs the user's approval, which this chat cannot ask for, so it was not run. Do not try it \
                 again; go on without it and tell the user what you would have done."
            ),
        }
    }
}
