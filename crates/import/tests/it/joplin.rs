//! Importing Joplin exports built by the test, a JEX archive and a RAW folder: the notebook tree, to-dos, tags,
//! resources and links arrive; a re-import changes nothing; hostile and broken archives are reported, and nothing
//! is written outside.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::path::Path;

use crate::support::{
    CLIP, NOTE_TAG, OPEN, PHOTO, PLAN, PNG, PROJECTS, TAG, TASK, WORK, item, jex, note_by_title, note_item,
    notebook_path, run,
};
use quire_core::{Actor, Page, Workspace};
use quire_import::{ImportFormat, ImportOptions, ImportReport, Outcome, import};

/// The items of a small Joplin profile: a notebook inside another, a note linking another note and a picture, a
/// completed and an open to-do, a tag, an HTML web clip.
fn joplin_items() -> Vec<(String, Vec<u8>)> {
    let plan_body = format!("# Plan\n\nSee [the task](:/{TASK}) and the photo:\n\n![beds](:/{PHOTO})\n");
    vec![
        (
            format!("{WORK}.md"),
            item(
                Some("Work"),
                "",
                &[
                    ("id", WORK),
                    ("parent_id", ""),
                    ("icon", r#"{"emoji":"💼"}"#),
                    ("type_", "2"),
                ],
            )
            .into_bytes(),
        ),
        (
            format!("{PROJECTS}.md"),
            item(
                Some("Projects"),
                "",
                &[("id", PROJECTS), ("parent_id", WORK), ("type_", "2")],
            )
            .into_bytes(),
        ),
        (
            format!("{PLAN}.md"),
            note_item(
                PLAN,
                PROJECTS,
                "Garden plan",
                &plan_body,
                &[("source_url", "https://example.org/garden")],
            )
            .into_bytes(),
        ),
        (
            format!("{TASK}.md"),
            note_item(
                TASK,
                WORK,
                "Buy seeds",
                "Tomatoes, basil.",
                &[
                    ("is_todo", "1"),
                    ("todo_completed", "1683021600000"),
                    ("todo_due", "1683108000000"),
                ],
            )
            .into_bytes(),
        ),
        (
            format!("{OPEN}.md"),
            note_item(OPEN, WORK, "Water beds", "", &[("is_todo", "1")]).into_bytes(),
        ),
        (
            format!("{CLIP}.md"),
            note_item(
                CLIP,
                "",
                "A web clip",
                &format!(
                    "<h2>Clipped</h2><ul><li>one</li><li>two</li></ul><p>a <a href=\"https://example.org\">link</a></p>\
                     <p><img src=\":/{PHOTO}\" alt=\"beds\"></p>"
                ),
                &[("markup_language", "2")],
            )
            .into_bytes(),
        ),
        (
            format!("{PHOTO}.md"),
            item(
                Some("beds"),
                "",
                &[
                    ("id", PHOTO),
                    ("mime", "image/png"),
                    ("filename", ""),
                    ("file_extension", "png"),
                    ("size", "19"),
                    ("type_", "4"),
                ],
            )
            .into_bytes(),
        ),
        (format!("resources/{PHOTO}.png"), PNG.to_vec()),
        (
            format!("{TAG}.md"),
            item(Some("garden"), "", &[("id", TAG), ("type_", "5")]).into_bytes(),
        ),
        (
            format!("{NOTE_TAG}.md"),
            item(
                None,
                "",
                &[("id", NOTE_TAG), ("note_id", PLAN), ("tag_id", TAG), ("type_", "6")],
            )
            .into_bytes(),
        ),
    ]
}

/// A tar entry whose name is written into the header as is, `..` and all (a hostile archive).
fn raw_entry(out: &mut Vec<u8>, name: &str, kind: tar::EntryType, data: &[u8], link: Option<&str>) {
    let mut header = tar::Header::new_old();
    header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    if let Some(link) = link {
        header.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
    }
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(kind);
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().div_ceil(512) * 512, 0);
}

/// What a Joplin import must give, from a JEX or a RAW folder alike.
fn check_joplin(ws: &Workspace, report: &ImportReport) {
    assert_eq!(report.format, "joplin");
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (4, 0, 1),
        "{report:#?}"
    );
    let plan = note_by_title(ws, "Garden plan");
    let task = note_by_title(ws, "Buy seeds");
    assert_eq!(notebook_path(ws, &plan).last().unwrap(), "Projects");
    assert_eq!(notebook_path(ws, &task).last().unwrap(), "Work");
    let notebooks = ws.read(&Actor::User, |r| r.notebooks()).unwrap();
    let work = notebooks.iter().find(|nb| nb.title == "Work").unwrap();
    assert_eq!(work.icon.as_deref(), Some("💼"));
    let projects = notebooks.iter().find(|nb| nb.title == "Projects").unwrap();
    assert_eq!(
        projects.parent_id.as_deref(),
        Some(work.id.as_str()),
        "the tree is kept"
    );

    assert_eq!(plan.summary.tags, ["garden"]);
    assert_eq!(plan.summary.created.to_rfc3339(), "2023-05-01T10:00:00.000Z");
    assert_eq!(plan.summary.updated.to_rfc3339(), "2023-05-02T11:00:00.000Z");
    let attachments = ws.read(&Actor::User, |r| r.attachments(&plan.summary.id)).unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!(
        (attachments[0].title.as_str(), attachments[0].mime.as_str()),
        ("beds.png", "image/png")
    );
    let data = ws
        .read(&Actor::User, |r| r.attachment_data(&attachments[0].id))
        .unwrap();
    assert_eq!(data, PNG);
    assert_eq!(
        plan.body,
        format!(
            "# Plan\n\nSee [the task](quire://note/{}) and the photo:\n\n![beds](quire://attachment/{})\n",
            task.summary.id, attachments[0].id
        ),
        ":/ID links point at the new note and attachment"
    );
    let labels = ws.read(&Actor::User, |r| r.attributes(&plan.summary.id)).unwrap();
    assert!(
        labels
            .iter()
            .any(|a| a.name == "source_url" && a.value == "https://example.org/garden"),
        "{labels:?}"
    );
    let backlinks = ws.read(&Actor::User, |r| r.body_backlinks(&task.summary.id)).unwrap();
    assert_eq!(backlinks.len(), 1, "the link is a link core knows");

    assert!(task.summary.is_todo);
    let due = ws.read(&Actor::User, |r| r.attributes(&task.summary.id)).unwrap();
    assert!(
        due.iter()
            .any(|a| a.name == "due" && a.value == "2023-05-03T10:00:00.000Z"),
        "a due date is kept as a label: {due:?}"
    );
    assert_eq!(
        task.summary.todo_completed.map(|t| t.to_rfc3339()).as_deref(),
        Some("2023-05-02T10:00:00.000Z")
    );
    let open = note_by_title(ws, "Water beds");
    assert!(open.summary.is_todo);
    assert_eq!(open.summary.todo_completed, None);
    let clip = note_by_title(ws, "A web clip");
    assert!(clip.body.contains("## Clipped"), "{}", clip.body);
    assert!(clip.body.contains("- one\n- two"), "{}", clip.body);
    assert!(clip.body.contains("[link](https://example.org)"), "{}", clip.body);
    assert!(
        clip.body
            .contains(&format!("![beds](quire://attachment/{})", attachments[0].id)),
        "an HTML note's picture is a picture: {}",
        clip.body
    );
}

#[test]
fn a_jex_archive_arrives_with_its_notebook_tree_todos_tags_resources_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.jex");
    std::fs::write(&path, jex(&joplin_items())).unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    check_joplin(&ws, &report);

    // Importing the same export again changes nothing; a note changed in Joplin is updated.
    let again = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (again.imported, again.unchanged, again.attachments),
        (0, 4, 0),
        "{again:#?}"
    );
    let mut items = joplin_items();
    let task = items
        .iter_mut()
        .find(|(name, _)| name == &format!("{TASK}.md"))
        .unwrap();
    task.1 = note_item(TASK, WORK, "Buy seeds", "Tomatoes only.", &[("is_todo", "1")]).into_bytes();
    std::fs::write(&path, jex(&items)).unwrap();
    let third = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (third.imported, third.updated, third.unchanged),
        (0, 1, 3),
        "{third:#?}"
    );
    let task = note_by_title(&ws, "Buy seeds");
    assert_eq!(task.body, "Tomatoes only.");
    assert_eq!(task.summary.todo_completed, None, "reopened in Joplin, reopened here");
    let all = ws
        .read(&Actor::User, |r| r.all_notes(Page { offset: 0, limit: 100 }))
        .unwrap();
    assert_eq!(all.total, 4, "nothing was duplicated");
}

#[test]
fn a_raw_folder_is_detected_and_imports_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    for (name, data) in joplin_items() {
        let path = raw.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &raw, &ImportOptions::default());
    check_joplin(&ws, &report);
}

#[test]
fn hostile_and_broken_jex_archives_are_reported_and_nothing_lands_outside() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("quire-slip-{}", std::process::id());
    let mut archive = Vec::new();
    let good = note_item(PLAN, "", "Kept", "still imported", &[]);
    raw_entry(
        &mut archive,
        &format!("{PLAN}.md"),
        tar::EntryType::Regular,
        good.as_bytes(),
        None,
    );
    raw_entry(
        &mut archive,
        &format!("../{marker}.md"),
        tar::EntryType::Regular,
        b"escaped",
        None,
    );
    raw_entry(
        &mut archive,
        &format!("/tmp/{marker}-abs.md"),
        tar::EntryType::Regular,
        b"escaped",
        None,
    );
    raw_entry(
        &mut archive,
        &format!("resources/../../{marker}.png"),
        tar::EntryType::Regular,
        b"escaped",
        None,
    );
    raw_entry(
        &mut archive,
        &format!("resources/{PHOTO}.png"),
        tar::EntryType::Symlink,
        b"",
        Some("/etc/passwd"),
    );
    raw_entry(
        &mut archive,
        "notes/readme.txt",
        tar::EntryType::Regular,
        b"not an item",
        None,
    );
    let broken = note_item(TASK, "", "Broken", "", &[]).replace("type_: 1", "no properties here\n");
    raw_entry(
        &mut archive,
        &format!("{TASK}.md"),
        tar::EntryType::Regular,
        broken.as_bytes(),
        None,
    );
    // Cut short: a header that promises more bytes than follow.
    let mut cut = Vec::new();
    raw_entry(
        &mut cut,
        &format!("{OPEN}.md"),
        tar::EntryType::Regular,
        &[b'x'; 2000],
        None,
    );
    archive.extend_from_slice(&cut[..700]);
    let path = dir.path().join("hostile.jex");
    std::fs::write(&path, &archive).unwrap();

    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(report.imported, 1, "{report:#?}");
    assert_eq!(note_by_title(&ws, "Kept").body, "still imported");
    let reason = |needle: &str| {
        report
            .items
            .iter()
            .find(|i| i.path.contains(needle))
            .unwrap_or_else(|| panic!("{needle} is reported: {report:#?}"))
    };
    for hostile in [
        format!("../{marker}.md"),
        format!("/tmp/{marker}-abs.md"),
        format!("resources/../../{marker}.png"),
    ] {
        let item = reason(&hostile);
        assert_eq!(item.outcome, Outcome::Failed);
        assert!(item.notes[0].contains("leads out"), "{item:?}");
    }
    assert!(reason(&format!("resources/{PHOTO}.png")).notes[0].contains("not a plain file"));
    assert_eq!(reason("notes/readme.txt").outcome, Outcome::Skipped);
    assert!(reason(&format!("{TASK}.md")).notes[0].contains("not a Joplin item"));
    assert!(
        reason("hostile.jex").notes[0].contains("cut short"),
        "a truncated archive says so: {report:#?}"
    );
    assert!(report.failed >= 5);
    for place in [
        std::env::temp_dir(),
        std::env::current_dir().unwrap(),
        dir.path().to_path_buf(),
    ] {
        for name in [
            format!("{marker}.md"),
            format!("{marker}.png"),
            format!("{marker}-abs.md"),
        ] {
            assert!(!place.join(&name).exists(), "{name} landed in {}", place.display());
        }
    }
    assert!(!Path::new(&format!("/tmp/{marker}-abs.md")).exists());

    // Not a tar at all.
    let junk = dir.path().join("junk.jex");
    std::fs::write(&junk, b"this is not an archive").unwrap();
    let err = import(&ws, &junk, &ImportOptions::default(), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("JEX"), "{err}");
}

#[test]
fn joplin_reimports_see_tag_and_body_changes_without_duplicating_attachments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.jex");
    std::fs::write(&path, jex(&joplin_items())).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    run(&ws, &path, &ImportOptions::default());

    // Tagging a note in Joplin adds a note–tag item and leaves the note's file alone; the plan's text changes.
    let mut items = joplin_items();
    items.push((
        "00000000000000000000000000000d02.md".into(),
        item(
            None,
            "",
            &[
                ("id", "00000000000000000000000000000d02"),
                ("note_id", TASK),
                ("tag_id", TAG),
                ("type_", "6"),
            ],
        )
        .into_bytes(),
    ));
    let plan = items
        .iter_mut()
        .find(|(name, _)| name == &format!("{PLAN}.md"))
        .unwrap();
    plan.1 = note_item(
        PLAN,
        PROJECTS,
        "Garden plan",
        &format!("Moved.\n\n![beds](:/{PHOTO})\n"),
        &[],
    )
    .into_bytes();
    std::fs::write(&path, jex(&items)).unwrap();
    let again = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (again.updated, again.unchanged, again.attachments),
        (2, 2, 0),
        "{again:#?}"
    );
    assert_eq!(note_by_title(&ws, "Buy seeds").summary.tags, ["garden"]);
    let plan = note_by_title(&ws, "Garden plan");
    let attachments = ws.read(&Actor::User, |r| r.attachments(&plan.summary.id)).unwrap();
    assert_eq!(
        attachments.len(),
        1,
        "the picture is found again, not added twice: {attachments:?}"
    );
    assert_eq!(
        plan.body,
        format!("Moved.\n\n![beds](quire://attachment/{})\n", attachments[0].id)
    );
}

#[test]
fn joplin_html_pictures_trash_and_a_resource_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let second = "00000000000000000000000000000b02";
    let mut items = vec![
        (
            format!("{PLAN}.md"),
            note_item(
                PLAN,
                "",
                "Resized",
                &format!("Look: <img src=\":/{PHOTO}\" alt=\"beds\" width=\"300\"> and <a href=\":/{PLAN}\">me</a>."),
                &[],
            )
            .into_bytes(),
        ),
        (
            format!("{TASK}.md"),
            note_item(TASK, "", "Thrown away", "old", &[("deleted_time", "1700000000000")]).into_bytes(),
        ),
        (
            format!("{PHOTO}.md"),
            item(
                Some("beds.png"),
                "",
                &[("id", PHOTO), ("file_extension", "png"), ("type_", "4")],
            )
            .into_bytes(),
        ),
        (format!("resources/{PHOTO}.png"), PNG.to_vec()),
        (
            format!("{second}.md"),
            item(
                Some("big.png"),
                "",
                &[("id", second), ("file_extension", "png"), ("type_", "4")],
            )
            .into_bytes(),
        ),
    ];
    let mut archive = jex(&items);
    // The archive ends inside the last resource: a header for 4,000 bytes, 1,000 of them there.
    archive.truncate(archive.len() - 1024);
    let mut cut = Vec::new();
    raw_entry(
        &mut cut,
        &format!("resources/{second}.png"),
        tar::EntryType::Regular,
        &[7u8; 4000],
        None,
    );
    archive.extend_from_slice(&cut[..512 + 1000]);
    let path = dir.path().join("cut.jex");
    std::fs::write(&path, &archive).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!((report.imported, report.attachments), (1, 1), "{report:#?}");
    let note = note_by_title(&ws, "Resized");
    let attachments = ws.read(&Actor::User, |r| r.attachments(&note.summary.id)).unwrap();
    assert_eq!(
        note.body,
        format!(
            "Look: ![beds](quire://attachment/{}) and [me](quire://note/{}).",
            attachments[0].id, note.summary.id
        )
    );
    let trashed = report.items.iter().find(|i| i.path.contains(TASK)).unwrap();
    assert_eq!(trashed.outcome, Outcome::Skipped, "{trashed:?}");
    let big = report.items.iter().find(|i| i.path.contains(second)).unwrap();
    assert!(big.notes[0].contains("cut short: 1000 of its 4000 bytes"), "{big:?}");
    items.clear();

    // A folder that holds no Joplin items is not taken for an empty export.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = import(
        &ws,
        &empty,
        &ImportOptions {
            format: ImportFormat::Joplin,
            ..Default::default()
        },
        &|_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("no Joplin items"), "{err}");
}

/// security 10: two entries of one name in a JEX. Unpacking the second failed with "File exists" and its error path
/// removed the first one's file, so neither note arrived.
#[test]
fn a_duplicate_jex_entry_keeps_the_first_copy_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let first = note_item(PLAN, "", "DupFirst", "the first copy", &[]);
    let second = note_item(PLAN, "", "DupSecond", "the second copy", &[]);
    let other = note_item(TASK, "", "Other", "an unrelated note", &[]);
    let path = dir.path().join("dup.jex");
    std::fs::write(
        &path,
        jex(&[
            (format!("{PLAN}.md"), first.into_bytes()),
            (format!("{PLAN}.md"), second.into_bytes()),
            (format!("{TASK}.md"), other.into_bytes()),
        ]),
    )
    .unwrap();

    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (2, 1), "{report:#?}");
    assert_eq!(note_by_title(&ws, "DupFirst").body, "the first copy");
    assert_eq!(note_by_title(&ws, "Other").body, "an unrelated note");
    let duplicate = report.items.iter().find(|i| i.outcome == Outcome::Failed).unwrap();
    assert_eq!(duplicate.path, format!("{PLAN}.md"));
    assert!(
        duplicate.notes[0].contains("a second entry of this name") && duplicate.notes[0].contains("first one"),
        "{duplicate:?}"
    );
}
