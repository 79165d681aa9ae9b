//! Imports of other apps' exports (issue 51) with the real binary, on the fixtures in `tests/fixtures/import/`
//! (real Google Keep Takeout files; Simplenote and Standard Notes exports written in their apps' layout): what
//! each keeps, that a second import changes nothing, and what a source quire cannot read says.

use quire_tests::Quire;
use serde_json::Value;

use super::write;

fn fixture(name: &str) -> String {
    format!("{}/../tests/fixtures/import/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The rows of a query as (title, cells).
fn table(q: &Quire, query: &str) -> Vec<(String, Vec<Value>)> {
    let res = q.run(&["--json", "query", query]).json();
    assert!(res["rows"].is_array(), "{res:#}");
    res["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let title = r["note"]["title"].as_str().unwrap_or_default().to_owned();
            (title, r["cells"].as_array().cloned().unwrap_or_default())
        })
        .collect()
}

/// Imports `path` (JSON report), and checks a second import finds everything unchanged.
fn import_twice(q: &Quire, path: &str, format: &str, notes: u64) -> Value {
    let run = q.run(&["--json", "import", path]);
    assert_eq!(run.code, 0, "{run:#?}");
    let report = run.json();
    assert_eq!(report["format"], format, "detected: {report:#}");
    assert_eq!(report["imported"], notes, "{report:#}");
    let again = q.run(&["--json", "import", path]).json();
    assert_eq!(
        (again["imported"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(notes)),
        "a second import changes nothing: {again:#}"
    );
    report
}

fn trash(q: &Quire) -> Vec<String> {
    let list = q.run(&["--json", "note", "list", "--trash"]).json();
    list["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| n["title"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn body(q: &Quire, title: &str) -> String {
    let found = q
        .run(&["--json", "query", &format!("LIST WHERE file.name = \"{title}\"")])
        .json();
    let id = found["rows"][0]["note"]["id"].as_str().unwrap_or_default().to_owned();
    assert!(!id.is_empty(), "no note {title}: {found:#}");
    q.run(&["--json", "note", "show", &id]).json()["body"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_google_keep_takeout_comes_in_with_checklists_labels_attachments_and_its_trash() {
    let q = Quire::new();
    let report = import_twice(&q, &fixture("keep"), "keep", 15);
    assert_eq!(report["attachments"], 1, "the one picture the fixture has: {report:#}");
    let said = report.to_string();
    assert!(
        said.contains("is not in the export"),
        "missing attachments are said: {said}"
    );
    assert!(said.contains("shared in Keep with 1 person"), "{said}");
    let checklist = body(&q, "Checklist note");
    assert!(checklist.contains("- [ ] First item\n- [ ] Second item"), "{checklist}");
    let open = table(&q, "TASK WHERE !completed");
    assert_eq!(open.len(), 5, "the checklist's items are tasks: {open:?}");
    assert!(
        body(&q, "Rich text note").starts_with("# Heading"),
        "rich text as Markdown"
    );
    assert!(body(&q, "Image note").contains("![1690514517692.998326926.png](quire://attachment/"));
    assert!(
        body(&q, "Annotated note")
            .contains("[Cloudflare - The Web Performance & Security Company](<https://www.cloudflare.com/>)")
    );
    let flags = table(
        &q,
        "TABLE pinned, archived, color WHERE pinned OR archived OR color SORT file.name",
    );
    let expected: Vec<(String, Vec<Value>)> = vec![
        ("Annotated note".into(), vec![true.into(), Value::Null, Value::Null]),
        ("Archived note".into(), vec![Value::Null, true.into(), Value::Null]),
        (
            "Background colour note".into(),
            vec![Value::Null, Value::Null, "green".into()],
        ),
        ("Pinned text note".into(), vec![true.into(), Value::Null, Value::Null]),
    ];
    assert_eq!(flags, expected);
    // The terminal shows them too (found in use: only `quire query` did).
    let found = q
        .run(&["--json", "query", "LIST WHERE file.name = \"Background colour note\""])
        .json();
    let id = found["rows"][0]["note"]["id"].as_str().unwrap_or_default().to_owned();
    let shown = q.run(&["note", "show", &id]).stdout;
    assert!(shown.contains("\nlabel color: green\n"), "{shown}");
    let tagged = table(&q, "LIST FROM #camelCaseLabel");
    assert_eq!(tagged.len(), 1, "labels are tags: {tagged:?}");
    assert_eq!(trash(&q), ["Deleted note"], "a note of Keep's trash is in quire's");
    let untitled = table(&q, "LIST WHERE startswith(file.name, \"This note has an image\")");
    assert_eq!(untitled.len(), 1, "a note without a title is named by its first line");
}

#[test]
fn a_simplenote_export_comes_in_with_its_links_tags_pins_and_trash() {
    let q = Quire::new();
    import_twice(&q, &fixture("simplenote"), "simplenote", 4);
    let shopping = body(&q, "Shopping list");
    assert!(
        shopping.starts_with("- [ ] eggs\n- [x] coffee"),
        "the first line is the title: {shopping:?}"
    );
    assert!(
        shopping.contains("[Recipes](quire://note/"),
        "a link between notes points at the note: {shopping}"
    );
    let pinned = table(&q, "LIST WHERE pinned");
    assert_eq!(
        pinned.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["Shopping list"]
    );
    assert_eq!(table(&q, "LIST FROM #cooking").len(), 1);
    assert_eq!(trash(&q), ["Old idea"]);
}

#[test]
fn a_standard_notes_backup_comes_in_with_nested_tags_flags_and_trash() {
    let q = Quire::new();
    let file = format!(
        "{}/Standard Notes Backup and Import File.txt",
        fixture("standard-notes")
    );
    import_twice(&q, &file, "standard-notes", 3);
    let nested = table(&q, "LIST FROM #personal/prose SORT file.name");
    assert_eq!(
        nested.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["Archived thought", "Reading list"],
        "{nested:?}"
    );
    let trashed = q.run(&["--json", "note", "list", "--trash"]).json();
    assert_eq!(
        trashed["notes"][0]["tags"],
        serde_json::json!(["work.clients"]),
        "a name with a dot stays one tag"
    );
    assert_eq!(table(&q, "LIST WHERE pinned")[0].0, "Reading list");
    assert_eq!(table(&q, "LIST WHERE archived")[0].0, "Archived thought");
    assert_eq!(trash(&q), ["personal-todo"]);
    let encrypted = q.dir().join("encrypted.txt");
    std::fs::write(
        &encrypted,
        r#"{"version":"004","items":[{"uuid":"a","content_type":"Note","content":"004:abc:def"}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = q.run(&["import", encrypted.to_str().unwrap_or_default()]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("export a decrypted backup"), "{run:#?}");
}

#[test]
fn a_folder_of_html_files_comes_in_with_titles_links_and_images() {
    let q = Quire::new();
    let site = q.dir().join("site");
    write(
        &site,
        "index.html",
        b"<html><head><title>Garden plan</title></head><body><h1>Garden plan</h1><p>Beds and <b>beans</b>, \
          see <a href=\"notes/soil.html\">the soil</a>.</p><img src=\"img/bed.png\" alt=\"bed\"></body></html>",
    );
    write(
        &site,
        "notes/soil.html",
        b"<h1>Soil</h1><ul><li>compost</li><li>sand</li></ul>",
    );
    write(&site, "img/bed.png", b"\x89PNG fake");
    let report = import_twice(&q, site.to_str().unwrap_or_default(), "html", 2);
    assert_eq!(report["attachments"], 1, "{report:#}");
    let plan = body(&q, "Garden plan");
    assert!(
        plan.starts_with("Beds and **beans**"),
        "the title heading is not said twice: {plan:?}"
    );
    assert!(plan.contains("[the soil](quire://note/"), "{plan}");
    assert!(plan.contains("![bed](quire://attachment/"), "{plan}");
    let soil = table(&q, "LIST FROM \"notes\"");
    assert_eq!(soil.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["Soil"]);
    // HTML only in sub-folders (a saved site) is told from Markdown too.
    let nested = q.dir().join("nested");
    write(&nested, "a/b/page.html", b"<title>Deep</title><p>deep text</p>");
    let run = q.run(&["--json", "import", nested.to_str().unwrap_or_default()]).json();
    assert_eq!(
        (run["format"].as_str(), run["imported"].as_u64()),
        (Some("html"), Some(1)),
        "{run:#}"
    );
}

#[test]
fn a_source_quire_cannot_read_says_what_it_found_and_fails() {
    let q = Quire::new();
    let empty = q.dir().join("empty");
    std::fs::create_dir_all(&empty).unwrap_or_else(|e| panic!("{e}"));
    let run = q.run(&["import", empty.to_str().unwrap_or_default()]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("is empty"), "{run:#?}");
    let pdfs = q.dir().join("pdfs");
    write(&pdfs, "a.pdf", b"%PDF-1.4");
    write(&pdfs, "b.docx", b"PK");
    let run = q.run(&["import", pdfs.to_str().unwrap_or_default()]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr
            .contains("only 2 files of kinds it does not import (.docx, .pdf)"),
        "{run:#?}"
    );
    let list = q.run(&["import", "--format"]);
    assert_eq!(list.code, 0, "{list:#?}");
    for name in ["markdown", "keep", "simplenote", "standard-notes", "html"] {
        assert!(
            list.stdout.contains(&format!("  {name} ")),
            "{name} listed: {}",
            list.stdout
        );
    }
    let wrong = q.run(&["import", "x", "--format", "notion-ish"]);
    assert_eq!(wrong.code, 2, "{wrong:#?}");
    assert!(wrong.stderr.contains("the formats: auto, markdown"), "{wrong:#?}");
}

#[test]
fn a_notion_export_comes_in_as_notebooks_of_pages_and_databases_as_views() {
    let q = Quire::new();
    import_twice(&q, &fixture("notion/export-modern"), "notion", 5);
    let tree = q.run(&["notebook", "list"]);
    assert!(
        tree.stdout.contains("Project Home") && tree.stdout.contains("Tasks"),
        "{}",
        tree.stdout
    );
    assert!(
        !tree.stdout.contains("1f2e3d4c"),
        "no Notion ids in names: {}",
        tree.stdout
    );
    let due = table(&q, "TABLE due, estimate WHERE due AND due <= date(2024-03-10)");
    assert_eq!(due, [("Write spec".to_owned(), vec!["2024-03-04".into(), 3.into()])]);
    let meeting = body(&q, "Meeting notes");
    assert_eq!(
        meeting.matches("](quire://note/").count(),
        3,
        "relative and notion.so links: {meeting}"
    );
}

#[test]
fn a_logseq_graph_comes_in_with_journals_as_daily_notes_tasks_and_block_references() {
    let q = Quire::new();
    import_twice(&q, &fixture("logseq"), "logseq", 3);
    // The journal is the day's daily note: `quire today` finds it rather than making another.
    let today = q.run(&["--json", "today", "2024-02-07"]).json();
    assert_eq!(today["made"], false, "{today:#}");
    let id = today["note_id"].as_str().unwrap_or_default().to_owned();
    let shown = q.run(&["--json", "note", "show", &id]).json();
    assert!(
        shown["body"].as_str().unwrap_or_default().contains("Sketch the shed"),
        "{shown:#}"
    );
    let tasks = table(&q, "TASK WHERE !completed AND scheduled = date(2024-02-10)");
    assert_eq!(tasks.len(), 1, "SCHEDULED is the task's scheduled date: {tasks:?}");
    let labels = table(&q, "TABLE area, organic, status WHERE area");
    assert_eq!(
        labels,
        [("Garden".to_owned(), vec![12.into(), true.into(), "planning".into()])]
    );
    let shed = body(&q, "Shed");
    assert!(
        shed.contains("[[Garden|the beds]]"),
        "a labelled block reference: {shed}"
    );
    let linked = table(&q, "LIST FROM [[Garden]]");
    assert!(
        linked.iter().any(|r| r.0 == "2024-02-07"),
        "the journal links the page: {linked:?}"
    );
}

/// Found in use: a newer export of the same account (another folder or zip name) duplicated every note, and a note
/// restored from the app's trash came in twice. Now an app's notes are known by its ids wherever the export is.
#[test]
fn a_newer_export_updates_what_an_older_one_brought_and_follows_its_trash() {
    let q = Quire::new();
    let first = q.dir().join("simplenote-2024");
    let newer = q.dir().join("simplenote-2025");
    for dir in [&first, &newer] {
        write(
            dir,
            "source/notes.json",
            &std::fs::read(format!("{}/source/notes.json", fixture("simplenote"))).unwrap_or_default(),
        );
    }
    import_twice(&q, first.to_str().unwrap_or_default(), "simplenote", 4);
    // In the newer export, Recipes changed and "Old idea" came back from the trash.
    let json = std::fs::read_to_string(newer.join("source/notes.json")).unwrap_or_default();
    let mut export: Value = serde_json::from_str(&json).unwrap_or_default();
    export["activeNotes"][1]["content"] = "Recipes\r\n\r\nPancakes v2.".into();
    let old = export["trashedNotes"][0].take();
    export["trashedNotes"] = Value::Array(Vec::new());
    if let Some(active) = export["activeNotes"].as_array_mut() {
        active.push(old);
    }
    write(&newer, "source/notes.json", export.to_string().as_bytes());
    let report = q.run(&["--json", "import", newer.to_str().unwrap_or_default()]).json();
    assert_eq!(
        (
            report["imported"].as_u64(),
            report["updated"].as_u64(),
            report["unchanged"].as_u64()
        ),
        (Some(0), Some(2), Some(2)),
        "{report:#}"
    );
    assert!(trash(&q).is_empty(), "restored, not made again");
    assert_eq!(table(&q, "LIST").len(), 4);
    assert!(body(&q, "Recipes").contains("Pancakes v2."));
}

/// Found in use: imported journals went to `Daily` whatever `[daily]` said, and beside the note `quire today` had
/// made for that day. They follow the settings, and fill that day's note when it is there and empty.
#[test]
fn journals_follow_the_daily_settings_and_fill_the_days_empty_note() {
    let q = Quire::new();
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap_or_default();
    std::fs::write(
        config.join("config.toml"),
        "[daily]\nnotebook = \"Journal\"\nformat = \"YYYY/MM/YYYY-MM-DD\"\n",
    )
    .unwrap_or_default();
    let made = q.run(&["--json", "today", "2024-02-07"]).json();
    assert_eq!(made["made"], true, "{made:#}");
    let run = q.run(&["--json", "import", &fixture("logseq")]).json();
    assert_eq!(
        (run["imported"].as_u64(), run["updated"].as_u64()),
        (Some(2), Some(1)),
        "the journal filled it: {run:#}"
    );
    let today = q.run(&["--json", "today", "2024-02-07"]).json();
    assert_eq!(
        (today["made"].as_bool(), today["note_id"].clone()),
        (Some(false), made["note_id"].clone())
    );
    let day = table(&q, "LIST FROM \"Journal/2024/02\"");
    assert_eq!(
        day.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["2024-02-07"],
        "one note for the day"
    );
    assert!(body(&q, "2024-02-07").contains("Sketch the shed"));
}
