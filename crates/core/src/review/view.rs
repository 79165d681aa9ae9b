//! Review sets as people read them: by note (or notebook, or tag), each change a hunk with what it was and what it
//! becomes, and whether it still applies.

use serde::{Deserialize, Serialize};

use crate::entity::Timestamp;

/// Where a change stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HunkState {
    /// Waiting for the user.
    Pending,
    /// Waiting, but what it changes changed meanwhile: accepting it would overwrite that, so it cannot be accepted
    /// (only rejected).
    Stale,
    /// Accepted: it is in the workspace.
    Accepted,
    /// Rejected: it never will be.
    Rejected,
    /// Accepted, then undone (its change set was reverted).
    Undone,
}

/// One change: a field, a run of lines, a tag, a note or notebook made or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewHunk {
    /// Its id in the set (`ROW.N`), for accepting or rejecting it alone.
    pub id: String,
    /// What it changes: `note`, `title`, `text`, `notebook`, `trash`, `todo`, `completed`, `tag`, `label`,
    /// `relation`, `name`, `parent`, or the column's name.
    pub field: String,
    /// In words ("Title", "Text", "Moved to the trash", "Tag #work" …).
    pub what: String,
    /// What it was, as text (`None`: nothing, it is new).
    pub before: Option<String>,
    /// What it becomes (`None`: removed).
    pub after: Option<String>,
    /// For a run of lines: the line before it in the note as the client found it, and the line after.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_before: String,
    /// See `context_before`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_after: String,
    /// Where it stands.
    pub state: HunkState,
}

/// The changes of one note (with its tags and attributes), one notebook or one tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewItem {
    /// `note:ID`, `notebook:ID` or `tag:ID`: accepts or rejects all of it.
    pub key: String,
    /// `note`, `notebook` or `tag`.
    pub kind: String,
    /// The entity's id.
    pub id: String,
    /// Its title (or name) as it is, else as the client left it.
    pub title: String,
    /// `created`, `changed` or `deleted`.
    pub change: String,
    /// Its changes.
    pub hunks: Vec<ReviewHunk>,
}

/// A review set in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewSummary {
    /// Its number (`quire://review/N`).
    pub id: i64,
    /// The MCP client that wrote it, as it named itself (and the token's name).
    pub client: String,
    /// When its first change was staged.
    pub created: Timestamp,
    /// When its last change was staged.
    pub updated: Timestamp,
    /// Changes waiting (stale ones included).
    pub pending: usize,
    /// Changes accepted.
    pub accepted: usize,
    /// Changes rejected.
    pub rejected: usize,
    /// The notes, notebooks and tags it changes, by title.
    pub titles: Vec<String>,
    /// Whether the client's next write still joins it (the user has not acted on it yet).
    pub open: bool,
}

/// A review set with its changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewSet {
    /// The set as listed.
    #[serde(flatten)]
    pub summary: ReviewSummary,
    /// Its changes by note, notebook or tag, in the order the client made them.
    pub items: Vec<ReviewItem>,
    /// The change sets accepting it wrote (each undoable).
    pub change_sets: Vec<String>,
}

/// Which changes of a set to accept or reject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Selection {
    /// Every pending change.
    All,
    /// Every pending change of these items (`note:ID` …).
    Items(Vec<String>),
    /// These changes (`ROW.N`).
    Hunks(Vec<String>),
}

/// What accepting or rejecting did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReviewOutcome {
    /// Changes accepted (written).
    pub accepted: usize,
    /// Changes rejected.
    pub rejected: usize,
    /// Chosen changes left pending because what they change changed meanwhile.
    pub stale: Vec<String>,
    /// The change set the accepted changes were written in (attributed to the client; undo it to take them back).
    pub change_set_id: Option<String>,
    /// The set as it is now.
    pub set: ReviewSet,
}
