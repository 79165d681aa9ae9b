//! The merge rules of the sync documents, one example each, and their refusal of bad bytes and bad states.

use proptest::prelude::*;
use quire_sync::doc::{Clash, DocError, Label, Lineage, NoteDoc, NoteState, NotebookState, TreeDoc};

fn note(id: &str, body: &str) -> NoteState {
    NoteState {
        id: id.into(),
        title: "a title".into(),
        body: body.into(),
        notebook_id: "b".into(),
        ..NoteState::default()
    }
}

fn notebook(id: &str, parent: Option<&str>) -> NotebookState {
    NotebookState {
        id: id.into(),
        parent_id: parent.map(str::to_owned),
        title: id.to_uppercase(),
        protected: false,
        gone: false,
    }
}

/// A note written on peer 1 and copied to peer 2.
fn two_notes(state: &NoteState) -> (NoteDoc, NoteDoc) {
    let mut a = NoteDoc::new(1).unwrap();
    a.fold(state).unwrap();
    let b = NoteDoc::load(&a.save().unwrap(), 2).unwrap();
    (a, b)
}

/// Folds a change of `doc`'s state in.
fn change(doc: &mut NoteDoc, f: impl FnOnce(&mut NoteState)) {
    let mut state = doc.state().unwrap();
    f(&mut state);
    doc.fold(&state).unwrap();
}

/// Sends each document what the other lacks; returns the clashes each import reported (b's, then a's).
fn exchange(a: &mut NoteDoc, b: &mut NoteDoc) -> (Vec<Clash>, Vec<Clash>) {
    let to_b = a.updates_since(&b.version()).unwrap();
    let to_a = b.updates_since(&a.version()).unwrap();
    let at_b = b.import(&to_b).unwrap().clashes;
    let at_a = a.import(&to_a).unwrap().clashes;
    assert_eq!(a.state(), b.state());
    (at_b, at_a)
}

fn exchange_trees(a: &mut TreeDoc, b: &mut TreeDoc) {
    let to_b = a.updates_since(&b.version()).unwrap();
    let to_a = b.updates_since(&a.version()).unwrap();
    b.import(&to_b).unwrap();
    a.import(&to_a).unwrap();
    assert_eq!(a.state(), b.state());
}

#[test]
fn a_note_reads_back_as_folded_saved_and_loaded_and_an_unchanged_fold_writes_nothing() {
    let mut state = note("n1", "Grüße, 🌍!\nSecond line.");
    state.tags = ["a".to_owned(), "b".to_owned()].into();
    state.labels.insert(
        "due".into(),
        Label {
            value: "\"2026-12-03\"".into(),
            json: true,
        },
    );
    state.todo_completed = Some(5);
    state.is_todo = true;
    let mut doc = NoteDoc::new(7).unwrap();
    assert_eq!(doc.state(), None);
    doc.fold(&state).unwrap();
    assert_eq!(doc.state().as_ref(), Some(&state));
    let loaded = NoteDoc::load(&doc.save().unwrap(), 8).unwrap();
    assert_eq!(loaded.state().as_ref(), Some(&state));

    let version = doc.version();
    doc.fold(&state).unwrap();
    assert_eq!(doc.version(), version, "folding the same state again records nothing");
}

#[test]
fn concurrent_edits_of_different_parts_of_a_body_both_survive() {
    let (mut a, mut b) = two_notes(&note("n", "first paragraph\n\nsecond paragraph\n"));
    change(&mut a, |s| {
        s.body = "first paragraph, edited on a\n\nsecond paragraph\n".into()
    });
    change(&mut b, |s| {
        s.body = "first paragraph\n\nsecond paragraph, edited on b\n".into()
    });
    exchange(&mut a, &mut b);
    assert_eq!(
        a.state().unwrap().body,
        "first paragraph, edited on a\n\nsecond paragraph, edited on b\n"
    );
}

#[test]
fn lines_added_at_the_same_place_are_both_kept_whole_and_do_not_clash() {
    let (mut a, mut b) = two_notes(&note("n", "one\ntwo"));
    change(&mut a, |s| s.body = "one\nAAAA\ntwo".into());
    change(&mut b, |s| s.body = "one\nBBBB\ntwo".into());
    let (at_b, at_a) = exchange(&mut a, &mut b);
    let body = a.state().unwrap().body;
    assert!(
        body == "one\nAAAA\nBBBB\ntwo" || body == "one\nBBBB\nAAAA\ntwo",
        "{body:?}"
    );
    assert!(at_a.is_empty() && at_b.is_empty());
}

/// sync.md #2: `Eggs` made `Eggs x12 (desk)` on one device and `Brown eggs (laptop)` on the other merged into
/// `Brown eggs x12 (desk) (laptop)`. Both versions stay whole, the line below stays, and each import says where.
#[test]
fn the_same_line_changed_on_two_devices_keeps_both_versions_whole_and_is_reported() {
    let (mut a, mut b) = two_notes(&note("n", "Milk\nEggs\nBread"));
    change(&mut a, |s| s.body = "Milk\nEggs x12 (desk)\nBread".into());
    change(&mut b, |s| s.body = "Milk\nBrown eggs (laptop)\nBread".into());
    let (at_b, at_a) = exchange(&mut a, &mut b);
    let body = a.state().unwrap().body;
    assert!(
        body == "Milk\nEggs x12 (desk)\nBrown eggs (laptop)\nBread"
            || body == "Milk\nBrown eggs (laptop)\nEggs x12 (desk)\nBread",
        "{body:?}"
    );
    let clash = |ours: &str, theirs: &str| Clash {
        base: "Eggs\n".into(),
        ours: ours.into(),
        theirs: theirs.into(),
    };
    assert_eq!(at_a, [clash("Eggs x12 (desk)\n", "Brown eggs (laptop)\n")]);
    assert_eq!(at_b, [clash("Brown eggs (laptop)\n", "Eggs x12 (desk)\n")]);
}

/// Keeping both versions changes no text, so the document carries the choice: each device computes the same key for
/// the conflict (its own version is the other's "theirs"), and the other device learns it with the next operations.
#[test]
fn a_conflict_kept_whole_on_one_device_is_settled_on_the_other() {
    let (mut a, mut b) = two_notes(&note("n", "Milk\nEggs\nBread"));
    change(&mut a, |s| s.body = "Milk\nEggs x12 (desk)\nBread".into());
    change(&mut b, |s| s.body = "Milk\nBrown eggs (laptop)\nBread".into());
    let (at_b, at_a) = exchange(&mut a, &mut b);
    let key = |c: &Clash| Clash::key(&c.base, &c.ours, &c.theirs);
    assert_eq!(key(&at_a[0]), key(&at_b[0]), "one conflict, one key, on either side");
    assert_ne!(key(&at_a[0]), Clash::key("Eggs\n", "Eggs x12 (desk)\n", "Brown eggs\n"));
    assert!(b.settled().is_empty());
    a.settle(&at_a[0]).unwrap();
    let body = a.state().unwrap().body;
    exchange(&mut a, &mut b);
    let c = &at_b[0];
    assert!(b.settled().holds(&c.base, &c.ours, &c.theirs));
    assert!(
        !b.settled().holds("Eggs\n", "Eggs x6\n", "Eggs x2\n"),
        "another conflict"
    );
    assert_eq!(b.state().unwrap().body, body, "the text is as it was");
    // Saved and loaded, the choice stays.
    assert_eq!(NoteDoc::load(&b.save().unwrap(), 3).unwrap().settled(), b.settled());
}

/// A single line with no line end of its own, changed on both devices: the two versions are not glued together.
#[test]
fn a_one_line_note_changed_on_two_devices_keeps_two_lines() {
    let (mut a, mut b) = two_notes(&note("n", "Buy milk"));
    change(&mut a, |s| s.body = "Buy milk and eggs".into());
    change(&mut b, |s| s.body = "Buy oat milk".into());
    let (_, at_a) = exchange(&mut a, &mut b);
    let body = a.state().unwrap().body;
    let mut lines: Vec<&str> = body.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["Buy milk and eggs", "Buy oat milk"], "{body:?}");
    assert_eq!(at_a.len(), 1);
}

/// A line removed on one device and edited on the other (the record of merges had `Rye bTea`): the edit stays
/// whole, and it is reported.
#[test]
fn a_line_removed_on_one_device_and_edited_on_the_other_keeps_the_edit() {
    let (mut a, mut b) = two_notes(&note("n", "Milk\nBread\nTea\n"));
    change(&mut a, |s| s.body = "Milk\nTea\n".into());
    change(&mut b, |s| s.body = "Milk\nRye bread\nTea\n".into());
    let (_, at_a) = exchange(&mut a, &mut b);
    assert_eq!(a.state().unwrap().body, "Milk\nRye bread\nTea\n");
    assert_eq!(at_a[0].ours, "");
    assert_eq!(at_a[0].theirs, "Rye bread\n");
}

/// An import that only adds to what the replica had (nothing here was unknown to its writer) reports nothing.
#[test]
fn an_edit_made_after_seeing_the_other_does_not_clash() {
    let (mut a, mut b) = two_notes(&note("n", "Eggs"));
    change(&mut a, |s| s.body = "Eggs x12".into());
    exchange(&mut a, &mut b);
    change(&mut b, |s| s.body = "Eggs x6".into());
    let (_, at_a) = exchange(&mut a, &mut b);
    assert!(at_a.is_empty());
    assert_eq!(a.state().unwrap().body, "Eggs x6");
}

/// Found by the convergence property test: diffed by characters, the line `t11x` added below `t1x` was recorded as
/// `t`, an insertion `7x␤t1x␤t1` and the old `1x␤`, and a line added above `t1x` on another device landed inside
/// it (`t15x`). Diffed by lines first, each added line is one run.
#[test]
fn lines_added_on_two_devices_stay_whole() {
    let (mut a, mut b) = two_notes(&note("n", "t1x\n"));
    change(&mut a, |s| s.body = "t7x\nt1x\n".into());
    change(&mut a, |s| s.body = "t7x\nt1x\nt11x\n".into());
    change(&mut b, |s| s.body = "t5x\nt1x\n".into());
    exchange(&mut a, &mut b);
    let body = a.state().unwrap().body;
    let mut lines: Vec<&str> = body.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["t11x", "t1x", "t5x", "t7x"], "{body:?}");
    assert_eq!(b.state().unwrap().body, body);
}

/// Two devices changing different words of one line keep both versions (the unit of a silent merge is the line);
/// the merge by words is what the person is offered for it.
#[test]
fn words_changed_on_one_line_by_two_devices_keep_both_lines_and_offer_the_merge() {
    let base = "buy milk and bread today\nsecond line\n";
    let (mut a, mut b) = two_notes(&note("n", base));
    change(&mut a, |s| {
        s.body = "buy oat milk and bread today\nsecond line\n".into()
    });
    change(&mut b, |s| {
        s.body = "buy milk and rye bread tomorrow\nsecond line\n".into()
    });
    let (_, at_a) = exchange(&mut a, &mut b);
    let body = a.state().unwrap().body;
    assert!(body.contains("buy oat milk and bread today\n") && body.contains("buy milk and rye bread tomorrow\n"));
    assert!(body.ends_with("second line\n"), "{body:?}");
    let clash = &at_a[0];
    assert_eq!(
        quire_sync::doc::merge_words(&clash.base, &clash.ours, &clash.theirs).as_deref(),
        Some("buy oat milk and rye bread tomorrow\n")
    );
}

#[test]
fn positions_are_unicode_scalars_so_edits_around_wide_characters_merge_cleanly() {
    let (mut a, mut b) = two_notes(&note("n", "🌍é🌍\n🌍\né"));
    change(&mut a, |s| s.body = "x🌍é🌍\n🌍\né".into());
    change(&mut b, |s| s.body = "🌍é🌍\n🌍\néy".into());
    exchange(&mut a, &mut b);
    assert_eq!(a.state().unwrap().body, "x🌍é🌍\n🌍\néy");
}

#[test]
fn concurrent_renames_keep_one_title_whole_the_higher_peer_when_made_from_the_same_state() {
    let (mut a, mut b) = two_notes(&note("n", ""));
    change(&mut a, |s| s.title = "from peer 1".into());
    change(&mut b, |s| s.title = "from peer 2".into());
    exchange(&mut a, &mut b);
    assert_eq!(a.state().unwrap().title, "from peer 2");
}

#[test]
fn a_write_made_after_seeing_another_wins_whatever_the_peer_ids() {
    let (mut a, mut b) = two_notes(&note("n", ""));
    change(&mut b, |s| s.title = "first, on peer 2".into());
    exchange(&mut a, &mut b);
    change(&mut a, |s| s.title = "then, on peer 1".into());
    exchange(&mut a, &mut b);
    assert_eq!(b.state().unwrap().title, "then, on peer 1");
}

#[test]
fn tags_and_labels_merge_one_name_at_a_time() {
    let mut start = note("n", "");
    start.tags = ["old".to_owned()].into();
    start.labels.insert(
        "kept".into(),
        Label {
            value: "1".into(),
            json: false,
        },
    );
    let (mut a, mut b) = two_notes(&start);
    change(&mut a, |s| {
        s.tags.insert("new".into());
        s.labels.insert(
            "from a".into(),
            Label {
                value: "2".into(),
                json: false,
            },
        );
    });
    change(&mut b, |s| {
        s.tags.remove("old");
        s.labels.remove("kept");
    });
    exchange(&mut a, &mut b);
    let state = a.state().unwrap();
    assert_eq!(state.tags, ["new".to_owned()].into());
    assert_eq!(state.labels.keys().collect::<Vec<_>>(), ["from a"]);
}

#[test]
fn the_ciphertext_and_its_version_travel_as_one_value() {
    let (mut a, mut b) = two_notes(&note("n", "secret text"));
    change(&mut a, |s| {
        s.body.clear();
        s.sealed = Some(b"ciphertext at 1".to_vec());
        s.version = 1;
    });
    change(&mut b, |s| {
        s.body.clear();
        s.sealed = Some(b"ciphertext at 5".to_vec());
        s.version = 5;
    });
    change(&mut b, |s| s.title = "a later title on b".into());
    exchange(&mut a, &mut b);
    let state = a.state().unwrap();
    let pair = (state.sealed.unwrap(), state.version);
    assert!(
        pair == (b"ciphertext at 1".to_vec(), 1) || pair == (b"ciphertext at 5".to_vec(), 5),
        "{pair:?}"
    );
}

#[test]
fn sealing_beside_a_concurrent_plain_edit_keeps_both() {
    let (mut a, mut b) = two_notes(&note("n", "plain"));
    change(&mut a, |s| {
        s.body.clear();
        s.sealed = Some(vec![1, 2, 3]);
        s.version = 1;
    });
    change(&mut b, |s| s.body = "plain and more".into());
    exchange(&mut a, &mut b);
    let state = a.state().unwrap();
    assert!(state.body.contains("plain and more"), "{:?}", state.body);
    assert_eq!(state.sealed, Some(vec![1, 2, 3]));
}

#[test]
fn updates_that_arrive_before_the_ones_they_follow_wait_in_memory_until_those_come() {
    let (mut a, mut b) = two_notes(&note("n", "start"));
    let at_start = b.version();
    change(&mut a, |s| s.body = "start, one".into());
    let first = a.updates_since(&at_start).unwrap();
    let after_first = a.version();
    change(&mut a, |s| s.body = "start, one, two".into());
    let second = a.updates_since(&after_first).unwrap();

    assert!(b.import(&second).unwrap().pending);
    assert_eq!(b.state().unwrap().body, "start");
    assert_eq!(b.version(), at_start, "waiting operations are not in the version");
    // A saved copy leaves them out: they are asked for again with the version.
    let saved = NoteDoc::load(&b.save().unwrap(), 2).unwrap();
    assert_eq!(saved.state().unwrap().body, "start");

    assert!(!b.import(&first).unwrap().pending);
    assert_eq!(b.state().unwrap().body, "start, one, two");
    assert!(
        !b.import(&first).unwrap().pending,
        "a batch applied twice changes nothing"
    );
    assert_eq!(b.state(), a.state());
}

#[test]
fn a_note_document_takes_only_its_own_note() {
    let mut doc = NoteDoc::new(1).unwrap();
    doc.fold(&note("n1", "text")).unwrap();
    let version = doc.version();
    assert!(matches!(
        doc.fold(&note("n2", "text")),
        Err(DocError::NoteMismatch { .. })
    ));
    assert_eq!(doc.fold(&note("", "text")), Err(DocError::MissingId("note")));
    assert_eq!(doc.version(), version);
    assert!(matches!(NoteDoc::new(u64::MAX), Err(DocError::ReservedPeer(_))));
}

#[test]
fn concurrent_moves_into_each_other_make_no_cycle() {
    let mut a = TreeDoc::new(1).unwrap();
    a.fold(&[notebook("x", None), notebook("y", None)]).unwrap();
    let mut b = TreeDoc::load(&a.save().unwrap(), 2).unwrap();
    a.fold(&[notebook("x", Some("y"))]).unwrap();
    b.fold(&[notebook("y", Some("x"))]).unwrap();
    exchange_trees(&mut a, &mut b);
    let state = a.state();
    let parents: Vec<_> = state.iter().map(|n| n.parent_id.as_deref()).collect();
    assert!(
        parents == [Some("y"), None] || parents == [None, Some("x")],
        "{parents:?}"
    );
}

#[test]
fn a_notebook_moved_into_one_removed_concurrently_still_shows_inside_it() {
    let mut a = TreeDoc::new(1).unwrap();
    a.fold(&[notebook("x", None), notebook("y", None)]).unwrap();
    let mut b = TreeDoc::load(&a.save().unwrap(), 2).unwrap();
    a.fold(&[NotebookState {
        gone: true,
        ..notebook("x", None)
    }])
    .unwrap();
    b.fold(&[notebook("y", Some("x"))]).unwrap();
    exchange_trees(&mut a, &mut b);
    assert_eq!(
        a.state(),
        [
            NotebookState {
                gone: true,
                ..notebook("x", None)
            },
            notebook("y", Some("x"))
        ]
    );
}

#[test]
fn a_fold_swaps_parent_and_child_and_creates_nested_notebooks_in_one_go() {
    let mut tree = TreeDoc::new(1).unwrap();
    tree.fold(&[notebook("a", None), notebook("b", Some("a"))]).unwrap();
    let target = [
        notebook("a", Some("b")),
        notebook("b", None),
        notebook("c", Some("d")),
        notebook("d", Some("a")),
    ];
    tree.fold(&target).unwrap();
    assert_eq!(tree.state(), target);
}

#[test]
fn a_bad_tree_is_refused_and_changes_nothing() {
    let mut tree = TreeDoc::new(1).unwrap();
    tree.fold(&[notebook("a", None), notebook("b", Some("a"))]).unwrap();
    let version = tree.version();
    assert_eq!(tree.fold(&[notebook("a", Some("b"))]), Err(DocError::Cycle("a".into())));
    assert_eq!(
        tree.fold(&[notebook("c", Some("nowhere"))]),
        Err(DocError::MissingParent {
            child: "c".into(),
            parent: "nowhere".into()
        })
    );
    assert_eq!(
        tree.fold(&[notebook("c", None), notebook("c", None)]),
        Err(DocError::DuplicateNotebook("c".into()))
    );
    assert_eq!(tree.fold(&[notebook("", None)]), Err(DocError::MissingId("notebook")));
    assert_eq!(tree.version(), version);
    assert_eq!(tree.state(), [notebook("a", None), notebook("b", Some("a"))]);
}

#[test]
fn foreign_bytes_are_refused_by_name() {
    let mut one = NoteDoc::new(1).unwrap();
    one.fold(&note("one", "text")).unwrap();
    let mut other = NoteDoc::new(1).unwrap();
    other.fold(&note("other", "text")).unwrap();
    let mut tree = TreeDoc::new(1).unwrap();
    tree.fold(&[notebook("a", None)]).unwrap();
    let before = (one.version(), one.state(), tree.version(), tree.state());

    let other_note = other.updates_since(&[]).unwrap();
    assert_eq!(
        one.import(&other_note),
        Err(DocError::OtherNote {
            expected: "one".into(),
            found: "other".into()
        })
    );
    assert!(matches!(
        one.import(&tree.save().unwrap()),
        Err(DocError::WrongKind { .. })
    ));
    assert!(matches!(tree.import(&other_note), Err(DocError::WrongKind { .. })));
    // loro's own bytes, without quire's envelope.
    let bare = loro::LoroDoc::new();
    bare.get_text("body").insert(0, "foreign").unwrap();
    let bare = bare.export(loro::ExportMode::Snapshot).unwrap();
    assert_eq!(one.import(&bare), Err(DocError::NotADocument));
    assert_eq!(tree.import(&bare), Err(DocError::NotADocument));
    assert_eq!(one.updates_since(b"\xff\xff\xff"), Err(DocError::BadVersion));
    assert_eq!(before, (one.version(), one.state(), tree.version(), tree.state()));
}

proptest! {
    #[test]
    fn garbage_cut_off_and_damaged_bytes_are_errors_and_change_nothing(
        garbage in proptest::collection::vec(any::<u8>(), 0..256),
        cut in any::<prop::sample::Index>(),
        flip_at in any::<prop::sample::Index>(),
        flip_by in 1..=255u8,
    ) {
        let mut source = NoteDoc::new(1).unwrap();
        source.fold(&note("n", "the text that travels")).unwrap();
        let mut doc = NoteDoc::load(&source.save().unwrap(), 2).unwrap();
        change(&mut doc, |s| s.title = "local".into());
        change(&mut source, |s| s.body = "the text that travels, changed".into());
        let update = source.updates_since(&doc.version()).unwrap();
        let before = (doc.version(), doc.state(), doc.save().unwrap());

        let mut damaged = update.clone();
        let at = flip_at.index(damaged.len());
        damaged[at] ^= flip_by;
        let cut = &update[..cut.index(update.len())];
        for bytes in [garbage.as_slice(), cut] {
            prop_assert!(doc.import(bytes).is_err(), "{:?} was taken", bytes);
            prop_assert!(NoteDoc::load(bytes, 3).is_err());
            prop_assert!(TreeDoc::load(bytes, 3).is_err());
            prop_assert_eq!(&before, &(doc.version(), doc.state(), doc.save().unwrap()));
        }
        // The envelope is 9 bytes here ("n" is the id); loro's header follows: "loro", then a 16-byte checksum
        // field of which it writes and checks only the last 4. The 12 before carry nothing, and a damaged one
        // there goes unnoticed and harmless; every other damaged byte is refused (an id byte names another
        // note, or no text).
        let unchecked = 9 + 4..9 + 16;
        if unchecked.contains(&at) {
            doc.import(&damaged).unwrap();
        } else {
            prop_assert!(doc.import(&damaged).is_err(), "a byte damaged at {} was taken", at);
            prop_assert_eq!(&before, &(doc.version(), doc.state(), doc.save().unwrap()));
            doc.import(&update).unwrap();
        }
        prop_assert_eq!(doc.state().unwrap().body, "the text that travels, changed");
    }
}

/// What the sealings saw of a note's earlier documents travels in the newest one, keeps the last generations only,
/// and reads what it can of damaged bytes (they come from a target).
#[test]
fn a_lineage_travels_in_the_document_and_survives_damage() {
    let mut lineage = Lineage::default();
    for generation in 0..40u64 {
        lineage = lineage.with(generation, vec![generation as u8; (generation % 5) as usize]);
    }
    assert_eq!(lineage.seen(3), None, "older than the kept generations");
    assert_eq!(lineage.seen(39), Some(&[39u8; 4][..]));
    assert_eq!(lineage.seen(10), Some(&[][..]));
    assert_eq!(lineage.seen(8), Some(&[8u8; 3][..]));
    assert_eq!(lineage.seen(7), None);
    let mut doc = NoteDoc::new(1).unwrap();
    doc.fold(&note("n", "text")).unwrap();
    doc.set_lineage(&lineage).unwrap();
    let mut other = NoteDoc::new(2).unwrap();
    other.import(&doc.save().unwrap()).unwrap();
    assert_eq!(other.lineage(), lineage);

    let bytes = lineage.encode();
    let cut = Lineage::decode(&bytes[..bytes.len() - 2]);
    assert_eq!(cut.seen(39), None);
    assert_eq!(cut.seen(38), lineage.seen(38));
    assert_eq!(Lineage::decode(&[0xff; 13]), Lineage::default());
    assert_eq!(Lineage::decode(&[]), Lineage::default());
}

/// "Keep both" recorded on one device settles the conflict another device recorded from another side (its texts
/// wider: a third device's edit beside it), and nothing else: not the same change made twice (found by the chaos
/// run), not a conflict with another version.
#[test]
fn a_settled_place_settles_the_same_conflict_recorded_from_another_side_only() {
    let mut a = NoteDoc::new(1).unwrap();
    a.fold(&note("n", "B1\nB2\nC0")).unwrap();
    a.settle(&Clash {
        base: "B\nC\n".into(),
        ours: "B1\nC0\n".into(),
        theirs: "B2\nC\n".into(),
    })
    .unwrap();
    let settled = a.settled();
    assert!(settled.holds("B\nC\n", "B2\nC\n", "B1\nC0\n"), "its own key");
    assert!(settled.holds("B\n", "B2\n", "B1\n"), "recorded from the other side");
    assert!(!settled.holds("B\n", "B1\n", "B1\n"), "the same change made twice");
    assert!(!settled.holds("B\n", "B3\n", "B1\n"), "another version");
    assert!(!settled.holds("B\n", "", ""));
}
