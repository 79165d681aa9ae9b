//! The note as the API answers it: `read_note`'s output with the whole body. A stale save's refusal carries it too.

use quire_tools::notes::read_note;
use serde::Serialize;

/// A note with its whole body, in `read_note`'s shape: a long body is read slice by slice and joined, so
/// `has_more` is false.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Note {
    /// The note, as `read_note` describes it.
    #[serde(flatten)]
    pub note: read_note::Output,
}
