//! The word-search index beside the file (tantivy): it follows every write, is rebuilt when it cannot be trusted, and
//! finds what FTS5 finds.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use quire_core::{Actor, Error, NewAttachment, NoteUpdate, Page, SearchOptions, Workspace, testing};

fn index_dir(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.search", file.display()))
}

fn all() -> SearchOptions {
    SearchOptions {
        page: Page::first(200),
        include_trashed: false,
    }
}

/// The titles a search finds (sorted: the engines rank alike but not identically), and its total.
fn found(ws: &Workspace, query: &str) -> (Vec<String>, u64) {
    let page = ws.read(&Actor::User, |r| r.search(query, all())).unwrap();
    let mut titles: Vec<String> = page.items.iter().map(|h| h.note.title.clone()).collect();
    titles.sort();
    (titles, page.total)
}

/// The same search answered by FTS5: a search that includes the trash never goes to the index; its trashed hits
/// are left out here.
fn found_by_fts5(ws: &Workspace, query: &str) -> (Vec<String>, u64) {
    let page = ws
        .read(&Actor::User, |r| {
            r.search(
                query,
                SearchOptions {
                    include_trashed: true,
                    ..all()
                },
            )
        })
        .unwrap();
    let mut titles: Vec<String> = page
        .items
        .iter()
        .filter(|h| h.note.deleted.is_none())
        .map(|h| h.note.title.clone())
        .collect();
    titles.sort();
    let total = titles.len() as u64;
    (titles, total)
}

/// Checks a query's titles, and that FTS5 finds the same.
fn check(ws: &Workspace, query: &str, expected: &[&str]) {
    let (titles, total) = found(ws, query);
    assert_eq!(titles, expected, "query {query}");
    assert_eq!(total, expected.len() as u64, "total of {query}");
    assert_eq!(found_by_fts5(ws, query), (titles, total), "FTS5 differs on {query}");
}

#[test]
fn the_index_follows_every_write_and_the_next_search_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.quire");
    let ws = Workspace::open(&file).unwrap();
    let (work, alpha, beta) = ws
        .write(&Actor::User, |w| {
            let work = testing::notebook(w, "Work")?;
            let alpha = testing::note("Alpha", "zebra apple").create(w)?;
            let beta = testing::note("Beta", "zebra crossing, café")
                .notebook(&work)
                .create(w)?;
            Ok::<_, Error>((work, alpha, beta))
        })
        .unwrap();
    let answers = ws.search_index_answers();
    check(&ws, "zebra", &["Alpha", "Beta"]);
    assert_eq!(
        ws.search_index_answers(),
        answers + 1,
        "the index answered the search (FTS5 the check beside it)"
    );
    assert!(
        index_dir(&file).join("meta.json").is_file(),
        "the index lives beside the file"
    );
    check(&ws, "cafe", &["Beta"]);
    check(&ws, "zeb*", &["Alpha", "Beta"]);
    check(&ws, "\"zebra crossing\"", &["Beta"]);
    check(&ws, "zebra cross*", &["Beta"]);
    check(&ws, "zebra -apple", &["Beta"]);
    check(&ws, "any:1 apple crossing", &["Alpha", "Beta"]);
    check(&ws, "title:alpha", &["Alpha"]);

    let write = |f: &dyn Fn(&mut quire_core::Writer<'_>) -> quire_core::Result<()>| ws.write(&Actor::User, f).unwrap();
    write(&|w| {
        w.update_note(
            &alpha,
            NoteUpdate {
                body: Some("a lion".into()),
                ..Default::default()
            },
        )
        .map(drop)
    });
    check(&ws, "zebra", &["Beta"]);
    check(&ws, "lion", &["Alpha"]);
    write(&|w| w.add_tag(&beta, "striped").map(drop));
    check(&ws, "striped", &["Beta"]);
    write(&|w| {
        w.add_attachment(
            &beta,
            NewAttachment {
                title: "manual.pdf".into(),
                mime: "application/pdf".into(),
                data: vec![1],
                text: Some("toner cartridge".into()),
            },
        )
        .map(drop)
    });
    check(&ws, "toner", &["Beta"]);
    write(&|w| w.trash_note(&beta).map(drop));
    check(&ws, "zebra", &[]);
    write(&|w| w.restore_note(&beta).map(drop));
    check(&ws, "zebra", &["Beta"]);

    // Protecting the notebook takes the body, tags and attachment text out of the index; the title stays findable,
    // without a snippet.
    write(&|w| w.set_notebook_protected(&work, true).map(drop));
    check(&ws, "zebra", &[]);
    check(&ws, "striped", &[]);
    check(&ws, "beta", &["Beta"]);
    let page = ws.read(&Actor::User, |r| r.search("beta", all())).unwrap();
    assert_eq!(page.items[0].snippet, "");
    write(&|w| w.set_notebook_protected(&work, false).map(drop));
    check(&ws, "zebra", &["Beta"]);

    write(&|w| w.purge_note(&alpha));
    check(&ws, "lion", &[]);

    // Another process (here: a second handle) cannot write the index while this one holds it: it searches with FTS5,
    // and both see each other's writes.
    let other = Workspace::open(&file).unwrap();
    testing::note("Gamma", "zebra again").create_in(&other).unwrap();
    check(&ws, "zebra", &["Beta", "Gamma"]);
    check(&other, "zebra", &["Beta", "Gamma"]);
    assert_eq!(other.search_index_answers(), 0, "the second handle searched with FTS5");

    // A bulk write (an import) after the index exists: its notes are logged too.
    let answers = ws.search_index_answers();
    ws.write(&Actor::User, |w| {
        w.defer_search_index();
        testing::note("Delta", "zebra imported").create(w)
    })
    .unwrap();
    ws.write(&Actor::User, |w| {
        w.defer_search_index();
        Ok::<_, Error>(())
    })
    .unwrap();
    check(&ws, "zebra", &["Beta", "Delta", "Gamma"]);
    assert_eq!(ws.search_index_answers(), answers + 1);
    let refused = other.rebuild_search_index().unwrap_err().to_string();
    assert!(refused.contains("another quire process"), "{refused}");
}

#[test]
fn an_index_that_cannot_be_trusted_is_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.quire");
    let b = dir.path().join("b.quire");
    for (file, title, body) in [(&a, "In A", "walrus"), (&b, "In B", "narwhal")] {
        let ws = Workspace::open(file).unwrap();
        testing::note(title, body).create_in(&ws).unwrap();
        check(&ws, body, &[title]);
    }

    // A's index beside B: it belongs to another file, so B's search builds its own.
    std::fs::remove_dir_all(index_dir(&b)).unwrap();
    copy_dir(&index_dir(&a), &index_dir(&b));
    let ws = Workspace::open(&b).unwrap();
    check(&ws, "walrus", &[]);
    check(&ws, "narwhal", &["In B"]);
    drop(ws);

    // Damaged, then gone.
    std::fs::write(index_dir(&a).join("meta.json"), b"{ not json").unwrap();
    let ws = Workspace::open(&a).unwrap();
    check(&ws, "walrus", &["In A"]);
    drop(ws);
    std::fs::remove_dir_all(index_dir(&a)).unwrap();
    let ws = Workspace::open(&a).unwrap();
    check(&ws, "walrus", &["In A"]);
    drop(ws);

    // Behind the log's horizon (the log kept only its newest rows): built again from the full-text table, which here
    // was changed behind the log's back to show that the index read it afresh.
    {
        let conn = rusqlite::Connection::open(&a).unwrap();
        conn.execute_batch(
            "UPDATE notes_fts SET body = 'quokka'; \
             UPDATE search_state SET horizon = (SELECT max(id) + 1 FROM search_log); DELETE FROM search_log;",
        )
        .unwrap();
    }
    let ws = Workspace::open(&a).unwrap();
    check(&ws, "quokka", &["In A"]);

    // On request.
    assert_eq!(ws.rebuild_search_index().unwrap(), 1);
    check(&ws, "quokka", &["In A"]);
    drop(ws);

    // A damaged segment file (not only meta.json).
    for entry in std::fs::read_dir(index_dir(&a)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "term" || e == "idx") {
            std::fs::write(&path, b"garbage").unwrap();
        }
    }
    let ws = Workspace::open(&a).unwrap();
    let answers = ws.search_index_answers();
    check(&ws, "quokka", &["In A"]);
    assert_eq!(ws.search_index_answers(), answers + 1, "rebuilt and answering");
    assert_eq!(ws.rebuild_search_index().unwrap(), 1);
}

#[test]
fn a_file_put_back_from_an_older_copy_is_not_searched_with_the_newer_index() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.quire");
    let backup = dir.path().join("backup.quire");
    let ws = Workspace::open(&file).unwrap();
    let secret = ws
        .write(&Actor::User, |w| {
            let vault = testing::notebook(w, "Vault")?;
            testing::note("Codes", "the combination is albatross")
                .notebook(&vault)
                .create(w)?;
            w.set_notebook_protected(&vault, true)?;
            Ok::<_, Error>(vault)
        })
        .unwrap();
    check(&ws, "albatross", &[]);
    drop(ws);
    std::fs::copy(&file, &backup).unwrap();

    // Unprotected and searched: the index takes in the body.
    let ws = Workspace::open(&file).unwrap();
    ws.write(&Actor::User, |w| w.set_notebook_protected(&secret, false).map(drop))
        .unwrap();
    check(&ws, "albatross", &["Codes"]);
    drop(ws);

    // The older copy put back: the notebook is protected again, and the index, ahead of the file, is not trusted.
    std::fs::copy(&backup, &file).unwrap();
    let ws = Workspace::open(&file).unwrap();
    check(&ws, "albatross", &[]);
    testing::note("Later", "albatross sighted").create_in(&ws).unwrap();
    check(&ws, "albatross", &["Later"]);
    assert!(ws.search_index_answers() > 0);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

const WORDS: &[&str] = &[
    "apple", "apricot", "banana", "café", "cafe", "dune", "échelle", "fig", "figment",
];

#[derive(Debug, Clone)]
enum Op {
    Create(Vec<usize>),
    Update(usize, Vec<usize>),
    Trash(usize),
    Restore(usize),
    Tag(usize, usize),
    Protect(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let words = prop::collection::vec(0..WORDS.len(), 0..6);
    prop_oneof![
        3 => words.clone().prop_map(Op::Create),
        2 => (0..12usize, words).prop_map(|(n, w)| Op::Update(n, w)),
        1 => (0..12usize).prop_map(Op::Trash),
        1 => (0..12usize).prop_map(Op::Restore),
        1 => (0..12usize, 0..WORDS.len()).prop_map(|(n, w)| Op::Tag(n, w)),
        1 => (0..12usize).prop_map(Op::Protect),
    ]
}

fn text_query() -> impl Strategy<Value = String> {
    let word = (0..WORDS.len(), 0..4usize, any::<bool>()).prop_map(|(w, shape, negated)| {
        let word = WORDS[w];
        let text = match shape {
            0 => format!("{}*", &word[..word.char_indices().nth(2).map_or(word.len(), |c| c.0)]),
            1 => format!("\"{word} {}\"", WORDS[(w + 1) % WORDS.len()]),
            2 => format!("title:{word}"),
            _ => word.to_owned(),
        };
        if negated { format!("-{text}") } else { text }
    });
    (prop::collection::vec(word, 1..4), any::<bool>()).prop_map(|(words, any)| {
        let query = words.join(" ");
        if any { format!("any:1 {query}") } else { query }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// After any writes, the index finds the same notes as FTS5 for any query of words, prefixes and phrases.
    #[test]
    fn the_index_finds_what_fts5_finds(ops in prop::collection::vec(op(), 1..24), queries in prop::collection::vec(text_query(), 4)) {
        let ws = Workspace::open_in_memory().unwrap();
        let mut notes: Vec<String> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let text = |w: &[usize]| w.iter().map(|i| WORDS[*i]).collect::<Vec<_>>().join(" ");
            let known = notes.clone();
            let pick = |n: usize| known.get(n % known.len().max(1)).cloned();
            // Failures (a note already in the trash, ...) are fine: the point is what the index holds afterwards.
            let _ = ws.write(&Actor::User, |w| -> quire_core::Result<()> {
                match op {
                    Op::Create(words) => {
                        let title = format!("n{i} {}", text(&words[..words.len().min(1)]));
                        notes.push(testing::note(title, text(words)).create(w)?);
                    }
                    Op::Update(n, words) => if let Some(id) = pick(*n) {
                        w.update_note(&id, NoteUpdate { body: Some(text(words)), ..Default::default() })?;
                    },
                    Op::Trash(n) => if let Some(id) = pick(*n) { w.trash_note(&id)?; },
                    Op::Restore(n) => if let Some(id) = pick(*n) { w.restore_note(&id)?; },
                    Op::Tag(n, t) => if let Some(id) = pick(*n) { w.add_tag(&id, WORDS[*t])?; },
                    Op::Protect(n) => if let Some(id) = pick(*n) { w.set_note_protected(&id, true)?; },
                }
                Ok(())
            });
            // Search between writes too, so that the index catches up in steps.
            if i % 5 == 0 {
                let _ = found(&ws, "apple");
            }
        }
        for query in &queries {
            let plain = ws.read(&Actor::User, |r| r.search(query, all()));
            match plain {
                Ok(_) => prop_assert_eq!(found(&ws, query), found_by_fts5(&ws, query), "query {}", query),
                Err(e) => prop_assert!(matches!(e, Error::Query(_)), "query {} gave {}", query, e),
            }
        }
    }
}

#[test]
fn a_large_index_is_built_in_the_background_while_fts5_answers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("large.quire");
    let ws = Workspace::open(&file).unwrap();
    ws.write(&Actor::User, |w| {
        w.defer_search_index();
        for i in 0..40 {
            testing::note(format!("Note {i}"), format!("pelican {i}")).create(w)?;
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    // "Large" here is above 10 notes: the first search starts the build and is answered by FTS5, with every note.
    ws.set_search_index_background_above(10);
    assert_eq!(found(&ws, "pelican").1, 40);
    let started = std::time::Instant::now();
    while ws.search_index_building() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the build never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(index_dir(&file).join("meta.json").is_file());
    let answers = ws.search_index_answers();
    let mut titles: Vec<String> = (0..40).map(|i| format!("Note {i}")).collect();
    titles.sort();
    check(&ws, "pelican", &titles.iter().map(String::as_str).collect::<Vec<_>>());
    // Catching up after a write is never left to the background.
    testing::note("Another", "pelican").create_in(&ws).unwrap();
    assert!(!ws.search_index_building());
    assert_eq!(found(&ws, "pelican").1, 41);
    assert!(!ws.search_index_building());
    assert_eq!(ws.search_index_answers(), answers + 2, "the built index answered");

    // A short-lived process does not start a build it could not finish: FTS5 answers there.
    drop(ws);
    std::fs::remove_dir_all(index_dir(&file)).unwrap();
    let ws = Workspace::open(&file).unwrap();
    ws.set_search_index_background_above(10);
    ws.set_search_index_builds_in_background(false);
    assert_eq!(found(&ws, "pelican").1, 41);
    assert!(!ws.search_index_building());
    assert_eq!(ws.search_index_answers(), 0);
}

/// Pages of equally relevant notes follow one order, the newest first: the second page goes on where the first
/// stopped, whichever engine answers (found in use: 60 notes with the same words came back 50..1, then 60..51; and
/// the word index's own order of equal hits changes as its segments merge).
#[test]
fn pages_of_equal_hits_go_on_where_the_last_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("notes.quire")).unwrap();
    for batch in 0..3 {
        // Written in three transactions, as a person adds notes over time.
        ws.write(&Actor::User, |w| {
            for i in 0..20 {
                testing::note(format!("Bulk note {}", batch * 20 + i + 1), "alpha").create(w)?;
            }
            Ok::<_, Error>(())
        })
        .unwrap();
        // Each search catches the index up, so the notes arrive in it batch by batch.
        found(&ws, "alpha");
    }
    let page = |offset: u64, limit: u64, include_trashed: bool| {
        ws.read(&Actor::User, |r| {
            r.search(
                "alpha",
                SearchOptions {
                    page: Page { offset, limit },
                    include_trashed,
                },
            )
        })
        .unwrap()
    };
    for fts5 in [false, true] {
        let whole: Vec<String> = page(0, 60, fts5).items.into_iter().map(|h| h.note.title).collect();
        let first = page(0, 50, fts5);
        let second = page(50, 50, fts5);
        assert_eq!((first.total, first.has_more, second.has_more), (60, true, false));
        let paged: Vec<String> = first
            .items
            .into_iter()
            .chain(second.items)
            .map(|h| h.note.title)
            .collect();
        assert_eq!(paged, whole, "FTS5: {fts5}");
        // Equally relevant, the newest note comes first, by either engine, whatever the index's segments.
        let newest_first: Vec<String> = (1..=60).rev().map(|i| format!("Bulk note {i}")).collect();
        assert_eq!(whole, newest_first, "FTS5: {fts5}");
    }
    assert!(ws.search_index_answers() > 0, "the word index answered");
}
