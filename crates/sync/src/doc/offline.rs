//! A body written away from the workspace (a paired device's page while it was offline) merged into the note as
//! it is now. First by words ([`merge_words`]): changes to different words both apply, and a change made on both
//! sides counts once. Where both
//! changed the same or neighbouring words, by sync's own rule: the same loro text, changed by whole lines
//! ([`super::update_text`]) on both sides from the version the device started from, then merged, so both versions
//! are kept, one after the other, and each such place is a [`Clash`] for the person to settle, as a sync conflict
//! is. No word is lost either way.

use loro::{ExportMode, LoroDoc};

use super::clash::with_shared_changes;
use super::{Clash, DocError, clashes, internal, merge_words, update_text};

/// `base` with the changes of `ours` (the note as it is now) and of `theirs` (the version written away), merged as
/// sync merges two devices' bodies, and the places both changed.
pub fn merge_body(base: &str, ours: &str, theirs: &str) -> Result<(String, Vec<Clash>), DocError> {
    if let Some(merged) = merge_words(base, ours, theirs) {
        return Ok((merged, Vec::new()));
    }
    // With a line end at the end, as sync's documents hold a body: every place is whole lines.
    let (ours, theirs) = (format!("{ours}\n"), format!("{theirs}\n"));
    // Lines both changed the same way count once (sync's own merge keeps such a change twice, as a conflict: two
    // people typed it; here it is one change seen twice, as when two devices merged the same kept-aside edit).
    let base = with_shared_changes(&format!("{base}\n"), &ours, &theirs);
    let start = LoroDoc::new();
    start.set_peer_id(1).map_err(internal)?;
    update_text(&start.get_text("body"), &base)?;
    start.commit();
    let side = |peer: u64, text: &str| -> Result<LoroDoc, DocError> {
        let doc = start.fork();
        doc.set_peer_id(peer).map_err(internal)?;
        update_text(&doc.get_text("body"), text)?;
        doc.commit();
        Ok(doc)
    };
    let (here, away) = (side(2, &ours)?, side(3, &theirs)?);
    let updates = away.export(ExportMode::all_updates()).map_err(internal)?;
    here.import(&updates).map_err(internal)?;
    let mut merged = here.get_text("body").to_string();
    if merged.ends_with('\n') {
        merged.pop();
    }
    Ok((merged, clashes(&base, &ours, &theirs)))
}

#[cfg(test)]
mod tests {
    use super::merge_body;

    #[test]
    fn different_lines_both_apply_and_the_same_line_keeps_both_versions() {
        let base = "Milk\nEggs\nBread";
        let (merged, clashes) = merge_body(base, "Milk\nEggs\nBread\nJam", "Oat milk\nEggs\nBread").unwrap();
        assert_eq!(merged, "Oat milk\nEggs\nBread\nJam");
        assert!(clashes.is_empty());
        // The same change on both sides counts once (with a change made between, the web app knows a save it
        // applied by its id).
        let once = "Milk (2 L)\nEggs\nBread\nJam";
        assert!(merge_body(base, once, once).unwrap() == (once.to_owned(), Vec::new()));
        // A line changed the same way on both sides, beside lines changed differently: once.
        let (merged, clashes) =
            merge_body(base, "Milk (desk)\nBrown eggs\nBread", "Milk (desk)\nSix eggs\nBread").unwrap();
        assert_eq!(merged.matches("Milk (desk)").count(), 1, "{merged}");
        assert_eq!(clashes.len(), 1, "{clashes:?}");
        // The chaos run's case: one side replaced a line, the other removed the line before it and replaced the same
        // line the same way (its diff groups the two): the new line once.
        let before = "L55\nL102\nL101\nL104\nL116";
        let (merged, _) = merge_body(before, "L55\nL102\nL101\nL141\nL116", "L55\nL102\nL141\nL116").unwrap();
        assert_eq!(merged, "L55\nL102\nL141\nL116");
        let (merged, clashes) = merge_body(base, "Milk\nBrown eggs\nBread", "Milk\nSix eggs\nBread").unwrap();
        assert!(
            merged.contains("Brown eggs\n") && merged.contains("Six eggs\n"),
            "{merged}"
        );
        assert_eq!(clashes.len(), 1);
        assert_eq!(
            (clashes[0].ours.as_str(), clashes[0].theirs.as_str()),
            ("Brown eggs\n", "Six eggs\n")
        );
    }
}
