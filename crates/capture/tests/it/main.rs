//! quire-capture on real files: PDFs made by groff and img2pdf (text, two columns, scanned pages, a cut file) and an
//! image, each with the words known to be on each page (fixtures/README.md says how they were made). OCR tests need
//! Tesseract: they are skipped without it, unless `QUIRE_TEST_OCR` is set (CI sets it and installs Tesseract).
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use quire_capture::{CaptureError, Ocr, extract};

mod job;

pub(crate) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

/// Tesseract, or `None` where it is not installed and not required.
pub(crate) fn ocr() -> Option<Ocr> {
    let found = Ocr::find("eng");
    assert!(
        found.is_some() || std::env::var_os("QUIRE_TEST_OCR").is_none(),
        "QUIRE_TEST_OCR is set and Tesseract was not found"
    );
    if found.is_none() {
        eprintln!("Tesseract is not installed: the OCR part of this test is skipped");
    }
    found
}

#[test]
fn a_text_pdf_gives_each_page_its_own_text() {
    let found = extract("application/pdf", &fixture("letter.pdf"), None).unwrap();
    assert_eq!(found.pages.len(), 3, "{found:?}");
    assert!(found.pages[0].text.contains("harbour lighthouse"), "{found:?}");
    assert!(found.pages[1].text.contains("Saltmarsh Bay"), "{found:?}");
    assert!(found.pages[2].text.contains("quetzalcoatl"), "{found:?}");
    assert!(found.pages.iter().all(|p| !p.ocr));
    assert!(found.notes.is_empty() && found.unread_scans == 0, "{found:?}");
    let text = found.text();
    let at = text.find("quetzalcoatl").unwrap();
    assert_eq!(quire_core::pages::at_byte(&text, at), 3);
    assert_eq!(quire_core::pages::count(&text), 3);
}

#[test]
fn two_columns_read_one_after_the_other() {
    let found = extract("application/pdf", &fixture("columns.pdf"), None).unwrap();
    assert_eq!(found.pages.len(), 2);
    let page = &found.pages[0].text;
    let at = |word: &str| page.find(word).unwrap_or_else(|| panic!("{word} not in {page:?}"));
    // The left column whole, then the right: not their lines side by side.
    assert!(
        at("number1 ") < at("number2 ") && at("number2 ") < at("number24 "),
        "{page}"
    );
}

#[test]
fn scanned_pages_are_read_by_ocr_and_wait_without_it() {
    let bytes = fixture("scan.pdf");
    let without = extract("application/pdf", &bytes, None).unwrap();
    assert_eq!(without.pages.len(), 2);
    assert_eq!(without.unread_scans, 2);
    assert!(!without.has_words());
    assert!(
        without.notes.iter().any(|n| n.contains("tesseract-ocr")),
        "{:?}",
        without.notes
    );
    let Some(ocr) = ocr() else { return };
    let found = extract("application/pdf", &bytes, Some(&ocr)).unwrap();
    assert!(found.pages.iter().all(|p| p.ocr), "{found:?}");
    // A JPEG page, and a gray PNG page (compressed with PNG predictors, as img2pdf stores it).
    assert!(found.pages[0].text.contains("rent rises in March"), "{found:?}");
    assert!(found.pages[1].text.contains("boiler is serviced"), "{found:?}");
    assert_eq!(found.unread_scans, 0);
}

#[test]
fn an_image_is_one_page_read_by_ocr() {
    let bytes = fixture("receipt.png");
    assert!(matches!(extract("image/png", &bytes, None), Err(CaptureError::NoOcr)));
    assert!(
        CaptureError::NoOcr
            .to_string()
            .contains("apt-get install tesseract-ocr")
    );
    let Some(ocr) = ocr() else { return };
    let found = extract("image/png", &bytes, Some(&ocr)).unwrap();
    assert_eq!(found.pages.len(), 1);
    assert!(found.pages[0].text.contains("espresso"), "{found:?}");
    assert!(found.pages[0].text.contains("12.80"), "{found:?}");
    // Not an image after all: Tesseract's refusal is an error, not a panic or a hang.
    let refused = extract("image/png", b"not a png at all", Some(&ocr)).unwrap_err();
    assert!(matches!(refused, CaptureError::Ocr(_)), "{refused:?}");
}

#[test]
fn damaged_and_foreign_files_are_refused_clearly() {
    let cut = extract("application/pdf", &fixture("broken.pdf"), None);
    match cut {
        Err(CaptureError::Damaged(_)) => {}
        // A reader may salvage the pages before the cut: then nothing past it is made up.
        Ok(found) => assert!(!found.text().contains("quetzalcoatl"), "{found:?}"),
        Err(other) => panic!("{other:?}"),
    }
    for garbage in [
        &b""[..],
        b"%PDF-1.7\n",
        b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\nendobj\ntrailer\n<< >>\n%%EOF",
    ] {
        let result = extract("application/pdf", garbage, None);
        assert!(
            matches!(result, Err(CaptureError::Damaged(_))) || result.as_ref().is_ok_and(|f| !f.has_words()),
            "{result:?}"
        );
    }
    assert!(matches!(
        extract("application/zip", b"PK", None),
        Err(CaptureError::Unsupported(_))
    ));
    let text = extract("text/plain", "plain words\u{c}no page break".as_bytes(), None).unwrap();
    assert_eq!(text.text(), "plain words\nno page break");
}

#[test]
fn a_file_is_known_by_its_first_bytes() {
    assert_eq!(quire_capture::sniff(&fixture("letter.pdf"), "x.bin"), "application/pdf");
    assert_eq!(quire_capture::sniff(&fixture("receipt.png"), "receipt"), "image/png");
    assert_eq!(quire_capture::sniff(b"# Title", "notes.md"), "text/markdown");
    assert_eq!(quire_capture::sniff(b"\x00\x01", "blob"), "application/octet-stream");
}
