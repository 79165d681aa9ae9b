//! The one error enum of quire-agent: why a turn stopped, a note could not be focused, or edits were not accepted.

use crate::model::ModelError;

/// Everything that can go wrong in quire-agent. A turn that stops early returns it inside a
/// [`crate::TurnError`], together with what the turn did until then.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The model was still calling tools after the most model calls a turn makes ([`crate::MAX_STEPS`]).
    #[error("the model was still calling tools after {steps} steps")]
    StepLimit {
        /// How many model calls the turn made.
        steps: usize,
    },
    /// The turn used more tokens than its budget allows ([`crate::TurnOptions::max_turn_tokens`]), so it stopped
    /// before asking the model again; what it did until then is kept (its edits stay proposed).
    #[error(
        "this turn stopped after using {used} tokens, more than its budget of {budget} tokens per turn; what it did \
         so far is kept. To let turns go further, raise max_turn_tokens under [chat] in config.toml, or ask for a \
         smaller step"
    )]
    TurnBudget {
        /// The tokens the turn used (sent and generated, cached ones included).
        used: u64,
        /// The budget.
        budget: u64,
    },
    /// The caller cancelled the turn; its workspace writes were undone.
    #[error("the turn was cancelled")]
    Cancelled,
    /// The caller stopped the turn (the user left the note or closed the window); unlike a cancelled turn, what it
    /// already wrote stays, in its change set, undoable from the history.
    #[error("the turn was stopped; what it already changed is kept and can be undone from the history")]
    Interrupted,
    /// The model could not be called.
    #[error("{0}")]
    Model(ModelError),
    /// The note is protected (itself or through its notebook): the agent may not read it, so it is never a
    /// focused note, and no edit the agent proposed is saved into it, whoever accepts it.
    #[error(
        "the note '{title}' ({note_id}) is protected: the agent may not read or change it, so it cannot be the \
         focused note nor receive AI edits. Chat without focusing it, or unprotect it first"
    )]
    Protected {
        /// The note's id.
        note_id: String,
        /// Its title (visible to the agent, like to every actor).
        title: String,
    },
    /// The note is in the trash.
    #[error("the note '{title}' ({note_id}) is in the trash; restore it before focusing it")]
    InTrash {
        /// The note's id.
        note_id: String,
        /// Its title.
        title: String,
    },
    /// The note changed since the edits were computed, where some of them apply; they are named by position
    /// (1-based) and tool, and nothing was saved.
    #[error("the note changed while the agent worked, where {} applies; nothing was saved", describe(.stale))]
    Stale {
        /// The edits that no longer fit: 1-based position and the session tool that made it.
        stale: Vec<(usize, String)>,
    },
    /// Edits that do not fit the text they are applied to (they were made for another text).
    #[error("the edits do not fit the note's text: {0}")]
    InvalidEdits(String),
    /// The workspace refused or failed.
    #[error(transparent)]
    Workspace(#[from] quire_core::Error),
}

fn describe(stale: &[(usize, String)]) -> String {
    let names: Vec<String> = stale.iter().map(|(i, tool)| format!("edit {i} ({tool})")).collect();
    names.join(", ")
}
