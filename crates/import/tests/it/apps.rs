//! Other apps' exports (issue 51): every fixture of `tests/fixtures/import/` (the repository's, shared with the
//! end-to-end tests; listed with their sources in its README) imported into a fresh workspace and written out
//! canonically (support/enex_render.rs) must equal `tests/fixtures/import/expected/<name>.md`: each note's notebook,
//! tags, labels with their types, attachments, body with links named, then the report. `QUIRE_BLESS=1` writes what
//! each import gave to `target/import-fixtures/` (never over the expected files). Also: a Notion database's view runs.

use std::path::{Path, PathBuf};

use quire_core::query::QueryOptions;
use quire_core::{Actor, Workspace};
use quire_import::ImportOptions;

use crate::support::enex_render::{import_and_render, line_diff};
use crate::support::note_by_title;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import")
}

/// The fixtures, by the name of their expected file.
const FIXTURES: &[(&str, &str)] = &[
    ("keep", "keep"),
    ("simplenote", "simplenote"),
    (
        "standard-notes",
        "standard-notes/Standard Notes Backup and Import File.txt",
    ),
    ("notion-2020", "notion/export-2020"),
    ("notion-modern", "notion/export-modern"),
    ("notion-html", "notion/export-html"),
    ("logseq", "logseq"),
    ("roam-help", "roam/help-graph-table-page.json"),
    ("roam-theme", "roam/theme-tester-excerpt.json"),
    ("bear", "bear"),
];

#[test]
fn every_app_fixture_imports_as_its_expected_notes() {
    let bless = std::env::var_os("QUIRE_BLESS").is_some_and(|v| v == "1");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("import-fixtures");
    let mut failing = Vec::new();
    for (name, path) in FIXTURES {
        let work = tempfile::tempdir().unwrap();
        // Absolute paths of the machine that ran it are not part of what an import gives.
        let source = fixtures().join(path).canonicalize().unwrap();
        let actual = import_and_render(&source, work.path()).replace(&source.display().to_string(), "SOURCE");
        if bless {
            std::fs::create_dir_all(&target).unwrap();
            std::fs::write(target.join(format!("{name}.md")), &actual).unwrap();
        }
        let expected =
            std::fs::read_to_string(fixtures().join("expected").join(format!("{name}.md"))).unwrap_or_default();
        if expected != actual {
            eprintln!("\n## {name}\n{}", line_diff(&expected, &actual));
            failing.push(*name);
        }
    }
    assert!(
        failing.is_empty(),
        "not as expected: {failing:?} (QUIRE_BLESS=1 writes what they gave)"
    );
}

#[test]
fn a_notion_database_is_a_view_of_its_rows_with_typed_properties() {
    let work = tempfile::tempdir().unwrap();
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let source = fixtures().join("notion/export-modern");
    quire_import::import(&ws, &source, &ImportOptions::default(), &|_, _| {}).unwrap();
    let view = note_by_title(&ws, "Tasks");
    let runs = ws
        .read(&Actor::User, |r| r.run_view(&view.summary.id, &QueryOptions::default()))
        .unwrap();
    let result = runs[0].result.as_ref().unwrap_or_else(|| panic!("{:?}", runs[0].error));
    assert_eq!(
        result.headers,
        ["File", "Status", "Assignee", "Due", "Tags", "Created time", "Estimate"],
        "every column, from _all.csv"
    );
    let rows: Vec<(String, Vec<serde_json::Value>)> = result
        .rows
        .iter()
        .map(|r| {
            (
                r.note.as_ref().unwrap().title.clone(),
                r.cells.iter().map(|c| c.to_json()).collect(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].0, "Ship beta");
    assert_eq!(rows[1].0, "Write spec");
    assert_eq!(rows[1].1[2], "2024-03-04", "a date as a date");
    assert_eq!(rows[1].1[5], serde_json::json!(3), "a number as a number");
    let spec = note_by_title(&ws, "Write spec");
    assert!(
        spec.body.starts_with("Draft lives here."),
        "the property lines are the labels': {:?}",
        spec.body
    );
    assert_eq!(spec.summary.created.0, 1_709_111_700_000, "Created time is the note's");
}

/// Adds the files below `dir` to `zip` under `prefix`.
#[expect(clippy::unwrap_used, reason = "a test helper stops the test where it failed")]
fn add_dir(zip: &mut zip::ZipWriter<std::fs::File>, dir: &Path, prefix: &str) {
    let options = zip::write::SimpleFileOptions::default();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        if entry.file_type().is_file() {
            zip.start_file(format!("{prefix}{rel}"), options).unwrap();
            std::io::Write::write_all(zip, &std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

#[test]
fn a_zipped_export_imports_as_its_folder_and_again_as_the_same_notes() {
    let work = tempfile::tempdir().unwrap();
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let path = work.path().join("Export-notion.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    add_dir(&mut zip, &fixtures().join("notion/export-modern"), "");
    // Nothing is written outside the folder it is unpacked into.
    zip.start_file("../escaped.md", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut zip, b"# out").unwrap();
    zip.finish().unwrap();
    let first = quire_import::import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(
        (first.format.as_str(), first.imported, first.attachments),
        ("notion", 5, 1),
        "{first:#?}"
    );
    assert!(!work.path().join("escaped.md").exists() && !std::env::temp_dir().join("escaped.md").exists());
    let again = quire_import::import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(
        (again.imported, again.unchanged),
        (0, 5),
        "the same zip is the same source: {again:#?}"
    );

    // Notion splits a large export into zips inside the zip.
    let part = work.path().join("Export-Part-1.zip");
    let mut inner = zip::ZipWriter::new(std::fs::File::create(&part).unwrap());
    add_dir(&mut inner, &fixtures().join("notion/export-2020"), "");
    inner.finish().unwrap();
    let outer_path = work.path().join("Export-split.zip");
    let mut outer = zip::ZipWriter::new(std::fs::File::create(&outer_path).unwrap());
    outer
        .start_file("Export-Part-1.zip", zip::write::SimpleFileOptions::default())
        .unwrap();
    std::io::Write::write_all(&mut outer, &std::fs::read(&part).unwrap()).unwrap();
    outer.finish().unwrap();
    let split = quire_import::import(&ws, &outer_path, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!((split.format.as_str(), split.imported), ("notion", 8), "{split:#?}");
    let damaged = work.path().join("damaged.zip");
    std::fs::write(&damaged, b"PK\x03\x04 not really").unwrap();
    let refused = quire_import::import(&ws, &damaged, &ImportOptions::default(), &|_, _| {}).unwrap_err();
    assert!(
        refused.to_string().contains("not a zip archive it can read"),
        "{refused}"
    );
}

#[test]
fn a_bear_backup_is_a_zip_of_textbundles_and_its_trash_is_kept_as_trash() {
    let work = tempfile::tempdir().unwrap();
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let path = work.path().join("Bear Notes 2024-06-14.bear2bk");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    add_dir(&mut zip, &fixtures().join("bear"), "");
    zip.finish().unwrap();
    let report = quire_import::import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(
        (report.format.as_str(), report.imported, report.attachments),
        ("bear", 4, 2),
        "{report:#?}"
    );
    let trashed = ws
        .read(&Actor::User, |r| r.trashed_notes(quire_core::Page::default()))
        .unwrap();
    assert_eq!(
        trashed.items.iter().map(|n| n.title.as_str()).collect::<Vec<_>>(),
        ["Old draft"]
    );
    let plan = note_by_title(&ws, "Weekly plan");
    assert!(
        plan.summary.tags.iter().any(|t| t == "two words tag"),
        "{:?}",
        plan.summary.tags
    );

    // A `.textpack`: one bundle's files zipped, at the top of the zip.
    let other = Workspace::open(work.path().join("other.quire")).unwrap();
    let pack = work.path().join("Weekly plan.textpack");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&pack).unwrap());
    add_dir(&mut zip, &fixtures().join("bear/Weekly plan.textbundle"), "");
    zip.finish().unwrap();
    for round in 0..2 {
        let report = quire_import::import(&other, &pack, &ImportOptions::default(), &|_, _| {}).unwrap();
        let expected = if round == 0 { (1, 0, 2) } else { (0, 1, 0) };
        assert_eq!(
            (report.imported, report.unchanged, report.attachments),
            expected,
            "{report:#?}"
        );
    }
    let id = note_by_title(&other, "Weekly plan").summary.id;
    assert_eq!(
        other.read(&Actor::User, |r| r.attachments(&id)).unwrap().len(),
        2,
        "its assets"
    );
}

/// Found in use: everything after a fenced code block of a Logseq page stayed as written (tasks, references).
#[test]
fn a_logseq_page_converts_after_its_code_blocks() {
    let work = tempfile::tempdir().unwrap();
    let graph = work.path().join("graph");
    crate::support::write(&graph, "logseq/config.edn", b"{}");
    crate::support::write(
        &graph,
        "pages/Code.md",
        b"- first\n  id:: 11111111-0000-4000-8000-000000000000\n- ```js\n  const x = 1;\n  ```\n- TODO after code\n- ```one line```\n- see ((11111111-0000-4000-8000-000000000000))\n",
    );
    crate::support::write(&graph, "journals/2024_02_07.md", b"- ok\n");
    crate::support::write(&graph, "drafts/idea.md", b"- not a page\n");
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, &graph, &ImportOptions::default(), &|_, _| {}).unwrap();
    let skipped = report.items.iter().find(|i| i.path == "drafts/idea.md");
    assert!(
        skipped.is_some_and(|i| i.outcome == quire_import::Outcome::Skipped),
        "said: {report:#?}"
    );
    let body = note_by_title(&ws, "Code").body;
    assert_eq!(
        body,
        "- first\n- ```js\n  const x = 1;\n  ```\n- [ ] after code\n- ```one line```\n- see [[Code|first]]\n"
    );
}

/// Found in use: a zip of a graph's folder (one folder wrapping it) was read as Markdown, `../` entries vanished
/// without a word, an entry of gigabytes was unpacked whole, and errors named the temporary folder.
#[test]
fn a_zip_is_read_below_its_wrapping_folder_and_says_what_it_left_out() {
    let work = tempfile::tempdir().unwrap();
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let path = work.path().join("my graph.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    add_dir(&mut zip, &fixtures().join("logseq"), "my graph/");
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("../outside.md", options).unwrap();
    std::io::Write::write_all(&mut zip, b"- out").unwrap();
    zip.start_file("my graph/assets/huge.bin", options).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(quire_core::MAX_ATTACHMENT_BYTES >> 20) + 1 {
        std::io::Write::write_all(&mut zip, &zeros).unwrap();
    }
    zip.finish().unwrap();
    let report = quire_import::import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!((report.format.as_str(), report.imported), ("logseq", 3), "{report:#?}");
    let said: Vec<String> = report
        .items
        .iter()
        .filter(|i| i.outcome == quire_import::Outcome::Failed)
        .map(|i| format!("{}: {}", i.path, i.notes.join("; ")))
        .collect();
    assert!(
        said.iter()
            .any(|s| s.starts_with("../outside.md: its path leads outside")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("huge.bin") && s.contains("larger than any note or attachment")),
        "{said:?}"
    );
    let options = ImportOptions {
        format: quire_import::ImportFormat::Roam,
        ..ImportOptions::default()
    };
    let refused = quire_import::import(&ws, &path, &options, &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("my graph.zip") && !refused.contains("quire-zip-"),
        "{refused}"
    );
}

/// Found in use: a folder of two Roam exports imported one; a page without a title refused the whole file; Roam's
/// `[label]([[Page]])` and code blocks closed on their last line were left as Markdown cannot read them.
#[test]
fn roam_exports_in_a_folder_all_come_in_and_a_broken_page_fails_alone() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("roam");
    let page =
        |title: &str, text: &str| serde_json::json!({ "title": title, "children": [{ "string": text, "uid": title }] });
    let a =
        serde_json::json!([page("Alpha", "see [the beta page]([[Beta]])"), { "children": [{ "string": "no title" }] }]);
    let b = serde_json::json!([page("Beta", "```clojure\n(+ 1 2)```")]);
    crate::support::write(&dir, "a.json", a.to_string().as_bytes());
    crate::support::write(&dir, "b.json", b.to_string().as_bytes());
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, &dir, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(
        (report.format.as_str(), report.imported, report.failed),
        ("roam", 2, 1),
        "{report:#?}"
    );
    assert_eq!(note_by_title(&ws, "Alpha").body, "- see [[Beta|the beta page]]\n");
    assert_eq!(note_by_title(&ws, "Beta").body, "- ```clojure\n  (+ 1 2)\n  ```\n");
}

/// Found in use: an unbalanced quote in a Notion database's CSV swallowed the later rows' properties, without a word.
#[test]
fn a_damaged_notion_csv_is_said_and_its_rows_keep_their_pages_properties() {
    let work = tempfile::tempdir().unwrap();
    let export = work.path().join("export");
    let (home, db) = (
        "Home 0123456789abcdef0123456789abcdef",
        "Scores 1123456789abcdef0123456789abcdef",
    );
    crate::support::write(&export, &format!("{home}.md"), b"# Home\n");
    crate::support::write(
        &export,
        &format!("{home}/{db}.csv"),
        b"Name,Score,Notes\nRow one,5,fine\nRow two,7,\"broken quote here\nRow three,9,ok\n",
    );
    for (name, id, props) in [
        ("Row one", "a", "Score: 5\nNotes: fine"),
        ("Row three", "c", "Score: 9\nNotes: ok"),
    ] {
        let page = format!("# {name}\n\n{props}\n\nBody of {name}.\n");
        crate::support::write(
            &export,
            &format!(
                "{home}/Scores 1123456789abcdef0123456789abcdef/{name} {}.md",
                id.repeat(32)
            ),
            page.as_bytes(),
        );
    }
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, &export, &ImportOptions::default(), &|_, _| {}).unwrap();
    let said: Vec<&String> = report.items.iter().flat_map(|i| &i.notes).collect();
    assert!(said.iter().any(|n| n.contains("a quote that never closes")), "{said:?}");
    assert!(
        said.iter().any(|n| n.contains("has no row of its own for it")),
        "{said:?}"
    );
    let three = note_by_title(&ws, "Row three");
    assert_eq!(three.body, "Body of Row three.\n");
    let labels = ws.read(&Actor::User, |r| r.attributes(&three.summary.id)).unwrap();
    let value = |name: &str| labels.iter().find(|a| a.name == name).map(|a| a.value.clone());
    assert_eq!(
        (value("Score").as_deref(), value("Notes").as_deref()),
        (Some("9"), Some("ok")),
        "{labels:?}"
    );
}

/// Found in use: after `quire undo` of an import that updated a note, importing again said "unchanged" and the
/// source's change never came back (any format).
#[test]
fn an_undone_import_is_imported_again() {
    let work = tempfile::tempdir().unwrap();
    let source = work.path().join("notes");
    crate::support::write(&source, "a.md", b"v1\n");
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let run = |ws: &Workspace| quire_import::import(ws, &source, &ImportOptions::default(), &|_, _| {}).unwrap();
    run(&ws);
    crate::support::write(&source, "a.md", b"v2\n");
    let update = run(&ws);
    assert_eq!(update.updated, 1);
    ws.write(&Actor::User, |w| {
        w.revert_change_set(update.change_set_id.as_deref().unwrap())
    })
    .unwrap();
    assert_eq!(note_by_title(&ws, "a").body, "v1\n", "undone");
    let again = run(&ws);
    assert_eq!(
        (again.updated, again.unchanged, again.conflicts),
        (1, 0, 0),
        "{again:#?}"
    );
    assert_eq!(note_by_title(&ws, "a").body, "v2\n");

    // Undone again, then edited in quire: the edit is the person's, and the import leaves it alone.
    ws.write(&Actor::User, |w| {
        w.revert_change_set(again.change_set_id.as_deref().unwrap())
    })
    .unwrap();
    let id = note_by_title(&ws, "a").summary.id;
    ws.write(&Actor::User, |w| {
        w.update_note(
            &id,
            quire_core::NoteUpdate {
                body: Some("mine\n".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    let after_edit = run(&ws);
    assert_eq!((after_edit.updated, after_edit.conflicts), (0, 1), "{after_edit:#?}");
    assert_eq!(note_by_title(&ws, "a").body, "mine\n");
}

/// Found in use: a note unpinned in Keep stayed `pinned` in quire after a re-import.
#[test]
fn a_flag_cleared_at_the_source_is_cleared_in_quire() {
    let work = tempfile::tempdir().unwrap();
    let keep = work.path().join("Keep");
    let note = r#"{"title":"Pinned","textContent":"x","isPinned":true,"isArchived":false,"isTrashed":false,"color":"RED","createdTimestampUsec":1690372692755000}"#;
    crate::support::write(&keep, "Pinned.json", note.as_bytes());
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let run = || quire_import::import(&ws, &keep, &ImportOptions::default(), &|_, _| {}).unwrap();
    run();
    crate::support::write(
        &keep,
        "Pinned.json",
        note.replace("true", "false").replace("RED", "DEFAULT").as_bytes(),
    );
    assert_eq!(run().updated, 1);
    let id = note_by_title(&ws, "Pinned").summary.id;
    let names: Vec<String> = ws
        .read(&Actor::User, |r| r.attributes(&id))
        .unwrap()
        .into_iter()
        .map(|a| a.name)
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// Review: a page nested 20,000 elements deep (a hostile file) overflowed the stack of the HTML conversion and took
/// the process down; a symbolic link inside a graph (`assets -> a folder outside`) was followed.
#[test]
fn a_deeply_nested_page_is_kept_as_text_and_links_out_of_the_source_are_not_followed() {
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("site");
    let deep = format!(
        "<title>Deep</title>{}words inside{}",
        "<div>".repeat(20_000),
        "</div>".repeat(20_000)
    );
    crate::support::write(&site, "deep.html", deep.as_bytes());
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, &site, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(report.imported, 1, "{report:#?}");
    assert_eq!(note_by_title(&ws, "Deep").body.trim(), "words inside");
    // Deep enough for the tree's own check, and a long list that leaves its `</li>`s out, which is not deep.
    let middle = format!(
        "<title>Middle</title>{}middle words{}",
        "<span>".repeat(800),
        "</span>".repeat(800)
    );
    let list = format!("<title>List</title><ul>{}</ul>", "<li>item".repeat(3000));
    crate::support::write(&site, "middle.html", middle.as_bytes());
    crate::support::write(&site, "list.html", list.as_bytes());
    quire_import::import(&ws, &site, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(note_by_title(&ws, "Middle").body.trim(), "middle words");
    assert!(note_by_title(&ws, "List").body.starts_with("- item\n- item\n"));

    #[cfg(unix)]
    {
        let outside = work.path().join("outside");
        crate::support::write(&outside, "secret.png", b"\x89PNG secret");
        let graph = work.path().join("graph");
        crate::support::write(&graph, "logseq/config.edn", b"{}");
        crate::support::write(&graph, "pages/Leak.md", b"- ![x](../assets/secret.png)\n");
        std::os::unix::fs::symlink(&outside, graph.join("assets")).unwrap();
        let report = quire_import::import(&ws, &graph, &ImportOptions::default(), &|_, _| {}).unwrap();
        assert_eq!((report.imported, report.attachments), (1, 0), "{report:#?}");
    }
}

/// Review: a key for every import of a format let one `.textpack` (whose bundle has no Bear id, so its note is
/// always "text") overwrite another's note; and a zip of a format keyed by its path must come back as the same
/// source, not the temporary folder it is unpacked into.
#[test]
fn packs_without_ids_stay_apart_and_a_zip_is_the_same_source_twice() {
    let work = tempfile::tempdir().unwrap();
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    for name in ["First", "Second"] {
        let dir = work.path().join(name);
        crate::support::write(
            &dir,
            "info.json",
            br#"{"type":"net.daringfireball.markdown","version":2}"#,
        );
        crate::support::write(&dir, "text.md", format!("# {name}\n\nIts own text.\n").as_bytes());
        let pack = work.path().join(format!("{name}.textpack"));
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&pack).unwrap());
        add_dir(&mut zip, &dir, "");
        zip.finish().unwrap();
        let report = quire_import::import(&ws, &pack, &ImportOptions::default(), &|_, _| {}).unwrap();
        assert_eq!((report.imported, report.updated), (1, 0), "{name}: {report:#?}");
    }
    assert_eq!(note_by_title(&ws, "First").body, "Its own text.\n");
    assert_eq!(note_by_title(&ws, "Second").body, "Its own text.\n");

    let graph = work.path().join("graph.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&graph).unwrap());
    add_dir(&mut zip, &fixtures().join("logseq"), "");
    zip.finish().unwrap();
    let run = || quire_import::import(&ws, &graph, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(run().imported, 3);
    let again = run();
    assert_eq!((again.imported, again.unchanged), (0, 3), "{again:#?}");
}

#[test]
fn a_notion_export_whose_top_page_was_left_out_is_still_notions() {
    // Found in use: one damaged entry of a Notion zip (its top page) left only the page's folder, and the whole export
    // was read as plain Markdown (notebooks named with ids, the CSV "skipped").
    let work = tempfile::tempdir().unwrap();
    let export = work.path().join("Export-5b0c1f3e-8d2a-4c6b-9e71-2f4a6d8c0b13");
    let home = "Home 0123456789abcdef0123456789abcdef";
    crate::support::write(
        &export,
        &format!("{home}/Child 1123456789abcdef0123456789abcdef.md"),
        b"# Child\n\nText.\n",
    );
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, work.path(), &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(report.format, "notion", "{report:?}");
    let child = note_by_title(&ws, "Child");
    assert_eq!(child.body.trim(), "Text.");
}

#[test]
fn a_pages_scripts_are_left_out_and_said() {
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("site");
    crate::support::write(
        &site,
        "page.html",
        b"<html><head><title>Page</title><script>alert('hi')</script></head><body><p>Words.</p></body></html>",
    );
    let ws = Workspace::open(work.path().join("ws.quire")).unwrap();
    let report = quire_import::import(&ws, &site, &ImportOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(report.format, "html", "{report:?}");
    let item = report.items.iter().find(|i| i.path == "page.html").unwrap();
    assert!(
        item.notes.iter().any(|n| n.contains("scripts were left out")),
        "{item:?}"
    );
    let page = note_by_title(&ws, "Page");
    assert!(!page.body.contains("alert"), "{}", page.body);
}
