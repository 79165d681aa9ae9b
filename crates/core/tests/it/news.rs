//! News (issue 44): one read tells what happened after a cursor, applied changes and review sets alike, and the one
//! watcher of a workspace hands it to every receiver, whichever handle or process wrote.

use std::time::Duration;

use quire_core::news::{NewsCursor, ReviewEvent};
use quire_core::review::Selection;
use quire_core::testing::note;
use quire_core::{Actor, NoteUpdate, Workspace};

/// Long enough for a loaded machine; a receiver that works answers within a tick.
const WAIT: Duration = Duration::from_secs(20);

fn client() -> Actor {
    Actor::Mcp {
        client: "Claude".into(),
    }
}

fn retitle(ws: &Workspace, actor: &Actor, id: &str, title: &str) {
    ws.write(actor, |w| {
        w.update_note(
            id,
            NoteUpdate {
                title: Some(title.into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
}

#[test]
fn one_read_tells_changes_staged_writes_decisions_and_undo() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Plan", "one\n").create_in(&ws).unwrap();
    let start = ws.read(&Actor::User, |r| r.news_cursor()).unwrap();
    let staged = ws.staged();
    retitle(&staged, &client(), &id, "Plan v2");
    let set = staged.staging_report().unwrap().staged[0];
    let news = ws.read(&Actor::User, |r| r.news_after(start, 100)).unwrap();
    assert!(news.changes.is_empty(), "a staged write changes nothing yet");
    assert_eq!(news.reviews.len(), 1);
    assert_eq!(
        (news.reviews[0].set_id, news.reviews[0].event),
        (set, ReviewEvent::Staged)
    );
    let decided = ws.decide_review(set, true, &Selection::All).unwrap();
    let after = ws.read(&Actor::User, |r| r.news_after(news.cursor, 100)).unwrap();
    assert_eq!(
        after.reviews.iter().map(|r| r.event).collect::<Vec<_>>(),
        [ReviewEvent::Decided]
    );
    assert_eq!(after.changes.len(), 1, "accepting wrote the title");
    assert_eq!(after.changes[0].note_id(), Some(id.as_str()));
    let change_set = decided.change_set_id.expect("a change set");
    quire_core::changes::undo_change_set(&ws, &change_set).unwrap();
    let undone = ws.read(&Actor::User, |r| r.news_after(after.cursor, 100)).unwrap();
    assert!(!undone.changes.is_empty(), "an undo is news too");
    assert!(undone.reviews.is_empty());
    let nothing = ws.read(&Actor::User, |r| r.news_after(undone.cursor, 100)).unwrap();
    assert!(nothing.is_empty());
    assert_eq!(nothing.cursor, undone.cursor);
}

#[test]
fn every_receiver_hears_a_write_made_through_another_handle_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.quire");
    let here = Workspace::open(&path).unwrap();
    let id = note("Plan", "one\n").create_in(&here).unwrap();
    let mut first = here.news(None).unwrap();
    let mut second = here.clone().news(None).unwrap();
    // Another handle of the same file, as another process would open it.
    let elsewhere = Workspace::open(&path).unwrap();
    retitle(&elsewhere, &Actor::User, &id, "Plan, elsewhere");
    for receiver in [&mut first, &mut second] {
        let news = receiver.next_timeout(WAIT).unwrap().expect("the change arrives");
        assert_eq!(news.changes.len(), 1);
        assert_eq!(news.changes[0].note_id(), Some(id.as_str()));
    }
    retitle(&elsewhere.staged(), &client(), &id, "Plan, staged");
    let news = first.next_timeout(WAIT).unwrap().expect("the staged write arrives");
    assert_eq!(news.reviews[0].event, ReviewEvent::Staged);
    assert!(news.changes.is_empty());
    assert!(
        first.next_timeout(Duration::from_millis(300)).unwrap().is_none(),
        "nothing twice"
    );
}

#[test]
fn a_receiver_from_an_older_cursor_catches_up_first() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Plan", "one\n").create_in(&ws).unwrap();
    retitle(&ws, &Actor::User, &id, "Plan 2");
    let mut receiver = ws.news(Some(NewsCursor::default())).unwrap();
    let news = receiver.next_timeout(WAIT).unwrap().expect("what happened before");
    assert!(news.changes.len() >= 2, "the creation and the retitle");
    assert_eq!(receiver.cursor(), news.cursor);
}

#[test]
fn the_async_receiver_wakes_on_news() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = note("Plan", "one\n").create_in(&ws).unwrap();
    let mut receiver = ws.news(None).unwrap();
    let writer = ws.clone();
    let thread = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        retitle(&writer, &Actor::User, &id, "Plan 3");
    });
    let news = futures_lite_block_on(receiver.recv()).unwrap();
    assert_eq!(news.changes.len(), 1);
    thread.join().unwrap();
}

/// Polls a future to its end on this thread, parking between wakes (core's tests have no async runtime).
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}
