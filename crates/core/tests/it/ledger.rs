//! The read ledger: what an actor other than the user read is recorded by core itself, whatever the consumer; the
//! user's reads are not; repeated reads are counted on one row; a protected note's entries keep its title only;
//! a handle limited to notebooks lists what it reaches; the ledger outlives the handle and keeps no text.

use std::time::{Duration, Instant};

use quire_core::ledger::LedgerFilter;
use quire_core::{Actor, Error, Scope, SearchOptions, Workspace};

use crate::fixture::{Fixture, agent, mcp};

fn rows(ws: &Workspace) -> Vec<(String, String, String, String, u32)> {
    ws.ledger(&LedgerFilter::default())
        .unwrap()
        .into_iter()
        .rev()
        .map(|e| (e.actor, e.client, e.title, e.part, e.reads))
        .collect()
}

#[test]
fn what_an_ai_actor_reads_is_recorded_and_the_users_reads_are_not() {
    let f = Fixture::new();
    f.ws.read(&Actor::User, |r| r.note(&f.plain)).unwrap();
    assert!(rows(&f.ws).is_empty(), "the person's own reads are theirs");

    for _ in 0..3 {
        f.ws.read(&mcp(), |r| r.note_view(&f.plain, true)).unwrap();
    }
    f.ws.read(&mcp(), |r| r.attachment_text(&f.attachment)).unwrap();
    f.ws.read(&agent(), |r| r.search("diary", SearchOptions::default()))
        .unwrap();
    // Refused reads record nothing: a protected note's text is never given to an AI actor.
    assert!(matches!(
        f.ws.read(&mcp(), |r| r.note(&f.secret)),
        Err(Error::ProtectedContent | Error::Protected(_))
    ));
    let got = rows(&f.ws);
    assert_eq!(
        got,
        [
            (
                "mcp".into(),
                "test-client".into(),
                "Roadmap".into(),
                "whole note".into(),
                3
            ),
            (
                "mcp".into(),
                "test-client".into(),
                "Roadmap".into(),
                "attachment text".into(),
                1
            ),
            // Found by its title only: the ledger keeps its title only.
            (
                "assistant".into(),
                "quire assistant".into(),
                "Diary".into(),
                "title only".into(),
                1
            ),
        ],
        "{got:#?}"
    );
    let entries =
        f.ws.ledger(&LedgerFilter {
            client: Some("quire assistant".into()),
            ..LedgerFilter::default()
        })
        .unwrap();
    assert_eq!(entries[0].chat.as_deref(), Some("c1"));
    let attachment =
        f.ws.ledger(&LedgerFilter {
            note_id: Some(f.plain.clone()),
            ..LedgerFilter::default()
        })
        .unwrap();
    assert_eq!(attachment.len(), 2);
    assert_eq!(attachment[0].attachment_id.as_deref(), Some(f.attachment.as_str()));
    // A client by its name in any case; a name that only starts the same is another client.
    let by = |name: &str| {
        f.ws.ledger(&LedgerFilter {
            client: Some(name.into()),
            ..LedgerFilter::default()
        })
        .unwrap()
        .len()
    };
    assert_eq!((by("TEST-CLIENT"), by("test")), (2, 0));
    let clients = f.ws.ledger_clients().unwrap();
    assert_eq!(clients.len(), 2);
    assert_eq!(
        (clients[1].client.as_str(), clients[1].notes, clients[1].reads),
        ("test-client", 1, 4)
    );
}

#[test]
fn a_handle_limited_to_notebooks_lists_what_it_reaches() {
    let f = Fixture::new();
    f.ws.read(&mcp(), |r| r.note(&f.plain)).unwrap();
    f.ws.read(&mcp(), |r| r.note(&f.todo)).unwrap();
    let scoped = f.ws.scoped(Scope::notebooks([f.projects.clone()]));
    let seen: Vec<String> = scoped
        .ledger(&LedgerFilter::default())
        .unwrap()
        .into_iter()
        .map(|e| e.title)
        .collect();
    assert_eq!(seen, ["Roadmap"]);
}

#[test]
fn the_ledger_is_written_soon_and_outlives_the_handle_and_keeps_no_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.quire");
    let f = Fixture::build(Workspace::open(&path).unwrap()).unwrap();
    let other = Workspace::open(&path).unwrap();
    f.ws.read(&mcp(), |r| r.note(&f.plain)).unwrap();
    // Another handle on the file (another process, as `quire ledger` is) sees it once the batch is written, without
    // any further call on the first.
    let started = Instant::now();
    loop {
        let seen = other.read(&Actor::User, |r| r.note_summary(&f.plain)).is_ok()
            && !Workspace::open(&path)
                .unwrap()
                .ledger(&LedgerFilter::default())
                .unwrap()
                .is_empty();
        if seen {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the batch was never written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Read just before the last handle goes: written when it goes.
    f.ws.read(&mcp(), |r| r.note(&f.todo)).unwrap();
    let Fixture { ws, .. } = f;
    drop(ws);
    drop(other);
    let again = Workspace::open(&path).unwrap();
    let titles: Vec<String> = again
        .ledger(&LedgerFilter::default())
        .unwrap()
        .into_iter()
        .map(|e| e.title)
        .collect();
    assert_eq!(titles, ["Buy ink", "Roadmap"]);
    for entry in again.ledger(&LedgerFilter::default()).unwrap() {
        let row = format!("{entry:?}");
        assert!(
            !row.contains("Ship search") && !row.contains("black"),
            "no text in the ledger: {row}"
        );
    }
}

#[test]
fn retention_zero_records_nothing_and_forgets_what_was_kept() {
    let f = Fixture::new();
    f.ws.read(&mcp(), |r| r.note(&f.plain)).unwrap();
    assert_eq!(rows(&f.ws).len(), 1);
    f.ws.set_ledger_retention(0);
    f.ws.read(&mcp(), |r| r.note(&f.plain)).unwrap();
    assert!(rows(&f.ws).is_empty());
    f.ws.set_ledger_retention(90);
    f.ws.read(&mcp(), |r| r.note(&f.todo)).unwrap();
    assert_eq!(rows(&f.ws).len(), 1);
}
