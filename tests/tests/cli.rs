//! End to end: the real `quire` binary on temporary workspaces, through its command line.

use quire_tests::Quire;
use serde_json::Value;

/// Every command has help and a run here (`cli/commands.rs`).
#[path = "cli/commands.rs"]
mod commands;

/// PDFs, scans and photos attached, read by page and cited by search (issue 50).
#[path = "cli/capture.rs"]
mod capture;

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
    let id = note["note_id"].as_str().unwrap();
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
    assert_eq!(hits["results"][0]["note_id"], id);
    assert!(
        hits["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<mark>March</mark>")
    );
    let text = q.run(&["search", "march"]);
    assert!(
        text.stdout.starts_with("1 note matches (showing 1-1)"),
        "{}",
        text.stdout
    );
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
        text.contains("Work: 1 note, 3 with the notebooks inside ") && text.contains("  Projects: 2 notes "),
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
    // Search hits name the notebook by its whole path, as note list does: two "Projects" are told apart.
    let hits = q.run(&["search", "title:b"]).stdout;
    assert!(hits.contains("  b  [Work/Projects]"), "{hits}");
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
        let out: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{query}: {e}: {run:?}"));
        match run.code {
            0 => assert!(out["results"].is_array(), "{query}: {run:?}"),
            _ => {
                let error = out["error"].as_str().unwrap_or_default();
                assert!(
                    error.starts_with("The search query"),
                    "{query}: a clear error, not SQLite's: {run:?}"
                );
            }
        }
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
    assert_eq!(hits["results"][0]["title"], "Welcome to quire");
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
            page["results"].as_array().map(Vec::len)
        ),
        (Some(5), Some(true), Some(2))
    );
    let text = q.run(&["search", "page", "--limit", "2"]).stdout;
    assert!(
        text.starts_with("5 notes match (showing 1-2; use --offset for more)"),
        "{text}"
    );
}

#[test]
fn note_list_filters_and_pages() {
    let q = Quire::new();
    add(&q, &["--title", "a", "--notebook", "Work", "--tag", "x"]);
    add(&q, &["--title", "b", "--notebook", "Work"]);
    let c = add(&q, &["--title", "c", "--tag", "X"])["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let titles = |args: &[&str]| -> Vec<String> {
        let mut full = vec!["--json", "note", "list"];
        full.extend_from_slice(args);
        q.run(&full).json()["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(titles(&[]), ["c"], "the top level");
    assert_eq!(titles(&["--notebook", "work"]), ["a", "b"]);
    assert_eq!(titles(&["--tag", "x"]).len(), 2);
    assert_eq!(titles(&["--notebook", "Work", "--limit", "1", "--offset", "1"]), ["b"]);
    assert!(titles(&["--trash"]).is_empty());
    assert_eq!(
        q.run(&["tools", "call", "delete_note", &format!(r#"{{"note_id": "{c}"}}"#)])
            .code,
        0
    );
    assert_eq!(titles(&["--trash"]), ["c"]);
    let missing = q.run(&["note", "list", "--notebook", "Nowhere"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("no notebook is titled 'Nowhere'"),
        "{missing:?}"
    );
    let both = q.run(&["note", "list", "--tag", "x", "--trash"]);
    assert_eq!(both.code, 2, "{both:?}");
    let text = q.run(&["note", "list", "--notebook", "Work"]).stdout;
    assert!(
        text.starts_with("2 notes (showing 1-2)") && text.contains("  a  [Work] #x"),
        "{text}"
    );
    // With c in the trash, every note left is in a notebook: the empty top level says where they are.
    let text = q.run(&["note", "list"]).stdout;
    assert!(
        text.starts_with("No notes at the top level.") && text.contains("quire notebook list"),
        "{text}"
    );
    assert_eq!(q.run(&["note", "list", "--tag", "nothing"]).stdout, "No notes.\n");
}

#[test]
fn the_cli_describes_a_note_exactly_as_the_tools_do() {
    let q = Quire::new();
    let added = add(
        &q,
        &[
            "--title",
            "Roadmap",
            "--body",
            "Ship in March",
            "--notebook",
            "Work/Projects",
            "--tag",
            "q1",
        ],
    );
    let id = added["note_id"].as_str().unwrap().to_owned();
    let tool = q
        .run(&[
            "tools",
            "call",
            "read_note",
            &format!(r#"{{"note_id": "{id}", "max_chars": 100000}}"#),
        ])
        .json();
    assert_eq!(q.run(&["--json", "note", "show", &id]).json(), tool);
    assert_eq!(added, tool);
    let search = q.run(&["--json", "search", "march"]).json();
    let tool_search = q
        .run(&["tools", "call", "search_notes", r#"{"query": "march", "limit": 20}"#])
        .json();
    assert_eq!(search, tool_search);
    let list = q.run(&["--json", "note", "list", "--tag", "q1"]).json();
    let tool_list = q
        .run(&["tools", "call", "list_notes", r#"{"tag": "q1", "limit": 50}"#])
        .json();
    assert_eq!(list, tool_list);
    let tree = q.run(&["--json", "notebook", "list"]).json();
    assert_eq!(tree, q.run(&["tools", "call", "list_notebooks", "{}"]).json());
    for key in ["note_id", "in_trash", "notebook_path"] {
        assert!(added.get(key).is_some(), "{key} in {added}");
    }
    assert_eq!(added["notebook_path"], "Work/Projects");
}

#[test]
fn revisions_restore_and_undo_of_an_ai_change() {
    let q = Quire::new();
    let id = add(&q, &["--title", "Plan", "--body", "first draft"])["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let change = format!(r#"{{"note_id": "{id}", "body": "rewritten by an AI"}}"#);
    assert_eq!(q.run(&["tools", "call", "update_note", &change]).code, 0);
    let revisions = q.run(&["--json", "note", "revisions", &id]).json();
    let list = revisions["revisions"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{revisions}");
    assert_eq!(list[0]["actor"], "mcp client quire cli");
    let revision = list[0]["revision"].as_i64().unwrap().to_string();
    let text = q.run(&["note", "revisions", &id]).stdout;
    assert!(
        text.contains("before a change by mcp client quire cli") && text.contains("quire note restore"),
        "{text}"
    );
    // A revision's text is read without restoring it (security finding 2-#13).
    assert!(list[0].get("body").is_none(), "{revisions}");
    let with_text = q.run(&["--json", "note", "revisions", &id, "--text"]).json();
    assert_eq!(with_text["revisions"][0]["body"], "first draft");
    let text = q.run(&["note", "revisions", &id, "--text"]).stdout;
    assert!(text.contains("| first draft"), "{text}");
    let restored = q.run(&["note", "restore", &id, &revision]);
    assert_eq!(restored.code, 0, "{restored:?}");
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "first draft");
    assert_eq!(
        q.run(&["--json", "note", "revisions", &id]).json()["revisions"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "restoring kept the AI's text as a revision"
    );
    // The AI's change set is in the history; undoing it now conflicts with the restore, and changes nothing.
    let history = q.run(&["--json", "history"]).json();
    let ai = history["change_sets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["actor"] == "mcp client quire cli")
        .unwrap()["change_set_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = q.run(&["undo", &ai]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("Nothing was undone.")
            && refused.stderr.contains("was changed again afterwards, by you on ")
            && refused
                .stderr
                .contains(&format!("`quire undo {ai} --with-later` undoes the later change too")),
        "{refused:?}"
    );
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "first draft");
    // Undone with the later change (the restore), the note is as before the AI's edit (the first draft); the two
    // undos are one change set, which can be undone in its turn.
    let both = q.run(&["--json", "undo", &ai, "--with-later"]);
    assert_eq!(both.code, 0, "{both:?}");
    let both = both.json();
    assert_eq!(
        both["undone_later_change_set_ids"].as_array().unwrap().len(),
        1,
        "{both}"
    );
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "first draft");
    // The undo says in the history that it is one, and what it undid (ux-2 #13).
    let history = q.run(&["history", "--limit", "1"]).stdout;
    assert!(
        history.contains("(undo of mcp client quire cli's change of ") && history.contains(&ai),
        "{history}"
    );
    assert_eq!(q.run(&["undo", both["change_set_id"].as_str().unwrap()]).code, 0);
    assert_eq!(q.run(&["--json", "note", "show", &id]).json()["body"], "first draft");
    // An AI's change nobody touched since is undone as a whole.
    let created = q
        .run(&[
            "tools",
            "call",
            "create_note",
            r#"{"title": "By AI", "body": "x", "tags": ["ai"]}"#,
        ])
        .json();
    let set = q.run(&["--json", "history", "--limit", "1"]).json()["change_sets"][0]["change_set_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let undone = q.run(&["undo", &set]);
    assert_eq!(undone.code, 0, "{undone:?}");
    assert!(
        undone.stdout.starts_with("Undid 3 changes by mcp client quire cli"),
        "{undone:?}"
    );
    let gone = q.run(&["note", "show", created["note_id"].as_str().unwrap()]);
    assert_eq!(gone.code, 1);
}
