//! End to end: `quire serve` on loopback, its session key and cookie, Host and Origin checks, and the JSON API
//! (notes in the tools' shapes, user saves with a coalesced revision, a stale save refused with 409).
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use quire_tests::Quire;
use serde_json::{Value, json};

/// A running `quire serve`, stopped when dropped as a person stops it: Ctrl+C (SIGINT), so that it shuts down
/// cleanly (and a coverage run gets its profile); killed if it does not stop within 10 seconds.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the server on a free port; returns it with the address it printed (with the key) and its base URL.
fn serve(q: &Quire) -> (Server, String, String) {
    let mut command = q.command();
    command
        .arg("--workspace")
        .arg(q.workspace())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let line = BufReader::new(stdout).lines().next().unwrap().unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    let base = url.split("/?token=").next().unwrap().to_owned();
    (server, url, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_from_the_printed_address_and_a_json_api_that_loses_nothing() {
    let q = Quire::new();
    let (_server, url, base) = serve(&q);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // Without a session: 401, for the API and the page; a wrong key opens nothing.
    let no_session = http.get(format!("{base}/api/notes")).send().await.unwrap();
    assert_eq!(no_session.status(), 401);
    assert_eq!(http.get(format!("{base}/")).send().await.unwrap().status(), 401);
    let wrong = http.get(format!("{base}/?token=0123")).send().await.unwrap();
    assert_eq!(wrong.status(), 401);
    assert!(wrong.headers().get("set-cookie").is_none());

    // The printed address sets an HttpOnly, SameSite=Strict session cookie.
    let opened = http.get(&url).send().await.unwrap();
    assert_eq!(opened.status(), 303);
    let cookie = opened.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_owned();
    let page = http
        .get(format!("{base}/"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );

    // A foreign Origin (a cross-site request) or Host (DNS rebinding) is refused even with the cookie.
    let cross = http
        .get(format!("{base}/api/notes"))
        .header("cookie", &session)
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);
    let rebound = http
        .get(format!("{base}/api/notes"))
        .header("cookie", &session)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);

    // A note written through the API is described as the tools describe it.
    let created = http
        .post(format!("{base}/api/notes"))
        .header("cookie", &session)
        .json(&json!({"title": "Letter", "body": "Dear Sir"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let note: Value = created.json().await.unwrap();
    let id = note["note_id"].as_str().unwrap().to_owned();
    let tool = q.run(&["--json", "note", "show", &id]).json();
    assert_eq!(note, tool);

    // Two saves in a row: both land, and they share one revision (the text before typing began).
    let mut updated = note["updated"].as_str().unwrap().to_owned();
    for body in ["Dear Sam", "Dear Sam, hello"] {
        let saved = http
            .put(format!("{base}/api/notes/{id}"))
            .header("cookie", &session)
            .json(&json!({"body": body, "base_updated": updated}))
            .send()
            .await
            .unwrap();
        assert_eq!(saved.status(), 200);
        let saved: Value = saved.json().await.unwrap();
        assert_eq!(saved["body"], body);
        updated = saved["updated"].as_str().unwrap().to_owned();
    }
    let revisions = q.run(&["--json", "note", "revisions", &id]).json();
    let listed: Vec<&str> = revisions["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 1, "saves while typing share a revision: {revisions}");

    // An AI client changes the note; a save made on the older version is refused with 409 and loses nothing.
    std::thread::sleep(std::time::Duration::from_millis(5));
    let change = json!({"note_id": id, "body": "Changed by an AI client"}).to_string();
    assert_eq!(q.run(&["tools", "call", "update_note", &change]).code, 0);
    let stale = http
        .put(format!("{base}/api/notes/{id}"))
        .header("cookie", &session)
        .json(&json!({"body": "my newer text", "base_updated": updated}))
        .send()
        .await
        .unwrap();
    assert_eq!(stale.status(), 409);
    let refusal: Value = stale.json().await.unwrap();
    assert!(
        refusal["error"]
            .as_str()
            .unwrap()
            .starts_with("The note changed since it was loaded"),
        "{refusal}"
    );
    assert_eq!(refusal["note"]["body"], "Changed by an AI client");
    assert_eq!(
        q.run(&["--json", "note", "show", &id]).json()["body"],
        "Changed by an AI client"
    );

    // Lists, search and a missing note, in the tools' shapes.
    let list: Value = http
        .get(format!("{base}/api/notes?limit=10"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["total"], 1);
    let found: Value = http
        .get(format!("{base}/api/search?query=changed"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["results"][0]["note_id"], id.as_str());
    let missing = http
        .get(format!("{base}/api/notes/nope"))
        .header("cookie", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}
