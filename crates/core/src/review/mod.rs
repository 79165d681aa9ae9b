//! Changes staged for review: what an MCP client under the `stage` policy wrote, recorded instead of applied, and
//! how the user accepts or rejects it by change (a field, a run of lines, a tag), by note or as a whole.
//!
//! A client's write runs for real inside a transaction that is then rolled back (see [`crate::Workspace::staged`]):
//! every guard applies and the tool answers as if it had written. What it changed is kept per entity as two
//! change-log snapshots, the row as the client found it (`base`) and as it left it (`proposed`). Accepting merges
//! each chosen change onto the row as it is now: a field that nobody else changed takes the client's value, lines
//! go through the same three-way merge as the sidebar's proposed edits ([`crate::merge`]); a change whose place
//! changed meanwhile is stale and stays pending. The accepted changes are one change set in the client's name,
//! undone like any other. The client's own reads see its pending changes merged the same way.

mod rows;
mod staging;
mod view;

pub(crate) use rows::{Change, StoredRow, is_change, merge_row};
pub use view::{HunkState, ReviewHunk, ReviewItem, ReviewOutcome, ReviewSet, ReviewSummary, Selection};

/// How long a client's open review set takes its later writes: after this long without a write, the next one
/// starts a new set (ms).
pub(crate) const OPEN_SET_MS: i64 = 30 * 60 * 1000;

/// What a staged handle did in its last calls (see [`crate::Workspace::staged`]): the review sets its writes were
/// recorded in, and whether its reads saw pending changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StagingReport {
    /// The review set each staged write went to, in order (a write that changed nothing records none).
    pub staged: Vec<i64>,
    /// Review sets whose pending changes the reads and writes saw.
    pub shown: Vec<i64>,
}
