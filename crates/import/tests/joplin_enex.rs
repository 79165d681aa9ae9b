//! Importing Joplin exports (a JEX archive and a RAW folder) and Evernote exports (ENEX), each built by the test:
//! notebooks, to-dos, tags, resources and links arrive; a re-import changes nothing; hostile and broken archives
//! are reported, and nothing is written outside.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers stop the test where it failed"
)]

mod support;

use std::path::Path;

use base64::Engine as _;
use quire_core::{Actor, Page, Workspace};
use quire_import::{ImportFormat, ImportOptions, ImportReport, Outcome, import};
use support::{note_by_title, run};

const WORK: &str = "0000000000000000000000000000f001";
const PROJECTS: &str = "0000000000000000000000000000f002";
const PLAN: &str = "00000000000000000000000000000a01";
const TASK: &str = "00000000000000000000000000000a02";
const OPEN: &str = "00000000000000000000000000000a03";
const CLIP: &str = "00000000000000000000000000000a04";
const PHOTO: &str = "00000000000000000000000000000b01";
const TAG: &str = "00000000000000000000000000000c01";
const NOTE_TAG: &str = "00000000000000000000000000000d01";
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n a picture";

/// A Joplin item file: title, blank line, body, blank line, properties (as Joplin serialises them).
fn item(title: Option<&str>, body: &str, props: &[(&str, &str)]) -> String {
    let mut parts = Vec::new();
    if let Some(title) = title {
        parts.push(title.to_owned());
    }
    if !body.is_empty() {
        parts.push(body.to_owned());
    }
    parts.push(
        props
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    parts.join("\n\n")
}

fn note_item(id: &str, parent: &str, title: &str, body: &str, extra: &[(&str, &str)]) -> String {
    let mut props = vec![
        ("id", id),
        ("parent_id", parent),
        ("created_time", "2023-05-01T10:00:00.000Z"),
        ("updated_time", "2023-05-02T11:00:00.000Z"),
        ("is_conflict", "0"),
        ("author", ""),
        ("source_url", ""),
        ("is_todo", "0"),
        ("todo_due", "0"),
        ("todo_completed", "0"),
        ("user_created_time", "2023-05-01T10:00:00.000Z"),
        ("user_updated_time", "2023-05-02T11:00:00.000Z"),
        ("encryption_cipher_text", ""),
        ("encryption_applied", "0"),
        ("markup_language", "1"),
    ];
    for (k, v) in extra {
        props.retain(|(key, _)| key != k);
        props.push((k, v));
    }
    props.push(("type_", "1"));
    item(Some(title), body, &props)
}

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

/// A tar of `entries` (the JEX format), with every entry a plain file.
fn jex(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in entries {
        let mut header = tar::Header::new_ustar();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, name, data.as_slice()).unwrap();
    }
    builder.into_inner().unwrap()
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

fn notebook_path(ws: &Workspace, note: &quire_core::Note) -> Vec<String> {
    ws.read(&Actor::User, |r| r.notebook_path(&note.summary.notebook_id))
        .unwrap()
        .into_iter()
        .filter(|nb| nb.id != quire_core::ROOT_NOTEBOOK_ID)
        .map(|nb| nb.title)
        .collect()
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

/// An Evernote export of two notes: the first with a list, a table, checkboxes, a link, an image and an
/// unreferenced PDF, tags, times and a done reminder; the second with entities and a missing resource.
fn enex(picture: &[u8]) -> String {
    let b64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    let hash = md5_hex(picture);
    let pdf = b"%PDF-1.4 the manual";
    let encoded = b64(picture);
    // Evernote wraps its base64 in lines.
    let wrapped: Vec<&str> = encoded
        .as_bytes()
        .chunks(8)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export4.dtd">
<en-export export-date="20240301T120000Z" application="Evernote" version="10.0">
  <note>
    <title>Garden &amp; beds</title>
    <created>20240301T143000Z</created>
    <updated>20240302T090000Z</updated>
    <tag>garden</tag>
    <tag>spring</tag>
    <note-attributes>
      <author>Ann</author>
      <source-url>https://example.org/beds</source-url>
      <reminder-time>20240305T080000Z</reminder-time>
      <reminder-done-time>20240305T100000Z</reminder-done-time>
    </note-attributes>
    <content><![CDATA[<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">
<en-note><h1>Beds</h1><div>Plant <b>early</b>&nbsp;in <a href="https://example.org/soil">good soil</a>.</div>
<ul><li>tomatoes</li><li>basil</li></ul>
<div><en-todo checked="true"/>dig the bed</div><div><en-todo checked="false"/>sow seeds</div>
<table><tr><td>Bed</td><td>Crop</td></tr><tr><td>1</td><td>beans</td></tr></table>
<en-media hash="{hash}" type="image/png"/>
<en-crypt hint="pin">c2VjcmV0</en-crypt>
</en-note>]]></content>
    <resource>
      <data encoding="base64">
{data}
      </data>
      <mime>image/png</mime>
      <resource-attributes><file-name>beds.png</file-name></resource-attributes>
    </resource>
    <resource>
      <data encoding="base64">{pdf}</data>
      <mime>application/pdf</mime>
      <resource-attributes><file-name>manual.pdf</file-name></resource-attributes>
    </resource>
  </note>
  <note>
    <title>Second</title>
    <created>20240303T100000Z</created>
    <updated>20240303T100000Z</updated>
    <content><![CDATA[<en-note><p>1 &lt; 2 &amp;&amp; <i>fine</i></p><en-media hash="ffffffffffffffffffffffffffffffff" type="image/jpeg"/></en-note>]]></content>
  </note>
</en-export>
"#,
        data = wrapped.join("\n"),
        pdf = b64(pdf),
    )
}

fn md5_hex(data: &[u8]) -> String {
    use md5::Digest as _;
    md5::Md5::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn an_enex_export_arrives_as_markdown_with_its_resources_tags_and_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Garden notebook.enex");
    std::fs::write(&path, enex(PNG)).unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(report.format, "enex");
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (2, 0, 2),
        "{report:#?}"
    );

    let note = note_by_title(&ws, "Garden & beds");
    assert_eq!(
        notebook_path(&ws, &note),
        ["Garden notebook"],
        "a notebook named after the file"
    );
    assert_eq!(note.summary.tags, ["garden", "spring"]);
    assert_eq!(note.summary.created.to_rfc3339(), "2024-03-01T14:30:00.000Z");
    assert_eq!(note.summary.updated.to_rfc3339(), "2024-03-02T09:00:00.000Z");
    assert!(note.summary.is_todo, "a reminder makes a to-do");
    assert_eq!(
        note.summary.todo_completed.map(|t| t.to_rfc3339()).as_deref(),
        Some("2024-03-05T10:00:00.000Z")
    );
    let attachments = ws.read(&Actor::User, |r| r.attachments(&note.summary.id)).unwrap();
    let titles: Vec<&str> = attachments.iter().map(|a| a.title.as_str()).collect();
    assert_eq!(titles.len(), 2);
    assert!(
        titles.contains(&"beds.png") && titles.contains(&"manual.pdf"),
        "{titles:?}"
    );
    let picture = attachments.iter().find(|a| a.title == "beds.png").unwrap();
    assert_eq!(ws.read(&Actor::User, |r| r.attachment_data(&picture.id)).unwrap(), PNG);

    let body = &note.body;
    for expected in [
        "# Beds",
        "Plant **early**",
        "[good soil](https://example.org/soil)",
        "- tomatoes\n- basil",
        "- [x] dig the bed\n- [ ] sow seeds\n",
        "| Bed | Crop  |\n| --- | ----- |\n| 1   | beans |",
        &format!("![beds.png](quire://attachment/{})", picture.id),
        "(encrypted text: not imported)",
    ] {
        assert!(body.contains(expected), "{expected:?} in:\n{body}");
    }
    assert!(!body.contains("c2VjcmV0"), "cipher text is left out");
    assert!(!body.contains('\u{F8F0}') && !body.contains('\u{F8F1}'));
    let labels = ws.read(&Actor::User, |r| r.attributes(&note.summary.id)).unwrap();
    assert!(labels.iter().any(|a| a.name == "author" && a.value == "Ann"));

    let second = note_by_title(&ws, "Second");
    assert!(second.body.starts_with("1 < 2 && *fine*"), "{}", second.body);
    let item = report.items.iter().find(|i| i.path.starts_with("Second")).unwrap();
    assert!(
        item.notes.iter().any(|n| n.contains("not in the source")),
        "a media element without its resource is reported: {item:?}"
    );

    let again = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (again.imported, again.unchanged, again.attachments),
        (0, 2, 0),
        "{again:#?}"
    );
}

#[test]
fn a_broken_enex_keeps_the_notes_before_the_break_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let whole = enex(PNG);
    let cut = &whole[..whole.find("<title>Second").unwrap() + 20];
    let path = dir.path().join("cut.enex");
    std::fs::write(&path, cut).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(report.imported, 1, "{report:#?}");
    let failed = report.items.iter().find(|i| i.outcome == Outcome::Failed).unwrap();
    assert!(failed.notes[0].contains("after 1 notes"), "{failed:?}");

    // Cut inside an element of the next note: said too.
    let cut = &whole[..whole.find("<created>20240303").unwrap() + 14];
    let path = dir.path().join("cut-inside.enex");
    std::fs::write(&path, cut).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (1, 1), "{report:#?}");
    assert!(
        report
            .items
            .iter()
            .any(|i| i.notes.iter().any(|n| n.contains("ends inside <created>"))),
        "{report:#?}"
    );

    let bad_data = whole.replacen("<data encoding=\"base64\">", "<data encoding=\"base64\">!!!", 1);
    let path = dir.path().join("bad.enex");
    std::fs::write(&path, bad_data).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(report.imported, 2, "a bad resource does not stop its note: {report:#?}");
    assert!(
        report
            .items
            .iter()
            .any(|i| i.notes.iter().any(|n| n.contains("not valid base64"))),
        "{report:#?}"
    );

    let path = dir.path().join("other.enex");
    std::fs::write(&path, "<html><body>not an export</body></html>").unwrap();
    let err = import(&ws, &path, &ImportOptions::default(), &|_, _| {}).unwrap_err();
    assert!(err.to_string().contains("not an Evernote export"), "{err}");
    let forced = import(
        &ws,
        &path,
        &ImportOptions {
            format: ImportFormat::Enex,
            ..Default::default()
        },
        &|_, _| {},
    );
    assert!(forced.is_err());
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

#[test]
fn evernote_checklists_nameless_resources_namesakes_and_renames() {
    let dir = tempfile::tempdir().unwrap();
    let jpeg = b"\xff\xd8\xff a photo";
    let hash = md5_hex(jpeg);
    let encoded = base64::engine::general_purpose::STANDARD.encode(jpeg);
    let enex = |first_title: &str| {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<en-export>
<note><title>{first_title}</title><created>20240301T100000Z</created><content><![CDATA[<en-note>
<ul style="--en-todo:true;"><li style="--en-checked:true;"><div>milk</div></li><li style="--en-checked:false;"><div>eggs</div></li></ul>
<table><tbody><tr><td><div>Day</div></td><td><div>Meal</div></td></tr><tr><td><div>Mon</div></td><td><div>soup</div></td></tr></tbody></table>
<en-crypt/><div>after the secret</div><en-media hash="{hash}" type="image/jpeg"/>
</en-note>]]></content><resource><data encoding="base64">{encoded}</data><mime>image/jpeg</mime></resource></note>
<note><title>Same time</title><created>20240301T100000Z</created><content><![CDATA[<en-note>second</en-note>]]></content></note>
</en-export>"#
        )
    };
    let path = dir.path().join("Lists.enex");
    std::fs::write(&path, enex("Shopping")).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (2, 0), "{report:#?}");
    let note = note_by_title(&ws, "Shopping");
    for expected in [
        "- [x] milk\n- [ ] eggs\n",
        "| Day | Meal |",
        "| Mon | soup |",
        "after the secret",
    ] {
        assert!(note.body.contains(expected), "{expected:?} in:\n{}", note.body);
    }
    let attachments = ws.read(&Actor::User, |r| r.attachments(&note.summary.id)).unwrap();
    assert_eq!(
        (attachments[0].title.as_str(), attachments[0].mime.as_str()),
        ("attachment-1.jpg", "image/jpeg"),
        "a resource without a name gets one with its type's extension"
    );
    assert_eq!(note_by_title(&ws, "Same time").body, "second\n");

    // Renamed in Evernote and exported again: the same note, updated.
    std::fs::write(&path, enex("Weekly shopping")).unwrap();
    let again = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (again.imported, again.updated, again.unchanged),
        (0, 1, 1),
        "{again:#?}"
    );
    let renamed = note_by_title(&ws, "Weekly shopping");
    assert_eq!(renamed.summary.id, note.summary.id);
    let attachments = ws.read(&Actor::User, |r| r.attachments(&note.summary.id)).unwrap();
    assert_eq!(attachments.len(), 1, "{attachments:?}");
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

/// Writes an ENEX file of one note whose resource holds `resource_bytes` of zeros (as base64, in Evernote's 76-column
/// lines) and whose content is `content_bytes` long, then a small note; the file is written a line at a time.
fn big_enex(path: &Path, resource_bytes: usize, content_bytes: usize) {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        file,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export>\n<note><title>Big</title>\
         <created>20240301T100000Z</created><content><![CDATA[<en-note><div>"
    )
    .unwrap();
    let words = "words ".repeat(1000);
    for _ in 0..content_bytes / words.len() {
        file.write_all(words.as_bytes()).unwrap();
    }
    writeln!(
        file,
        "</div></en-note>]]></content><resource><data encoding=\"base64\">"
    )
    .unwrap();
    let line = format!("{}\n", "A".repeat(76));
    for _ in 0..resource_bytes.div_ceil(57) {
        file.write_all(line.as_bytes()).unwrap();
    }
    write!(
        file,
        "</data><mime>video/mp4</mime><resource-attributes><file-name>film.mp4</file-name>\
         </resource-attributes></resource></note>\n<note><title>After</title><created>20240302T100000Z</created>\
         <content><![CDATA[<en-note>still here</en-note>]]></content></note>\n</en-export>\n"
    )
    .unwrap();
    file.flush().unwrap();
}

/// security 6: a resource too big to attach was "skipped" from an ENEX (exit code 0) but "failed" from a JEX (exit
/// code 1). A lost attachment is a failure in both; the note itself imports, and so does the rest.
#[test]
fn an_attachment_too_big_fails_alike_in_enex_and_jex_and_its_note_still_imports() {
    let dir = tempfile::tempdir().unwrap();
    let limit = quire_core::MAX_ATTACHMENT_BYTES;
    let path = dir.path().join("film.enex");
    big_enex(&path, limit + 1024 * 1024, 6000);
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (report.imported, report.failed, report.attachments),
        (2, 1, 0),
        "{report:#?}"
    );
    let lost = report.items.iter().find(|i| i.outcome == Outcome::Failed).unwrap();
    assert_eq!(lost.path, "Big (20240301T100000Z)");
    assert!(
        lost.notes[0].contains("film.mp4 not attached: more than an attachment may hold"),
        "{lost:?}"
    );
    assert!(note_by_title(&ws, "Big").body.starts_with("words words"));
    assert_eq!(note_by_title(&ws, "After").body, "still here\n");

    // The same in a JEX: the note imports, its resource is a failure.
    let mut archive = jex(&[(
        format!("{PLAN}.md"),
        note_item(PLAN, "", "Film night", &format!("![film](:/{PHOTO})"), &[]).into_bytes(),
    )]);
    archive.truncate(archive.len() - 1024);
    let mut header = tar::Header::new_ustar();
    header.set_path(format!("resources/{PHOTO}.mp4")).unwrap();
    header.set_size(limit as u64 + 1);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    archive.extend_from_slice(header.as_bytes());
    let path = dir.path().join("film.jex");
    std::fs::write(&path, &archive).unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(report.imported, 1, "{report:#?}");
    let lost = report.items.iter().find(|i| i.path.ends_with(".mp4")).unwrap();
    assert_eq!(lost.outcome, Outcome::Failed, "{lost:?}");
    assert!(lost.notes[0].contains("more than quire takes"), "{lost:?}");
}

/// security 6: ENEX content longer than a note may hold is read through and refused, and the notes after it import.
#[test]
fn enex_content_too_long_is_refused_and_the_next_note_imports() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.enex");
    big_enex(&path, 10, 4 * quire_core::MAX_BODY_BYTES + 1024 * 1024);
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!((report.imported, report.failed), (1, 1), "{report:#?}");
    let refused = report.items.iter().find(|i| i.outcome == Outcome::Failed).unwrap();
    assert!(
        refused.notes[0].contains("its content is longer than 64 MiB"),
        "{refused:?}"
    );
    assert_eq!(note_by_title(&ws, "After").body, "still here\n");
}

/// ENEX text is read from the file in pieces, beside the XML reader: CDATA sections that straddle the end of the
/// first 64 KiB the reader buffers, several sections in one element, entities in a title, in plain content and
/// inside base64.
#[test]
fn enex_text_read_in_pieces_arrives_whole() {
    let dir = tempfile::tempdir().unwrap();
    let picture: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let hash = md5_hex(&picture);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&picture);
    // Lines ended with `&#13;` (as some exporters write them) and a newline.
    let data: String = encoded
        .as_bytes()
        .chunks(76)
        .map(|c| format!("{}&#13;\n", std::str::from_utf8(c).unwrap()))
        .collect();
    let long = "x".repeat(70_000);
    let prefix = "<?xml version=\"1.0\"?>\n<en-export><note><title>Fish &amp; chips &#233;</title>\
                  <created>20240301T100000Z</created><content><![CDATA[<en-note><div>";
    // The first section's `]]>` and the second's `<![CDATA[` fall on the 64 KiB line, at each byte of them.
    for shift in 0..=12 {
        let first = "y".repeat(64 * 1024 - shift - prefix.len() - "</div>".len());
        let text = format!(
            "{prefix}{first}</div>]]><![CDATA[<div>two sections</div><en-media hash=\"{hash}\" type=\"image/png\"/>\
             </en-note>]]></content><resource><data>\n{data}</data><mime>image/png</mime></resource></note>\n\
             <!-- {long} --><note><title>Plain</title><created>20240302T100000Z</created><content>&lt;en-note&gt;\
             &lt;div&gt;1 <!-- a comment is not text --> &amp;lt; 2{long}&lt;/div&gt;&lt;/en-note&gt;</content></note>\
             </en-export>\n"
        );
        let path = dir.path().join(format!("pieces-{shift}.enex"));
        std::fs::write(&path, &text).unwrap();
        let ws = Workspace::open_in_memory().unwrap();
        let report = run(&ws, &path, &ImportOptions::default());
        assert_eq!(
            (report.imported, report.failed, report.attachments),
            (2, 0, 1),
            "{report:#?}"
        );
        let fish = note_by_title(&ws, "Fish & chips é");
        assert!(
            fish.body.starts_with(&first) && fish.body.contains("two sections"),
            "shift {shift}"
        );
        let attachments = ws.read(&Actor::User, |r| r.attachments(&fish.summary.id)).unwrap();
        let stored = ws
            .read(&Actor::User, |r| r.attachment_data(&attachments[0].id))
            .unwrap();
        assert!(stored == picture, "the resource arrives byte for byte (shift {shift})");
        let plain = note_by_title(&ws, "Plain");
        assert!(
            plain.body.starts_with("1 < 2xxx"),
            "shift {shift}: {}",
            &plain.body[..20]
        );
    }
}
