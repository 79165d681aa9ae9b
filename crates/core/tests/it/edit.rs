//! The editor's save (`Writer::save_user_edit`): a stale save refused, a typing session kept as one revision and one
//! change set, tags brought to the editor's list.

use quire_core::{Actor, Error, NoteUpdate, Page, SavedEdit, Timestamp, UserEdit, Workspace, testing};

use crate::fixture::mcp;

/// A workspace with one note of the user's ("Letter", "Dear Sir", tagged `post` and `draft`): its id and `updated`.
fn letter() -> (Workspace, String, Timestamp) {
    let ws = Workspace::open_in_memory().unwrap();
    let id = testing::note("Letter", "Dear Sir")
        .tags(["post", "draft"])
        .create_in(&ws)
        .unwrap();
    let updated = ws.read(&Actor::User, |r| r.note_summary(&id)).unwrap().updated;
    (ws, id, updated)
}

fn typed(base: Timestamp, body: &str) -> UserEdit {
    UserEdit {
        update: NoteUpdate {
            body: Some(body.into()),
            ..NoteUpdate::default()
        },
        ..UserEdit::on(base)
    }
}

fn save(ws: &Workspace, id: &str, edit: UserEdit) -> Result<SavedEdit, Error> {
    ws.write(&Actor::User, |w| w.save_user_edit(id, edit))
}

#[test]
fn a_save_on_an_older_version_is_refused_and_changes_nothing() {
    let (ws, id, loaded) = letter();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let theirs = ws
        .write(&mcp(), |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some("Changed by an AI client".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    let refused = save(&ws, &id, typed(loaded, "my newer text")).unwrap_err();
    let Error::StaleEdit { note_id, updated } = refused else {
        panic!("expected a stale edit, got {refused:?}");
    };
    assert_eq!((note_id.as_str(), updated), (id.as_str(), theirs.summary.updated));
    let stored = ws.read(&Actor::User, |r| r.note(&id)).unwrap();
    assert_eq!(stored.body, "Changed by an AI client");
    // Made on the version now stored, the same save lands.
    let saved = save(&ws, &id, typed(updated, "my newer text")).unwrap();
    assert_eq!(saved.note.body, "my newer text");
}

#[test]
fn a_typing_session_is_one_revision_and_one_change_set() {
    let (ws, id, mut base) = letter();
    for body in ["Dear Sam", "Dear Sam, hello", "Dear Sam, hello again"] {
        base = save(&ws, &id, typed(base, body)).unwrap().note.summary.updated;
    }
    let revisions = ws.read(&Actor::User, |r| r.revisions(&id)).unwrap();
    assert_eq!(revisions.len(), 1, "{revisions:?}");
    assert_eq!(revisions[0].body, "Dear Sir", "the text before typing began");
    let sets = ws.read(&Actor::User, |r| r.change_sets(Page::default())).unwrap();
    assert_eq!(sets.total, 2, "the creation, then the typing session: {sets:?}");

    // Another actor's change ends the session: the next save keeps a revision of its text and is a step of its own.
    let theirs = ws
        .write(&mcp(), |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some("by a client".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    save(&ws, &id, typed(theirs.summary.updated, "mine again")).unwrap();
    let revisions = ws.read(&Actor::User, |r| r.revisions(&id)).unwrap();
    let bodies: Vec<&str> = revisions.iter().map(|r| r.body.as_str()).collect();
    assert_eq!(bodies, ["by a client", "Dear Sam, hello again", "Dear Sir"]);
    let sets = ws.read(&Actor::User, |r| r.change_sets(Page::default())).unwrap();
    assert_eq!(sets.total, 4, "{sets:?}");
}

#[test]
fn tags_are_brought_to_the_editors_list() {
    let (ws, id, base) = letter();
    let saved = save(
        &ws,
        &id,
        UserEdit {
            tags: Some(vec!["post".into(), "sent".into()]),
            update: NoteUpdate {
                is_todo: Some(true),
                ..NoteUpdate::default()
            },
            ..UserEdit::on(base)
        },
    )
    .unwrap();
    assert_eq!(saved.note.summary.tags, ["post", "sent"]);
    assert!(saved.note.summary.is_todo);
    // Only the text starts a typing session: a save of tags keeps no revision.
    assert!(ws.read(&Actor::User, |r| r.revisions(&id)).unwrap().is_empty());
    let left = save(&ws, &id, UserEdit::on(saved.note.summary.updated)).unwrap();
    assert_eq!(left.note.summary.tags, ["post", "sent"], "no list given leaves them");
}

#[test]
fn a_new_title_can_carry_the_links_along() {
    let (ws, id, base) = letter();
    let linking = testing::note("Index", "See [[Letter]].").create_in(&ws).unwrap();
    let renamed = UserEdit {
        update: NoteUpdate {
            title: Some("Letter to Sam".into()),
            ..NoteUpdate::default()
        },
        update_links: true,
        ..UserEdit::on(base)
    };
    let saved = save(&ws, &id, renamed).unwrap();
    assert_eq!(saved.links_updated, std::slice::from_ref(&linking));
    let index = ws.read(&Actor::User, |r| r.note(&linking)).unwrap();
    assert_eq!(index.body, "See [[Letter to Sam]].");
}

#[test]
fn only_the_user_saves_from_an_editor() {
    let (ws, id, base) = letter();
    let refused = ws
        .write(&mcp(), |w| w.save_user_edit(&id, typed(base, "x")))
        .unwrap_err();
    assert!(matches!(refused, Error::UserOnly(_)), "{refused:?}");
}
