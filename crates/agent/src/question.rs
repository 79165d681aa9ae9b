//! A question a running call asks the person (a plugin's MCP elicitation): what it looks like as a turn's event, and
//! who answers it. As with approval, a UI asks (the sidebar shows a form under the call, `quire chat` asks in the
//! terminal); a turn without an [`Asker`] tells the tool its questions cannot be asked, and the tool goes on without.

use std::future::Future;
use std::pin::Pin;

use quire_tools::Elicited;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A question waiting for the person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Question {
    /// The call that asks.
    pub call_id: String,
    /// The question's id, to answer it by (unique in the turn).
    pub question_id: String,
    /// What the person is asked, in a sentence.
    pub message: String,
    /// The form: a JSON Schema object of flat properties (strings, numbers, booleans, enums); no properties asks for
    /// a yes or no.
    pub schema: Value,
}

/// Answers the questions of a turn's calls. A UI asks the person; what it answers is handed back to the tool.
pub trait Asker: Send + Sync {
    /// Resolves to the person's answer: the form's values, a refusal, or a dismissal.
    fn ask(&self, question: Question) -> Pin<Box<dyn Future<Output = Elicited> + Send + '_>>;
}
