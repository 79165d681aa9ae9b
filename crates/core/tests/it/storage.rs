//! Opening files, transactions that roll back, and concurrent readers and writers on a real file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quire_core::{Actor, Error, NewNote, NoteUpdate, Page, Workspace, testing};

#[test]
fn open_creates_file_and_parent_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/er/notes.quire");
    let ws = Workspace::open(&path).unwrap();
    let id = testing::note("Hello", "world").create_in(&ws).unwrap();
    drop(ws);
    assert!(path.exists());
    let ws = Workspace::open(&path).unwrap();
    assert_eq!(ws.read(&Actor::User, |r| r.note(&id)).unwrap().body, "world");
    assert!(ws.check_integrity().unwrap().is_empty());
}

/// A workspace holds every note, protected ones too: other local users cannot read it (security finding 10).
#[cfg(unix)]
#[test]
fn a_new_workspace_and_its_side_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("made/notes.quire");
    let ws = Workspace::open(&path).unwrap();
    testing::note("Hello", "world").create_in(&ws).unwrap();
    // The word index, in the folder beside the file.
    ws.rebuild_search_index().unwrap();
    assert_eq!(mode(&path), 0o600, "the workspace file");
    assert_eq!(
        mode(dir.path().join("made").as_path()),
        0o700,
        "the directory made for it"
    );
    let wal = path.with_file_name("notes.quire-wal");
    assert_eq!(mode(&wal), 0o600, "the WAL");
    let mut side = 0;
    for entry in std::fs::read_dir(dir.path().join("made")).unwrap() {
        let entry = entry.unwrap().path();
        let expected = if entry.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&entry), expected, "{}", entry.display());
        side += 1;
    }
    assert!(side >= 3, "the file, its WAL and shared memory, and the word index");
    drop(ws);
}

/// The page size written in a database file's header (bytes 16-17, big-endian).
fn page_size_of(path: &std::path::Path) -> u32 {
    let header = std::fs::read(path).unwrap();
    u32::from(u16::from_be_bytes([header[16], header[17]]))
}

#[test]
fn a_new_file_has_16_kib_pages_and_an_older_file_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.quire");
    let ws = Workspace::open(&new).unwrap();
    testing::note("Hello", "world").create_in(&ws).unwrap();
    drop(ws);
    assert_eq!(page_size_of(&new), 16 * 1024);

    // A workspace made before the page size was chosen: SQLite's default, marked as quire's, nothing migrated.
    let old = dir.path().join("old.quire");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        conn.pragma_update(None, "page_size", 4096).unwrap();
        conn.pragma_update(None, "application_id", 0x5155_4952).unwrap();
    }
    assert_eq!(page_size_of(&old), 4096);
    let ws = Workspace::open(&old).unwrap();
    let id = testing::note("Old", "file").create_in(&ws).unwrap();
    assert_eq!(ws.read(&Actor::User, |r| r.note(&id)).unwrap().body, "file");
    assert!(ws.check_integrity().unwrap().is_empty());
    drop(ws);
    assert_eq!(page_size_of(&old), 4096);
}

#[test]
fn refuses_foreign_files_and_leaves_them_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let check = |name: &str, contents: &dyn Fn(&std::path::Path), expected: &str| {
        let path = dir.path().join(name);
        contents(&path);
        let before = std::fs::read(&path).unwrap();
        let err = Workspace::open(&path).unwrap_err().to_string();
        assert!(err.contains(expected), "{name}: {err}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "{name} was modified");
        let mut siblings: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        siblings.retain(|s| s.to_string_lossy().starts_with(name) && s.to_string_lossy() != name);
        assert!(siblings.is_empty(), "{name} left {siblings:?}");
    };
    check(
        "text.txt",
        &|p| std::fs::write(p, "just some text, not a database at all".repeat(200)).unwrap(),
        "is not a quire workspace",
    );
    check(
        "other.db",
        &|p| rusqlite_free::open(p),
        "SQLite database of another application",
    );
    check(
        "newer.quire",
        &|p| {
            let ws = Workspace::open(p).unwrap();
            drop(ws);
            rusqlite_free::set_user_version(p, 99);
        },
        "written by a newer quire (schema version 99",
    );
}

/// Files of other applications made without linking rusqlite: the `sqlite3`-free way is to let quire make a
/// workspace and then change its header bytes, which is exactly what another application's file differs in.
mod rusqlite_free {
    use std::path::Path;

    pub(crate) fn open(path: &Path) {
        let ws = quire_core::Workspace::open(path).unwrap();
        drop(ws);
        checkpoint_away_wal(path);
        // Bytes 68..72 of the header hold the application id; zero it and the file is "someone else's".
        let mut bytes = std::fs::read(path).unwrap();
        bytes[68..72].copy_from_slice(&[0, 0, 0, 0]);
        std::fs::write(path, bytes).unwrap();
    }

    pub(crate) fn set_user_version(path: &Path, version: u32) {
        checkpoint_away_wal(path);
        // Bytes 60..64 hold `PRAGMA user_version`, big-endian.
        let mut bytes = std::fs::read(path).unwrap();
        bytes[60..64].copy_from_slice(&version.to_be_bytes());
        std::fs::write(path, bytes).unwrap();
    }

    fn checkpoint_away_wal(path: &Path) {
        // Closing the last connection checkpoints the WAL into the main file and removes it. The pool closes
        // connections it was still opening in the background a moment after the workspace is dropped.
        let wal = path.with_extension(format!("{}-wal", path.extension().unwrap().to_string_lossy()));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while wal.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!wal.exists(), "WAL file left behind: {}", wal.display());
    }
}

#[test]
fn an_error_rolls_back_the_whole_write() {
    let ws = Workspace::open_in_memory().unwrap();
    let result: Result<(), Error> = ws.write(&Actor::User, |w| {
        w.create_note(NewNote::new("First", "kept?"))?;
        w.create_note(NewNote::new("", "empty title fails"))?;
        Ok(())
    });
    assert_eq!(result.unwrap_err().to_string(), "Note title cannot be empty.");
    let count = ws
        .read(&Actor::User, |r| r.notes_in_notebook("_root", Page::default()))
        .unwrap()
        .total;
    assert_eq!(count, 0);
    let changes = ws
        .read(&Actor::User, |r| r.changes(None, Page::default()))
        .unwrap()
        .total;
    assert_eq!(changes, 0, "the change log must roll back too");
}

#[test]
fn a_panic_rolls_back_the_whole_write_and_the_workspace_stays_usable() {
    let ws = Workspace::open_in_memory().unwrap();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _: Result<(), Error> = ws.write(&Actor::User, |w| {
            w.create_note(NewNote::new("Half", "written"))?;
            panic!("handler bug");
        });
    }));
    assert!(outcome.is_err());
    let count = ws
        .read(&Actor::User, |r| r.notes_in_notebook("_root", Page::default()))
        .unwrap()
        .total;
    assert_eq!(count, 0);
    testing::note("After", "panic").create_in(&ws).unwrap();
    assert!(ws.check_integrity().unwrap().is_empty());
}

#[test]
fn readers_and_two_writers_on_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("busy.quire")).unwrap();
    let counter = testing::note("Counter", "0").create_in(&ws).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let reads = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(3);

    let mut writers = Vec::new();
    for writer in 0..2 {
        let (ws, counter, errors) = (ws.clone(), counter.clone(), errors.clone());
        writers.push(std::thread::spawn(move || {
            let mut commits = 0u64;
            while Instant::now() < deadline {
                let result = ws.write(&Actor::User, |w| {
                    // Read-modify-write: a lost update would show as a final count below the commits.
                    let n: u64 = w.note(&counter)?.body.parse().unwrap();
                    w.update_note(
                        &counter,
                        NoteUpdate {
                            body: Some((n + 1).to_string()),
                            ..Default::default()
                        },
                    )?;
                    w.create_note(NewNote::new(format!("w{writer} #{commits}"), "x"))
                });
                match result {
                    Ok(_) => commits += 1,
                    Err(e) => {
                        eprintln!("writer error: {e}");
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            (writer, commits)
        }));
    }
    let mut readers = Vec::new();
    for _ in 0..4 {
        let (ws, stop, errors, reads) = (ws.clone(), stop.clone(), errors.clone(), reads.clone());
        readers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let result = ws.read(&Actor::User, |r| {
                    let page = r.notes_in_notebook("_root", Page::first(5))?;
                    r.search("w0", Default::default())?;
                    Ok::<_, Error>(page.total)
                });
                match result {
                    Ok(_) => reads.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        eprintln!("reader error: {e}");
                        errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }));
    }
    let per_writer: Vec<(usize, u64)> = writers.into_iter().map(|t| t.join().unwrap()).collect();
    let commits: u64 = per_writer.iter().map(|(_, c)| c).sum();
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(
        errors.load(Ordering::Relaxed),
        0,
        "no SQLITE_BUSY or other error may reach a caller"
    );
    assert!(commits > 0 && reads.load(Ordering::Relaxed) > 0);
    let (count, notes) = ws
        .read(&Actor::User, |r| {
            let count: u64 = r.note(&counter)?.body.parse().unwrap();
            Ok::<_, Error>((count, r.notes_in_notebook("_root", Page::first(1))?.total))
        })
        .unwrap();
    assert_eq!(count, commits, "every committed increment must be there");
    assert_eq!(notes, commits + 1);
    // Every pooled connection's search sees every committed write.
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let ws = ws.clone();
            std::thread::spawn(move || {
                ws.read(&Actor::User, |r| r.search("title:w0", Default::default()))
                    .unwrap()
                    .total
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), per_writer[0].1);
    }
    assert_eq!(ws.check_integrity().unwrap(), Vec::<String>::new());
}

#[test]
fn a_stale_header_beside_a_wal_is_read_through_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let check = |name: &str, application_id: i64, expect_ok: bool| {
        let path = dir.path().join(name);
        // A process that wrote the header change into the WAL and has not checkpointed it yet.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
        conn.pragma_update(None, "application_id", application_id).unwrap();
        let header = std::fs::read(&path).unwrap();
        assert_eq!(&header[68..72], &[0, 0, 0, 0], "the main file's header is stale");
        let opened = Workspace::open(&path);
        assert_eq!(opened.is_ok(), expect_ok, "{name}: {opened:?}");
        if let Err(e) = opened {
            assert!(e.to_string().contains("of another application"), "{e}");
        }
        drop(conn);
    };
    check("ours.quire", 0x5155_4952, true);
    check("theirs.db", 7, false);
}

#[test]
fn a_note_list_comes_in_the_order_asked_for() {
    use quire_core::{NoteList, NoteOrder};
    let ws = Workspace::open_in_memory().unwrap();
    let mut ids = Vec::new();
    for title in ["beta", "Alpha", "gamma"] {
        let id = testing::note(title, "text").tags(["t"]).create_in(&ws).unwrap();
        ids.push(id);
        std::thread::sleep(Duration::from_millis(3));
    }
    // "beta" changes last.
    ws.write(&Actor::User, |w| {
        w.update_note(
            &ids[0],
            NoteUpdate {
                body: Some("changed".into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    let titles = |list: NoteList<'_>, order: NoteOrder| -> Vec<String> {
        ws.read(&Actor::User, |r| r.note_list(list, order, Page::default()))
            .unwrap()
            .items
            .into_iter()
            .map(|n| n.title)
            .collect()
    };
    let root = NoteList::Notebook("_root");
    assert_eq!(titles(root, NoteOrder::Natural), ["Alpha", "beta", "gamma"]);
    assert_eq!(titles(root, NoteOrder::Title), ["Alpha", "beta", "gamma"]);
    assert_eq!(titles(root, NoteOrder::Updated), ["beta", "gamma", "Alpha"]);
    assert_eq!(titles(root, NoteOrder::Created), ["gamma", "Alpha", "beta"]);
    assert_eq!(
        titles(NoteList::Tagged("T"), NoteOrder::Natural),
        ["beta", "gamma", "Alpha"]
    );
    assert_eq!(
        titles(NoteList::Tagged("t"), NoteOrder::Title),
        ["Alpha", "beta", "gamma"]
    );
    assert_eq!(titles(NoteList::Trash, NoteOrder::Title), Vec::<String>::new());
}
