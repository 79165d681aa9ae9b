//! End to end: `quire lock init` killed with SIGKILL at many points while it seals 1,200 protected notes. After each
//! kill the workspace opens, and either no passphrase was set and nothing changed, or it was set and every protected
//! note is sealed, with no trace of their text in the file, its WAL or the word index; then the passphrase opens them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use quire_tests::{Quire, files_holding, workspace_files};

const PROTECTED: usize = 1_200;
const PASSPHRASE: &str = "correct horse battery";

fn marker(i: usize) -> String {
    format!("crashmark{i:05}x")
}

/// The files of the workspace that hold the word `crashmark` (every protected note's body has one).
fn files_with_markers(path: &Path) -> Vec<PathBuf> {
    files_holding(&workspace_files(path), "crashmark")
}

fn status(q: &Quire) -> serde_json::Value {
    q.run(&["--json", "lock", "status"]).json()
}

#[test]
fn lock_init_killed_at_any_point_leaves_all_or_nothing_sealed() {
    let q = Quire::new();
    let source = q.dir().join("source");
    std::fs::create_dir_all(&source).unwrap();
    for i in 0..PROTECTED {
        let text = format!(
            "---\nprotected: true\n---\nThe secret {} and more words to seal.\n",
            marker(i)
        );
        std::fs::write(source.join(format!("Secret {i}.md")), text).unwrap();
    }
    for i in 0..200 {
        std::fs::write(source.join(format!("Plain {i}.md")), format!("plain words {i}\n")).unwrap();
    }
    let imported = q.run(&["import", source.to_str().unwrap()]);
    assert_eq!(imported.code, 0, "{imported:#?}");
    // A search builds the word index beside the file.
    assert_eq!(q.run(&["search", "plain"]).code, 0);
    let workspace = q.workspace();
    let pristine = q.dir().join("pristine.quire");
    std::fs::copy(&workspace, &pristine).unwrap();
    assert_eq!(status(&q)["protected_unsealed"], PROTECTED);

    let mut sealed_seen = 0;
    let mut untouched_seen = 0;
    for delay in [0u64, 20, 50, 90, 140, 200, 280, 380, 500, 650, 850, 1100, 1500] {
        // Each attempt starts from the workspace as imported.
        for file in workspace_files(&workspace) {
            std::fs::remove_file(file).unwrap();
        }
        std::fs::copy(&pristine, &workspace).unwrap();
        let mut command = q.command();
        command
            .args([
                "--workspace",
                workspace.to_str().unwrap(),
                "lock",
                "init",
                "--passphrase-stdin",
            ])
            .args(["--kdf-memory-kib", "8", "--kdf-passes", "1"])
            .stdin(Stdio::piped());
        let mut child = command.spawn().unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(format!("{PASSPHRASE}\n").as_bytes()).unwrap();
        }
        std::thread::sleep(Duration::from_millis(delay));
        // SIGKILL: no destructor, no cleanup.
        let _ = child.kill();
        let _ = child.wait();

        // Opening it (lock status) must work, and finish what a killed process left to clean up.
        let now = status(&q);
        if now["initialized"] == true {
            sealed_seen += 1;
            assert_eq!(now["sealed_notes"], PROTECTED, "delay {delay}: {now}");
            assert_eq!(now["protected_unsealed"], 0, "delay {delay}: {now}");
            assert_eq!(files_with_markers(&workspace), Vec::<PathBuf>::new(), "delay {delay}");
            // The passphrase opens a sealed note, whole.
            let found = q.run(&["--json", "search", "\"Secret 7\""]).json();
            let id = found["results"][0]["note_id"].as_str().unwrap();
            {
                let shown = q.run_raw(
                    &[
                        "--workspace",
                        workspace.to_str().unwrap(),
                        "--passphrase-stdin",
                        "note",
                        "show",
                        id,
                    ],
                    Some(&format!("{PASSPHRASE}\n")),
                );
                assert_eq!(shown.code, 0, "{shown:#?}");
                assert!(shown.stdout.contains(&marker(7)), "{shown:#?}");
            }
        } else {
            untouched_seen += 1;
            assert_eq!(now["sealed_notes"], 0, "delay {delay}: {now}");
            assert_eq!(now["protected_unsealed"], PROTECTED, "delay {delay}: {now}");
        }
    }
    eprintln!("kills before the commit: {untouched_seen}, after: {sealed_seen}");
    // Both outcomes happened: the kills landed before and after the commit.
    assert!(
        untouched_seen > 0 && sealed_seen > 0,
        "untouched {untouched_seen}, sealed {sealed_seen}"
    );
}
