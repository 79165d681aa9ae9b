//! Sealed notes through the web API: while locked a sealed note's content answers `locked` (423) with its title and
//! nothing changes; a wrong passphrase is refused and changes nothing; unlocked, reads, saves, revisions,
//! attachments, unprotect and undo go through the key; locking again, or the unlock period running out, closes them.

#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::time::Duration;

use quire_core::seal::KdfParams;
use quire_core::{Actor, NewAttachment, NoteUpdate, Workspace, testing};
use quire_web::{WebModels, WebOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Session, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";
const PASSPHRASE: &str = "correct horse battery";

/// A served workspace with a passphrase: "Bank" sealed (a revision and an attachment), "Groceries" plain.
struct Sealed {
    _dir: tempfile::TempDir,
    ws: Workspace,
    session: Session,
    bank: String,
    groceries: String,
}

impl Sealed {
    async fn start(lock_timeout: Duration) -> Sealed {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
        let bank = testing::note("Bank", "PIN 4921, first").create_in(&ws).unwrap();
        let groceries = testing::note("Groceries", "milk").create_in(&ws).unwrap();
        ws.write(&Actor::User, |w| {
            w.save_revision_now(&bank)?;
            w.update_note(
                &bank,
                NoteUpdate {
                    body: Some("PIN 4921".into()),
                    ..NoteUpdate::default()
                },
            )?;
            w.add_attachment(
                &bank,
                NewAttachment {
                    title: "card.txt".into(),
                    mime: "text/plain".into(),
                    data: b"card 4921".to_vec(),
                    text: None,
                },
            )?;
            w.set_note_protected(&bank, true)
        })
        .unwrap();
        drop(ws.init_lock(PASSPHRASE, &KdfParams::cheapest_for_tests()).unwrap());
        let options = WebOptions {
            lock_timeout,
            ..WebOptions::new(KEY)
        };
        let base = serve(ws.clone(), options, WebModels::default()).await;
        let session = Session::open(&base, KEY).await;
        Sealed {
            _dir: dir,
            ws,
            session,
            bank,
            groceries,
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.session.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(Method::POST, path, Some(body)).await
    }

    async fn unlock(&self, passphrase: &str) -> (u16, Value) {
        self.post("/lock/unlock", json!({ "passphrase": passphrase })).await
    }

    /// The body as stored, read with the key.
    fn stored_body(&self) -> String {
        let key = self.ws.unlock(PASSPHRASE).unwrap();
        self.ws.read_unlocked(&key, |r| r.note(&self.bank)).unwrap().body
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_note_is_locked_until_the_passphrase_opens_it_and_a_wrong_one_changes_nothing() {
    let s = Sealed::start(WebOptions::LOCK_TIMEOUT).await;
    let (status, state) = s.get("/lock").await;
    assert_eq!(status, 200);
    assert_eq!(
        state,
        json!({ "initialized": true, "unlocked": false, "seconds_left": null, "timeout_seconds": 600 })
    );

    // Locked: the note's title shows, its content does not, and nothing of it changes.
    let (status, refused) = s.get(&format!("/notes/{}", s.bank)).await;
    assert_eq!(status, 423, "{refused}");
    assert_eq!(refused["kind"], "locked");
    assert!(refused["error"].as_str().unwrap().contains("Bank"), "{refused}");
    assert_eq!(refused["note"]["title"], "Bank");
    assert_eq!(refused["note"]["locked"], true);
    assert_eq!(refused["note"]["body"], "");
    assert!(!refused.to_string().contains("4921"), "{refused}");
    let (status, listed) = s.get("/notes?notebook_id=_root").await;
    assert_eq!(status, 200);
    assert!(listed.to_string().contains("Bank"), "titles are not sealed: {listed}");
    let (status, refused) = s.get(&format!("/notes/{}/revisions", s.bank)).await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
    let key = s.ws.unlock(PASSPHRASE).unwrap();
    let attachment = s.ws.read_unlocked(&key, |r| r.attachments(&s.bank)).unwrap()[0]
        .id
        .clone();
    drop(key);
    let (status, refused) = s.get(&format!("/attachments/{attachment}")).await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
    let updated = refused_note_updated(&s).await;
    let (status, refused) = s
        .call(
            Method::PUT,
            &format!("/notes/{}", s.bank),
            Some(json!({ "body": "overwritten", "base_updated": updated })),
        )
        .await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
    let (status, refused) = s
        .post(&format!("/notes/{}/protect", s.bank), json!({ "protected": false }))
        .await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
    assert!(
        s.ws.read(&Actor::User, |r| r.note_summary(&s.bank))
            .unwrap()
            .is_protected
    );
    assert_eq!(s.stored_body(), "PIN 4921");

    // A wrong passphrase, or none, is refused and the workspace stays locked.
    let (status, refused) = s.unlock("not the passphrase").await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"], "Wrong passphrase. Nothing changed.");
    let (status, refused) = s.unlock("").await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"], "Type the workspace's passphrase.");
    assert_eq!(s.get("/lock").await.1["unlocked"], false);
    assert_eq!(s.get(&format!("/notes/{}", s.bank)).await.0, 423);

    // The passphrase opens it: reads, revisions, attachments and a save go through the key.
    let (status, state) = s.unlock(PASSPHRASE).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["unlocked"], true);
    let left = state["seconds_left"].as_u64().unwrap();
    assert!(left > 0 && left <= 600, "{state}");
    let (status, note) = s.get(&format!("/notes/{}", s.bank)).await;
    assert_eq!(status, 200, "{note}");
    assert_eq!(note["body"], "PIN 4921");
    assert!(
        note.get("locked").is_none(),
        "an open note is read_note's output as it is: {note}"
    );
    let (status, revisions) = s.get(&format!("/notes/{}/revisions", s.bank)).await;
    assert_eq!(status, 200, "{revisions}");
    assert!(revisions.to_string().contains("PIN 4921, first"), "{revisions}");
    let data = s
        .session
        .request(Method::GET, &format!("/attachments/{attachment}"))
        .send()
        .await
        .unwrap();
    assert_eq!(data.status(), 200);
    assert_eq!(data.bytes().await.unwrap().as_ref(), b"card 4921");
    let (status, saved) = s
        .call(
            Method::PUT,
            &format!("/notes/{}", s.bank),
            Some(json!({ "body": "PIN 5032", "base_updated": note["updated"] })),
        )
        .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(s.stored_body(), "PIN 5032");

    // Locking again closes it.
    let (status, state) = s.post("/lock/lock", json!({})).await;
    assert_eq!((status, &state["unlocked"]), (200, &json!(false)), "{state}");
    assert_eq!(s.get(&format!("/notes/{}", s.bank)).await.0, 423);
}

/// The `updated` of the Bank note, from the locked refusal (titles and times are not sealed).
async fn refused_note_updated(s: &Sealed) -> Value {
    s.get(&format!("/notes/{}", s.bank)).await.1["note"]["updated"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protecting_needs_no_passphrase_and_unprotecting_or_undoing_it_does() {
    let s = Sealed::start(WebOptions::LOCK_TIMEOUT).await;
    // Protected while locked: sealed at once, so the answer has no content.
    let (status, protected) = s
        .post(&format!("/notes/{}/protect", s.groceries), json!({ "protected": true }))
        .await;
    assert_eq!(status, 200, "{protected}");
    assert_eq!(
        (protected["locked"].as_bool(), protected["body"].as_str()),
        (Some(true), Some(""))
    );
    // Undoing the protection would unseal it: that needs the key, and nothing changes without it.
    let (_, history) = s.get(&format!("/history?note_id={}", s.groceries)).await;
    let set = history["change_sets"][0]["change_set_id"].as_str().unwrap().to_owned();
    let (status, refused) = s.post(&format!("/history/{set}/undo"), json!({})).await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("Groceries"), "{refused}");
    assert!(
        s.ws.read(&Actor::User, |r| r.note_summary(&s.groceries))
            .unwrap()
            .is_protected
    );
    assert_eq!(s.unlock(PASSPHRASE).await.0, 200);
    let (status, undone) = s.post(&format!("/history/{set}/undo"), json!({})).await;
    assert_eq!(status, 200, "{undone}");
    assert!(
        !s.ws
            .read(&Actor::User, |r| r.note_summary(&s.groceries))
            .unwrap()
            .is_protected
    );
    // Unprotecting the sealed note while unlocked makes it plain again.
    let (status, plain) = s
        .post(&format!("/notes/{}/protect", s.bank), json!({ "protected": false }))
        .await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(
        (plain["body"].as_str(), plain["is_protected"].as_bool()),
        (Some("PIN 4921"), Some(false))
    );
    s.post("/lock/lock", json!({})).await;
    assert_eq!(
        s.get(&format!("/notes/{}", s.bank)).await.0,
        200,
        "a plain note needs no key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unlock_period_ends_when_nothing_uses_the_key() {
    let s = Sealed::start(Duration::from_millis(400)).await;
    assert_eq!(s.unlock(PASSPHRASE).await.0, 200);
    assert_eq!(s.get(&format!("/notes/{}", s.bank)).await.0, 200);
    // Asking how long is left does not keep it open: it locks by itself.
    let mut locked = false;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (_, state) = s.get("/lock").await;
        if state["unlocked"] == false {
            assert_eq!(state["seconds_left"], Value::Null);
            locked = true;
            break;
        }
    }
    assert!(locked, "the workspace locked again once unused");
    let (status, refused) = s.get(&format!("/notes/{}", s.bank)).await;
    assert_eq!((status, refused["kind"].as_str()), (423, Some("locked")), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn using_a_note_keeps_the_workspace_unlocked_and_asking_does_not() {
    let s = Sealed::start(Duration::from_secs(60)).await;
    assert_eq!(s.unlock(PASSPHRASE).await.0, 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let before = s.get("/lock").await.1["seconds_left"].as_u64().unwrap();
    assert!(before <= 58, "asking did not start the period again: {before}");
    assert_eq!(s.get(&format!("/notes/{}", s.bank)).await.0, 200);
    let after = s.get("/lock").await.1["seconds_left"].as_u64().unwrap();
    assert!(
        after > before,
        "reading the sealed note started it again: {before} then {after}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlocking_needs_the_session_and_this_site() {
    let s = Sealed::start(WebOptions::LOCK_TIMEOUT).await;
    let http = crate::support::client();
    let url = format!("{}/api/lock/unlock", s.session.base);
    let body = json!({ "passphrase": PASSPHRASE });
    // The cookie without the page's secret, and the secret from another site, are refused.
    let no_secret = http
        .post(&url)
        .header("cookie", &s.session.cookie)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(no_secret.status(), 401);
    let foreign = s
        .session
        .request(Method::POST, "/lock/unlock")
        .header("origin", "http://evil.example")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    assert_eq!(s.get("/lock").await.1["unlocked"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_passphrase_there_is_nothing_to_unlock() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("Plan", "text").protected().create_in(&ws).unwrap();
    let base = serve(ws, WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;
    let state: Value = session
        .request(Method::GET, "/lock")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["initialized"], false);
    let refused = session
        .request(Method::POST, "/lock/unlock")
        .json(&json!({ "passphrase": PASSPHRASE }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    let refused: Value = refused.json().await.unwrap();
    assert!(
        refused["error"].as_str().unwrap().contains("quire lock init"),
        "{refused}"
    );
}
