//! Sealed notes: a protected note's content is ciphertext everywhere in the workspace's files once a passphrase is
//! set, opens only with the key, and keeps its history.

use std::path::{Path, PathBuf};

use quire_core::seal::KdfParams;
use quire_core::testing::note;
use quire_core::{Actor, Error, NewAttachment, NoteUpdate, Workspace};

pub(crate) const MARKER: &str = "ultramarine-quokka-47";
pub(crate) const PASSPHRASE: &str = "correct horse battery";

pub(crate) fn kdf() -> KdfParams {
    KdfParams::cheapest_for_tests()
}

fn agent() -> Actor {
    Actor::Agent {
        chat: "c".into(),
        turn: 1,
    }
}

/// Every file of the workspace: the file, its WAL and the word index folder.
pub(crate) fn workspace_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        files.push(PathBuf::from(p));
    }
    let mut dir = path.as_os_str().to_owned();
    dir.push(".search");
    if let Ok(entries) = std::fs::read_dir(PathBuf::from(dir)) {
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.into_iter().filter(|p| p.is_file()).collect()
}

/// The files (of `files`) whose raw bytes hold `needle`.
pub(crate) fn files_holding(files: &[PathBuf], needle: &str) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|p| {
            let bytes = std::fs::read(p).unwrap_or_default();
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .cloned()
        .collect()
}

/// The id of the newest change set.
fn latest_change_set(ws: &Workspace) -> String {
    ws.read(&Actor::User, |r| r.change_sets(Default::default()))
        .unwrap()
        .items[0]
        .id
        .clone()
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    ws: Workspace,
    secret: String,
    plain: String,
}

/// A note with the marker in its body, a revision (an agent's edit) and an attachment's data and text, a chat about
/// it, searched once (so the word index holds it); a plain note beside it.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.quire");
    let ws = Workspace::open(&path).unwrap();
    let secret = note("Bank", format!("PIN is {MARKER} first")).create_in(&ws).unwrap();
    let plain = note("Groceries", "milk and eggs").create_in(&ws).unwrap();
    ws.write(&agent(), |w| {
        w.update_note(
            &secret,
            NoteUpdate {
                body: Some(format!("PIN is {MARKER} second")),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    ws.write(&Actor::User, |w| {
        w.add_attachment(
            &secret,
            NewAttachment {
                title: "card.txt".into(),
                mime: "text/plain".into(),
                data: format!("card {MARKER}").into_bytes(),
                text: Some(format!("text {MARKER}")),
            },
        )?;
        w.create_chat("About the bank", Some(&secret))?;
        // Another chat read the note before it was protected: its tool result holds the text.
        let other = w.create_chat("Elsewhere", None)?;
        w.append_chat_messages(
            &other.id,
            &[quire_core::ChatMessage {
                role: "tool".into(),
                content: serde_json::json!({
                    "role": "tool", "call_id": "c1", "is_error": false,
                    "content": format!("{{\"id\":\"{secret}\",\"body\":\"PIN is {MARKER}\"}}"),
                }),
            }],
        )?;
        Ok::<_, Error>(())
    })
    .unwrap();
    let hits = ws.read(&Actor::User, |r| r.search(MARKER, Default::default())).unwrap();
    assert_eq!(hits.total, 1);
    ws.write(&Actor::User, |w| w.set_note_protected(&secret, true)).unwrap();
    Fixture {
        _dir: dir,
        path,
        ws,
        secret,
        plain,
    }
}

#[test]
fn setting_a_passphrase_seals_every_trace_of_a_protected_note() {
    let fx = fixture();
    assert!(
        !files_holding(&workspace_files(&fx.path), MARKER).is_empty(),
        "the fixture wrote the marker"
    );
    let (key, recovery, report) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    assert_eq!(report.notes, 1);
    assert_eq!(report.revisions, 1);
    assert_eq!(report.attachments, 1);
    assert_eq!(
        report.chats_removed, 2,
        "the chat about it and the one whose tool result showed it"
    );
    assert!(report.file_rewritten, "lock init rewrites the file");
    assert!(report.snapshots >= 1, "{report:?}");
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
    assert_eq!(recovery.as_str().len(), 71);

    // Locked: the title shows, the content does not.
    let locked = fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap_err();
    assert!(
        matches!(locked, Error::Locked { ref title, .. } if title == "Bank"),
        "{locked}"
    );
    let summary = fx.ws.read(&Actor::User, |r| r.note_summary(&fx.secret)).unwrap();
    assert_eq!(summary.title, "Bank");
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap().body,
        "milk and eggs"
    );

    // Unlocked: everything reads as it was written.
    let note = fx.ws.read_unlocked(&key, |r| r.note(&fx.secret)).unwrap();
    assert_eq!(note.body, format!("PIN is {MARKER} second"));
    let revisions = fx.ws.read_unlocked(&key, |r| r.revisions(&fx.secret)).unwrap();
    assert_eq!(revisions[0].body, format!("PIN is {MARKER} first"));
    let attachment = fx.ws.read_unlocked(&key, |r| r.attachments(&fx.secret)).unwrap()[0]
        .id
        .clone();
    let data = fx.ws.read_unlocked(&key, |r| r.attachment_data(&attachment)).unwrap();
    assert_eq!(data, format!("card {MARKER}").into_bytes());
    let text = fx.ws.read_unlocked(&key, |r| r.attachment_text(&attachment)).unwrap();
    assert_eq!(text.as_deref(), Some(format!("text {MARKER}").as_str()));
    // Search finds it by title only, for everyone.
    let hits = fx
        .ws
        .read_unlocked(&key, |r| r.search(MARKER, Default::default()))
        .unwrap();
    assert_eq!(hits.total, 0);
    // The passphrase opens the same key; a wrong one opens nothing; the recovery key opens it too.
    assert!(matches!(fx.ws.unlock("wrong passphrase"), Err(Error::WrongPassphrase)));
    let again = fx.ws.unlock(PASSPHRASE).unwrap();
    assert_eq!(
        fx.ws.read_unlocked(&again, |r| r.note(&fx.secret)).unwrap().body,
        note.body
    );
    let recovered = fx.ws.unlock_with_recovery(recovery.as_str()).unwrap();
    assert_eq!(
        fx.ws.read_unlocked(&recovered, |r| r.note(&fx.secret)).unwrap().body,
        note.body
    );
}

#[test]
fn a_large_word_index_is_removed_rather_than_rebuilt_when_sealing() {
    let fx = fixture();
    // As if the workspace were above the size whole builds run in the foreground.
    fx.ws.set_search_index_background_above(0);
    fx.ws.set_search_index_builds_in_background(false);
    fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
    // Searching still works (FTS5 answers until the index is built again), and finds the sealed note by title.
    let hits = fx
        .ws
        .read(&Actor::User, |r| r.search("Bank", Default::default()))
        .unwrap();
    assert_eq!(hits.total, 1);
    assert_eq!(
        fx.ws
            .read(&Actor::User, |r| r.search(MARKER, Default::default()))
            .unwrap()
            .total,
        0
    );
}

#[test]
fn edits_undo_and_unprotect_of_a_sealed_note_keep_it_sealed_until_it_is_unprotected() {
    let fx = fixture();
    let (key, _, _) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    // Editing needs the key; the new text is sealed too.
    let edit = |body: &str| NoteUpdate {
        body: Some(body.into()),
        ..NoteUpdate::default()
    };
    let refused = fx
        .ws
        .write(&Actor::User, |w| w.update_note(&fx.secret, edit("x")))
        .unwrap_err();
    assert!(matches!(refused, Error::Locked { .. }), "{refused}");
    let third = format!("third {MARKER} third");
    fx.ws.write_unlocked(&key, |w| w.save_revision_now(&fx.secret)).unwrap();
    fx.ws
        .write_unlocked(&key, |w| w.update_note(&fx.secret, edit(&third)))
        .unwrap();
    assert_eq!(
        files_holding(&workspace_files(&fx.path), "third"),
        Vec::<PathBuf>::new()
    );
    assert_eq!(fx.ws.read_unlocked(&key, |r| r.note(&fx.secret)).unwrap().body, third);
    // Undo of the edit puts the sealed text back.
    let last = latest_change_set(&fx.ws);
    fx.ws.write_unlocked(&key, |w| w.revert_change_set(&last)).unwrap();
    assert_eq!(
        fx.ws.read_unlocked(&key, |r| r.note(&fx.secret)).unwrap().body,
        format!("PIN is {MARKER} second")
    );
    // Unprotecting needs the key, and then the note is plain again.
    let refused = fx
        .ws
        .write(&Actor::User, |w| w.set_note_protected(&fx.secret, false))
        .unwrap_err();
    assert!(matches!(refused, Error::Locked { .. }), "{refused}");
    fx.ws
        .write_unlocked(&key, |w| w.set_note_protected(&fx.secret, false))
        .unwrap();
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap().body,
        format!("PIN is {MARKER} second")
    );
    // Undoing the unprotect seals it again, without the key.
    let last = latest_change_set(&fx.ws);
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&last)).unwrap();
    assert!(matches!(
        fx.ws.read(&Actor::User, |r| r.note(&fx.secret)),
        Err(Error::Locked { .. })
    ));
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
}

#[test]
fn a_note_made_in_a_protected_notebook_is_sealed_without_the_key_and_its_writer_gets_it_back() {
    let fx = fixture();
    let (key, _, _) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    assert!(fx.ws.lock_is_set().unwrap());
    let vault = fx
        .ws
        .write(&Actor::User, |w| {
            let id = quire_core::testing::notebook(w, "Vault")?;
            w.set_notebook_protected(&id, true)?;
            Ok::<_, Error>(id)
        })
        .unwrap();
    let made = fx
        .ws
        .write(&Actor::User, |w| {
            note("Safe", format!("combination {MARKER}")).notebook(&vault).create(w)
        })
        .unwrap();
    let created = fx
        .ws
        .write(&Actor::User, |w| {
            let mut new = quire_core::NewNote::new("Second", "second text");
            new.notebook_id = Some(vault.clone());
            w.create_note(new)
        })
        .unwrap();
    assert_eq!(created.body, "second text");
    assert!(created.summary.is_protected);
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
    assert!(matches!(
        fx.ws.read(&Actor::User, |r| r.note(&made)),
        Err(Error::Locked { .. })
    ));
    assert_eq!(
        fx.ws.read_unlocked(&key, |r| r.note(&made)).unwrap().body,
        format!("combination {MARKER}")
    );
}

#[test]
fn a_damaged_sealed_note_is_an_error_naming_it_never_garbage() {
    let fx = fixture();
    let (key, _, _) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    drop(fx.ws);
    let length: i64 = {
        let conn = rusqlite::Connection::open(&fx.path).unwrap();
        conn.query_row("SELECT length(sealed) FROM notes WHERE id = ?1", [&fx.secret], |r| {
            r.get(0)
        })
        .unwrap()
    };
    for at in [0, 5, 40, 90, 110, length as usize - 1] {
        let conn = rusqlite::Connection::open(&fx.path).unwrap();
        let mut blob: Vec<u8> = conn
            .query_row("SELECT sealed FROM notes WHERE id = ?1", [&fx.secret], |r| r.get(0))
            .unwrap();
        blob[at] ^= 0x01;
        conn.execute(
            "UPDATE notes SET sealed = ?2 WHERE id = ?1",
            rusqlite::params![fx.secret, blob],
        )
        .unwrap();
        drop(conn);
        let ws = Workspace::open(&fx.path).unwrap();
        let err = ws.read_unlocked(&key, |r| r.note(&fx.secret)).unwrap_err();
        assert!(
            matches!(&err, Error::SealBroken { note_id, .. } if *note_id == fx.secret),
            "byte {at}: {err}"
        );
        assert!(err.to_string().contains(&fx.secret), "{err}");
        drop(ws);
        let conn = rusqlite::Connection::open(&fx.path).unwrap();
        blob[at] ^= 0x01;
        conn.execute(
            "UPDATE notes SET sealed = ?2 WHERE id = ?1",
            rusqlite::params![fx.secret, blob],
        )
        .unwrap();
    }
    // Put back whole, it opens again.
    let ws = Workspace::open(&fx.path).unwrap();
    assert!(ws.read_unlocked(&key, |r| r.note(&fx.secret)).is_ok());
    drop(ws);
    // Plain text put where the sealed body belongs is not shown as the note's.
    let conn = rusqlite::Connection::open(&fx.path).unwrap();
    conn.execute(
        "UPDATE notes SET sealed = NULL, body = 'forged' WHERE id = ?1",
        [&fx.secret],
    )
    .unwrap();
    drop(conn);
    let ws = Workspace::open(&fx.path).unwrap();
    for result in [
        ws.read_unlocked(&key, |r| r.note(&fx.secret)),
        ws.read(&Actor::User, |r| r.note(&fx.secret)),
    ] {
        assert!(matches!(&result, Err(Error::SealBroken { .. })), "{result:?}");
    }
}

#[test]
fn a_note_deleted_for_good_while_protected_is_sealed_in_the_change_log_too() {
    let fx = fixture();
    fx.ws.write(&Actor::User, |w| w.purge_note(&fx.secret)).unwrap();
    assert!(!files_holding(&workspace_files(&fx.path), MARKER).is_empty());
    let (key, _, report) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    assert!(report.snapshots >= 2, "{report:?}");
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
    // Undoing the delete brings it back sealed, and the key opens it.
    let last = latest_change_set(&fx.ws);
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&last)).unwrap();
    assert_eq!(
        fx.ws.read_unlocked(&key, |r| r.note(&fx.secret)).unwrap().body,
        format!("PIN is {MARKER} second")
    );
    assert_eq!(files_holding(&workspace_files(&fx.path), MARKER), Vec::<PathBuf>::new());
}

#[test]
fn a_notes_sealed_body_moved_to_another_note_or_an_older_version_is_refused() {
    let fx = fixture();
    let (key, _, _) = fx.ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    let other = fx
        .ws
        .write_unlocked(&key, |w| {
            let id = note("Other", "other text").create(w)?;
            w.set_note_protected(&id, true)?;
            Ok::<_, Error>(id)
        })
        .unwrap();
    fx.ws
        .write_unlocked(&key, |w| {
            w.update_note(
                &fx.secret,
                NoteUpdate {
                    body: Some("newer".into()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    drop(fx.ws);
    let conn = rusqlite::Connection::open(&fx.path).unwrap();
    let (blob, version): (Vec<u8>, i64) = conn
        .query_row("SELECT sealed, version FROM notes WHERE id = ?1", [&fx.secret], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    conn.execute(
        "UPDATE notes SET sealed = ?2, version = ?3 WHERE id = ?1",
        rusqlite::params![other, blob, version],
    )
    .unwrap();
    conn.execute("UPDATE notes SET version = version + 1 WHERE id = ?1", [&fx.secret])
        .unwrap();
    drop(conn);
    let ws = Workspace::open(&fx.path).unwrap();
    assert!(matches!(
        ws.read_unlocked(&key, |r| r.note(&other)),
        Err(Error::SealBroken { .. })
    ));
    assert!(matches!(
        ws.read_unlocked(&key, |r| r.note(&fx.secret)),
        Err(Error::SealBroken { .. })
    ));
}

/// Issue 46: a note's sync conflicts hold its text (both versions and the lines before). Sealing the note seals
/// them: no byte of them stays plain in the workspace's files (protecting it once a passphrase is set, and setting
/// the passphrase while it is protected), they are still listed (without their texts), the unlocked key opens
/// them, a conflict recorded in a sealed note is sealed as it is written, and opening the note opens them.
#[test]
fn a_sealed_notes_sync_conflicts_are_sealed_with_it_and_open_with_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.quire");
    let ws = Workspace::open(&path).unwrap();
    let later = note("Later", "lines").create_in(&ws).unwrap();
    let before = note("Before", "lines").create_in(&ws).unwrap();
    let sync = Actor::Sync {
        device: "laptop".into(),
    };
    let record = |id: &str, word: &str| {
        let conflict = quire_core::conflicts::SyncConflict::new(
            id,
            "laptop",
            &format!("base {word}"),
            &format!("ours {word}"),
            &format!("theirs {word}"),
            1,
        );
        ws.write(&sync, |w| w.record_sync_conflict(&conflict)).unwrap();
    };
    record(&later, "vermilion-otter-12");
    record(&before, "cobalt-heron-34");
    let files = || workspace_files(&path);
    assert_eq!(
        files_holding(&files(), "cobalt-heron-34").len(),
        1,
        "the conflict is in the file"
    );
    // Protected before the passphrase: setting it seals the note and rewrites the file.
    ws.write(&Actor::User, |w| w.set_note_protected(&before, true)).unwrap();
    let (key, _, _) = ws.init_lock(PASSPHRASE, &kdf()).unwrap();
    assert_eq!(files_holding(&files(), "cobalt-heron-34"), Vec::<PathBuf>::new());
    let locked = ws.read(&Actor::User, |r| r.sync_conflicts(Some(&before))).unwrap();
    assert_eq!(locked.len(), 1, "still to be chosen");
    assert!(locked[0].sealed && locked[0].ours.is_empty() && locked[0].base.is_empty());
    let opened = ws.read_unlocked(&key, |r| r.sync_conflicts(Some(&before))).unwrap();
    assert_eq!(
        (opened[0].ours.as_str(), opened[0].theirs.as_str()),
        ("ours cobalt-heron-34", "theirs cobalt-heron-34")
    );
    // Protected once the passphrase is set: sealed too, to the last byte.
    ws.write_unlocked(&key, |w| w.set_note_protected(&later, true)).unwrap();
    assert_eq!(files_holding(&files(), "vermilion-otter-12"), Vec::<PathBuf>::new());
    assert!(ws.read(&Actor::User, |r| r.sync_conflicts(Some(&later))).unwrap()[0].sealed);
    // One recorded in a sealed note is sealed as it is written; an aside too.
    record(&later, "saffron-lynx-56");
    ws.write(&sync, |w| {
        w.record_sync_aside(&later, "laptop", "base amber-crow-78", "mine amber-crow-78", 2)
    })
    .unwrap();
    assert_eq!(files_holding(&files(), "saffron-lynx-56"), Vec::<PathBuf>::new());
    assert_eq!(files_holding(&files(), "amber-crow-78"), Vec::<PathBuf>::new());
    let opened = ws.read_unlocked(&key, |r| r.sync_conflicts(Some(&later))).unwrap();
    assert_eq!(opened.len(), 3);
    assert!(opened[2].aside && opened[2].ours == "mine amber-crow-78" && opened[2].theirs.is_empty());
    // An edit of the sealed note that lost to another device's, kept as its sealed body: opens as an aside's text.
    let (version, piece): (i64, Vec<u8>) = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT version, sealed FROM notes WHERE id = ?1", [&later], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    ws.write(&sync, |w| {
        w.record_sync_aside_sealed(&later, "laptop", (version, &piece), None, 2)
    })
    .unwrap();
    let opened = ws.read_unlocked(&key, |r| r.sync_conflicts(Some(&later))).unwrap();
    assert!(
        opened[3].aside && opened[3].ours == "lines" && opened[3].base.is_empty(),
        "{opened:?}"
    );
    // A choice of a sealed note's conflict keeps no plain line.
    ws.write_unlocked(&key, |w| {
        w.resolve_sync_conflict(opened[1].id, "ours saffron-lynx-56", 3)
    })
    .unwrap();
    assert_eq!(files_holding(&files(), "saffron-lynx-56"), Vec::<PathBuf>::new());
    assert_eq!(
        ws.read(&Actor::User, |r| r.sync_conflicts(Some(&later))).unwrap().len(),
        3
    );
    // Unprotected: its conflicts are plain again.
    ws.write_unlocked(&key, |w| w.set_note_protected(&later, false))
        .unwrap();
    let plain = ws.read(&Actor::User, |r| r.sync_conflicts(Some(&later))).unwrap();
    assert!(!plain[0].sealed && plain[0].ours == "ours vermilion-otter-12");
    assert!(plain[1].aside && plain[1].base == "base amber-crow-78");
    assert!(
        plain[2].aside && !plain[2].sealed && plain[2].ours == "lines",
        "{plain:?}"
    );
}
