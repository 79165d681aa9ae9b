//! The semantic index: following the change log, the fallback embedder, filters, hybrid fusion, and never
//! returning notes that were deleted, trashed or protected since they were indexed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use quire_core::{Actor, Embedder, Error, NoteUpdate, Relevance, SemanticQuery, SemanticTarget, Workspace, testing};

fn query(text: &str) -> SemanticQuery {
    SemanticQuery {
        target: SemanticTarget::Text(text.into()),
        notebook_id: None,
        tag: None,
        relevance: Relevance::Loose,
        hybrid: false,
        limit: 10,
    }
}

fn titles(ws: &Workspace, q: &SemanticQuery) -> Vec<String> {
    ws.read(&Actor::User, |r| r.semantic_search(q))
        .unwrap()
        .items
        .into_iter()
        .map(|h| h.note.title)
        .collect()
}

fn corpus() -> (Workspace, Vec<String>, String) {
    let ws = Workspace::open_in_memory().unwrap();
    let (ids, trips) = ws
        .write(&Actor::User, |w| {
            let trips = testing::notebook(w, "Trips")?;
            let mut ids = Vec::new();
            for (title, body, notebook, tags) in [
                (
                    "Packing list",
                    "Tent, sleeping bag, hiking boots and a rain jacket for the mountains.",
                    Some(&trips),
                    vec!["travel"],
                ),
                (
                    "Sourdough",
                    "Feed the starter, knead the dough, bake the bread at high heat.",
                    None,
                    vec![],
                ),
                (
                    "Lake trip",
                    "Rent a canoe, bring the tent and the sleeping bag.",
                    Some(&trips),
                    vec![],
                ),
                ("Taxes", "Quarterly payments are due in April.", None, vec!["money"]),
            ] {
                let mut note = testing::note(title, body).tags(tags);
                if let Some(notebook) = notebook {
                    note = note.notebook(notebook);
                }
                ids.push(note.create(w)?);
            }
            Ok::<_, Error>((ids, trips))
        })
        .unwrap();
    (ws, ids, trips)
}

#[test]
fn the_index_follows_the_change_log() {
    let (ws, ids, _) = corpus();
    assert_eq!(ws.index_status().unwrap().pending_changes, 4);
    assert_eq!(ws.index_pending(1000).unwrap(), 4);
    let status = ws.index_status().unwrap();
    assert_eq!(
        (status.indexed_notes, status.pending_changes, status.embedder.as_str()),
        (4, 0, "hashed-ngrams-v1")
    );
    assert!(
        status.description.contains("embed_url"),
        "the fallback says how to get a better embedder"
    );
    assert_eq!(
        titles(&ws, &query("sleeping bag tent"))[..2],
        ["Lake trip", "Packing list"]
    );

    // Only what changed is embedded again.
    ws.write(&Actor::User, |w| {
        w.update_note(
            &ids[1],
            NoteUpdate {
                body: Some("Canoe paddles and a tent.".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    assert_eq!(ws.index_status().unwrap().pending_changes, 1);
    assert_eq!(ws.index_pending(1000).unwrap(), 1);
    assert!(titles(&ws, &query("canoe paddles")).contains(&"Sourdough".to_owned()));
    assert_eq!(ws.index_pending(1000).unwrap(), 0, "nothing left");
}

#[test]
fn trashed_deleted_and_protected_notes_are_never_returned() {
    let (ws, ids, _) = corpus();
    ws.index_pending(1000).unwrap();
    ws.write(&Actor::User, |w| {
        w.trash_note(&ids[0])?;
        w.set_note_protected(&ids[2], true)?;
        Ok::<_, Error>(())
    })
    .unwrap();
    // Before the index catches up, the stale chunks are filtered out against the notes as they are now.
    let found = titles(&ws, &query("tent sleeping bag"));
    assert!(
        !found.contains(&"Packing list".to_owned()) && !found.contains(&"Lake trip".to_owned()),
        "{found:?}"
    );
    ws.write(&Actor::User, |w| w.purge_note(&ids[3])).unwrap();
    assert!(!titles(&ws, &query("quarterly payments")).contains(&"Taxes".to_owned()));
    ws.index_pending(1000).unwrap();
    assert_eq!(
        ws.index_status().unwrap().indexed_notes,
        1,
        "only the sourdough note is left in the index"
    );
}

#[test]
fn filters_likeness_hybrid_and_errors() {
    let (ws, ids, trips) = corpus();
    ws.index_pending(1000).unwrap();
    let in_trips = SemanticQuery {
        notebook_id: Some(trips),
        ..query("tent")
    };
    assert!(
        titles(&ws, &in_trips)
            .iter()
            .all(|t| t == "Packing list" || t == "Lake trip")
    );
    let tagged = SemanticQuery {
        tag: Some("TRAVEL".into()),
        ..query("tent")
    };
    assert_eq!(titles(&ws, &tagged), ["Packing list"]);
    let like = SemanticQuery {
        target: SemanticTarget::LikeNote(ids[0].clone()),
        ..query("")
    };
    assert_eq!(
        titles(&ws, &like)[0],
        "Lake trip",
        "the closest other note, never the note itself"
    );
    let hybrid = SemanticQuery {
        hybrid: true,
        relevance: Relevance::Strict,
        ..query("april")
    };
    assert_eq!(titles(&ws, &hybrid), ["Taxes"], "full-text hits join the fused ranking");
    let err = ws.read(&Actor::User, |r| r.semantic_search(&query("  "))).unwrap_err();
    assert_eq!(err.to_string(), "The query is empty; say what to look for.");
    // A non-user actor never gets protected notes, and cannot use one as a "like" target.
    ws.write(&Actor::User, |w| w.set_note_protected(&ids[0], true)).unwrap();
    let agent = Actor::Mcp { client: "c".into() };
    let err = ws.read(&agent, |r| r.semantic_search(&like)).unwrap_err();
    assert_eq!(err.to_string(), "Note is protected; its content cannot be read");
}

/// An embedder that counts its calls, to see that a new embedder re-indexes on its own.
struct Counting(AtomicUsize);

impl Embedder for Counting {
    fn id(&self) -> String {
        "counting-v1".into()
    }
    fn dimensions(&self) -> usize {
        3
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, quire_core::EmbedError> {
        self.0.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0, 0.0]).collect())
    }
}

#[test]
fn another_embedder_keeps_its_own_vectors() {
    let (ws, _, _) = corpus();
    ws.index_pending(1000).unwrap();
    let counting = Arc::new(Counting(AtomicUsize::new(0)));
    let other = ws.clone().with_embedder(counting.clone());
    assert_eq!(
        other.index_status().unwrap().pending_changes,
        4,
        "a new embedder starts from scratch"
    );
    other.index_pending(1000).unwrap();
    assert!(counting.0.load(Ordering::SeqCst) >= 4);
    assert_eq!(ws.index_status().unwrap().chunks, other.index_status().unwrap().chunks);
    other.reset_index().unwrap();
    assert_eq!(other.index_status().unwrap().chunks, 0);
    assert_eq!(
        ws.index_status().unwrap().indexed_notes,
        4,
        "the other embedder's vectors stay"
    );
}

#[test]
fn an_embedder_set_while_in_use_reaches_every_handle() {
    let (ws, _, _) = corpus();
    let failing = ws
        .clone()
        .with_embedder_loader(|| Err("the model is not installed".into()));
    let other_handle = failing.clone();
    assert!(failing.index_status().is_err(), "the failed load is kept");
    let counting = Arc::new(Counting(AtomicUsize::new(0)));
    let model = counting.clone();
    failing.set_embedder_loader(move || Ok(model as Arc<dyn Embedder>));
    let status = other_handle.index_status().unwrap();
    assert_eq!((status.embedder.as_str(), status.pending_changes), ("counting-v1", 4));
    other_handle.index_pending(1000).unwrap();
    assert!(
        counting.0.load(Ordering::SeqCst) >= 4,
        "the new embedder embeds every note"
    );
    assert_eq!(
        ws.index_status().unwrap().embedder,
        "hashed-ngrams-v1",
        "a handle with its own slot keeps it"
    );
}

#[test]
fn catching_up_in_small_steps_makes_progress() {
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        for i in 0..100 {
            testing::note(format!("Note {i}"), format!("body number {i}")).create(w)?;
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    let mut rounds = 0;
    let mut total = 0;
    loop {
        let done = ws.index_pending(10).unwrap();
        if done == 0 {
            break;
        }
        total += done;
        rounds += 1;
        assert!(rounds < 20, "each call must move forward");
    }
    assert_eq!(total, 100, "every note embedded exactly once");
    assert_eq!(ws.index_status().unwrap().indexed_notes, 100);
    // A change to an early note after a partial catch-up is not lost.
    let first = ws
        .read(&Actor::User, |r| r.search("title:\"note 0\"", Default::default()))
        .unwrap()
        .items[0]
        .note
        .id
        .clone();
    ws.write(&Actor::User, |w| {
        w.update_note(
            &first,
            NoteUpdate {
                body: Some("canoe".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    assert_eq!(ws.index_pending(10).unwrap(), 1);
    assert!(titles(&ws, &query("canoe")).contains(&"Note 0".to_owned()));
}

/// Each workspace handle keeps an in-memory copy of the vectors. A second handle on the same file stands for
/// another process: what it indexes, re-indexes, drops or rebuilds must show in the first handle's searches, and the
/// first handle's copy must never answer with a vector that the file no longer holds.
#[test]
fn the_in_memory_copy_follows_writes_from_another_handle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.quire");
    let searcher = Workspace::open(&path).unwrap();
    let other = Workspace::open(&path).unwrap();
    let strict = |text: &str| SemanticQuery {
        relevance: Relevance::Strict,
        ..query(text)
    };
    let (bread, canoe) = other
        .write(&Actor::User, |w| {
            let bread = testing::note("Sourdough", "Feed the starter, knead the dough, bake the bread.").create(w)?;
            let canoe = testing::note("Lake", "Rent a canoe and paddle across the lake.").create(w)?;
            for i in 0..40 {
                testing::note(format!("Filler {i}"), format!("Unrelated words number {i} here.")).create(w)?;
            }
            Ok::<_, Error>((bread, canoe))
        })
        .unwrap();
    assert!(
        titles(&searcher, &strict("knead the sourdough bread")).is_empty(),
        "nothing indexed yet"
    );
    other.index_pending(1000).unwrap();
    assert_eq!(titles(&searcher, &strict("knead the sourdough bread")), ["Sourdough"]);

    // The other handle rewrites a note: the old vector must not match any more, the new one must.
    other
        .write(&Actor::User, |w| {
            w.update_note(
                &bread,
                NoteUpdate {
                    title: Some("Zebras".into()),
                    body: Some("Stripes on the savanna, grazing herds of zebras.".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    other.index_pending(1000).unwrap();
    assert!(titles(&searcher, &strict("knead the sourdough bread")).is_empty());
    assert_eq!(titles(&searcher, &strict("zebras grazing on the savanna")), ["Zebras"]);
    let hit = searcher
        .read(&Actor::User, |r| {
            r.semantic_search(&strict("zebras grazing on the savanna"))
        })
        .unwrap();
    assert!(hit.items[0].snippet.contains("Stripes"), "{:?}", hit.items[0].snippet);

    // A rebuild from the other handle empties the index, then fills it again with new chunk ids.
    other.reset_index().unwrap();
    assert!(titles(&searcher, &strict("paddle a canoe across the lake")).is_empty());
    other.index_pending(1000).unwrap();
    assert_eq!(titles(&searcher, &strict("paddle a canoe across the lake")), ["Lake"]);

    // Purging a note drops its chunks at the next catch-up, and the copy forgets them.
    other.write(&Actor::User, |w| w.purge_note(&canoe)).unwrap();
    other.index_pending(1000).unwrap();
    assert!(!titles(&searcher, &query("paddle a canoe across the lake")).contains(&"Lake".to_owned()));
    assert_eq!(searcher.index_status().unwrap().indexed_notes, 41);
    // Scores shown are the exact cosine of the stored vectors, whatever the scan used.
    let hits = searcher
        .read(&Actor::User, |r| r.semantic_search(&query("unrelated words number 7")))
        .unwrap();
    assert_eq!(hits.items[0].note.title, "Filler 7");
    assert!(hits.items.windows(2).all(|w| w[0].score >= w[1].score));

    // Rewriting most notes makes the copy compact itself; old texts are gone and new ones found.
    let fillers: Vec<String> = other
        .read(&Actor::User, |r| r.all_notes(quire_core::Page::first(100)))
        .unwrap()
        .items
        .into_iter()
        .filter(|n| n.title.starts_with("Filler"))
        .map(|n| n.id)
        .collect();
    other
        .write(&Actor::User, |w| {
            for (i, id) in fillers.iter().enumerate().take(30) {
                w.update_note(
                    id,
                    NoteUpdate {
                        title: Some(format!("Rewritten {i}")),
                        body: Some(format!("Quantum harmonica festival in orbit {i}.")),
                        ..Default::default()
                    },
                )?;
            }
            Ok::<_, Error>(())
        })
        .unwrap();
    other.index_pending(1000).unwrap();
    let found = titles(&searcher, &strict("quantum harmonica festival in orbit 12"));
    assert_eq!(found.first().map(String::as_str), Some("Rewritten 12"), "{found:?}");
    assert!(
        !titles(&searcher, &query("unrelated words number 12"))
            .iter()
            .any(|t| t.starts_with("Rewritten"))
    );
    assert_eq!(
        searcher.index_status().unwrap().chunks,
        other.index_status().unwrap().chunks
    );
}

#[test]
fn totals_count_every_visible_candidate_across_check_blocks() {
    // More candidates than one statement checks (500), with hidden notes of every kind spread among them.
    let ws = Workspace::open_in_memory().unwrap();
    let n: usize = 1_300;
    let (ids, trips, vault) = ws
        .write(&Actor::User, |w| {
            let trips = testing::notebook(w, "Trips")?;
            let vault = testing::notebook(w, "Vault")?;
            let mut ids = Vec::new();
            for i in 0..n {
                let mut note = testing::note(format!("Camp {i}"), format!("tent sleeping bag canoe lake {i}"));
                if i.is_multiple_of(5) {
                    note = note.notebook(&vault);
                } else if i.is_multiple_of(3) {
                    note = note.notebook(&trips);
                }
                if i.is_multiple_of(2) {
                    note = note.tags(["even"]);
                }
                ids.push(note.create(w)?);
            }
            Ok::<_, Error>((ids, trips, vault))
        })
        .unwrap();
    ws.index_pending(10_000).unwrap();
    ws.write(&Actor::User, |w| {
        for (i, id) in ids.iter().enumerate() {
            if i.is_multiple_of(7) {
                w.trash_note(id)?;
            } else if i.is_multiple_of(13) {
                w.set_note_protected(id, true)?;
            }
        }
        w.set_notebook_protected(&vault, true)?;
        Ok::<_, Error>(())
    })
    .unwrap();
    let visible = |i: usize| !i.is_multiple_of(7) && !i.is_multiple_of(13) && !i.is_multiple_of(5);
    let expect = |keep: &dyn Fn(usize) -> bool| (0..n).filter(|&i| visible(i) && keep(i)).count() as u64;
    let search = |notebook_id: Option<String>, tag: Option<&str>| {
        let q = SemanticQuery {
            notebook_id,
            tag: tag.map(String::from),
            ..query("tent sleeping bag canoe lake")
        };
        ws.read(&Actor::User, |r| r.semantic_search(&q)).unwrap()
    };
    let all = search(None, None);
    assert_eq!(all.total, expect(&|_| true));
    assert_eq!(all.items.len(), 10);
    assert!(
        all.items
            .iter()
            .all(|h| !h.note.is_protected && h.note.deleted.is_none())
    );
    assert_eq!(search(Some(trips), None).total, expect(&|i| i.is_multiple_of(3)));
    assert_eq!(search(None, Some("even")).total, expect(&|i| i.is_multiple_of(2)));
}

#[test]
fn a_search_catches_up_only_a_small_backlog() {
    let (ws, _, _) = corpus();
    // Four notes wait: more than three, so nothing is embedded; at most five, so all are.
    assert_eq!(ws.index_pending_if_few(3).unwrap(), 0);
    assert_eq!(ws.index_status().unwrap().pending_changes, 4);
    assert_eq!(ws.index_pending_if_few(5).unwrap(), 4);
    assert_eq!(ws.index_status().unwrap().pending_changes, 0);
    assert!(titles(&ws, &query("tent sleeping bag")).contains(&"Packing list".to_owned()));
}

/// A note titled exactly as the query comes first (ux finding 30): the built-in embedder compares letter groups and
/// ranked "Launch plan" fourth for "launch plan" among notes that use the words more.
#[test]
fn a_note_titled_as_the_query_comes_first() {
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        for (title, body) in [
            (
                "Rocket launch planning",
                "The launch plan for the launch: plan the launch window, plan fuel.",
            ),
            ("Launch plan", "Dates and owners."),
            (
                "Planning the product launch",
                "We plan to launch; the plan needs a launch date.",
            ),
            ("Meal plan", "Plan meals for the week."),
        ] {
            testing::note(title, body).create(w)?;
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    ws.index_pending(1000).unwrap();
    for text in ["launch plan", "  Launch Plan "] {
        assert_eq!(
            titles(&ws, &query(text)).first().map(String::as_str),
            Some("Launch plan"),
            "{text:?}"
        );
    }
    let mut hybrid = query("launch plan");
    hybrid.hybrid = true;
    assert_eq!(titles(&ws, &hybrid).first().map(String::as_str), Some("Launch plan"));
    // Only a live note the reader may see: trashed, it is not put back.
    let id = ws
        .read(&Actor::User, |r| r.search("title:\"Launch plan\"", Default::default()))
        .unwrap()
        .items[0]
        .note
        .id
        .clone();
    ws.write(&Actor::User, |w| w.trash_note(&id)).unwrap();
    assert!(!titles(&ws, &query("launch plan")).contains(&"Launch plan".to_owned()));
}
