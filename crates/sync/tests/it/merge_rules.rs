//! quire's three text merges side by side (ARCHITECTURE.md names their owners): over the cases in
//! `tests/fixtures/merge-rules.json`, each rule gives what the file records. Core's two, `lines` (the review of
//! staged changes) and `chars` (the sidebar's proposals), refuse when both sides touched the same text; sync's, loro's
//! text merge by whole lines, never refuses: where both sides changed the same lines it keeps both versions whole and
//! reports a conflict for the person to choose. The browser's rule, `words`, is run over the same file by crates/web/ui/tests/merge-rules.test.mjs.

use quire_core::merge::{MergeError, TextEdit, line_hunks, merge_line_hunks, rebase};
use quire_sync::doc::{NoteDoc, NoteState};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/merge-rules.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    file["cases"].as_array().unwrap().clone()
}

/// Core's review rule: `mine`'s line hunks carried onto `theirs`; refused when any hunk is stale.
fn lines(base: &str, theirs: &str, mine: &str) -> Option<String> {
    let hunks = line_hunks(base, mine);
    let all: Vec<usize> = (0..hunks.len()).collect();
    let (text, stale) = merge_line_hunks(base, theirs, &hunks, &[], &all);
    stale.is_empty().then_some(text)
}

/// Core's proposal rule: `mine` as one edit of `base` (its changed middle, as a proposed edit is), rebased onto
/// `theirs`.
fn chars(base: &str, theirs: &str, mine: &str) -> Option<String> {
    let (b, m): (Vec<char>, Vec<char>) = (base.chars().collect(), mine.chars().collect());
    let prefix = b.iter().zip(&m).take_while(|(x, y)| x == y).count();
    let suffix = b[prefix..]
        .iter()
        .rev()
        .zip(m[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let edit = TextEdit {
        start: prefix,
        end: b.len() - suffix,
        text: m[prefix..m.len() - suffix].iter().collect(),
    };
    match rebase(base, theirs, &[edit]) {
        Ok(text) => Some(text),
        Err(MergeError::Stale(_)) => None,
        Err(other) => Some(format!("(the edit does not fit: {other:?})")),
    }
}

/// Sync's rule: `base` on two peers, `theirs` written on peer 1 and `mine` on peer 2, then exchanged; with whether
/// both imports reported a conflict.
fn loro(base: &str, theirs: &str, mine: &str) -> (String, bool) {
    let state = |body: &str| NoteState {
        id: "n".into(),
        title: "a title".into(),
        body: body.into(),
        notebook_id: "b".into(),
        ..NoteState::default()
    };
    let mut one = NoteDoc::new(1).unwrap();
    one.fold(&state(base)).unwrap();
    let mut two = NoteDoc::load(&one.save().unwrap(), 2).unwrap();
    one.fold(&state(theirs)).unwrap();
    two.fold(&state(mine)).unwrap();
    let to_two = one.updates_since(&two.version()).unwrap();
    let to_one = two.updates_since(&one.version()).unwrap();
    let at_two = two.import(&to_two).unwrap().clashes;
    let at_one = one.import(&to_one).unwrap().clashes;
    let (a, b) = (one.state().unwrap().body, two.state().unwrap().body);
    assert_eq!(a, b, "the peers differ after the exchange");
    assert_eq!(
        at_one.is_empty(),
        at_two.is_empty(),
        "one peer reports a conflict, the other not"
    );
    (a, !at_one.is_empty())
}

#[test]
fn each_rule_gives_what_the_record_of_merges_says() {
    let mut wrong = Vec::new();
    for case in cases() {
        let text = |key: &str| case[key].as_str().unwrap().to_owned();
        let (name, base, theirs, mine) = (text("name"), text("base"), text("theirs"), text("mine"));
        let (merged, conflict) = loro(&base, &theirs, &mine);
        if case["loro_conflict"].as_bool() != Some(conflict) {
            wrong.push(format!("{name} / loro: a conflict is reported: {conflict}"));
        }
        let results = [
            ("lines", lines(&base, &theirs, &mine)),
            ("chars", chars(&base, &theirs, &mine)),
            ("loro", Some(merged)),
        ];
        for (rule, got) in results {
            let expected = case[rule].as_str().map(str::to_owned);
            if got != expected {
                wrong.push(format!(
                    "{name} / {rule}: the record says {expected:?}, the rule gives {got:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
