//! A save written offline merged into the note as it is now (`merge_body`), over random edits of both sides: no word
//! either side added is lost or doubled, a line neither side touched stays, and a save sent again changes nothing.

use proptest::prelude::*;
use quire_sync::doc::merge_body;

/// One side's edit of the base lines: keep a line, drop it, replace it, or add a new one after it. Every word a side
/// writes is its own (`o3`, `t7`), so where it ends up can be counted.
#[derive(Debug, Clone, Copy)]
enum Edit {
    Keep,
    Drop,
    Replace,
    AddAfter,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![4 => Just(Edit::Keep), 1 => Just(Edit::Drop), 1 => Just(Edit::Replace), 1 => Just(Edit::AddAfter)]
}

fn apply(base: &[String], edits: &[Edit], side: char) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    let mut added = Vec::new();
    for (i, (line, e)) in base.iter().zip(edits).enumerate() {
        let word = format!("{side}{i}");
        match e {
            Edit::Keep => lines.push(line.clone()),
            Edit::Drop => {}
            Edit::Replace => {
                lines.push(word.clone());
                added.push(word);
            }
            Edit::AddAfter => {
                lines.push(line.clone());
                lines.push(word.clone());
                added.push(word);
            }
        }
    }
    (lines.join("\n"), added)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn no_word_added_on_either_side_is_lost_or_doubled(
        n in 1usize..12,
        ours in proptest::collection::vec(edit(), 12),
        theirs in proptest::collection::vec(edit(), 12),
    ) {
        let base: Vec<String> = (0..n).map(|i| format!("line{i}")).collect();
        let (now, ours_added) = apply(&base, &ours[..n], 'o');
        let (offline, theirs_added) = apply(&base, &theirs[..n], 't');
        let (merged, _) = merge_body(&base.join("\n"), &now, &offline).unwrap();
        let words: Vec<&str> = merged.split_whitespace().collect();
        for word in ours_added.iter().chain(&theirs_added) {
            prop_assert_eq!(words.iter().filter(|w| **w == word).count(), 1, "{} in {:?}", word, merged);
        }
        // A line neither side touched stays, once.
        for (i, line) in base.iter().enumerate() {
            if matches!((ours[i], theirs[i]), (Edit::Keep, Edit::Keep)) {
                prop_assert_eq!(words.iter().filter(|w| **w == line).count(), 1, "{} in {:?}", line, merged);
            }
        }
        // Sent again on the merged note: nothing changes, and nothing new asks for a choice.
        let (again, more) = merge_body(&base.join("\n"), &merged, &merged).unwrap();
        prop_assert_eq!(again, merged);
        prop_assert!(more.is_empty());
    }
}
