//! The job that reads attachments' text into the workspace: search finds a word of page 3, the page is known, a file
//! is read once, and an image waits for Tesseract.

use quire_capture::job;
use quire_core::{Actor, NewAttachment, NewNote, SearchOptions, Workspace};

fn attach(ws: &Workspace, note: &str, title: &str, mime: &str, data: Vec<u8>) -> String {
    ws.write(&Actor::User, |w| {
        w.add_attachment(
            note,
            NewAttachment {
                title: title.into(),
                mime: mime.into(),
                data,
                text: None,
            },
        )
    })
    .unwrap()
    .id
}

/// A workspace file in a temporary folder (kept while the first value lives) with one note, "Papers".
fn papers() -> (tempfile::TempDir, Workspace, String) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open(dir.path().join("w.quire")).unwrap();
    let note = ws
        .write(&Actor::User, |w| {
            w.create_note(NewNote::new("Papers", "See the files."))
        })
        .unwrap()
        .summary
        .id;
    (dir, ws, note)
}

#[test]
fn the_job_reads_each_file_once_and_search_finds_its_words() {
    let (_dir, ws, note) = papers();
    let letter = attach(
        &ws,
        &note,
        "report.pdf",
        "application/pdf",
        crate::fixture("letter.pdf"),
    );
    let photo = attach(&ws, &note, "receipt.png", "image/png", crate::fixture("receipt.png"));
    attach(&ws, &note, "notes.bin", "application/octet-stream", vec![1, 2, 3]);
    let counts = ws.read(&Actor::User, |r| r.attachment_extraction()).unwrap();
    assert_eq!(counts.waiting, 3, "{counts:?}");

    let mut seen = Vec::new();
    let report = job::run(
        &ws,
        None,
        &mut |p| seen.push((p.done, p.total, p.title.to_owned())),
        &|| false,
    )
    .unwrap();
    assert_eq!(seen.len(), 3);
    assert_eq!((seen[0].0, seen[0].1), (0, 3));
    assert_eq!(
        (report.read, report.pages, report.none, report.waiting_for_ocr),
        (1, 3, 1, 1),
        "{report:?}"
    );

    let text = ws.read(&Actor::User, |r| r.attachment_text(&letter)).unwrap().unwrap();
    assert_eq!(quire_core::pages::count(&text), 3);
    let hits = ws
        .read(&Actor::User, |r| r.search("quetzalcoatl", SearchOptions::default()))
        .unwrap();
    assert_eq!(hits.items.len(), 1, "{hits:?}");
    let counts = ws.read(&Actor::User, |r| r.attachment_extraction()).unwrap();
    assert_eq!(
        (counts.waiting, counts.waiting_for_ocr, counts.read),
        (0, 1, 1),
        "{counts:?}"
    );

    // Nothing is read twice; with Tesseract, the image that waited is read.
    let again = job::run(&ws, None, &mut |_| {}, &|| false).unwrap();
    assert_eq!(again, job::Report::default());
    let Some(ocr) = crate::ocr() else { return };
    let report = job::run(&ws, Some(&ocr), &mut |_| {}, &|| false).unwrap();
    assert_eq!((report.read, report.ocr_pages), (1, 1), "{report:?}");
    let words = ws.read(&Actor::User, |r| r.attachment_text(&photo)).unwrap().unwrap();
    assert!(words.contains("espresso"), "{words}");
}

/// Found in review: reading a file's text changed its row outside the change log, and undoing the change that
/// attached it was refused as if someone had changed it since. Its text is derived: the undo works, before and after.
#[test]
fn a_file_read_after_it_was_attached_can_still_be_undone() {
    let (_dir, ws, note) = papers();
    let letter = attach(
        &ws,
        &note,
        "report.pdf",
        "application/pdf",
        crate::fixture("letter.pdf"),
    );
    let set = ws
        .read(&Actor::User, |r| {
            r.change_sets(quire_core::Page { offset: 0, limit: 1 })
        })
        .unwrap()
        .items
        .remove(0)
        .id;
    let report = job::run(&ws, None, &mut |_| {}, &|| false).unwrap();
    assert_eq!(report.read, 1);
    quire_core::changes::undo_change_set(&ws, &set).unwrap();
    assert!(matches!(
        ws.read(&Actor::User, |r| r.attachment(&letter)),
        Err(quire_core::Error::NotFound(_))
    ));
    let hits = ws
        .read(&Actor::User, |r| r.search("quetzalcoatl", SearchOptions::default()))
        .unwrap();
    assert_eq!(hits.items.len(), 0, "its words left the index with it");
}

/// A file claimed by a reader that died (the claim is older than an hour) is not handed out again: it is marked
/// failed once, and the others go on.
#[test]
fn a_file_whose_reader_died_is_not_read_again() {
    let (_dir, ws, note) = papers();
    let killer = attach(
        &ws,
        &note,
        "killer.pdf",
        "application/pdf",
        crate::fixture("letter.pdf"),
    );
    let other = attach(&ws, &note, "other.pdf", "application/pdf", crate::fixture("letter.pdf"));
    // As a reader that died an hour and more ago left it.
    assert!(
        ws.write(&Actor::User, |w| w
            .claim_attachment_reading(&killer, job::CLAIM_STALE_MS))
            .unwrap()
    );
    assert!(
        !ws.write(&Actor::User, |w| w
            .claim_attachment_reading(&killer, job::CLAIM_STALE_MS))
            .unwrap(),
        "taken"
    );
    let report = job::run(&ws, None, &mut |_| {}, &|| false).unwrap();
    assert_eq!(report.read, 1, "{report:?}");
    assert!(ws.read(&Actor::User, |r| r.attachment_text(&other)).unwrap().is_some());
    // A claim counts as stale at once with no time allowed: the next claim marks it failed.
    assert!(
        !ws.write(&Actor::User, |w| w.claim_attachment_reading(&killer, -1))
            .unwrap()
    );
    let counts = ws.read(&Actor::User, |r| r.attachment_extraction()).unwrap();
    assert_eq!(counts.failed, 1, "{counts:?}");
    assert!(counts.last_failure.unwrap().contains("stopped while reading"));
    assert_eq!(
        job::run(&ws, None, &mut |_| {}, &|| false).unwrap(),
        job::Report::default()
    );
}
