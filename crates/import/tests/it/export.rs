//! Exporting to a folder the tests then look at or import again: an Obsidian export is a vault whose links
//! resolve again, nothing is written through a symbolic link, and exporting again removes only what it wrote.

use crate::support::{note_by_title, run, vault, write};
use quire_core::{Actor, Workspace, testing};
use quire_import::ImportOptions;

#[test]
fn an_obsidian_export_is_a_vault_whose_links_resolve_again() {
    let source = tempfile::tempdir().unwrap();
    vault(source.path());
    let ws = Workspace::open_in_memory().unwrap();
    run(&ws, source.path(), &ImportOptions::default());
    let secret = note_by_title(&ws, "Open task");
    ws.write(&Actor::User, |w| w.set_note_protected(&secret.summary.id, true))
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let report = quire_import::export(
        &ws,
        out.path(),
        &quire_import::ExportOptions {
            format: quire_import::ExportFormat::Obsidian,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((report.notes, report.protected_left_out), (3, 1), "{report:?}");
    assert!(out.path().join(".obsidian/app.json").is_file());
    let compost = std::fs::read_to_string(out.path().join("Compost.md")).unwrap();
    assert!(compost.contains("[[Garden plan#Beds|the plan]]"), "{compost}");
    let plan = std::fs::read_to_string(out.path().join("Projects/Garden/Garden plan.md")).unwrap();
    assert!(plan.starts_with("---\ntitle: Garden plan\n"), "{plan}");
    assert!(
        plan.contains("[[Projects/Garden/plan.pdf|PDF]]"),
        "a link to a file keeps its text as the alias: {plan}"
    );
    assert!(!plan.contains("[[Projects/Garden/plan.pdf]]"), "{plan}");
    assert!(
        !std::fs::read_dir(out.path().join("Daily"))
            .unwrap()
            .any(|e| { e.unwrap().file_name().to_string_lossy().contains("Open task") }),
        "protected notes are left out unless asked"
    );

    let copy = Workspace::open_in_memory().unwrap();
    let again = run(&copy, out.path(), &ImportOptions::default());
    assert_eq!(
        (again.format.as_str(), again.imported, again.failed),
        ("obsidian", 3, 0),
        "{again:#?}"
    );
    let plan = note_by_title(&copy, "Garden plan");
    let from: Vec<String> = copy
        .read(&Actor::User, |r| r.body_backlinks(&plan.summary.id))
        .unwrap()
        .into_iter()
        .map(|b| b.source.title)
        .collect();
    assert_eq!(
        from,
        ["2024-03-02", "Compost"],
        "the wikilinks written by the export resolve"
    );
    let unresolved = copy
        .read(&Actor::User, |r| r.unresolved_links(&plan.summary.id))
        .unwrap();
    assert!(unresolved.is_empty(), "{unresolved:?}");
}

#[test]
fn export_never_writes_through_a_symbolic_link_and_keeps_reserved_names_apart() {
    let ws = Workspace::open_in_memory().unwrap();
    ws.write(&Actor::User, |w| {
        let note = testing::note("_notebook", "a note with an awkward title").create(w)?;
        w.add_attachment(
            &note,
            quire_core::NewAttachment {
                title: "readme.md".into(),
                mime: "text/markdown".into(),
                data: b"# not a note".to_vec(),
                text: None,
            },
        )?;
        testing::note("Plan", "plan").create(w)
    })
    .unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim"), b"precious").unwrap();
    let out = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path().join("victim"), out.path().join("Plan.md")).unwrap();
    let refused = quire_import::export(&ws, out.path(), &quire_import::ExportOptions::default());
    assert!(refused.unwrap_err().to_string().contains("symbolic link"));
    assert_eq!(std::fs::read(outside.path().join("victim")).unwrap(), b"precious");

    let clean = tempfile::tempdir().unwrap();
    quire_import::export(&ws, clean.path(), &quire_import::ExportOptions::default()).unwrap();
    let copy = Workspace::open_in_memory().unwrap();
    let report = run(&copy, clean.path(), &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (2, 0), "{report:#?}");
    let awkward = note_by_title(&copy, "_notebook");
    let attachments = copy.read(&Actor::User, |r| r.attachments(&awkward.summary.id)).unwrap();
    assert_eq!(
        attachments.iter().map(|a| a.title.as_str()).collect::<Vec<_>>(),
        ["readme.md"]
    );
}

#[test]
fn exporting_again_into_the_same_folder_removes_what_is_gone_and_nothing_else() {
    let ws = Workspace::open_in_memory().unwrap();
    let gone = ws
        .write(&Actor::User, |w| {
            testing::note("Stays", "kept").create(w)?;
            testing::note("Goes", "soon deleted").create(w)
        })
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    write(out.path(), "mine.txt", b"the user's own file");
    quire_import::export(&ws, out.path(), &Default::default()).unwrap();
    assert!(out.path().join("Goes.md").exists());
    ws.write(&Actor::User, |w| w.purge_note(&gone)).unwrap();
    let report = quire_import::export(&ws, out.path(), &Default::default()).unwrap();
    assert_eq!(report.removed, 1);
    assert!(!out.path().join("Goes.md").exists(), "the deleted note's file is gone");
    assert!(out.path().join("Stays.md").exists());
    assert!(
        out.path().join("mine.txt").exists(),
        "a file the export did not write stays"
    );
}
