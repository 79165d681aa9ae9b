//! Staged writes and their review: a staged client's writes are recorded, not applied; it sees them as pending;
//! the user accepts per change, per note or whole (merged onto what changed since), rejects, and undoes.

use quire_core::review::{HunkState, Selection};
use quire_core::testing::note;
use quire_core::{Actor, Error, NewNote, NoteUpdate, SearchOptions, Workspace};

fn client() -> Actor {
    Actor::Mcp {
        client: "Claude (token laptop)".into(),
    }
}

fn body(ws: &Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| r.note(id)).unwrap().body
}

#[test]
fn staged_writes_wait_for_review_and_the_client_reads_its_pending_version() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Plan", "one\ntwo\nthree\n").create_in(&ws).unwrap();
    let staged = ws.staged();
    let answer = staged
        .write(&client(), |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some("ONE\ntwo\nthree\nfour\n".into()),
                    title: Some("Plan v2".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    // The tool's answer is what the write would have given; the workspace is unchanged.
    assert_eq!(answer.summary.title, "Plan v2");
    assert_eq!(body(&ws, &id), "one\ntwo\nthree\n");
    let report = staged.staging_report().unwrap();
    assert_eq!(report.staged.len(), 1);
    let set = report.staged[0];
    // A new note and a tag join the same set.
    let made = staged
        .write(&client(), |w| {
            let n = w.create_note(NewNote::new("Shopping", "- milk"))?;
            w.add_tag(&n.summary.id, "errands")?;
            Ok::<_, Error>(n.summary.id)
        })
        .unwrap();
    assert_eq!(staged.staging_report().unwrap().staged, vec![set]);
    assert!(ws.read(&Actor::User, |r| r.note_summary(&made)).is_err(), "not created");
    // The client reads its pending version, found by search too; other clients and the user do not.
    let seen = staged.read(&client(), |r| r.note(&id)).unwrap();
    assert_eq!(seen.body, "ONE\ntwo\nthree\nfour\n");
    assert_eq!(staged.staging_report().unwrap().shown, vec![set]);
    let hits = staged
        .read(&client(), |r| r.search("milk", SearchOptions::default()))
        .unwrap();
    assert_eq!(hits.total, 1);
    let other = Actor::Mcp {
        client: "Cursor".into(),
    };
    assert_eq!(staged.read(&other, |r| r.note(&id)).unwrap().body, "one\ntwo\nthree\n");
    // A later write of the client builds on its pending version.
    staged
        .write(&client(), |w| {
            let current = w.note(&id)?;
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some(format!("{}five\n", current.body)),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    let review = ws.read(&Actor::User, |r| r.review_set(set)).unwrap();
    assert_eq!(review.items.len(), 2, "{review:#?}");
    let plan = &review.items[0];
    // Titled as it is; the new title is one of its changes.
    assert_eq!((plan.title.as_str(), plan.change.as_str()), ("Plan", "changed"));
    let fields: Vec<&str> = plan.hunks.iter().map(|h| h.field.as_str()).collect();
    assert_eq!(fields, ["text", "text", "title"]);
    assert_eq!(plan.hunks[1].after.as_deref(), Some("four\nfive\n"));
    let shopping = &review.items[1];
    assert_eq!(shopping.change, "created");
    assert!(shopping.hunks.iter().any(|h| h.what == "Tag #errands added"));
    // The other client cannot see the set.
    assert!(ws.read(&other, |r| r.review_set(set)).is_err());
}

#[test]
fn accepting_by_change_merges_onto_later_edits_marks_stale_ones_and_undoes_as_one_change_set() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Plan", "one\ntwo\nthree\nfour\n").create_in(&ws).unwrap();
    let staged = ws.staged();
    staged
        .write(&client(), |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some("ONE\ntwo\nthree\nFOUR\n".into()),
                    title: Some("Plan!".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    let set = staged.staging_report().unwrap().staged[0];
    // The user edits "four" meanwhile: that change is stale now; "one" still applies.
    ws.write(&Actor::User, |w| {
        w.update_note(
            &id,
            NoteUpdate {
                body: Some("one\ntwo\nthree\nfour, or five\n".into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    let review = ws.read(&Actor::User, |r| r.review_set(set)).unwrap();
    let states: Vec<HunkState> = review.items[0].hunks.iter().map(|h| h.state).collect();
    assert_eq!(states, [HunkState::Pending, HunkState::Stale, HunkState::Pending]);
    let first = review.items[0].hunks[0].id.clone();
    let outcome = ws.decide_review(set, true, &Selection::Hunks(vec![first])).unwrap();
    assert_eq!(outcome.accepted, 1);
    assert_eq!(body(&ws, &id), "ONE\ntwo\nthree\nfour, or five\n");
    // Accepting everything now takes the title and leaves the stale change pending.
    let outcome = ws.decide_review(set, true, &Selection::All).unwrap();
    assert_eq!((outcome.accepted, outcome.stale.len()), (1, 1));
    let note = ws.read(&Actor::User, |r| r.note(&id)).unwrap();
    assert_eq!(note.summary.title, "Plan!");
    // Written in the client's name, as one change set per decision, each undoable.
    let change_set = outcome.change_set_id.unwrap();
    let cs = ws.read(&Actor::User, |r| r.change_set(&change_set)).unwrap();
    assert_eq!(cs.actor, client());
    ws.write(&Actor::User, |w| w.revert_change_set(&change_set)).unwrap();
    assert_eq!(ws.read(&Actor::User, |r| r.note(&id)).unwrap().summary.title, "Plan");
    // Rejecting the stale change settles the set.
    let outcome = ws.decide_review(set, false, &Selection::All).unwrap();
    assert_eq!((outcome.rejected, outcome.set.summary.pending), (1, 0));
    assert_eq!(outcome.set.change_sets.len(), 2);
    assert!(ws.read(&Actor::User, |r| r.review_sets(true, 50)).unwrap().is_empty());
    // The client no longer sees anything pending: its reads are plain again.
    assert_eq!(staged.read(&client(), |r| r.note(&id)).unwrap().body, body(&ws, &id));
}

#[test]
fn a_new_note_is_accepted_whole_with_its_tags_and_a_rejected_one_never_appears() {
    let ws = Workspace::open_in_memory().unwrap();
    let staged = ws.staged();
    let ids: Vec<String> = ["Kept", "Dropped"]
        .iter()
        .map(|title| {
            staged
                .write(&client(), |w| {
                    let n = w.create_note(NewNote::new(*title, "text"))?;
                    w.add_tag(&n.summary.id, "inbox")?;
                    Ok::<_, Error>(n.summary.id)
                })
                .unwrap()
        })
        .collect();
    let set = ws.read(&Actor::User, |r| r.review_sets(true, 10)).unwrap()[0].id;
    // The user made a tag of that name meanwhile: the note gets that tag.
    let mine = note("Mine", "x").create_in(&ws).unwrap();
    ws.write(&Actor::User, |w| w.add_tag(&mine, "Inbox")).unwrap();
    let review = ws.read(&Actor::User, |r| r.review_set(set)).unwrap();
    let tag_hunk = review.items[0]
        .hunks
        .iter()
        .find(|h| h.field == "tag")
        .unwrap()
        .id
        .clone();
    // Choosing one change of a new note takes the whole note.
    let outcome = ws.decide_review(set, true, &Selection::Hunks(vec![tag_hunk])).unwrap();
    assert_eq!(outcome.accepted, 2, "{outcome:#?}");
    let kept = ws.read(&Actor::User, |r| r.note_summary(&ids[0])).unwrap();
    assert_eq!(kept.tags, ["Inbox"]);
    let outcome = ws
        .decide_review(set, false, &Selection::Items(vec![format!("note:{}", ids[1])]))
        .unwrap();
    assert_eq!(outcome.set.summary.pending, 0);
    assert!(ws.read(&Actor::User, |r| r.note_summary(&ids[1])).is_err());
    assert!(
        ws.decide_review(set, true, &Selection::Items(vec!["note:nope".into()]))
            .is_err()
    );
}

#[test]
fn staged_changes_of_a_note_that_becomes_protected_are_forgotten() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Diary", "dear diary").create_in(&ws).unwrap();
    let staged = ws.staged();
    staged
        .write(&client(), |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some("the secret plan".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    assert_eq!(staged.staging_report().unwrap().staged.len(), 1);
    ws.write(&Actor::User, |w| w.set_note_protected(&id, true)).unwrap();
    assert!(ws.read(&Actor::User, |r| r.review_sets(true, 10)).unwrap().is_empty());
    // A staged client is refused a protected note as any client is, and nothing is recorded.
    let refused = staged.write(&client(), |w| w.trash_note(&id));
    assert!(matches!(refused, Err(Error::Protected(_))), "{refused:?}");
    assert!(staged.staging_report().unwrap().staged.is_empty());
}
