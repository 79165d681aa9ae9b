//! Moving and protecting a note through the web API, and the change stream that tells an open page about writes.

#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use quire_core::{Actor, Workspace, testing};
use quire_web::{WebModels, WebOptions};
use serde_json::{Value, json};

use crate::support::{Session, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";

/// A server on loopback with a note "Plan" and a notebook "Work"; a client with a session; their ids.
struct Served {
    session: Session,
    ws: Workspace,
    note: String,
    work: String,
}

impl Served {
    async fn start() -> Served {
        let ws = Workspace::open_in_memory().unwrap();
        let (note, work) = ws
            .write(&Actor::User, |w| {
                let note = testing::note("Plan", "text").create(w)?;
                Ok::<_, quire_core::Error>((note, testing::notebook(w, "Work")?))
            })
            .unwrap();
        let base = serve(ws.clone(), WebOptions::new(KEY), WebModels::default()).await;
        let session = Session::open(&base, KEY).await;
        Served {
            session,
            ws,
            note,
            work,
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.session.request(method, path)
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::POST, path)
            .json(&body)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_moves_and_is_protected_and_unprotected() {
    let s = Served::start().await;
    let (status, moved) = s
        .post(&format!("/notes/{}/move", s.note), json!({ "notebook_id": s.work }))
        .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["notebook_path"], "Work");
    let (status, refused) = s
        .post(&format!("/notes/{}/move", s.note), json!({ "notebook_id": "nope" }))
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"], "Target notebook not found");
    let (status, protected) = s
        .post(&format!("/notes/{}/protect", s.note), json!({ "protected": true }))
        .await;
    assert_eq!(status, 200, "{protected}");
    assert_eq!(protected["is_protected"], true);
    let (_, unprotected) = s
        .post(&format!("/notes/{}/protect", s.note), json!({ "protected": false }))
        .await;
    assert_eq!(unprotected["is_protected"], false);
    let all: Value = s
        .request(reqwest::Method::GET, "/all-notes")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(all["total"], 1);
    assert_eq!(all["notes"][0]["notebook_path"], "Work");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_stream_tells_of_a_write() {
    let s = Served::start().await;
    let mut stream = s.request(reqwest::Method::GET, "/events").send().await.unwrap();
    assert_eq!(stream.status(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let mut seen = String::new();
    while !seen.contains("event: ready") {
        seen.push_str(&String::from_utf8_lossy(&stream.chunk().await.unwrap().unwrap()));
    }
    let (status, _) = s
        .post(&format!("/notes/{}/move", s.note), json!({ "notebook_id": s.work }))
        .await;
    assert_eq!(status, 200);
    while !seen.contains("event: changes") {
        let Some(chunk) = stream.chunk().await.unwrap() else {
            panic!("the stream ended before telling of the move: {seen}");
        };
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let data = seen
        .split("event: changes\ndata: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap();
    let news: Value = serde_json::from_str(data).unwrap();
    assert!(
        news["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["entity"] == "note" && c["id"] == s.note.as_str() && c["actor"] == "user"),
        "{news}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_stream_tells_of_a_staged_write_and_its_decision() {
    let s = Served::start().await;
    let mut stream = s.request(reqwest::Method::GET, "/events").send().await.unwrap();
    let mut seen = String::new();
    while !seen.contains("event: ready") {
        seen.push_str(&String::from_utf8_lossy(&stream.chunk().await.unwrap().unwrap()));
    }
    let client = quire_core::Actor::Mcp {
        client: "Claude".into(),
    };
    let staged = s.ws.staged();
    let note = s.note.clone();
    staged
        .write(&client, |w| {
            w.update_note(
                &note,
                quire_core::NoteUpdate {
                    title: Some("Staged title".into()),
                    ..quire_core::NoteUpdate::default()
                },
            )
        })
        .unwrap();
    let set = staged.staging_report().unwrap().staged[0];
    let news = loop {
        let Some(chunk) = stream.chunk().await.unwrap() else {
            panic!("the stream ended before telling of the staged write: {seen}");
        };
        seen.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(data) = seen
            .split("event: changes\ndata: ")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            && seen
                .split("event: changes\ndata: ")
                .nth(1)
                .is_some_and(|rest| rest.contains('\n'))
        {
            break serde_json::from_str::<Value>(data).unwrap();
        }
    };
    assert_eq!(news["reviews"], json!([set]), "{news}");
    assert!(news.get("changes").is_none(), "nothing was written: {news}");
    let review_seq = news["review_seq"].as_i64().unwrap();
    // A stream reopened from that point tells of the decision, made outside the page.
    s.ws.decide_review(set, true, &quire_core::review::Selection::All)
        .unwrap();
    let mut again = s
        .request(
            reqwest::Method::GET,
            &format!("/events?after={}&reviews_after={review_seq}", news["seq"]),
        )
        .send()
        .await
        .unwrap();
    let mut told = String::new();
    while told
        .split("event: changes\ndata: ")
        .nth(1)
        .is_none_or(|rest| !rest.contains('\n'))
    {
        let Some(chunk) = again.chunk().await.unwrap() else {
            panic!("the stream ended before telling of the decision: {told}");
        };
        told.push_str(&String::from_utf8_lossy(&chunk));
    }
    let data = told
        .split("event: changes\ndata: ")
        .nth(1)
        .and_then(|r| r.lines().next())
        .unwrap();
    let decided: Value = serde_json::from_str(data).unwrap();
    assert_eq!(decided["reviews"], json!([set]), "{decided}");
    assert!(
        decided["changes"].as_array().is_some_and(|c| !c.is_empty()),
        "accepting wrote: {decided}"
    );
}

/// The editor's note is one read of the note in core, whole (issue 44): not `read_note`'s slices joined, and none of
/// the AI tool's budget: a long title, every tag, every attachment and a long body come as they are, with the link
/// that names two notes and their paths, and no slice fields.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_gets_the_note_whole_in_one_read() {
    let ws = Workspace::open_in_memory().unwrap();
    let title = format!("A long title {}", "word ".repeat(80));
    let tags: Vec<String> = (0..60).map(|i| format!("a-rather-long-tag-number-{i}")).collect();
    let body = format!("See [[Shared]].\n\n{}", "A line of the body.\n".repeat(12_000));
    let id = ws
        .write(&Actor::User, |w| {
            let home = testing::notebook(w, "Home")?;
            let work = testing::notebook(w, "Work")?;
            testing::note("Shared", "one").notebook(&home).create(w)?;
            testing::note("Shared", "two").notebook(&work).create(w)?;
            let id = testing::note(title.trim(), body.as_str()).tags(tags.iter()).create(w)?;
            for i in 0..40 {
                w.add_attachment(
                    &id,
                    quire_core::NewAttachment {
                        title: format!("photo-{i:02}-with-a-name-long-enough-to-count-{}.png", "x".repeat(60)),
                        mime: "image/png".into(),
                        data: vec![0; 8],
                        text: None,
                    },
                )?;
            }
            Ok::<_, quire_core::Error>(id)
        })
        .unwrap();
    let base = serve(ws.clone(), WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;
    let response = session
        .request(reqwest::Method::GET, &format!("/notes/{id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let note: Value = response.json().await.unwrap();
    assert_eq!(note["title"], title.trim());
    assert_eq!(note["body"].as_str().unwrap().len(), body.len(), "the body is whole");
    assert_eq!(note["tags"].as_array().unwrap().len(), 60, "every tag");
    assert!(note.get("more_tags").is_none_or(Value::is_null));
    let attachments = note["attachments"].as_array().unwrap();
    assert_eq!(attachments.len(), 40, "every attachment");
    assert!(attachments[0]["title"].as_str().unwrap().len() > 100, "titles whole");
    let links = note["unresolved_links"].as_array().unwrap();
    assert_eq!(links.len(), 1, "{links:?}");
    let mut paths: Vec<&str> = links[0]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["notebook_path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(paths, ["Home", "Work"]);
    for slice_field in [
        "has_more",
        "next_offset",
        "offset",
        "total_chars",
        "outline",
        "more_attachments",
    ] {
        assert!(
            note.get(slice_field).is_none(),
            "{slice_field} is the AI tool's, not the editor's"
        );
    }
}
