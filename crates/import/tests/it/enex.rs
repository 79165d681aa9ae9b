//! Importing Evernote exports (ENEX) built by the test: notes arrive as Markdown with their resources, tags and
//! times; a broken or oversized file keeps what it can and says what it lost.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::path::Path;

use crate::support::{PHOTO, PLAN, PNG, jex, note_by_title, note_item, notebook_path, run};
use base64::Engine as _;
use quire_core::{Actor, Workspace};
use quire_import::{ImportFormat, ImportOptions, Outcome, import};

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
        // Encrypted text is kept as it was exported (it can be decrypted where it was made), never dropped.
        "Encrypted text (Evernote, RC2; hint: pin):\n\n```evernote-encrypted\nc2VjcmV0\n```",
    ] {
        assert!(body.contains(expected), "{expected:?} in:\n{body}");
    }
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

#[test]
fn damage_in_the_middle_of_an_enex_loses_that_note_alone() {
    let dir = tempfile::tempdir().unwrap();
    let third = "<note><title>Third</title><created>20240309T100000Z</created>\
                 <content><![CDATA[<en-note><div>after the damage</div></en-note>]]></content></note>\n</en-export>";
    let whole = enex(PNG).replacen("</en-export>", third, 1);
    let ws = Workspace::open_in_memory().unwrap();
    let all = run_text(&ws, dir.path(), "whole.enex", &whole);
    assert_eq!(all.imported, 3, "{all:#?}");
    // A wrong closing tag, then a tag that never ends, each inside one note: that note is reported, the others
    // (before and after) import.
    for (name, damaged) in [
        (
            "wrong-end.enex",
            whole.replacen("<title>Second", "<title>Sec</wrong>ond", 1),
        ),
        (
            "bad-tag.enex",
            whole.replacen("<title>Second", "<title>Sec<x y=\"1\" z=>ond", 1),
        ),
    ] {
        let ws = Workspace::open_in_memory().unwrap();
        let report = run_text(&ws, dir.path(), name, &damaged);
        assert_eq!(report.imported, 2, "{name}: {report:#?}");
        assert!(note_by_title(&ws, "Third").body.contains("after the damage"));
        let failed: Vec<_> = report.items.iter().filter(|i| i.outcome == Outcome::Failed).collect();
        assert_eq!(failed.len(), 1, "{name}: {report:#?}");
        assert!(
            failed[0].notes[0].contains("the file is damaged in note 2"),
            "{name}: {failed:?}"
        );
    }
}

fn run_text(ws: &Workspace, dir: &std::path::Path, name: &str, text: &str) -> quire_import::ImportReport {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    run(ws, &path, &ImportOptions::default())
}

#[test]
fn a_folder_of_exports_is_one_import_whose_notes_link_across_notebooks() {
    let dir = tempfile::tempdir().unwrap();
    let note = |title: &str, created: &str, body: &str| {
        format!(
            "<note><title>{title}</title><created>{created}</created><content><![CDATA[<en-note>{body}</en-note>]]>\
             </content></note>"
        )
    };
    let export = |notes: &[String]| format!("<?xml version=\"1.0\"?><en-export>{}</en-export>", notes.concat());
    let link = |to: &str| format!("<div>See <a href=\"evernote:///view/1/s1/{to}/{to}/\">{to} note</a>.</div>");
    std::fs::write(
        dir.path().join("Work.enex"),
        export(&[note("Alpha note", "20240101T100000Z", &link("Beta"))]),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("Home.enex"),
        export(&[note("Beta note", "20240101T100000Z", &link("Alpha"))]),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not an export").unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let report = run(&ws, dir.path(), &ImportOptions::default());
    assert_eq!(
        (report.format.as_str(), report.imported, report.failed),
        ("enex", 2, 0),
        "{report:#?}"
    );
    let alpha = note_by_title(&ws, "Alpha note");
    let beta = note_by_title(&ws, "Beta note");
    // Two notebooks, one a file; the same creation time in both is no clash.
    let notebook = |n: &quire_core::Note| {
        ws.read(&Actor::User, |r| r.notebook(&n.summary.notebook_id))
            .unwrap()
            .title
    };
    assert_eq!((notebook(&alpha).as_str(), notebook(&beta).as_str()), ("Work", "Home"));
    assert!(
        alpha.body.contains(&format!("quire://note/{}", beta.summary.id)),
        "{}",
        alpha.body
    );
    assert!(
        beta.body.contains(&format!("quire://note/{}", alpha.summary.id)),
        "{}",
        beta.body
    );
    let again = run(&ws, dir.path(), &ImportOptions::default());
    assert_eq!((again.imported, again.unchanged), (0, 2), "{again:#?}");
}

/// interop-2 (earlier round): an ENEX with one misspelt closing tag (`</note-attributesv>`) lost its note; a closing
/// tag a letter or two off is read as the one expected, and said.
#[test]
fn a_misspelt_closing_tag_is_read_as_the_one_it_misspells() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.enex");
    std::fs::write(
        &path,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export>\n<note><title>First</title><content><![CDATA[<en-note>\
         <div>one</div></en-note>]]></content><note-attributes><author>me</author></note-attributesv></note>\n\
         <note><title>Second</title><content><![CDATA[<en-note><div>two</div></en-note>]]></content></note>\n\
         <note><title>Third</title><content><![CDATA[<en-note><div>three</div></en-note>]]></content></tilte></note>\n\
         </en-export>",
    )
    .unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (report.imported, report.failed),
        (2, 1),
        "a tag far from the expected one still fails: {report:#?}"
    );
    let first = report.items.iter().find(|i| i.path.starts_with("First")).unwrap();
    assert!(
        first
            .notes
            .iter()
            .any(|n| n.contains("</note-attributesv> was read as </note-attributes>")),
        "{first:?}"
    );
    assert_eq!(note_by_title(&ws, "First").body.trim(), "one");
}

/// interop-2 (earlier round): an `<en-media>` whose hash is not the MD5 of its resource's bytes stayed a dangling
/// `:/hash` link; the resource's recognition index names it by that hash (`objID`), and so does the import now.
#[test]
fn media_named_by_its_recognition_id_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reco.enex");
    let other = "0123456789abcdef0123456789abcdef";
    let data = base64::engine::general_purpose::STANDARD.encode(PNG);
    assert_ne!(md5_hex(PNG), other);
    std::fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export><note><title>Scan</title><content><![CDATA[<en-note>\
             <div>page</div><en-media type=\"image/png\" hash=\"{other}\"/></en-note>]]></content><resource><data \
             encoding=\"base64\">{data}</data><mime>image/png</mime><recognition><![CDATA[<?xml version=\"1.0\"?>\
             <recoIndex docType=\"unknown\" objType=\"image\" objID=\"{other}\" engineVersion=\"7\"><item x=\"1\"/>\
             </recoIndex>]]></recognition></resource></note></en-export>"
        ),
    )
    .unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    assert_eq!(
        (report.imported, report.attachments, report.failed),
        (1, 1, 0),
        "{report:#?}"
    );
    let body = note_by_title(&ws, "Scan").body;
    assert!(body.contains("](quire://attachment/"), "{body}");
    assert!(!body.contains(other), "no dangling link: {body}");
}

/// interop-2 #9: a link whose text is a title misspelt by a letter ("NotaA" for "NoteA") stayed pointing at
/// Evernote; it finds the note now, and says so. Another number is another note, never a misspelling.
#[test]
fn a_link_text_a_letter_off_a_title_finds_that_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("near.enex");
    let link = |text: &str| format!("<a href=\"evernote:///view/1/s1/aaaa/bbbb/\">{text}</a>");
    let note = |title: &str, body: &str| {
        format!(
            "<note><title>{title}</title><content><![CDATA[<en-note><div>{body}</div></en-note>]]></content></note>"
        )
    };
    std::fs::write(
        &path,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export>{}{}{}</en-export>",
            note("NoteA", "a"),
            note("Note 1", "one"),
            note("Links", &format!("{} and {}", link("NotaA"), link("Note 4")))
        ),
    )
    .unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &path, &ImportOptions::default());
    let body = note_by_title(&ws, "Links").body;
    assert!(body.starts_with("[NotaA](quire://note/"), "{body}");
    assert!(
        body.contains("[[Note 4]]"),
        "another number: a link by title, not to Note 1: {body}"
    );
    let said: Vec<&String> = report.items.iter().flat_map(|i| &i.notes).collect();
    assert!(said.iter().any(|n| n.contains("it was pointed at “NoteA”")), "{said:?}");
}

/// interop-2 #5 (second half): ENEX files imported one at a time did not link to each other; a link to a note of
/// another export becomes a link by its title, which finds the note whichever file comes in first.
#[test]
fn enex_files_imported_one_at_a_time_link_to_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let note = |title: &str, body: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<en-export><note><title>{title}</title><content><![CDATA[\
             <en-note><div>{body}</div></en-note>]]></content></note></en-export>"
        )
    };
    let links = dir.path().join("B.enex");
    let target = dir.path().join("A.enex");
    std::fs::write(
        &links,
        note(
            "Links to it",
            "See <a href=\"evernote:///view/1/s1/3333/3333/\">Quarterly plan</a>.",
        ),
    )
    .unwrap();
    std::fs::write(&target, note("Quarterly plan", "The target.")).unwrap();
    let ws = Workspace::open(dir.path().join("ws.quire")).unwrap();
    let report = run(&ws, &links, &ImportOptions::default());
    assert!(
        report
            .items
            .iter()
            .flat_map(|i| &i.notes)
            .any(|n| n.contains("it became [[Quarterly plan]]")),
        "{report:#?}"
    );
    assert_eq!(note_by_title(&ws, "Links to it").body.trim(), "See [[Quarterly plan]].");
    run(&ws, &target, &ImportOptions::default());
    let linking = ws
        .read(&Actor::User, |r| {
            r.query_text(
                "LIST FROM [[Quarterly plan]]",
                &quire_core::query::QueryOptions::default(),
            )
        })
        .unwrap();
    let titles: Vec<String> = linking
        .rows
        .iter()
        .filter_map(|r| r.note.as_ref().map(|n| n.title.clone()))
        .collect();
    assert_eq!(titles, ["Links to it"]);
}
