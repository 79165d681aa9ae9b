//! The web API's model install on a real loopback server: a failed download is reported with its reason and leaves
//! search by meaning as it was; a second install while one runs and an unknown model are refused.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use quire_core::Workspace;
use quire_embed::ModelStore;
use quire_web::{SemanticModels, WebModels, WebOptions};

use crate::support::{Session, serve};

const KEY: &str = "0123456789abcdef0123456789abcdef-key";
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A hub that holds no files: every request waits a moment, then gets 404.
#[expect(clippy::unwrap_used, reason = "a test helper stops the test where it failed")]
async fn empty_hub() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = [0; 4096];
                let _ = stream.read(&mut buffer).await;
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_install_says_why_and_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let activated = Arc::new(AtomicUsize::new(0));
    let counter = activated.clone();
    let semantic = SemanticModels {
        store: ModelStore::new(home.path().join("models")),
        endpoint: empty_hub().await,
        active: None,
        uses: "the built-in fallback".into(),
        builtin: true,
        activate: Arc::new(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok("never".into())
        }),
    };
    let models = WebModels {
        semantic: Some(semantic),
        ..WebModels::default()
    };
    let base = serve(Workspace::open_in_memory().unwrap(), WebOptions::new(KEY), models).await;
    let session = Session::open(&base, KEY).await;
    let get = || async {
        let response = session.request(reqwest::Method::GET, "/semantic").send().await.unwrap();
        response.json::<Value>().await.unwrap()
    };
    let post = |body: Value| {
        let request = session
            .request(reqwest::Method::POST, "/semantic/install")
            .header("origin", &base)
            .json(&body);
        async move { request.send().await.unwrap() }
    };

    let before = get().await;
    assert_eq!(
        (&before["builtin"], &before["offer_install"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(before["catalog"][0]["name"], "all-MiniLM-L6-v2");

    assert_eq!(post(json!({"model": "no-such-model"})).await.status(), 404);
    let started = post(json!({})).await;
    assert_eq!(started.status(), 202);
    assert_eq!(
        started.json::<Value>().await.unwrap()["install"]["state"],
        "downloading"
    );
    let again = post(json!({"model": "all-MiniLM-L6-v2"})).await;
    assert_eq!(again.status(), 409, "one install at a time");

    let mut view = get().await;
    for _ in 0..100 {
        if view["install"]["state"] != "downloading" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        view = get().await;
    }
    assert_eq!(view["install"]["state"], "failed", "{view}");
    let error = view["install"]["error"].as_str().unwrap();
    assert!(error.contains("config.json") && error.contains("HTTP 404"), "{error}");
    assert_eq!(
        (&view["builtin"], &view["offer_install"]),
        (&json!(true), &json!(true)),
        "still offered"
    );
    assert_eq!(activated.load(Ordering::SeqCst), 0, "nothing was put in use");
    assert!(!home.path().join("models/all-MiniLM-L6-v2").exists());
}
