//! The security layer on a real loopback server: the cookie alone opens no API call (the session's secret must come
//! too), refusals carry the security headers, idle connections are closed, a key replaced on disk takes effect at
//! once, and a note as large as core accepts can be saved.

use std::time::Duration;

use quire_core::{Workspace, testing};
use quire_web::{WebModels, WebOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Session, client, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cookie_alone_opens_no_api_call() {
    let ws = Workspace::open_in_memory().unwrap();
    testing::note("Private", "words").create_in(&ws).unwrap();
    let base = serve(ws, WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&base, KEY).await;
    let (http, cookie, secret) = (&session.http, &session.cookie, &session.secret);

    // What a local server on another port receives from the browser, replayed: the cookie, with the Host it wants.
    let stolen = http
        .get(format!("{base}/api/notes"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(stolen.status(), 401);
    // The page it can fetch with the cookie does not hold the secret either.
    let page = http
        .get(format!("{base}/"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert!(!page.text().await.unwrap().contains(secret.as_str()));
    // A wrong secret, or the secret of no session, is refused too.
    let wrong = http
        .get(format!("{base}/api/notes"))
        .header("cookie", cookie)
        .header("x-quire-session", "0".repeat(64))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let no_cookie = http
        .get(format!("{base}/api/notes"))
        .header("x-quire-session", secret)
        .send()
        .await
        .unwrap();
    assert_eq!(no_cookie.status(), 401);
    // The query parameter is for attachments (images the browser loads by itself), nothing else.
    let by_query = http
        .get(format!("{base}/api/notes?session={secret}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(by_query.status(), 401);

    // Both: the page's own calls.
    let listed = session.request(reqwest::Method::GET, "/notes").send().await.unwrap();
    assert_eq!(listed.status(), 200);
    let page: Value = listed.json().await.unwrap();
    assert_eq!(page["notes"][0]["title"], "Private");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_the_security_headers() {
    let base = serve(
        Workspace::open_in_memory().unwrap(),
        WebOptions::new(KEY),
        WebModels::default(),
    )
    .await;
    let http = client();
    let unauthorised = http.get(format!("{base}/api/notes")).send().await.unwrap();
    let foreign = http
        .get(format!("{base}/api/notes"))
        .header("origin", "http://evil.example")
        .send()
        .await
        .unwrap();
    let rebound = http
        .get(format!("{base}/"))
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    for (response, status) in [(unauthorised, 401), (foreign, 403), (rebound, 403)] {
        assert_eq!(response.status(), status);
        let headers = response.headers();
        for (name, expected) in [
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
            ("x-frame-options", "DENY"),
            ("cache-control", "no-store"),
        ] {
            assert_eq!(
                headers.get(name).and_then(|v| v.to_str().ok()),
                Some(expected),
                "{name} on {status}"
            );
        }
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
    }
}

/// Reads until the server closes the connection; what it sent meanwhile. A generous bound only stops a hung test.
async fn until_closed(stream: &mut tokio::net::TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), async {
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server never closed the idle connection");
    received
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let options = WebOptions {
        idle_timeout: Duration::from_millis(300),
        ..WebOptions::new(KEY)
    };
    let base = serve(Workspace::open_in_memory().unwrap(), options, WebModels::default()).await;
    let addr = base.trim_start_matches("http://").to_owned();

    // A connection that sends nothing.
    let mut silent = tokio::net::TcpStream::connect(&addr).await.unwrap();
    assert!(until_closed(&mut silent).await.is_empty());

    // One that starts a request and never finishes its header.
    let mut trickling = tokio::net::TcpStream::connect(&addr).await.unwrap();
    trickling
        .write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    assert!(until_closed(&mut trickling).await.is_empty());

    // A whole request is answered, and the connection, kept alive, is closed once idle.
    let mut polite = tokio::net::TcpStream::connect(&addr).await.unwrap();
    polite
        .write_all(b"GET /api/notes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let answer = String::from_utf8(until_closed(&mut polite).await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_replaced_on_disk_takes_effect_in_the_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("web-key");
    let old = "a".repeat(64);
    std::fs::write(&key_file, format!("{old}\n")).unwrap();
    let options = WebOptions {
        key_file: Some(key_file.clone()),
        ..WebOptions::new(old.clone())
    };
    let base = serve(Workspace::open_in_memory().unwrap(), options, WebModels::default()).await;
    let session = Session::open(&base, &old).await;

    // What `quire serve --rotate-key` does while this server runs.
    let new = "b".repeat(64);
    std::fs::write(&key_file, &new).unwrap();
    let refused = client().get(format!("{base}/?token={old}")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(refused.headers().get("set-cookie").is_none());
    let fresh = Session::open(&base, &new).await;
    // Sessions are derived from the key: the one opened before ends with it (as `--help` says), the new one works.
    let ended = session.request(reqwest::Method::GET, "/notes").send().await.unwrap();
    assert_eq!(ended.status(), 401);
    let works = fresh.request(reqwest::Method::GET, "/notes").send().await.unwrap();
    assert_eq!(works.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_of_three_megabytes_is_created_and_saved() {
    let base = serve(
        Workspace::open_in_memory().unwrap(),
        WebOptions::new(KEY),
        WebModels::default(),
    )
    .await;
    let session = Session::open(&base, KEY).await;
    let call = |method: reqwest::Method, path: String, body: Value| session.request(method, &path).json(&body).send();
    // Lines with quotes, so the JSON is larger than the text.
    let big = "a \"quoted\" line of a long imported note\n".repeat(3 * 1024 * 1024 / 40);
    assert!(big.len() > 3_000_000);
    let created = call(
        reqwest::Method::POST,
        "/notes".into(),
        json!({"title": "Big", "body": big}),
    )
    .await
    .unwrap();
    assert_eq!(created.status(), 201);
    let note: Value = created.json().await.unwrap();
    let edited = format!("{big}one more line\n");
    let saved = call(
        reqwest::Method::PUT,
        format!("/notes/{}", note["note_id"].as_str().unwrap()),
        json!({"body": edited, "base_updated": note["updated"]}),
    )
    .await
    .unwrap();
    assert_eq!(saved.status(), 200);
    let saved: Value = saved.json().await.unwrap();
    assert_eq!(saved["body"].as_str().unwrap().len(), edited.len());
}

/// ux-2 #9: restarting `quire serve` logged the browser out onto a bare page. A session's cookie and secret are
/// derived from the web key, so a server started again with the same key takes them; another key, or a cookie or
/// secret made up or taken from another session, opens nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_outlives_a_restart_with_the_same_key_and_no_other() {
    const KEY: &str = "0123456789abcdef0123456789abcdef-restart";
    let ws = Workspace::open_in_memory().unwrap();
    let first = serve(ws.clone(), WebOptions::new(KEY), WebModels::default()).await;
    let session = Session::open(&first, KEY).await;
    assert_eq!(
        session
            .request(reqwest::Method::GET, "/tags")
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    // "Restarted": another server, the same workspace and key. The page's cookie and secret still work.
    let again = serve(ws.clone(), WebOptions::new(KEY), WebModels::default()).await;
    let http = client();
    let call = |base: &str, cookie: &str, secret: &str| {
        http.get(format!("{base}/api/tags"))
            .header("cookie", cookie)
            .header("x-quire-session", secret)
            .send()
    };
    assert_eq!(
        call(&again, &session.cookie, &session.secret).await.unwrap().status(),
        200
    );
    let page = http
        .get(format!("{again}/"))
        .header("cookie", &session.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        page.status(),
        200,
        "the app, not the page that says how to open a session"
    );

    // A new key ends it; a tag or secret changed, or one session's secret with another's cookie, is refused.
    let other = serve(
        ws.clone(),
        WebOptions::new(format!("{KEY}-rotated")),
        WebModels::default(),
    )
    .await;
    assert_eq!(
        call(&other, &session.cookie, &session.secret).await.unwrap().status(),
        401
    );
    let forged = format!("{}0", &session.cookie[..session.cookie.len() - 1]);
    let forged = if forged == session.cookie {
        format!("{}1", &session.cookie[..session.cookie.len() - 1])
    } else {
        forged
    };
    assert_eq!(call(&again, &forged, &session.secret).await.unwrap().status(), 401);
    let second = Session::open(&again, KEY).await;
    assert_eq!(
        call(&again, &second.cookie, &session.secret).await.unwrap().status(),
        401
    );
    assert_eq!(
        call(&again, &second.cookie, &second.secret).await.unwrap().status(),
        200
    );
}
