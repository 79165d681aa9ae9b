//! End to end: sync through real servers on loopback, with the real binary: a WebDAV server (wsgidav) and an S3
//! server (moto), both from PyPI. `cargo xtask ci` installs them and says where (`QUIRE_SYNC_SERVERS`), which makes
//! these tests mandatory; elsewhere they look on the PATH and say that they skipped if the servers are not there.
//! Two devices share a note both ways, and nothing the servers store holds a marker phrase.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use quire_tests::servers::{http, moto, wsgidav, wsgidav_with_password};
use quire_tests::{Quire, Run, files_below, files_holding};

const PASSPHRASE: &str = "correct horse battery";
const MARKER: &str = "tangerine-okapi-58";

/// `quire` with `env` set and the passphrase on standard input.
fn run(q: &Quire, env: &[(&str, String)], args: &[&str]) -> Run {
    let mut command = q.command();
    command.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    command
        .arg("--workspace")
        .arg(q.workspace())
        .arg("--passphrase-stdin")
        .args(args);
    command.stdin(Stdio::piped());
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{PASSPHRASE}\n{PASSPHRASE}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Two devices through the target at `address`: a note from A (with the marker) reaches B, one from B reaches A.
fn two_devices_through(address: &str, env: &[(&str, String)]) {
    let (a, b) = (Quire::new(), Quire::new());
    let added = run(
        &a,
        env,
        &["--json", "note", "add", "--title", "From A", "--body", MARKER],
    )
    .json();
    let from_a = added["note_id"].as_str().unwrap().to_owned();
    run(&a, env, &["lock", "init", "--kdf-memory-kib", "8", "--kdf-passes", "1"]);
    let init = run(&a, env, &["--json", "sync", "init", address, "--name", "a"]);
    assert_eq!(init.json()["sent_notes"], 1, "{init:?}");
    let joined = run(&b, env, &["--json", "sync", "join", address, "--name", "b"]);
    assert_eq!(joined.json()["applied_notes"], 1, "{joined:?}");
    let shown = run(&b, env, &["--json", "note", "show", &from_a]).json();
    assert_eq!(shown["body"], MARKER);

    run(&b, env, &["note", "add", "--title", "From B", "--body", "hello"]);
    assert_eq!(run(&b, env, &["--json", "sync"]).json()["sent_notes"], 1);
    assert_eq!(run(&a, env, &["--json", "sync"]).json()["applied_notes"], 1);
    let listed = run(&a, env, &["--json", "note", "list"]).json();
    let titles: Vec<&str> = listed["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.len(), 2, "{listed}");
    let status = run(&a, env, &["--json", "sync", "status"]).json();
    assert_eq!(
        status["target"],
        address.trim_end_matches('/').to_owned() + "/",
        "{status}"
    );
}

#[test]
fn two_devices_sync_through_a_webdav_server() {
    let root = tempfile::tempdir().unwrap();
    let Some((_server, port)) = wsgidav(root.path()) else {
        return;
    };
    two_devices_through(&format!("webdav+http://127.0.0.1:{port}/notes/quire"), &[]);
    let files = files_below(root.path());
    assert!(files.len() >= 5, "{files:?}");
    assert_eq!(
        files_holding(&files, MARKER),
        Vec::<PathBuf>::new(),
        "plain text on the server"
    );
    assert_eq!(
        files_holding(&files, "From A"),
        Vec::<PathBuf>::new(),
        "a title on the server"
    );
}

#[test]
fn two_devices_sync_through_an_s3_server() {
    let Some((_server, port)) = moto("quire-notes") else {
        return;
    };
    let env = [
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
    ];
    two_devices_through("s3://quire-notes/laptop-sync", &env);

    // Every object the server holds, read back: none holds the marker or a title.
    let listing = String::from_utf8(http(port, "GET", "/quire-notes?list-type=2")).unwrap();
    let keys: Vec<&str> = listing
        .split("<Key>")
        .skip(1)
        .filter_map(|rest| rest.split("</Key>").next())
        .collect();
    assert!(keys.len() >= 5, "{listing}");
    for key in keys {
        let object = http(port, "GET", &format!("/quire-notes/{key}"));
        for needle in [MARKER, "From A"] {
            assert!(
                !object.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{key} holds {needle}"
            );
        }
    }

    // Without credentials, a clear refusal that names what to set.
    let q = Quire::new();
    run(&q, &[], &["lock", "init", "--kdf-memory-kib", "8", "--kdf-passes", "1"]);
    let refused = run(&q, &[], &["sync", "init", "s3://quire-notes/other"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("AWS_ACCESS_KEY_ID"), "{refused:?}");
}

#[test]
fn a_refused_password_is_a_problem_to_fix_said_in_words_not_offline() {
    // Found in use: a wrong QUIRE_WEBDAV_PASSWORD made `quire sync` say "offline ... cannot be reached" (exit 3), and
    // `sync init` printed the client's context and the server's HTML page after its message.
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("dav");
    std::fs::create_dir(&root).unwrap();
    let Some((_server, port)) = wsgidav_with_password(&root, "me", "pw-1") else {
        return;
    };
    let a = Quire::new();
    run(&a, &[], &["lock", "init", "--kdf-memory-kib", "8", "--kdf-passes", "1"]);
    let address = format!("webdav+http://me@127.0.0.1:{port}/notes");
    let wrong = [("QUIRE_WEBDAV_PASSWORD", "not-it".to_owned())];
    let refused = run(&a, &wrong, &["sync", "init", &address, "--name", "a"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stderr.contains("refused quire's credentials"), "{refused:?}");
    assert!(!refused.stderr.contains("<html"), "the server's page: {refused:?}");
    assert!(!refused.stderr.contains("context"), "the client's context: {refused:?}");

    let right = [("QUIRE_WEBDAV_PASSWORD", "pw-1".to_owned())];
    let init = run(&a, &right, &["sync", "init", &address, "--name", "a"]);
    assert_eq!(init.code, 0, "{init:?}");
    run(&a, &right, &["note", "add", "--title", "Waits", "--body", "here"]);
    let synced = run(&a, &wrong, &["sync"]);
    assert_eq!(synced.code, 1, "a problem to fix, not offline (3): {synced:?}");
    assert!(synced.stderr.contains("refused quire's credentials"), "{synced:?}");
    assert!(!synced.stderr.contains("offline"), "{synced:?}");
}
