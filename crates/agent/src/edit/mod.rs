//! The edit model: how the agent's proposed changes of the focused note are represented ([`Edit`]), applied to a
//! text, shown as a diff, and accepted into the workspace (or refused when they no longer fit).

mod accept;
mod rebase;

use serde::{Deserialize, Serialize};

pub use accept::{AcceptRequest, Accepted, accept_edits};

/// One proposed change to the focused note: replace the characters `start..end` of the text as it was after the
/// previous edits of the turn with `text`. Edits apply in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Edit {
    /// The session tool that proposed it.
    pub tool: String,
    /// First replaced character.
    pub start: usize,
    /// One past the last replaced character (`start` for an insertion).
    pub end: usize,
    /// The new text.
    pub text: String,
}

/// Applies edits in order to `body`. Fails only if an edit does not fit the text (edits made for another body).
pub fn apply_edits(body: &str, edits: &[Edit]) -> Result<String, crate::Error> {
    let edits: Vec<quire_core::merge::TextEdit> = edits
        .iter()
        .map(|e| quire_core::merge::TextEdit {
            start: e.start,
            end: e.end,
            text: e.text.clone(),
        })
        .collect();
    quire_core::merge::apply_edits(body, &edits).map_err(|e| match e {
        quire_core::merge::MergeError::DoesNotFit { detail, .. } => crate::Error::InvalidEdits(detail),
        quire_core::merge::MergeError::Stale(_) => crate::Error::InvalidEdits("edits made for another text".into()),
    })
}

/// A unified diff from `old` to `new`, for a UI or a terminal to show.
pub fn unified_diff(old: &str, new: &str, name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(name, name)
        .to_string()
}

/// The byte offset of the `chars`-th character (the end for `chars == count`).
pub(crate) fn byte_at(text: &str, chars: usize) -> Option<usize> {
    quire_core::merge::byte_at(text, chars)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{Edit, apply_edits, unified_diff};

    /// An edit by `rewrite_paragraph` of `start..end` (characters) to `text`.
    pub(crate) fn edit(start: usize, end: usize, text: &str) -> Edit {
        Edit {
            tool: "rewrite_paragraph".into(),
            start,
            end,
            text: text.into(),
        }
    }

    #[test]
    fn edits_apply_in_order_by_characters_and_refuse_a_text_they_do_not_fit() {
        // Offsets count characters, not bytes: "é" is one.
        let edits = [edit(0, 1, "E"), edit(5, 5, "!")];
        assert_eq!(apply_edits("été x", &edits).unwrap(), "Eté x!");
        let refused = apply_edits("short", &[edit(3, 9, "x")]).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the edits do not fit the note's text: edit 1 (3..9) does not fit a text of 5 characters"
        );
        let diff = unified_diff("a\nb\n", "a\nc\n", "note");
        assert!(diff.contains("-b") && diff.contains("+c"), "{diff}");
    }
}
