//! Importing folders and vaults built by the tests themselves, on a real workspace file: what arrives, re-imports,
//! conflicts, dry runs, one undoable change set, and hostile sources that must be reported without leaking.

use crate::support::{note_by_title, run, vault, write};
use quire_core::{Actor, NoteUpdate, Page, Workspace};
use quire_import::{ImportFormat, ImportOptions, Outcome, import};

#[test]
fn a_vault_arrives_with_notebooks_front_matter_tags_attachments_and_links() {
    let source = tempfile::tempdir().unwrap();
    vault(source.path());
    let home = tempfile::tempdir().unwrap();
    let ws = Workspace::open(home.path().join("ws.quire")).unwrap();
    let report = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(report.format, "obsidian");
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (4, 0, 2),
        "{report:#?}"
    );

    let plan = note_by_title(&ws, "Garden plan");
    assert_eq!(plan.summary.tags, ["garden", "garden/beds", "outdoors", "project/2024"]);
    assert_eq!(plan.summary.created.to_rfc3339(), "2024-03-01T00:00:00.000Z");
    assert_eq!(
        plan.summary.updated.to_rfc3339(),
        "2024-03-05T10:00:00.000Z",
        "times are kept"
    );
    let path = ws
        .read(&Actor::User, |r| r.notebook_path(&plan.summary.notebook_id))
        .unwrap();
    let titles: Vec<&str> = path.iter().skip(1).map(|nb| nb.title.as_str()).collect();
    assert_eq!(titles, ["Projects", "Garden"]);
    let (attributes, attachments) = ws
        .read(&Actor::User, |r| {
            Ok::<_, quire_core::Error>((r.attributes(&plan.summary.id)?, r.attachments(&plan.summary.id)?))
        })
        .unwrap();
    let labels: Vec<(&str, &str)> = attributes.iter().map(|a| (a.name.as_str(), a.value.as_str())).collect();
    assert!(
        labels.contains(&("status", "active")) && labels.contains(&("aliases", r#"["Beds plan"]"#)),
        "{labels:?}"
    );
    let mut files: Vec<&str> = attachments.iter().map(|a| a.title.as_str()).collect();
    files.sort();
    assert_eq!(files, ["beds.png", "plan.pdf"]);
    let by_title = |t: &str| attachments.iter().find(|a| a.title == t).unwrap().id.clone();
    let beds = ws
        .read(&Actor::User, |r| r.attachment_data(&by_title("beds.png")))
        .unwrap();
    assert_eq!(
        beds, b"\x89PNG fake",
        "the embed took the file from the attachment folder"
    );
    assert!(
        plan.body
            .contains(&format!("[PDF](quire://attachment/{})", by_title("plan.pdf"))),
        "{}",
        plan.body
    );
    assert!(
        plan.body.contains("![[beds.png]]") && plan.body.contains("[[Compost#Layers]]"),
        "wikilinks stay"
    );

    let compost = note_by_title(&ws, "Compost");
    assert_eq!(
        compost.body,
        format!("Layers. Back to [the plan](quire://note/{}#Beds).\n", plan.summary.id)
    );
    let unresolved = ws.read(&Actor::User, |r| r.unresolved_links(&plan.summary.id)).unwrap();
    assert!(unresolved.is_empty(), "every wikilink resolves: {unresolved:?}");
    let backlinks = ws.read(&Actor::User, |r| r.body_backlinks(&plan.summary.id)).unwrap();
    let from: Vec<&str> = backlinks.iter().map(|b| b.source.title.as_str()).collect();
    assert_eq!(
        from,
        ["2024-03-02", "Compost"],
        "through the alias and the rewritten path"
    );

    let done = note_by_title(&ws, "2024-03-02");
    assert!(done.summary.is_todo);
    assert_eq!(
        done.summary.todo_completed.map(|t| t.to_rfc3339()).as_deref(),
        Some("2024-03-02T18:00:00.000Z")
    );
    let open = note_by_title(&ws, "Open task");
    assert!(open.summary.is_todo && open.summary.todo_completed.is_none());
    // The import's own filling-in of links left no revisions.
    assert!(
        ws.read(&Actor::User, |r| r.revisions(&compost.summary.id))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn importing_again_updates_what_changed_and_leaves_conflicts_alone() {
    let source = tempfile::tempdir().unwrap();
    vault(source.path());
    let ws = Workspace::open_in_memory().unwrap();
    run(&ws, source.path(), &ImportOptions::default());
    let again = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(
        (again.imported, again.unchanged, again.attachments),
        (0, 4, 0),
        "{again:#?}"
    );

    write(source.path(), "Compost.md", b"Layers, turned weekly.\n");
    write(
        source.path(),
        "Daily/Open task.md",
        b"---\ntodo: true\n---\nbuy seeds and soil\n",
    );
    write(source.path(), "New idea.md", b"A pond.\n");
    let task = note_by_title(&ws, "Open task");
    ws.write(&Actor::User, |w| {
        w.update_note(
            &task.summary.id,
            NoteUpdate {
                body: Some("changed in quire".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    let third = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(
        (third.imported, third.updated, third.unchanged, third.conflicts),
        (1, 1, 2, 1),
        "{third:#?}"
    );
    assert_eq!(note_by_title(&ws, "Compost").body, "Layers, turned weekly.\n");
    assert_eq!(
        note_by_title(&ws, "Open task").body,
        "changed in quire",
        "the conflict is left alone"
    );

    let forced = run(
        &ws,
        source.path(),
        &ImportOptions {
            force: true,
            ..Default::default()
        },
    );
    assert_eq!(forced.updated, 1);
    let task = note_by_title(&ws, "Open task");
    assert_eq!(task.body, "buy seeds and soil\n");
    let revisions = ws.read(&Actor::User, |r| r.revisions(&task.summary.id)).unwrap();
    assert_eq!(revisions.len(), 1, "one revision keeps the text quire had");
    assert_eq!(revisions[0].body, "changed in quire");
    let all = ws
        .read(&Actor::User, |r| r.all_notes(Page { offset: 0, limit: 100 }))
        .unwrap();
    assert_eq!(all.total, 5, "nothing was duplicated");
}

#[test]
fn a_dry_run_writes_nothing_and_an_import_is_one_change_set_that_undo_takes_back() {
    let source = tempfile::tempdir().unwrap();
    vault(source.path());
    let ws = Workspace::open_in_memory().unwrap();
    let dry = run(
        &ws,
        source.path(),
        &ImportOptions {
            dry_run: true,
            ..Default::default()
        },
    );
    assert_eq!((dry.imported, dry.change_set_id.as_deref()), (4, None));
    let count = |ws: &Workspace| {
        ws.read(&Actor::User, |r| r.all_notes(Page { offset: 0, limit: 100 }))
            .unwrap()
            .total
    };
    assert_eq!(count(&ws), 0);
    assert_eq!(
        ws.read(&Actor::User, |r| r.notebooks()).unwrap().len(),
        1,
        "no notebook either"
    );

    let report = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(count(&ws), 4);
    let sets = ws
        .read(&Actor::User, |r| r.change_sets(Page { offset: 0, limit: 10 }))
        .unwrap();
    assert_eq!(sets.total, 1, "one change set");
    assert!(matches!(sets.items[0].actor, Actor::Import { .. }));
    ws.write(&Actor::User, |w| {
        w.revert_change_set(report.change_set_id.as_deref().unwrap())
    })
    .unwrap();
    assert_eq!(count(&ws), 0, "undo took the whole import back");
    assert_eq!(ws.read(&Actor::User, |r| r.notebooks()).unwrap().len(), 1);
}

#[test]
fn hostile_and_broken_sources_are_reported_and_nothing_outside_is_read() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", b"TOP SECRET words");
    write(outside.path(), "secret.png", b"TOP SECRET bytes");
    let source = tempfile::tempdir().unwrap();
    let root = source.path();
    write(
        root,
        "ok.md",
        b"fine [up](../secret.png) [abs](/etc/passwd) ![x](../../secret.png)",
    );
    write(root, "bad utf8.md", b"\xff\xfe\x00broken");
    write(root, "bad front matter.md", b"---\ntitle: [unclosed\n---\nbody");
    write(
        root,
        "unclosed.md",
        b"---\nA horizontal rule, then text: no front matter",
    );
    write(
        root,
        "aliases.md",
        b"---\na: &a [x, x, x]\nb: [*a, *a, *a]\n---\nbillion laughs",
    );
    write(root, "_notebook.md", b"---\ntitle: [not, a, title]\n---\n");
    {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"bad \xff name.md");
        std::fs::write(root.join(name), b"x").unwrap();
    }
    write(root, "danger.md", b"---\nrunOnInstance: evil\nstatus: kept\n---\nbody");
    write(root, "Same.md", b"one");
    write(root, "sub/same.md", b"two");
    write(root, "huge.md", &vec![b'a'; quire_core::MAX_BODY_BYTES + 1]);
    std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked folder")).unwrap();
    let mut deep = String::new();
    for i in 0..70 {
        deep.push_str(&format!("d{i}/"));
    }
    write(root, &format!("{deep}deep.md"), b"deep");

    let ws = Workspace::open_in_memory().unwrap();
    let report = run(
        &ws,
        root,
        &ImportOptions {
            format: ImportFormat::Markdown,
            ..Default::default()
        },
    );
    let outcome = |path: &str| {
        report
            .items
            .iter()
            .find(|i| i.path == path)
            .map(|i| (i.outcome, i.notes.join(" | ")))
            .unwrap_or_else(|| panic!("{path} not reported: {report:#?}"))
    };
    assert_eq!(outcome("bad utf8.md").0, Outcome::Failed);
    assert!(outcome("bad utf8.md").1.contains("not UTF-8"));
    assert!(outcome("bad front matter.md").1.contains("not valid YAML"));
    assert_eq!(
        outcome("unclosed.md").0,
        Outcome::Imported,
        "a first `---` never closed is a rule"
    );
    assert!(outcome("aliases.md").1.contains("aliases"));
    assert_eq!(outcome("bad \u{fffd} name.md").0, Outcome::Skipped);
    assert!(outcome("huge.md").1.contains("more than a note may hold"));
    assert_eq!(outcome("link.md").0, Outcome::Skipped);
    assert_eq!(outcome("linked folder").0, Outcome::Skipped);
    let danger = outcome("danger.md");
    assert_eq!(danger.0, Outcome::Imported);
    assert!(danger.1.contains("runOnInstance"), "{danger:?}");
    assert!(
        report
            .items
            .iter()
            .any(|i| i.outcome == Outcome::Failed && i.notes.join("").contains("deep"))
    );
    assert_eq!(outcome("Same.md").0, Outcome::Imported);
    assert_eq!(outcome("sub/same.md").0, Outcome::Imported);

    let everything = ws
        .read(&Actor::User, |r| {
            let notes = r.all_notes(Page { offset: 0, limit: 100 })?;
            let mut text = String::new();
            for n in notes.items {
                let note = r.note(&n.id)?;
                text.push_str(&note.body);
                for a in r.attachments(&n.id)? {
                    text.push_str(&String::from_utf8_lossy(&r.attachment_data(&a.id)?));
                }
            }
            Ok::<_, quire_core::Error>(text)
        })
        .unwrap();
    assert!(!everything.contains("TOP SECRET"), "nothing from outside the source");
    let ok = note_by_title(&ws, "ok");
    assert_eq!(
        ok.body, "fine [up](../secret.png) [abs](/etc/passwd) ![x](../../secret.png)",
        "left as written"
    );
}

#[test]
fn a_protected_notebook_cannot_be_imported_into_and_unknown_formats_say_so() {
    let source = tempfile::tempdir().unwrap();
    vault(source.path());
    let ws = Workspace::open_in_memory().unwrap();
    let vault_nb = ws
        .write(&Actor::User, |w| {
            let nb = quire_core::testing::notebook(w, "Vault")?;
            w.set_notebook_protected(&nb, true)?;
            Ok::<_, quire_core::Error>(nb)
        })
        .unwrap();
    let refused = import(
        &ws,
        source.path(),
        &ImportOptions {
            into: Some(vault_nb),
            ..Default::default()
        },
        &|_, _| {},
    );
    assert!(refused.unwrap_err().to_string().contains("protected"));
    let file = source.path().join("notes.txt");
    std::fs::write(&file, "x").unwrap();
    assert!(import(&ws, &file, &ImportOptions::default(), &|_, _| {}).is_err());
    let missing = import(&ws, &source.path().join("nope"), &ImportOptions::default(), &|_, _| {});
    assert!(missing.unwrap_err().to_string().contains("cannot read"));
}

#[test]
fn a_note_core_refuses_fails_alone_and_the_rest_keeps_its_links() {
    // The title is refused only when written (longer than a title may be): the fast pass is taken back and the
    // import runs again with a savepoint per note.
    let source = tempfile::tempdir().unwrap();
    let long = "x".repeat(2000);
    write(
        source.path(),
        "Refused.md",
        format!("---\ntitle: {long}\n---\nnever here\n").as_bytes(),
    );
    write(
        source.path(),
        "A.md",
        b"To [B](B.md) and [the refused one](Refused.md).\n",
    );
    write(source.path(), "B.md", b"Back to [A](A.md), with ![pic](pic.png).\n");
    write(source.path(), "pic.png", b"\x89PNG");
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (2, 1, 1),
        "{report:#?}"
    );
    let refused = report.items.iter().find(|i| i.path == "Refused.md").unwrap();
    assert!(refused.notes[0].contains("title is longer"), "{refused:?}");
    let a = note_by_title(&ws, "A");
    let b = note_by_title(&ws, "B");
    assert_eq!(
        a.body,
        format!(
            "To [B](quire://note/{}) and [the refused one](Refused.md).\n",
            b.summary.id
        ),
        "a link to the refused note stays as written"
    );
    assert!(
        b.body
            .starts_with(&format!("Back to [A](quire://note/{})", a.summary.id))
    );
    let sets = ws
        .read(&Actor::User, |r| r.change_sets(Page { offset: 0, limit: 10 }))
        .unwrap();
    assert_eq!(sets.total, 1, "still one change set");
}

#[test]
fn file_names_titles_times_changed_attachments_and_the_vaults_own_settings() {
    let source = tempfile::tempdir().unwrap();
    write(source.path(), ".obsidian/app.json", b"{}");
    // Obsidian finds notes by file name: a note whose front matter gives another title is still [[Home]].
    write(
        source.path(),
        "Home.md",
        b"---\ntitle: Home Page\n---\nsee ![[image.png]]\n",
    );
    write(source.path(), "Other.md", b"Back [[Home]].\n");
    write(source.path(), "image.png", b"old picture");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_546_300_800);
    std::fs::File::options()
        .write(true)
        .open(source.path().join("Other.md"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    run(&ws, source.path(), &ImportOptions::default());
    let home = note_by_title(&ws, "Home Page");
    let other = note_by_title(&ws, "Other");
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&other.summary.id)).unwrap();
    assert_eq!(
        links[0].note_id.as_deref(),
        Some(home.summary.id.as_str()),
        "[[Home]] finds Home Page"
    );
    assert_eq!(
        other.summary.updated.to_rfc3339(),
        "2019-01-01T00:00:00.000Z",
        "without front matter times, the file's"
    );

    // The picture changes at the source: the note has the new one, not both, under the same id (links stay).
    let first = ws.read(&Actor::User, |r| r.attachments(&home.summary.id)).unwrap();
    write(source.path(), "image.png", b"a new, longer picture");
    write(
        source.path(),
        "Home.md",
        b"---\ntitle: Home Page\n---\nsee ![[image.png]] again\n",
    );
    let again = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(again.updated, 1, "{again:#?}");
    let attachments = ws.read(&Actor::User, |r| r.attachments(&home.summary.id)).unwrap();
    assert_eq!(attachments.len(), 1, "{attachments:?}");
    assert_eq!(attachments[0].id, first[0].id);
    assert_eq!(
        ws.read(&Actor::User, |r| r.attachment_data(&attachments[0].id))
            .unwrap(),
        b"a new, longer picture"
    );
    // The same size, other bytes: noticed too.
    write(source.path(), "image.png", b"a new, LONGER picture");
    write(
        source.path(),
        "Home.md",
        b"---\ntitle: Home Page\n---\nsee ![[image.png]] once more\n",
    );
    run(&ws, source.path(), &ImportOptions::default());
    assert_eq!(
        ws.read(&Actor::User, |r| r.attachment_data(&attachments[0].id))
            .unwrap(),
        b"a new, LONGER picture"
    );

    // Exporting as a vault into a folder that is one keeps its settings.
    let out = tempfile::tempdir().unwrap();
    write(
        out.path(),
        ".obsidian/app.json",
        br#"{"vimMode": true, "attachmentFolderPath": "old"}"#,
    );
    quire_import::export(
        &ws,
        out.path(),
        &quire_import::ExportOptions {
            format: quire_import::ExportFormat::Obsidian,
            ..Default::default()
        },
    )
    .unwrap();
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join(".obsidian/app.json")).unwrap()).unwrap();
    assert_eq!(settings["vimMode"], true);
    assert_eq!(settings["attachmentFolderPath"], "./");
}

/// ux 9: a vault's attachment folder became an empty "attachments" notebook. A folder holding only attachments (at
/// any depth) makes no notebook; an empty folder still does (an export writes empty notebooks as empty folders).
#[test]
fn a_folder_of_attachments_alone_makes_no_notebook() {
    let source = tempfile::tempdir().unwrap();
    let root = source.path();
    write(
        root,
        ".obsidian/app.json",
        br#"{"attachmentFolderPath": "attachments"}"#,
    );
    write(root, "attachments/diagram.png", b"\x89PNG fake");
    write(root, "attachments/older/scan.pdf", b"%PDF-1.4 fake");
    write(root, "Home.md", b"![[diagram.png]] and ![[scan.pdf]]\n");
    write(root, "Trips/Lisbon.md", b"![[tram.jpg]]\n");
    write(root, "Trips/tram.jpg", b"\xff\xd8 fake jpeg");
    std::fs::create_dir_all(root.join("Someday/Later")).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, root, &ImportOptions::default());
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (2, 0, 3),
        "{report:#?}"
    );
    let mut paths: Vec<String> = ws
        .read(&Actor::User, |r| {
            let tree = r.notebook_tree()?;
            Ok::<_, quire_core::Error>(
                r.notebooks()?
                    .iter()
                    .filter(|nb| nb.id != quire_core::ROOT_NOTEBOOK_ID)
                    .map(|nb| tree.path(&nb.id))
                    .collect(),
            )
        })
        .unwrap();
    paths.sort();
    assert_eq!(paths, ["Someday", "Someday/Later", "Trips"]);
    let home = note_by_title(&ws, "Home");
    let attached = ws.read(&Actor::User, |r| r.attachments(&home.summary.id)).unwrap();
    let mut titles: Vec<&str> = attached.iter().map(|a| a.title.as_str()).collect();
    titles.sort();
    assert_eq!(
        titles,
        ["diagram.png", "scan.pdf"],
        "the files still arrive, as the notes' attachments"
    );
}

/// security 6, for folders too: a file a note links that cannot be attached is a failure (exit code 1), as in an
/// ENEX or a JEX; the note itself imports without it.
#[test]
fn a_linked_file_too_big_to_attach_is_a_failure_and_its_note_imports() {
    let source = tempfile::tempdir().unwrap();
    let root = source.path();
    write(root, "Trip.md", b"The film: [film](film.mp4)\n");
    // A sparse file: its size is over the limit, and it is never read.
    let film = std::fs::File::create(root.join("film.mp4")).unwrap();
    film.set_len(quire_core::MAX_ATTACHMENT_BYTES as u64 + 1).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, root, &ImportOptions::default());
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (1, 1, 0),
        "{report:#?}"
    );
    let lost = report.items.iter().find(|i| i.outcome == Outcome::Failed).unwrap();
    assert_eq!(lost.path, "Trip.md");
    assert!(
        lost.notes[0].contains("film.mp4 not attached") && lost.notes[0].contains("more than an attachment may hold"),
        "{lost:?}"
    );
    assert!(
        note_by_title(&ws, "Trip").body.contains("(film.mp4)"),
        "the link stays as written"
    );
}

/// A `/` separates the notebooks of a path, so a notebook title that holds one (Joplin allows it; `_notebook.md` may
/// say it) arrives with a division slash instead, and the folder's notes go into it (ux finding 8).
#[test]
fn a_notebook_title_with_a_slash_keeps_its_look_without_making_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "Plans/_notebook.md", b"---\ntitle: 2026/2027 plans\n---\n");
    write(root, "Plans/Budget.md", b"numbers");
    let ws = Workspace::open_in_memory().unwrap();
    run(
        &ws,
        root,
        &ImportOptions {
            format: ImportFormat::Markdown,
            ..Default::default()
        },
    );
    let note = note_by_title(&ws, "Budget");
    let path = ws
        .read(&Actor::User, |r| r.notebook_path_text(&note.summary.notebook_id))
        .unwrap();
    assert_eq!(path, "2026\u{2215}2027 plans");
}

/// Relative links are the Markdown links and images core's link extractor finds: with a title, in angle brackets,
/// an image; never inside code, never with a scheme.
#[test]
fn relative_links_become_quire_links_where_core_finds_links_and_never_inside_code() {
    let source = tempfile::tempdir().unwrap();
    write(source.path(), "B.md", b"Target.\n");
    write(source.path(), "pic.png", b"\x89PNG fake");
    write(
        source.path(),
        "A.md",
        b"[plain](B.md), [titled](B.md \"B\"), [angled](<B.md>), ![img](pic.png), [web](https://example.org/B.md)\n\
          `[code](B.md)` and\n```\n[fenced](B.md)\n```\n",
    );
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (2, 0), "{report:#?}");
    let a = note_by_title(&ws, "A");
    let b = note_by_title(&ws, "B").summary.id;
    let pic = ws.read(&Actor::User, |r| r.attachments(&a.summary.id)).unwrap();
    let pic = &pic[0].id;
    assert_eq!(
        a.body,
        format!(
            "[plain](quire://note/{b}), [titled](quire://note/{b} \"B\"), [angled](quire://note/{b}), \
             ![img](quire://attachment/{pic}), [web](https://example.org/B.md)\n\
             `[code](B.md)` and\n```\n[fenced](B.md)\n```\n"
        )
    );
}

/// Interop finding 2-#4: a folder of files quire does not read (a Google Keep Takeout, Tomboy notes) imported
/// "0 imported", exit 0, saying nothing; next to Markdown they were left out without a word.
#[test]
fn files_no_note_links_are_said_and_a_folder_without_notes_is_refused() {
    let source = tempfile::tempdir().unwrap();
    write(source.path(), "Takeout/Keep/Shopping.json", br#"{"title": "Shopping"}"#);
    write(source.path(), "0b1f6c3e.note", b"<note-content>Tomboy</note-content>");
    let home = tempfile::tempdir().unwrap();
    let ws = Workspace::open(home.path().join("ws.quire")).unwrap();
    let refused = import(&ws, source.path(), &ImportOptions::default(), &|_, _| {}).unwrap_err();
    let message = refused.to_string();
    assert!(
        message.contains("holds no notes quire can read, only 2 files of kinds it does not import (.json, .note)"),
        "{message}"
    );

    write(source.path(), "Plan.md", b"# Plan\n\nSee ![chart](chart.png).\n");
    write(source.path(), "chart.png", b"\x89PNG\r\n\x1a\n");
    let report = run(&ws, source.path(), &ImportOptions::default());
    assert_eq!((report.imported, report.attachments), (1, 1), "{report:#?}");
    let mut skipped: Vec<&str> = report
        .items
        .iter()
        .filter(|i| i.outcome == Outcome::Skipped)
        .map(|i| i.path.as_str())
        .collect();
    skipped.sort();
    assert_eq!(skipped, ["0b1f6c3e.note", "Takeout/Keep/Shopping.json"]);
    let said = &report.items.iter().find(|i| i.path == "0b1f6c3e.note").unwrap().notes[0];
    assert!(said.contains("no note links it"), "{said}");
}
