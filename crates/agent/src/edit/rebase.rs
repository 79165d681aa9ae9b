//! Carrying edits over a note that changed meanwhile: core's three-way merge ([`quire_core::merge`]), its stale
//! edits named by position and tool.

use quire_core::merge::{MergeError, TextEdit};

use super::Edit;
use crate::error::Error;

/// Carries `edits` (made against `base`) over onto `current`, or names the edits that touch what changed.
pub(super) fn rebase(base: &str, current: &str, edits: &[Edit]) -> Result<String, Error> {
    let text_edits: Vec<TextEdit> = edits
        .iter()
        .map(|e| TextEdit {
            start: e.start,
            end: e.end,
            text: e.text.clone(),
        })
        .collect();
    quire_core::merge::rebase(base, current, &text_edits).map_err(|e| match e {
        MergeError::DoesNotFit { detail, .. } => Error::InvalidEdits(detail),
        MergeError::Stale(which) => Error::Stale {
            stale: which.into_iter().map(|i| (i + 1, edits[i].tool.clone())).collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::rebase;
    use crate::edit::tests::edit;
    use crate::error::Error;

    #[test]
    fn stale_edits_are_named_by_position_and_tool() {
        let base = "Dear Sir,\nthe rent is due.\nRegards";
        let two = [edit(0, 9, "Hi Sam,"), edit(20, 23, "today")];
        match rebase(base, "Dear Sir,\nthe rent is overdue.\nRegards", &two) {
            Err(Error::Stale { stale }) => assert_eq!(stale, [(2, "rewrite_paragraph".to_owned())]),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            rebase(base, "Dear Sir,\nthe rent is due.\nCheers", &two).unwrap(),
            "Hi Sam,\nthe rent is today.\nCheers"
        );
    }
}
