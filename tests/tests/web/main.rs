//! End to end: `quire serve` on loopback, its session key and cookie, Host and Origin checks, and the JSON API
//! (notes in the tools' shapes, user saves with a coalesced revision, a stale save refused with 409).
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use quire_tests::Quire;
use serde_json::{Value, json};

mod devices;
mod review;

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

/// Starts the server on a free port with extra environment; returns it with the address it printed (with the key)
/// and its base URL.
fn serve_with_env(q: &Quire, env: &[(&str, String)]) -> (Server, String, String) {
    serve_with(q, env, &[])
}

/// Starts the server with extra environment and extra arguments of `quire serve`.
fn serve_with(q: &Quire, env: &[(&str, String)], extra: &[&str]) -> (Server, String, String) {
    // Every test starts a server here before it builds its client.
    quire_test_support::install_tls();
    let mut command = q.command();
    command
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .arg("--workspace")
        .arg(q.workspace())
        .arg("serve")
        .args(if extra.contains(&"--listen") {
            &[][..]
        } else {
            &["--addr", "127.0.0.1:0"][..]
        })
        .args(extra)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let line = BufReader::new(stdout).lines().next().unwrap().unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap()
        .to_owned();
    let base = url.split("/?token=").next().unwrap().to_owned();
    (server, url, base)
}

fn serve(q: &Quire) -> (Server, String, String) {
    serve_with_env(q, &[])
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
    // The cookie alone opens no API call: the page's secret (the redirect's fragment) must come as a header.
    let http = with_secret(&opened);
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

    // A note written through the API is described as the tools describe it, whole: the same fields as
    // `read_note`'s, without those of a slice (the editor's note is one read in core, not the AI tool's slices).
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
    let mut tool = q.run(&["--json", "note", "show", &id]).json();
    for slice_field in ["has_more", "next_offset", "offset", "outline", "total_chars"] {
        tool.as_object_mut().unwrap().remove(slice_field);
    }
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
    let history = q.run(&["--json", "history", "--note", &id]).json();
    let sets = history["change_sets"].as_array().unwrap();
    assert_eq!(
        sets.len(),
        2,
        "the creation, then one change set for the typing: {history}"
    );
    // Both saves changed the note: the history says so once.
    assert_eq!(sets[0]["changes"].as_array().unwrap().len(), 1, "{history}");

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

/// Starts the server with a chat model pointing at a mock server, and opens a session.
async fn serve_with_model(q: &Quire, mock: &wiremock::MockServer) -> (Server, String, String, reqwest::Client) {
    let env = [
        ("QUIRE_MODEL", "openai-compatible:test".to_owned()),
        ("QUIRE_BASE_URL", format!("{}/v1", mock.uri())),
    ];
    open_session(q, &env).await
}

/// Starts the server with `env` and opens a session: the server, its base URL, the session cookie, a client.
async fn open_session(q: &Quire, env: &[(&str, String)]) -> (Server, String, String, reqwest::Client) {
    let (server, url, base) = serve_with_env(q, env);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let opened = http.get(&url).send().await.unwrap();
    let session = opened.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    (server, base, session, with_secret(&opened))
}

/// A client that sends the session's secret (from the `/#session=...` redirect) with every request, as the page does.
fn with_secret(opened: &reqwest::Response) -> reqwest::Client {
    let secret = opened.headers()["location"]
        .to_str()
        .unwrap()
        .trim_start_matches("/#session=");
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-quire-session", secret.parse().unwrap());
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The server-sent events of a turn, as (event, data) pairs, read as they arrive; `on_event` may answer them.
async fn events(response: reqwest::Response, mut on_event: impl AsyncFnMut(&str, &Value)) -> Vec<(String, Value)> {
    let mut response = response;
    let mut buffer = String::new();
    let mut seen = Vec::new();
    while let Some(chunk) = response.chunk().await.unwrap() {
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let kind = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or("")
                .to_owned();
            let data = block.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("null");
            let value: Value = serde_json::from_str(data).unwrap();
            on_event(&kind, &value).await;
            seen.push((kind, value));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_turn_streams_asks_before_deleting_and_its_accepted_edits_undo_with_it() {
    let q = Quire::new();
    let note = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Letter",
            "--body",
            "Dear Sir, the rent is due.",
        ])
        .json();
    let id = note["note_id"].as_str().unwrap().to_owned();
    // The reply reports usage as OpenAI does, cached tokens apart; [chat]'s prices go with QUIRE_MODEL's model.
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[chat]\nprice_in = 1.0\nprice_out = 4.0\n").unwrap();
    let mock = quire_test_support::mock_openai(vec![
        quire_test_support::tool_calls(&[("edit_selection", json!({"text": "Hello Sam"}))]),
        quire_test_support::sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Friendlier now."}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                   "prompt_tokens_details": {"cached_tokens": 600}}}),
        ]),
        quire_test_support::tool_calls(&[("delete_note", json!({"note_id": id}))]),
        quire_test_support::text("I did not delete it."),
    ])
    .await;
    let (_server, base, session, http) = serve_with_model(&q, &mock).await;

    // A turn about the selection: its events stream, and it ends with the proposed edit.
    let turn = http
        .post(format!("{base}/api/turns"))
        .header("cookie", &session)
        .json(&json!({"message": "friendlier", "note_id": id, "selection": [0, 8]}))
        .send()
        .await
        .unwrap();
    assert_eq!(turn.status(), 200);
    let seen = events(turn, async |_, _| {}).await;
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"started"));
    assert_eq!(kinds.last(), Some(&"done"));
    assert!(
        seen.iter().any(|(k, v)| k == "agent" && v["event"] == "edit_proposed"),
        "{seen:?}"
    );
    let done = &seen.last().unwrap().1;
    assert_eq!(done["reply"], "Friendlier now.");
    // The turn's tokens and estimated cost (1,000 in and 100 out at 1 and 4 per million), and the chat's totals,
    // which the stored chat gives back when it is reopened.
    assert_eq!(done["usage"]["cached_input_tokens"], 600);
    assert!((done["cost"].as_f64().unwrap() - 0.0014).abs() < 1e-9, "{done}");
    assert_eq!(
        (
            &done["chat_usage"]["turns"],
            &done["chat_usage"]["usage"]["input_tokens"]
        ),
        (&json!(1), &json!(1000))
    );
    let chat_id = seen[0].1["chat_id"].as_str().unwrap();
    let (status, stored) = call(&http, &session, "GET", format!("{base}/api/chats/{chat_id}"), None).await;
    assert_eq!((status, &stored["usage"]), (200, &done["chat_usage"]));
    // A short chat is sent whole; dropping a summary it does not have changes nothing.
    assert_eq!((&stored["summary"], &done["summarised"]), (&Value::Null, &Value::Null));
    let url = format!("{base}/api/chats/{chat_id}/summary");
    assert_eq!(call(&http, &session, "DELETE", url, None).await.0, 204);

    // Accepting saves the edit as the user, in the turn's change set: undoing the turn takes it back.
    let accepted = http
        .post(format!("{base}/api/notes/{id}/accept"))
        .header("cookie", &session)
        .json(&json!({"base": "Dear Sir, the rent is due.", "edits": done["edits"], "turn_actor": done["turn_actor"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    let accepted: Value = accepted.json().await.unwrap();
    assert_eq!(accepted["body"], "Hello Sam, the rent is due.");
    let set = accepted["change_set_id"].as_str().unwrap().to_owned();
    assert_eq!(q.run(&["undo", &set]).code, 0);
    assert_eq!(
        q.run(&["--json", "note", "show", &id]).json()["body"],
        "Dear Sir, the rent is due."
    );

    // A destructive call waits for the approval card; the user refuses, and the note stays.
    let turn = http
        .post(format!("{base}/api/turns"))
        .header("cookie", &session)
        .json(&json!({"message": "delete it"}))
        .send()
        .await
        .unwrap();
    let mut turn_id = String::new();
    let mut answered = 0;
    let seen = events(turn, async |kind, value| {
        if kind == "started" {
            turn_id = value["turn_id"].as_str().unwrap().to_owned();
        }
        if kind == "agent" && value["event"] == "approval_needed" {
            let answer = http
                .post(format!("{base}/api/turns/{turn_id}/approve"))
                .header("cookie", &session)
                .json(&json!({"call_id": value["request"]["call_id"], "allow": false}))
                .send()
                .await
                .unwrap();
            assert_eq!(answer.status(), 200);
            answered += 1;
        }
    })
    .await;
    assert_eq!(answered, 1, "{seen:?}");
    let done = &seen.last().unwrap().1;
    assert_eq!(done["reply"], "I did not delete it.");
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["in_trash"], false);
}

/// Sends a JSON request with the session; returns the status and the JSON answer.
async fn call(http: &reqwest::Client, session: &str, method: &str, url: String, body: Option<Value>) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = http.request(method, url).header("cookie", session);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_api_notebooks_trash_tags_revisions_undo_chats_and_models() {
    let q = Quire::new();
    // Two models from [[chat.models]]; the one without a reachable key is left out and said why.
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[[chat.models]]\nname = \"local\"\nmodel = \"openai-compatible:qwen\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n\
         [[chat.models]]\nname = \"cloud\"\nmodel = \"openai:gpt-4.1-mini\"\n",
    )
    .unwrap();
    let (_server, base, session, http) = open_session(&q, &[]).await;
    let (status, settings) = call(&http, &session, "GET", format!("{base}/api/settings"), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        settings["models"],
        json!([{"name": "local", "model": "openai-compatible:qwen",
        "base_url": "http://127.0.0.1:9/v1", "is_default": true}])
    );
    assert!(!settings.to_string().contains("api_key"), "{settings}");

    // Notebooks: create, rename, move; core's guards answer as messages.
    let (status, work) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notebooks"),
        Some(json!({"title": "Work"})),
    )
    .await;
    assert_eq!(status, 201, "{work}");
    let work = work["notebook_id"].as_str().unwrap().to_owned();
    let (_, inner) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notebooks"),
        Some(json!({"title": "Projects", "parent_id": work})),
    )
    .await;
    let inner = inner["notebook_id"].as_str().unwrap().to_owned();
    let (status, _) = call(
        &http,
        &session,
        "PATCH",
        format!("{base}/api/notebooks/{work}"),
        Some(json!({"title": "Job"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, refused) = call(
        &http,
        &session,
        "PATCH",
        format!("{base}/api/notebooks/{work}"),
        Some(json!({"parent_id": inner})),
    )
    .await;
    assert_eq!(status, 400, "a notebook cannot move into its own child: {refused}");
    assert!(refused["error"].as_str().unwrap().len() > 10);
    let (_, tree) = call(&http, &session, "GET", format!("{base}/api/notebooks"), None).await;
    let paths: Vec<&str> = tree["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["Job", "Job/Projects"]);

    // A note: tags and to-do state in a save, the trash and back.
    let (_, note) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notes"),
        Some(json!({"title": "Plan", "body": "one", "notebook_id": inner})),
    )
    .await;
    let id = note["note_id"].as_str().unwrap().to_owned();
    let (status, saved) = call(
        &http,
        &session,
        "PUT",
        format!("{base}/api/notes/{id}"),
        Some(json!({"tags": ["work", "q3"], "is_todo": true, "done": true, "base_updated": note["updated"]})),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["tags"], json!(["q3", "work"]));
    assert!(saved["todo_completed"].is_string());
    let (_, saved) = call(
        &http,
        &session,
        "PUT",
        format!("{base}/api/notes/{id}"),
        Some(json!({"tags": ["q3"], "body": "two", "base_updated": saved["updated"]})),
    )
    .await;
    assert_eq!(saved["tags"], json!(["q3"]));
    let (_, tags) = call(&http, &session, "GET", format!("{base}/api/tags"), None).await;
    assert_eq!(tags["tags"][0], json!({"name": "q3", "note_count": 1}), "{tags}");
    let (status, _) = call(&http, &session, "POST", format!("{base}/api/notes/{id}/trash"), None).await;
    assert_eq!(status, 200);
    let (_, trash) = call(&http, &session, "GET", format!("{base}/api/notes?in_trash=true"), None).await;
    assert_eq!(trash["total"], 1);
    call(&http, &session, "POST", format!("{base}/api/notes/{id}/restore"), None).await;
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["in_trash"], false);

    // Revisions with their text, and restoring one as the user.
    let (_, revisions) = call(&http, &session, "GET", format!("{base}/api/notes/{id}/revisions"), None).await;
    let first = &revisions["revisions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(first["body"], "one");
    let revision = first["revision"].as_i64().unwrap();
    let (status, restored) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notes/{id}/revisions/{revision}/restore"),
        None,
    )
    .await;
    assert_eq!((status, restored["body"].as_str()), (200, Some("one")));
    let (status, _) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notes/{id}/revisions/999999/restore"),
        None,
    )
    .await;
    assert_eq!(status, 404);

    // History: an MCP client's change, described, and undone as a whole.
    q.run(&[
        "tools",
        "call",
        "update_note",
        &json!({"note_id": id, "body": "by a client"}).to_string(),
    ]);
    let (_, history) = call(&http, &session, "GET", format!("{base}/api/history?note_id={id}"), None).await;
    let newest = &history["change_sets"][0];
    assert!(newest["actor"].as_str().unwrap().starts_with("mcp"), "{newest}");
    assert_eq!(newest["changes"][0]["what"], "note \"Plan\"");
    assert_eq!(newest["changes"][0]["verb"], "changed");
    let set = newest["change_set_id"].as_str().unwrap();
    let (status, undone) = call(&http, &session, "POST", format!("{base}/api/history/{set}/undo"), None).await;
    assert_eq!((status, undone["undone_changes"].as_u64()), (200, Some(1)));
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "one");
    let (status, _) = call(&http, &session, "POST", format!("{base}/api/history/nope/undo"), None).await;
    assert_eq!(status, 404);

    // Backlinks and chats answer for a note with none; a missing chat is 404; only an empty notebook is deleted.
    let (status, links) = call(&http, &session, "GET", format!("{base}/api/notes/{id}/backlinks"), None).await;
    assert_eq!(status, 200, "{links}");
    let (_, chats) = call(&http, &session, "GET", format!("{base}/api/chats?note_id={id}"), None).await;
    assert_eq!(chats["chats"], json!([]));
    let (status, _) = call(&http, &session, "GET", format!("{base}/api/chats/nope"), None).await;
    assert_eq!(status, 404);
    let (status, refused) = call(&http, &session, "DELETE", format!("{base}/api/notebooks/{inner}"), None).await;
    assert_eq!(status, 400);
    assert!(refused["error"].as_str().unwrap().contains("not empty"), "{refused}");
    let (_, empty) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/notebooks"),
        Some(json!({"title": "Empty"})),
    )
    .await;
    let empty = empty["notebook_id"].as_str().unwrap();
    let (status, _) = call(&http, &session, "DELETE", format!("{base}/api/notebooks/{empty}"), None).await;
    assert_eq!(status, 200);

    // A note is deleted for good only from the trash; then its notebook can go.
    let (status, refused) = call(&http, &session, "POST", format!("{base}/api/notes/{id}/purge"), None).await;
    assert_eq!(status, 400, "{refused}");
    call(&http, &session, "POST", format!("{base}/api/notes/{id}/trash"), None).await;
    let (status, _) = call(&http, &session, "POST", format!("{base}/api/notes/{id}/purge"), None).await;
    assert_eq!(status, 200);
    assert_eq!(q.run(&["--json", "note", "show", &id]).code, 1);
    let (status, _) = call(&http, &session, "DELETE", format!("{base}/api/notebooks/{inner}"), None).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_sidebar_gets_a_setup_hint() {
    let q = Quire::new();
    let (_server, base, session, http) = open_session(&q, &[]).await;
    let (_, settings) = call(&http, &session, "GET", format!("{base}/api/settings"), None).await;
    assert_eq!(settings["models"], json!([]));
    assert!(
        settings["setup_hint"].as_str().unwrap().contains("[[chat.models]]"),
        "{settings}"
    );
    let (status, refused) = call(
        &http,
        &session,
        "POST",
        format!("{base}/api/turns"),
        Some(json!({"message": "hi"})),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        refused["error"].as_str().unwrap().contains("No model is configured"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_starts_the_browser_on_the_printed_address() {
    use std::os::unix::fs::PermissionsExt;
    let q = Quire::new();
    // A stand-in for the desktop's opener, first on PATH: it writes down the address it was given.
    let bin = q.dir().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opened = q.dir().join("opened.txt");
    let script = format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display());
    for name in ["xdg-open", "gio", "gnome-open", "kde-open", "wslview"] {
        std::fs::write(bin.join(name), &script).unwrap();
        std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let (_server, url, _) = serve_with(&q, &[("PATH", path)], &["--open"]);
    let mut seen = String::new();
    for _ in 0..100 {
        seen = std::fs::read_to_string(&opened).unwrap_or_default();
        if !seen.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(seen.trim(), url);
}
