//! Capture end to end (issue 50): the real binary attaches a PDF, a scan and a photo, reads their text by page
//! (Tesseract for the scan and the photo), and search names the file and the page; a quick capture files into the
//! inbox; what waits (a file attached without its text, an image before Tesseract) is read by `quire attachments
//! read`; a damaged file is attached with a clear word and never read again.

use quire_tests::Quire;

fn fixture(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/capture/tests/fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Whether Tesseract is there (CI installs it and sets `QUIRE_TEST_OCR`, which makes it required).
fn tesseract() -> bool {
    let found = std::process::Command::new("tesseract")
        .arg("--version")
        .output()
        .is_ok();
    assert!(
        found || std::env::var_os("QUIRE_TEST_OCR").is_none(),
        "QUIRE_TEST_OCR is set and Tesseract is missing"
    );
    found
}

#[test]
fn attached_files_are_searched_by_page_and_a_capture_lands_in_the_inbox() {
    let q = Quire::new();
    let note = super::add(&q, &["--title", "Papers", "--body", "The files."])["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let attached = q
        .run(&[
            "--json",
            "note",
            "attach",
            &note,
            &fixture("letter.pdf"),
            &fixture("broken.pdf"),
        ])
        .json();
    assert_eq!(attached[0]["pages"], 3, "{attached}");
    assert_eq!(attached[1]["pages"], serde_json::Value::Null, "{attached}");
    assert!(
        attached[1]["notes"][0].as_str().unwrap().contains("could not be read"),
        "{attached}"
    );

    let hits = q.run(&["--json", "search", "quetzalcoatl"]).json();
    assert_eq!(hits["total"], 1, "{hits}");
    let hit = &hits["results"][0];
    assert_eq!(hit["note_id"], note.as_str());
    assert_eq!(hit["found_in"]["title"], "letter.pdf");
    assert_eq!(hit["found_in"]["page"], 3);
    assert!(
        hit["snippet"].as_str().unwrap().contains("<mark>quetzalcoatl</mark>"),
        "{hit}"
    );
    let text = q.run(&["search", "quetzalcoatl"]);
    assert!(text.stdout.contains("in letter.pdf, page 3 of 3"), "{text:?}");

    // The agent's tool reads the cited page.
    let id = hit["found_in"]["attachment_id"].as_str().unwrap();
    let page = q
        .run(&[
            "tools",
            "call",
            "read_attachment",
            &format!(r#"{{"attachment_id":"{id}","page":3}}"#),
        ])
        .json();
    assert_eq!(page["page"], 3);
    assert!(page["text"].as_str().unwrap().contains("Page three ends"), "{page}");
    let past = q.run(&[
        "tools",
        "call",
        "read_attachment",
        &format!(r#"{{"attachment_id":"{id}","page":9}}"#),
    ]);
    assert_ne!(past.code, 0);
    assert!(past.stdout.contains("there is no page 9"), "{past:?}");

    // The damaged file was tried once, when attached: nothing waits.
    let waiting = q.run(&["attachments", "read"]);
    assert!(waiting.stdout.contains("Nothing waits to be read."), "{waiting:?}");

    let captured = q
        .run(&[
            "--json",
            "capture",
            &fixture("scan.pdf"),
            "--text",
            "from the letterbox",
        ])
        .json();
    assert_eq!(captured["notebook"], "Inbox");
    if tesseract() {
        assert_eq!(captured["attachments"][0]["ocr_pages"], 2, "{captured}");
        let hits = q.run(&["--json", "search", "boiler"]).json();
        assert_eq!(hits["results"][0]["found_in"]["page"], 2, "{hits}");
        assert_eq!(hits["results"][0]["notebook_path"], "Inbox", "{hits}");
    }
    let shown = q.run(&["note", "list", "--notebook", "Inbox"]);
    assert!(shown.stdout.contains("scan.pdf"), "{shown:?}");

    // A file that cannot be read leaves no note behind.
    let missing = q.run(&[
        "capture",
        &fixture("letter.pdf"),
        "/nonexistent/file.pdf",
        "--title",
        "Half",
    ]);
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(missing.stderr.contains("/nonexistent/file.pdf"), "{missing:?}");
    let listed = q.run(&["search", "Half"]);
    assert!(listed.stdout.contains("No notes match"), "{listed:?}");
}

#[test]
fn an_image_attached_before_tesseract_is_read_once_it_is_there() {
    let q = Quire::new();
    let note = super::add(&q, &["--title", "Receipts"])["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // No Tesseract on the way: QUIRE_TESSERACT names a program that does not exist.
    let without = q.run_env(
        &["--json", "note", "attach", &note, &fixture("receipt.png")],
        &[("QUIRE_TESSERACT", "/nonexistent/tesseract")],
    );
    let without = without.json();
    assert!(
        without[0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("apt-get install tesseract-ocr"),
        "{without}"
    );
    let waiting = q.run_env(
        &["attachments", "read"],
        &[("QUIRE_TESSERACT", "/nonexistent/tesseract")],
    );
    assert!(waiting.stdout.contains("need Tesseract"), "{waiting:?}");
    if !tesseract() {
        return;
    }
    let read = q.run(&["attachments", "read"]);
    assert!(read.stdout.contains("Read 1 file (1 page, 1 by OCR)"), "{read:?}");
    let hits = q.run(&["--json", "search", "espresso"]).json();
    assert_eq!(hits["results"][0]["found_in"]["title"], "receipt.png", "{hits}");
}
