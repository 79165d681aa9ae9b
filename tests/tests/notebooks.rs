//! End to end: `quire notebook add|rename|move|delete` and `quire note move`, and the hints that name them.

use quire_tests::{Quire, Run};

/// The notebook tree as `(path, note count)`, parents first.
fn tree(q: &Quire) -> Vec<(String, u64)> {
    let list = q.run(&["--json", "notebook", "list"]).json();
    list["notebooks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|nb| {
            (
                nb["path"].as_str().unwrap_or_default().to_owned(),
                nb["note_count"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn paths(q: &Quire) -> Vec<String> {
    tree(q).into_iter().map(|(path, _)| path).collect()
}

/// A success: exit code 0.
fn ok(run: &Run) {
    assert_eq!(run.code, 0, "{run:#?}");
}

/// A refusal: exit code 1, one `error:` line that contains `expected`.
fn refused(run: &Run, expected: &str) {
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains(expected),
        "expected {expected:?}: {run:#?}"
    );
}

#[test]
fn notebooks_are_added_renamed_moved_and_deleted_by_path() {
    let q = Quire::new();
    let added = q.run(&["notebook", "add", "Work/Projects"]);
    assert_eq!(added.code, 0, "{added:#?}");
    assert!(
        added.stdout.contains("Added notebook Work  (") && added.stdout.contains("Added notebook Work/Projects  ("),
        "both notebooks of the path are created: {added:#?}"
    );
    assert_eq!(paths(&q), ["Work", "Work/Projects"]);
    // A path that exists (in any case) is refused, and nothing is created.
    refused(
        &q.run(&["notebook", "add", "work/projects"]),
        "the notebook 'Work/Projects' exists already",
    );
    refused(&q.run(&["notebook", "add", "Work"]), "exists already");
    refused(&q.run(&["notebook", "add", "/"]), "give the new notebook's path");
    // The --json output describes the notebook as `notebook list --json` does, and says what was created.
    let json = q.run(&["--json", "notebook", "add", "Archive/2025"]).json();
    assert_eq!(json["created"], serde_json::json!(["Archive", "Archive/2025"]));
    let listed = q.run(&["--json", "notebook", "list"]).json();
    let entry = listed["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|nb| nb["path"] == "Archive/2025")
        .unwrap()
        .clone();
    for (key, value) in entry.as_object().unwrap() {
        if key != "depth" && key != "note_count" {
            assert_eq!(&json[key], value, "field {key} as the tools say it");
        }
    }

    let renamed = q.run(&["notebook", "rename", "Work/Projects", "Clients"]);
    assert_eq!(renamed.code, 0, "{renamed:#?}");
    assert!(
        renamed
            .stdout
            .starts_with("Renamed notebook Work/Projects to Work/Clients\nto take it back: quire undo "),
        "{renamed:#?}"
    );
    refused(
        &q.run(&["notebook", "rename", "Clients", "A/B"]),
        "a notebook title cannot contain '/'",
    );
    ok(&q.run(&["notebook", "add", "Work/Drafts"]));
    refused(
        &q.run(&["notebook", "rename", "Work/Drafts", "clients"]),
        "Work holds a notebook titled 'Clients' already",
    );
    refused(
        &q.run(&["notebook", "rename", "Nowhere", "x"]),
        "no notebook is titled 'Nowhere'",
    );

    let moved = q.run(&["notebook", "move", "Work/Clients", "--to", "Archive"]);
    assert_eq!(moved.code, 0, "{moved:#?}");
    assert!(
        moved
            .stdout
            .starts_with("Moved notebook Work/Clients to Archive/Clients\n"),
        "{moved:#?}"
    );
    let moved = q
        .run(&["--json", "notebook", "move", "Archive/Clients", "--top-level"])
        .json();
    assert_eq!(
        (moved["path"].as_str(), moved["parent_id"].as_str()),
        (Some("Clients"), Some("_root"))
    );
    refused(
        &q.run(&["notebook", "move", "Archive", "--to", "Archive/2025"]),
        "Cannot move a notebook into itself",
    );
    refused(
        &q.run(&["notebook", "move", "Clients", "--to", "Nowhere"]),
        "create it first with `quire notebook add Nowhere`, or use --top-level",
    );
    let neither = q.run(&["notebook", "move", "Clients"]);
    assert_eq!(neither.code, 2, "--to or --top-level is required: {neither:#?}");
    assert_eq!(paths(&q), ["Archive", "Archive/2025", "Clients", "Work", "Work/Drafts"]);

    // A notebook with a note (even in the trash) or a notebook inside is refused and stays.
    let note = q
        .run(&["--json", "note", "add", "--title", "Plan", "--notebook", "Clients"])
        .json();
    let note_id = note["note_id"].as_str().unwrap();
    ok(&q.run(&["tools", "call", "delete_note", &format!(r#"{{"note_id":"{note_id}"}}"#)]));
    refused(
        &q.run(&["notebook", "delete", "Clients"]),
        "Notebook is not empty: it holds 1 note (trashed ones included) and 0 notebooks.",
    );
    refused(&q.run(&["notebook", "delete", "Archive"]), "Nothing was deleted.");
    refused(&q.run(&["notebook", "delete", "/"]), "the top level cannot be deleted");
    assert_eq!(paths(&q), ["Archive", "Archive/2025", "Clients", "Work", "Work/Drafts"]);

    let deleted = q.run(&["notebook", "delete", "Work/Drafts"]);
    assert_eq!(deleted.code, 0, "{deleted:#?}");
    assert!(
        deleted.stdout.starts_with("Deleted notebook Work/Drafts\n"),
        "{deleted:#?}"
    );
    let change_set = deleted.stdout.trim_end().rsplit(' ').next().unwrap().to_owned();
    assert_eq!(paths(&q), ["Archive", "Archive/2025", "Clients", "Work"]);
    assert_eq!(q.run(&["undo", &change_set]).code, 0);
    assert_eq!(paths(&q), ["Archive", "Archive/2025", "Clients", "Work", "Work/Drafts"]);
    let deleted = q.run(&["--json", "notebook", "delete", "Archive/2025"]).json();
    assert_eq!(
        (deleted["path"].as_str(), deleted["deleted"].as_bool()),
        (Some("Archive/2025"), Some(true))
    );
}

#[test]
fn a_note_moves_to_a_notebook_by_path_or_to_the_top_level() {
    let q = Quire::new();
    let note = q
        .run(&["--json", "note", "add", "--title", "Minutes", "--notebook", "Inbox"])
        .json();
    let id = note["note_id"].as_str().unwrap();
    ok(&q.run(&["notebook", "add", "Work/Meetings"]));

    let moved = q.run(&["note", "move", id, "--to", "Work/Meetings"]);
    assert_eq!(moved.code, 0, "{moved:#?}");
    assert!(
        moved.stdout.starts_with(&format!(
            "Moved note {id} \"Minutes\" from Inbox to Work/Meetings\nto take it back: quire undo "
        )),
        "{moved:#?}"
    );
    // --json describes the note as `note show --json` does.
    let json = q.run(&["--json", "note", "move", id, "--top-level"]).json();
    assert_eq!(json, q.run(&["--json", "note", "show", id]).json());
    assert_eq!(json["notebook_path"], "");
    let again = q.run(&["note", "move", id, "--top-level"]);
    assert!(
        again.stdout.contains("is in the top level already; nothing changed"),
        "{again:#?}"
    );

    refused(
        &q.run(&["note", "move", id, "--to", "Work/Nowhere"]),
        "create it first with `quire notebook add Work/Nowhere`",
    );
    refused(
        &q.run(&["note", "move", "no-such-note", "--to", "Inbox"]),
        "Note not found",
    );
    assert_eq!(q.run(&["note", "move", id]).code, 2, "--to or --top-level is required");
    assert_eq!(
        tree(&q),
        [
            ("Inbox".to_owned(), 0),
            ("Work".to_owned(), 0),
            ("Work/Meetings".to_owned(), 0)
        ]
    );
}

/// ux 6: `quire import --into Bulk` with no Bulk said to create it with `quire notebook`, which could not.
#[test]
fn a_missing_import_notebook_names_the_command_that_creates_it() {
    let q = Quire::new();
    let folder = q.dir().join("notes");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("One.md"), "one").unwrap();
    let folder = folder.to_str().unwrap();

    let missing = q.run(&["import", folder, "--into", "Bulk"]);
    assert_eq!(missing.code, 2, "{missing:#?}");
    assert!(
        missing
            .stderr
            .contains("create it first with `quire notebook add Bulk`, or leave out --into"),
        "{missing:#?}"
    );
    let spaced = q.run(&["import", folder, "--into", "Old notes"]);
    assert!(
        spaced.stderr.contains("`quire notebook add 'Old notes'`"),
        "{spaced:#?}"
    );

    // Every `quire notebook ...` that a message names is a command that exists.
    let help = q.run(&["notebook", "--help"]).stdout;
    let mut hints = vec![missing.stderr, spaced.stderr];
    hints.push(q.run(&["note", "list", "--notebook", "Bulk"]).stderr);
    hints.push(q.run(&["note", "list"]).stdout);
    hints.push(q.run(&["notebook", "delete", "Bulk"]).stderr);
    for hint in &hints {
        for named in hint.split("`quire notebook ").skip(1) {
            let command = named.split([' ', '`']).next().unwrap_or_default();
            assert!(
                help.contains(&format!("\n  {command} ")),
                "`quire notebook {command}` is named in {hint:?} but does not exist"
            );
        }
    }

    // Following the hint works.
    assert_eq!(q.run(&["notebook", "add", "Bulk"]).code, 0);
    let imported = q.run(&["--json", "import", folder, "--into", "Bulk"]).json();
    assert_eq!(imported["imported"], 1);
    assert_eq!(tree(&q), [("Bulk".to_owned(), 1)]);
}

#[test]
fn daily_and_weekly_notes_follow_the_configuration_and_templates_fill_in() {
    let q = Quire::new();
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[daily]\nnotebook = \"Journal\"\nformat = \"YYYY/MM/YYYY-MM-DD\"\ntemplate = \"Day\"\n\
         [weekly]\nformat = \"GGGG-[W]WW\"\n",
    )
    .unwrap();
    let body = "# {{date:dddd, MMMM Do}}\n- [ ] plan 📅 {{date}}\nyesterday:: [[<% tp.date.now(\"YYYY-MM-DD\", -1, tp.file.title) %>]]\n<%* tR += 1 %>";
    let made = q.run(&[
        "--json",
        "note",
        "add",
        "--title",
        "Day",
        "--notebook",
        "Templates",
        "--body",
        body,
    ]);
    assert_eq!(made.code, 0, "{made:#?}");

    // The day asked for, made once and found again, filed by its format, its template filled in for that day.
    let first = q.run(&["--json", "today", "2026-03-09"]);
    let note = first.json();
    assert_eq!(note["made"], true);
    assert!(
        note["created"].as_str().is_some_and(|t| t.starts_with("20")),
        "the note's own time stays: {note}"
    );
    assert_eq!(note["title"], "2026-03-09");
    assert_eq!(note["notebook_path"], "Journal/2026/03");
    assert_eq!(
        note["body"],
        "# Monday, March 9th\n- [ ] plan 📅 2026-03-09\nyesterday:: [[2026-03-08]]\n<%* tR += 1 %>"
    );
    assert!(
        first.stderr.contains("left as written: quire runs no template code"),
        "{first:#?}"
    );
    let again = q.run(&["--json", "today", "2026-03-09"]).json();
    assert_eq!(
        (again["made"].clone(), again["note_id"].clone()),
        (false.into(), note["note_id"].clone())
    );
    // Its task is a task, due that day.
    let due = q
        .run(&[
            "--json",
            "tasks",
            "--due-before",
            "2026-03-09",
            "--due-after",
            "2026-03-09",
        ])
        .json();
    assert_eq!(due.as_array().unwrap().len(), 1, "{due}");

    // The week's note: ISO weeks by the configured format, one note for each day of the week.
    let week = q.run(&["today", "--week", "2026-03-09"]);
    assert!(week.stdout.contains("# 2026-W11\n"), "{week:#?}");
    let sunday = q.run(&["--json", "today", "--week", "2026-03-15"]).json();
    assert_eq!(sunday["made"], false);

    // A note from a template, by its path; a template that is not there changes nothing.
    let from = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "2026-04-01",
            "--template",
            "Templates/Day",
        ])
        .json();
    let from_body = from["body"].as_str().unwrap();
    // {{date}} is today; Templater's reference is the title, a date in the default format.
    assert!(
        from_body.contains("yesterday:: [[2026-03-31]]") && !from_body.contains("{{"),
        "{from}"
    );
    let missing = q.run(&["note", "add", "--title", "X", "--template", "Nope"]);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("no note is named \"Nope\""), "{missing:#?}");
    let bad = q.run(&["today", "someday"]);
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("is not a day"), "{bad:#?}");
}
