//! End to end: the real `quire` binary on temporary workspaces, through its command line.

use quire_tests::Quire;
use serde_json::Value;

fn add(q: &Quire, args: &[&str]) -> Value {
    let mut full = vec!["--json", "note", "add"];
    full.extend_from_slice(args);
    q.run(&full).json()
}

#[test]
fn add_show_and_search_round_trip() {
    let q = Quire::new();
    let note = add(
        &q,
        &[
            "--title",
            "Roadmap",
            "--body",
            "Ship **search** in March",
            "--notebook",
            "Work/Projects",
            "--tag",
            "plan",
            "--tag",
            "q1",
        ],
    );
    let id = note["id"].as_str().unwrap();
    assert_eq!(note["notebook_path"], "Work/Projects");
    assert_eq!(note["tags"], serde_json::json!(["plan", "q1"]));

    let shown = q.run(&["--json", "note", "show", id]).json();
    assert_eq!(shown["body"], "Ship **search** in March");
    assert_eq!(shown["title"], "Roadmap");

    let text = q.run(&["note", "show", id]);
    assert_eq!(text.code, 0);
    assert!(text.stdout.starts_with("# Roadmap\n"), "{}", text.stdout);
    assert!(text.stdout.contains("notebook: Work/Projects"));
    assert!(text.stdout.ends_with("Ship **search** in March\n"));

    let hits = q
        .run(&["--json", "search", "march", "tag:plan", "notebook:work"])
        .json();
    assert_eq!(hits["total"], 1);
    assert_eq!(hits["items"][0]["note"]["id"], id);
    assert!(
        hits["items"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<mark>March</mark>")
    );
    let text = q.run(&["search", "march"]);
    assert!(text.stdout.starts_with("1 note match (showing 1-1)"), "{}", text.stdout);
    assert!(
        text.stdout.contains("Ship **search** in March"),
        "marks are plain text off a terminal: {}",
        text.stdout
    );
    assert_eq!(q.run(&["--json", "search", "--", "-march"]).json()["total"], 0);
}

#[test]
fn body_from_file_and_stdin_and_todos() {
    let q = Quire::new();
    let file = q.dir().join("body.md");
    std::fs::write(&file, "# From a file\n\nline two\n").unwrap();
    let from_file = add(&q, &["--title", "F", "--body-file", file.to_str().unwrap()]);
    assert_eq!(from_file["body"], "# From a file\n\nline two\n");
    let ws = q.workspace();
    let from_stdin = q.run_raw(
        &[
            "--workspace",
            ws.to_str().unwrap(),
            "--json",
            "note",
            "add",
            "--title",
            "S",
            "--body-file",
            "-",
            "--todo",
        ],
        Some("piped body"),
    );
    let from_stdin = from_stdin.json();
    assert_eq!(
        (from_stdin["body"].as_str(), from_stdin["is_todo"].as_bool()),
        (Some("piped body"), Some(true))
    );
    assert_eq!(q.run(&["--json", "search", "type:todo"]).json()["total"], 1);
    let both = q.run(&["note", "add", "--title", "x", "--body", "b", "--body-file", "f"]);
    assert_eq!(both.code, 2, "clap refuses both: {both:?}");
}

#[test]
fn notebook_tree_with_counts() {
    let q = Quire::new();
    add(&q, &["--title", "a", "--notebook", "Work"]);
    add(&q, &["--title", "b", "--notebook", "work/Projects"]);
    add(&q, &["--title", "c", "--notebook", "Work/projects"]);
    add(&q, &["--title", "d"]);
    let tree = q.run(&["--json", "notebook", "list"]).json();
    assert_eq!(tree["top_level_note_count"], 1);
    let rows: Vec<(String, u64, u64)> = tree["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|nb| {
            (
                nb["title"].as_str().unwrap().to_owned(),
                nb["depth"].as_u64().unwrap(),
                nb["note_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, vec![("Work".to_owned(), 0, 1), ("Projects".to_owned(), 1, 2)]);
    let text = q.run(&["notebook", "list"]).stdout;
    assert!(
        text.contains("Work: 1 notes") && text.contains("  Projects: 2 notes"),
        "{text}"
    );

    // A title shared by two notebooks needs a path.
    add(&q, &["--title", "e", "--notebook", "Home/Projects"]);
    let ambiguous = q.run(&["note", "add", "--title", "f", "--notebook", "Projects"]);
    assert_eq!(ambiguous.code, 1);
    assert!(
        ambiguous
            .stderr
            .contains("2 notebooks are titled 'Projects'; give its path instead"),
        "{ambiguous:?}"
    );
}

#[test]
fn errors_are_one_line_on_stderr_and_a_failing_exit() {
    let q = Quire::new();
    add(&q, &["--title", "t"]);
    for (args, message) in [
        (
            vec!["search", "created:someday"],
            "error: Cannot read the date 'someday' in 'created:someday'",
        ),
        (
            vec!["search", "type:poem"],
            "error: 'type:poem' is not valid: use type:note or type:todo.",
        ),
        (vec!["note", "show", "no-such-id"], "error: Note not found"),
        (
            vec!["note", "add", "--title", "  "],
            "error: Note title cannot be empty.",
        ),
    ] {
        let run = q.run(&args);
        assert_eq!(run.code, 1, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {run:?}");
        assert!(run.stderr.starts_with(message), "{args:?}: {run:?}");
    }
    // Hostile search strings never reach the user as SQLite errors.
    for query in [
        "\"unbalanced",
        "NEAR(",
        "*",
        "AND OR NOT",
        "{body}: x",
        "((",
        "^",
        "tag:%",
    ] {
        let run = q.run(&["--json", "search", "--", query]);
        assert_eq!(run.code, 0, "{query}: {run:?}");
    }
}

#[test]
fn refuses_a_file_that_is_not_a_workspace_and_leaves_it_untouched() {
    let q = Quire::new();
    let path = q.dir().join("notes.txt");
    std::fs::write(&path, "my precious notes\n".repeat(100)).unwrap();
    let run = q.run_raw(&["--workspace", path.to_str().unwrap(), "notebook", "list"], None);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("is not a quire workspace (it is not an SQLite database); it was left untouched"),
        "{run:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "my precious notes\n".repeat(100)
    );
}

#[test]
fn default_workspace_lives_in_the_data_directory_with_a_welcome_note() {
    let q = Quire::new();
    let status = q.run_raw(&["--json"], None).json();
    let path = status["workspace"].as_str().unwrap();
    assert!(
        path.starts_with(q.dir().to_str().unwrap()) && path.ends_with("quire/workspace.quire"),
        "{path}"
    );
    assert_eq!(status["notes"], 1);
    let hits = q.run_raw(&["--json", "search", "welcome"], None).json();
    assert_eq!(hits["items"][0]["note"]["title"], "Welcome to quire");
    // The welcome note is written once, when the workspace is created.
    assert_eq!(q.run_raw(&["--json"], None).json()["notes"], 1);

    // QUIRE_WORKSPACE picks another file.
    let other = q.dir().join("other.quire");
    let mut command = q.command();
    let out = command
        .env("QUIRE_WORKSPACE", &other)
        .args(["--json", "note", "add", "--title", "elsewhere"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(other.exists());
    assert_eq!(q.run_raw(&["--json", "search", "elsewhere"], None).json()["total"], 0);
}

#[test]
fn search_pages() {
    let q = Quire::new();
    for i in 0..5 {
        add(&q, &["--title", &format!("page test {i}")]);
    }
    let page = q
        .run(&["--json", "search", "page", "--limit", "2", "--offset", "2"])
        .json();
    assert_eq!(
        (
            page["total"].as_u64(),
            page["has_more"].as_bool(),
            page["items"].as_array().map(Vec::len)
        ),
        (Some(5), Some(true), Some(2))
    );
    let text = q.run(&["search", "page", "--limit", "2"]).stdout;
    assert!(
        text.starts_with("5 notes match (showing 1-2; use --offset for more)"),
        "{text}"
    );
}
