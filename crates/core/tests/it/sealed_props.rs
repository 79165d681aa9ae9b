//! The property of sealed notes: after any sequence of creating, editing (by the user and by an agent), attaching,
//! protecting and unprotecting notes and notebooks, moving notes in and out of a protected notebook and undoing,
//! nothing ever written into a note that is now sealed can be found in the raw bytes of the workspace's files, and
//! every unlocked read gives back text that was written to that note.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use quire_core::{Actor, Error, NewAttachment, NewNote, NewNotebook, NoteUpdate, Page, Workspace};

use crate::sealed::{PASSPHRASE, files_holding, kdf, workspace_files};

#[derive(Debug, Clone)]
enum Op {
    Create { in_vault: bool },
    EditByUser(usize),
    EditByAgent(usize),
    Attach(usize),
    Protect(usize),
    Unprotect(usize),
    MoveIntoVault(usize),
    MoveOut(usize),
    ProtectVault(bool),
    Undo,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<bool>().prop_map(|in_vault| Op::Create { in_vault }),
        (0..6usize).prop_map(Op::EditByUser),
        (0..6usize).prop_map(Op::EditByAgent),
        (0..6usize).prop_map(Op::Attach),
        (0..6usize).prop_map(Op::Protect),
        (0..6usize).prop_map(Op::Unprotect),
        (0..6usize).prop_map(Op::MoveIntoVault),
        (0..6usize).prop_map(Op::MoveOut),
        any::<bool>().prop_map(Op::ProtectVault),
        Just(Op::Undo),
    ]
}

struct Model {
    /// Every text written to each note (bodies, revisions' sources, attachments), by note id.
    written: BTreeMap<String, BTreeSet<String>>,
    /// The body each note has now, as the writes that succeeded left it; after an undo, what the undo put back
    /// (read, and checked to be a body once written).
    current: BTreeMap<String, String>,
    notes: Vec<String>,
    counter: u32,
}

impl Model {
    fn marker(&mut self) -> String {
        self.counter += 1;
        format!("zq{:05}mark", self.counter)
    }
}

fn agent() -> Actor {
    Actor::Agent {
        chat: "props".into(),
        turn: 1,
    }
}

fn apply(ws: &Workspace, key: Option<&quire_core::seal::Unlocked>, vault: &str, model: &mut Model, op: &Op) {
    // The user writes with the key when given one (and without it before it exists).
    let user_write = |f: &mut dyn FnMut(&mut quire_core::Writer<'_>) -> Result<(), Error>| match key {
        Some(key) => ws.write_unlocked(key, |w| f(w)),
        None => ws.write(&Actor::User, |w| f(w)),
    };
    let pick = |i: usize| model.notes.get(i % model.notes.len().max(1)).cloned();
    match op {
        Op::Create { in_vault } => {
            let marker = model.marker();
            let mut new = NewNote::new(format!("note {}", model.counter), format!("body {marker}"));
            if *in_vault {
                new.notebook_id = Some(vault.to_owned());
            }
            let mut id = String::new();
            if user_write(&mut |w| {
                id = w.create_note(new.clone())?.summary.id;
                Ok(())
            })
            .is_ok()
            {
                model.written.entry(id.clone()).or_default().insert(marker);
                model.current.insert(id.clone(), new.body.clone());
                model.notes.push(id);
            }
        }
        Op::EditByUser(i) | Op::EditByAgent(i) => {
            let Some(id) = pick(*i) else { return };
            let marker = model.marker();
            let update = NoteUpdate {
                body: Some(format!("edited {marker}")),
                ..NoteUpdate::default()
            };
            // The marker counts as written to the note whether or not the write was allowed: a refused write must
            // leave nothing behind either.
            model.written.entry(id.clone()).or_default().insert(marker);
            let done = if matches!(op, Op::EditByAgent(_)) {
                ws.write(&agent(), |w| w.update_note(&id, update.clone())).is_ok()
            } else {
                user_write(&mut |w| w.update_note(&id, update.clone()).map(|_| ())).is_ok()
            };
            if done {
                model.current.insert(id, update.body.clone().unwrap_or_default());
            }
        }
        Op::Attach(i) => {
            let Some(id) = pick(*i) else { return };
            let marker = model.marker();
            model.written.entry(id.clone()).or_default().insert(marker.clone());
            let _ = user_write(&mut |w| {
                w.add_attachment(
                    &id,
                    NewAttachment {
                        title: "a.txt".into(),
                        mime: "text/plain".into(),
                        data: format!("data {marker}").into_bytes(),
                        text: Some(format!("text {marker}")),
                    },
                )
                .map(|_| ())
            });
        }
        Op::Protect(i) | Op::Unprotect(i) => {
            let Some(id) = pick(*i) else { return };
            let on = matches!(op, Op::Protect(_));
            let _ = user_write(&mut |w| w.set_note_protected(&id, on).map(|_| ()));
        }
        Op::MoveIntoVault(i) | Op::MoveOut(i) => {
            let Some(id) = pick(*i) else { return };
            let target = if matches!(op, Op::MoveIntoVault(_)) {
                vault
            } else {
                "_root"
            };
            let target = if target == "_root" {
                ws.read(&Actor::User, |r| r.default_notebook()).unwrap()
            } else {
                target.to_owned()
            };
            let _ = user_write(&mut |w| w.move_note(&id, &target).map(|_| ()));
        }
        Op::ProtectVault(on) => {
            let _ = user_write(&mut |w| w.set_notebook_protected(vault, *on).map(|_| ()));
        }
        Op::Undo => {
            let latest = ws
                .read(&Actor::User, |r| r.change_sets(Page { offset: 0, limit: 5 }))
                .unwrap()
                .items
                .into_iter()
                .find(|s| s.reverted.is_none());
            if let Some(set) = latest
                && user_write(&mut |w| w.revert_change_set(&set.id).map(|_| ())).is_ok()
            {
                // What the undo put back is read from the workspace (with the key), and `check` holds it to the
                // bodies once written.
                model.current.clear();
            }
        }
    }
}

fn check(
    ws: &Workspace,
    path: &std::path::Path,
    key: &quire_core::seal::Unlocked,
    model: &Model,
) -> Result<(), TestCaseError> {
    let files = workspace_files(path);
    for id in &model.notes {
        let Ok(summary) = ws.read(&Actor::User, |r| r.note_summary(id)) else {
            continue; // its creation was undone
        };
        let written = &model.written[id];
        if summary.is_protected {
            for marker in written {
                let found = files_holding(&files, marker);
                prop_assert!(found.is_empty(), "{marker} of sealed note {id} found in {found:?}");
            }
            prop_assert!(
                matches!(ws.read(&Actor::User, |r| r.note(id)), Err(Error::Locked { .. })),
                "a sealed note read without the key"
            );
        }
        let note = ws
            .read_unlocked(key, |r| r.note(id))
            .map_err(|e| TestCaseError::fail(format!("{id}: {e}")))?;
        let body_marker = note.body.split(' ').nth(1).unwrap_or_default().to_owned();
        prop_assert!(
            written.contains(&body_marker),
            "{id} reads {:?}, never written",
            note.body
        );
        // Outside undo, exactly the last body written.
        if let Some(expected) = model.current.get(id) {
            prop_assert_eq!(&note.body, expected, "{} reads other than its last write", id);
        }
        for revision in ws.read_unlocked(key, |r| r.revisions(id)).unwrap() {
            let marker = revision.body.split(' ').nth(1).unwrap_or_default().to_owned();
            prop_assert!(written.contains(&marker), "revision of {id} reads {:?}", revision.body);
        }
        for attachment in ws.read_unlocked(key, |r| r.attachments(id)).unwrap() {
            let data = ws.read_unlocked(key, |r| r.attachment_data(&attachment.id)).unwrap();
            let data = String::from_utf8(data).unwrap();
            prop_assert!(
                written.contains(data.split(' ').nth(1).unwrap_or_default()),
                "attachment reads {data:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn nothing_of_a_sealed_note_is_ever_readable_in_the_files(
        before in prop::collection::vec(op(), 0..6),
        after in prop::collection::vec((op(), any::<bool>()), 1..14),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ws.quire");
        let ws = Workspace::open(&path).unwrap();
        let vault = ws
            .write(&Actor::User, |w| {
                w.create_notebook(NewNotebook { title: "Vault".into(), parent_id: None, icon: None }).map(|n| n.id)
            })
            .unwrap();
        let mut model = Model { written: BTreeMap::new(), current: BTreeMap::new(), notes: Vec::new(), counter: 0 };
        for op in &before {
            apply(&ws, None, &vault, &mut model, op);
        }
        // Searched once, so that the word index beside the file holds what it can.
        let _ = ws.read(&Actor::User, |r| r.search("mark", Default::default()));
        let (key, _, _) = ws.init_lock(PASSPHRASE, &kdf()).unwrap();
        check(&ws, &path, &key, &model)?;
        // The user holds the key for some writes and not for others: sealing must hold on both paths.
        for (op, with_key) in &after {
            apply(&ws, with_key.then_some(&key), &vault, &mut model, op);
            let _ = ws.read(&Actor::User, |r| r.search("mark", Default::default()));
            check(&ws, &path, &key, &model)?;
        }
        prop_assert!(ws.check_integrity().unwrap().is_empty());
    }
}
