//! The search query language, ranking, snippets and paging, on a small corpus.

use quire_core::{Actor, Error, NewAttachment, NoteUpdate, Page, SearchOptions, Timestamp, Workspace, testing};

const DAY: i64 = 86_400_000;

struct Corpus {
    ws: Workspace,
}

impl Corpus {
    fn new() -> Corpus {
        let ws = Workspace::open_in_memory().unwrap();
        let now = Timestamp::now().as_millis();
        ws.write(&Actor::User, |w| {
            let work = testing::notebook(w, "Work")?;
            let meetings = testing::notebook(w, "Work/Meetings")?;
            let home = testing::notebook(w, "Home")?;
            let note = |title: &str, body: &str, notebook: &str, age_days: i64| {
                let at = Timestamp(now - age_days * DAY);
                testing::note(title, body).notebook(notebook).dated(at, at)
            };
            note(
                "Budget review",
                "Quarterly budget numbers for the café project.",
                &work,
                40,
            )
            .tags(["finance"])
            .create(w)?;
            note(
                "Standup",
                "Discussed the budget briefly. Programming tasks assigned.",
                &meetings,
                2,
            )
            .tags(["daily"])
            .create(w)?;
            note(
                "Retro",
                "What went well: shipping. What went badly: the budget.",
                &meetings,
                10,
            )
            .tags(["daily", "team"])
            .create(w)?;
            note("Groceries", "milk, eggs, coffee", &home, 1)
                .tags(["shopping"])
                .todo()
                .create(w)?;
            let done = note("Fix the sink", "call the plumber", &home, 400).todo().create(w)?;
            w.update_note(
                &done,
                NoteUpdate {
                    todo_completed: Some(Some(Timestamp(now))),
                    ..Default::default()
                },
            )?;
            let gone = note("Old budget", "the budget from last year", &home, 5).create(w)?;
            w.trash_note(&gone)?;
            let manual = note("Printer manual", "see attachment", &home, 3).create(w)?;
            w.add_attachment(
                &manual,
                NewAttachment {
                    title: "manual.pdf".into(),
                    mime: "application/pdf".into(),
                    data: vec![1, 2],
                    text: Some("toner cartridge replacement".into()),
                },
            )?;
            Ok::<_, Error>(())
        })
        .unwrap();
        Corpus { ws }
    }

    fn titles(&self, query: &str) -> String {
        match self.ws.read(&Actor::User, |r| {
            r.search(
                query,
                SearchOptions {
                    page: Page::first(50),
                    include_trashed: false,
                },
            )
        }) {
            Ok(page) => page
                .items
                .iter()
                .map(|h| h.note.title.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            Err(e) => format!("error: {e}"),
        }
    }
}

fn check(corpus: &Corpus, query: &str, expected: &str) {
    let actual = corpus.titles(query);
    if actual != expected {
        eprintln!("MISMATCH check(&c, {query:?}, {actual:?});");
    }
    assert_eq!(actual, expected, "query: {query}");
}

#[test]
fn query_language() {
    let c = Corpus::new();
    // Words are ANDed; the title weighs most; trashed notes are left out.
    check(&c, "budget", "Budget review, Standup, Retro");
    check(&c, "budget shipping", "Retro");
    check(&c, "\"went badly\"", "Retro");
    check(&c, "\"badly went\"", "");
    check(&c, "progr*", "Standup");
    check(&c, "cafe", "Budget review");
    check(&c, "budget -shipping", "Budget review, Standup");
    check(&c, "-budget", "Fix the sink, Groceries, Printer manual");
    check(&c, "title:budget", "Budget review");
    check(&c, "body:budget -title:budget", "Standup, Retro");
    check(&c, "tag:daily", "Standup, Retro");
    check(&c, "tag:DAI*", "Standup, Retro");
    check(&c, "budget -tag:team", "Budget review, Standup");
    check(&c, "notebook:work", "Standup, Retro, Budget review");
    check(&c, "notebook:meetings budget", "Standup, Retro");
    check(&c, "-notebook:work", "Fix the sink, Groceries, Printer manual");
    // A notebook by its path, as the CLI writes it; and a path prefix.
    check(&c, "notebook:Work/Meetings", "Standup, Retro");
    check(&c, "notebook:\"work/meetings\" budget", "Standup, Retro");
    check(&c, "notebook:Home/Meetings", "");
    // Symbols and emoji are not indexed: they do not empty a query of words.
    check(&c, "budget 🎉", "Budget review, Standup, Retro");
    check(&c, "budget -🎉", "Budget review, Standup, Retro");
    check(&c, "created:day-7", "Groceries, Standup, Printer manual");
    check(&c, "-created:day-7", "Fix the sink, Retro, Budget review");
    check(&c, "updated:year-5 -updated:day-30", "Budget review");
    check(&c, "type:todo", "Fix the sink, Groceries");
    check(&c, "type:note budget", "Budget review, Standup, Retro");
    check(&c, "iscompleted:1", "Fix the sink");
    check(&c, "iscompleted:0", "Groceries");
    // Equal scores: the note updated last first ("Fix the sink" was completed a moment ago).
    check(&c, "any:1 milk plumber", "Fix the sink, Groceries");
    check(&c, "any:1 shipping tag:shopping", "Retro, Groceries");
    check(&c, "toner", "Printer manual");
    check(&c, "finance", "Budget review");
}

#[test]
fn hostile_input_gives_results_or_a_clear_error() {
    let c = Corpus::new();
    for query in [
        "\"unbalanced",
        "NEAR(",
        "*",
        "AND OR NOT",
        "col:x",
        "^",
        "a\0b",
        "{body}: x",
        "((((",
        "\"\"",
        "'",
        "--x",
        "title:",
        "budget\"",
        "title:\"",
        "-",
        "***",
        ")",
        "tag:%",
        "tag:_",
        "notebook:\\",
        "💥 budget",
        "\u{202e}x",
        "x:y:z",
        "OR",
        "NOT budget",
        "budget AND",
        "NEAR(budget retro, 2)",
    ] {
        let result = c.ws.read(&Actor::User, |r| r.search(query, Default::default()));
        if let Err(e) = result {
            assert!(matches!(e, Error::Query(_)), "{query:?} gave a non-query error: {e}");
        }
    }
    for query in ["🎉", "-", "title:🎉", "!!! ???"] {
        let error =
            c.ws.read(&Actor::User, |r| r.search(query, Default::default()))
                .unwrap_err()
                .to_string();
        assert!(
            error.starts_with("The search query has no words to look for"),
            "{query}: {error}"
        );
    }
    check(&c, "tag:%", "");
    check(&c, "tag:_aily", "");
    check(&c, "budget\"", "Budget review, Standup, Retro");
}

#[test]
fn snippets_scores_and_paging() {
    let c = Corpus::new();
    let page =
        c.ws.read(&Actor::User, |r| {
            r.search(
                "budget",
                SearchOptions {
                    page: Page { offset: 1, limit: 1 },
                    include_trashed: false,
                },
            )
        })
        .unwrap();
    assert_eq!(
        (page.total, page.offset, page.has_more, page.items.len()),
        (3, 1, true, 1)
    );
    // Pages walk the same order as one big page, and a page past the end is empty but keeps the total.
    let pages: Vec<String> = (0..4)
        .flat_map(|offset| {
            let options = SearchOptions {
                page: Page { offset, limit: 1 },
                include_trashed: false,
            };
            c.ws.read(&Actor::User, |r| r.search("budget", options)).unwrap().items
        })
        .map(|h| h.note.id)
        .collect();
    let whole: Vec<String> =
        c.ws.read(&Actor::User, |r| r.search("budget", Default::default()))
            .unwrap()
            .items
            .into_iter()
            .map(|h| h.note.id)
            .collect();
    assert_eq!(pages, whole);
    let past = c.ws.read(&Actor::User, |r| {
        r.search(
            "budget",
            SearchOptions {
                page: Page { offset: 10, limit: 5 },
                include_trashed: false,
            },
        )
    });
    let past = past.unwrap();
    assert_eq!((past.total, past.items.len()), (3, 0));
    let first =
        c.ws.read(&Actor::User, |r| r.search("budget", Default::default()))
            .unwrap();
    assert!(!first.has_more);
    assert!(
        first.items.windows(2).all(|w| w[0].score >= w[1].score),
        "sorted by score"
    );
    assert!(first.items[0].snippet.to_lowercase().contains("<mark>budget</mark>"));
    let trashed =
        c.ws.read(&Actor::User, |r| {
            r.search(
                "budget",
                SearchOptions {
                    page: Page::first(10),
                    include_trashed: true,
                },
            )
        })
        .unwrap();
    assert_eq!(trashed.total, 4);
    let filter_only =
        c.ws.read(&Actor::User, |r| r.search("tag:shopping", Default::default()))
            .unwrap();
    assert_eq!(filter_only.items[0].snippet, "milk, eggs, coffee");
}

#[test]
fn search_page_contract() {
    let c = Corpus::new();
    let page =
        c.ws.read(&Actor::User, |r| r.search("budget tag:daily", SearchOptions::default()))
            .unwrap();
    insta::assert_json_snapshot!("search_budget_daily", page, {
        ".items[].note.id" => "[id]",
        ".items[].note.notebook_id" => "[id]",
        ".items[].note.created" => "[time]",
        ".items[].note.updated" => "[time]",
        ".items[].score" => insta::rounded_redaction(3),
    });
}

/// The same writes, with the full-text entries written at once before the commit (as an import does) or one at a
/// time: the same hits, a protected note (and a note in a protected notebook) found by its title only.
#[test]
fn deferred_search_entries_match_the_ones_written_at_each_write() {
    let hits = |defer: bool| {
        let ws = Workspace::open_in_memory().unwrap();
        ws.write(&Actor::User, |w| {
            if defer {
                w.defer_search_index();
            }
            let vault = testing::notebook(w, "Vault")?;
            testing::note("Open plan", "heron feathers").tags(["plans"]).create(w)?;
            testing::note("Secret plan", "heron nest").protected().create(w)?;
            testing::note("Vault plan", "heron eggs").notebook(&vault).create(w)?;
            w.set_notebook_protected(&vault, true)?;
            let later = testing::note("Later", "no bird").create(w)?;
            w.update_note(
                &later,
                NoteUpdate {
                    body: Some("a heron after all".into()),
                    ..Default::default()
                },
            )?;
            w.add_attachment(
                &later,
                NewAttachment {
                    title: "scan.txt".into(),
                    mime: "text/plain".into(),
                    data: b"x".to_vec(),
                    text: Some("egret".into()),
                },
            )?;
            Ok::<_, Error>(())
        })
        .unwrap();
        let titles = |query: &str| {
            let mut t: Vec<String> = ws
                .read(&Actor::User, |r| r.search(query, SearchOptions::default()))
                .unwrap()
                .items
                .into_iter()
                .map(|h| h.note.title)
                .collect();
            t.sort();
            t
        };
        (titles("heron"), titles("plan"), titles("plans"), titles("egret"))
    };
    let deferred = hits(true);
    assert_eq!(deferred, hits(false));
    assert_eq!(deferred.0, ["Later", "Open plan"], "protected bodies are not searched");
    assert_eq!(
        deferred.1,
        ["Open plan", "Secret plan", "Vault plan"],
        "their titles are"
    );
    assert_eq!(deferred.3, ["Later"], "attachment text");
}

/// The deferred entries are written several statements at a time, split by their number and by their text (an
/// import's memory follows its largest note, issue 51): every note is found, whichever statement wrote it.
#[test]
fn deferred_search_entries_split_by_count_and_by_text_are_all_written() {
    let ws = Workspace::open_in_memory().unwrap();
    let filler = "lorem ipsum dolor ".repeat(40_000);
    ws.write(&Actor::User, |w| {
        w.defer_search_index();
        for i in 0..2_100 {
            testing::note(format!("small {i}"), format!("tinyword{i}")).create(w)?;
        }
        for i in 0..5 {
            testing::note(format!("large {i}"), format!("{filler} largeword{i}")).create(w)?;
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    let found = |query: &str| {
        ws.read(&Actor::User, |r| r.search(query, SearchOptions::default()))
            .unwrap()
            .items
            .into_iter()
            .map(|hit| hit.note.title)
            .collect::<Vec<_>>()
    };
    for i in [0, 1_999, 2_000, 2_099] {
        assert_eq!(found(&format!("tinyword{i}")), [format!("small {i}")]);
    }
    for i in 0..5 {
        assert_eq!(found(&format!("largeword{i}")), [format!("large {i}")]);
    }
}
