//! Refusals carry a kind the page branches on, and the status that kind says: a save made on an older version, an undo
//! a later change stands in the way of, a missing note, a query the API cannot read.

#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use quire_core::{Actor, NewNote, NoteUpdate, Workspace};
use quire_web::{WebModels, WebOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Session, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";

async fn call(session: &Session, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = session.request(method, path);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_say_their_kind() {
    let ws = Workspace::open_in_memory().unwrap();
    let note = ws
        .write(&Actor::User, |w| w.create_note(NewNote::new("Plan", "one")))
        .unwrap();
    let (id, loaded) = (note.summary.id, note.summary.updated.to_rfc3339());
    // An AI client changes the note after the page loaded it, in a change set of its own.
    std::thread::sleep(std::time::Duration::from_millis(2));
    let client = Actor::Mcp { client: "test".into() };
    let changed = NoteUpdate {
        body: Some("two".into()),
        ..NoteUpdate::default()
    };
    ws.write(&client, |w| w.update_note(&id, changed)).unwrap();
    let base = serve(ws, WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;

    // A save made on the version the page loaded: refused with the note as it is now.
    let save = json!({ "body": "mine", "base_updated": loaded });
    let (status, refused) = call(&session, Method::PUT, &format!("/notes/{id}"), Some(save)).await;
    assert_eq!(
        (status, refused["kind"].as_str()),
        (409, Some("stale_edit")),
        "{refused}"
    );
    assert_eq!(refused["note"]["body"], "two");

    // Undoing the note's creation while the client's change stands on it: the page offers to undo both.
    let (_, history) = call(&session, Method::GET, &format!("/history?note_id={id}"), None).await;
    let created = history["change_sets"][1]["change_set_id"].as_str().unwrap().to_owned();
    let (status, refused) = call(&session, Method::POST, &format!("/history/{created}/undo"), None).await;
    assert_eq!(
        (status, refused["kind"].as_str()),
        (409, Some("changed_since")),
        "{refused}"
    );
    let undo_both = format!("/history/{created}/undo?with_later=true");
    let (status, undone) = call(&session, Method::POST, &undo_both, None).await;
    assert_eq!(status, 200, "{undone}");
    assert_eq!(undone["undone_later_change_set_ids"].as_array().unwrap().len(), 1);

    // The note is gone now; a query the API cannot read is the request's to fix.
    let (status, missing) = call(&session, Method::GET, &format!("/notes/{id}"), None).await;
    assert_eq!(
        (status, missing["kind"].as_str()),
        (404, Some("not_found")),
        "{missing}"
    );
    let (status, unread) = call(&session, Method::GET, "/notes?limit=many", None).await;
    assert_eq!((status, unread["kind"].as_str()), (400, Some("invalid")), "{unread}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_notebook_of_one_title_in_a_parent_is_a_conflict() {
    let ws = Workspace::open_in_memory().unwrap();
    let home = ws
        .write(&Actor::User, |w| {
            w.create_notebook_path(None, "Work")?;
            Ok::<_, quire_core::Error>(w.create_notebook_path(None, "Home")?.notebook.id)
        })
        .unwrap();
    let base = serve(ws, WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;
    let rename = json!({ "title": "work" });
    let (status, refused) = call(&session, Method::PATCH, &format!("/notebooks/{home}"), Some(rename)).await;
    assert_eq!((status, refused["kind"].as_str()), (409, Some("conflict")), "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("with the path 'Work'"),
        "{refused}"
    );
}
