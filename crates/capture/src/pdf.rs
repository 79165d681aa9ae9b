//! A PDF's text, page by page: pdf-extract reads each page's text (fonts' encodings, ToUnicode maps) from lopdf's
//! document. A page with no text of its own is a scan: its largest image goes to OCR. A page that fails to read is
//! left empty and named; the others are kept. pdf-extract panics on some broken files: a panic is one page's (or the
//! file's) failure, never the process's.

use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::Document;

use crate::{CaptureError, Extracted, Ocr, Page};

/// Fewer letters and digits than this on a page: the page is a scan (or a picture) and OCR reads it.
const SCANNED_BELOW: usize = 12;

pub(crate) fn extract(bytes: &[u8], ocr: Option<&Ocr>) -> Result<Extracted, CaptureError> {
    let doc = match catch_unwind(|| Document::load_mem(bytes)) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => return Err(CaptureError::Damaged(e.to_string())),
        Err(_) => return Err(CaptureError::Damaged("the PDF reader gave up on it".into())),
    };
    if doc.is_encrypted() {
        return Err(CaptureError::Damaged("it is encrypted with a password".into()));
    }
    let mut out = Extracted::default();
    let mut unread_scans = 0;
    for (number, id) in doc.get_pages() {
        let text = match page_text(&doc, number) {
            Ok(text) => text,
            Err(CaptureError::Damaged(reason)) => {
                out.notes.push(format!("page {number}: {reason}"));
                String::new()
            }
            Err(other) => {
                out.notes.push(format!("page {number}: {other}"));
                String::new()
            }
        };
        let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
        let mut page = Page {
            number,
            text: tidy(&text),
            ocr: false,
        };
        if letters < SCANNED_BELOW
            && let Some(image) = largest_image(&doc, id)
        {
            match (ocr, image) {
                (Some(ocr), Ok(image)) => match ocr.read(&image) {
                    Ok(read) if read.chars().filter(|c| c.is_alphanumeric()).count() > letters => {
                        page.text = read;
                        page.ocr = true;
                    }
                    Ok(_) => {}
                    Err(e) => out.notes.push(format!("page {number}: {e}")),
                },
                (Some(_), Err(Unreadable(reason))) => out.notes.push(format!("page {number}: {reason}")),
                (None, _) => unread_scans += 1,
            }
        }
        out.pages.push(page);
    }
    out.unread_scans = unread_scans;
    if unread_scans > 0 {
        out.notes.push(format!(
            "{unread_scans} scanned page{} not read: {}",
            if unread_scans == 1 { "" } else { "s" },
            CaptureError::NoOcr
        ));
    }
    Ok(out)
}

fn page_text(doc: &Document, number: u32) -> Result<String, CaptureError> {
    let mut text = String::new();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut output = pdf_extract::PlainTextOutput::new(&mut text);
        pdf_extract::output_doc_page(doc, &mut output, number)
    }));
    match result {
        Ok(Ok(())) => Ok(text),
        Ok(Err(e)) => Err(CaptureError::Damaged(format!("its text could not be read ({e})"))),
        Err(_) => Err(CaptureError::Damaged(
            "its text could not be read (the PDF reader gave up on it)".into(),
        )),
    }
}

/// pdf-extract's text without the blank lines it puts around a page, and with each line's end spaces dropped.
fn tidy(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut out = lines.join("\n");
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out.trim_matches('\n').replace(quire_core::pages::PAGE_BREAK, "\n")
}

/// Why a scanned page's image cannot go to OCR.
struct Unreadable(String);

/// The page's largest image, as bytes Tesseract reads: a JPEG as it is, raw 8-bit gray or RGB pixels as a PNM.
/// `None` when the page has no image; `Err` when its image is of a kind quire cannot hand to OCR.
fn largest_image(doc: &Document, page: lopdf::ObjectId) -> Option<Result<Vec<u8>, Unreadable>> {
    let images = catch_unwind(AssertUnwindSafe(|| doc.get_page_images(page)))
        .ok()?
        .ok()?;
    let image = images
        .into_iter()
        .filter(|i| i.width >= 64 && i.height >= 64)
        .max_by_key(|i| i.width.saturating_mul(i.height))?;
    let filters = image.filters.clone().unwrap_or_default();
    let named = |f: &str| filters.iter().any(|x| x == f);
    if named("DCTDecode") && filters.len() == 1 {
        return Some(Ok(image.content.to_vec()));
    }
    if named("JPXDecode") || named("JBIG2Decode") || named("CCITTFaxDecode") {
        return Some(Err(Unreadable(format!(
            "its scan is stored as {} and quire cannot hand that to OCR yet",
            filters.join("+")
        ))));
    }
    let raw = if filters.is_empty() {
        image.content.to_vec()
    } else if filters.iter().all(|f| f == "FlateDecode" || f == "LZWDecode") {
        // lopdf undoes the compression and the PNG predictors a scanner or img2pdf puts before it.
        let stream = doc.get_object(image.id).ok()?.as_stream().ok()?;
        match catch_unwind(AssertUnwindSafe(|| stream.decompressed_content())) {
            Ok(Ok(raw)) => raw,
            _ => return Some(Err(Unreadable("its scan's compressed pixels are damaged".into()))),
        }
    } else {
        return Some(Err(Unreadable(format!(
            "its scan is stored as {} and quire cannot read that",
            filters.join("+")
        ))));
    };
    let (w, h) = (image.width, image.height);
    let channels = match image.color_space.as_deref() {
        Some("DeviceGray") => 1,
        Some("DeviceRGB") => 3,
        other => {
            return Some(Err(Unreadable(format!(
                "its scan's colours ({}) are of a kind quire cannot hand to OCR yet",
                other.unwrap_or("none given")
            ))));
        }
    };
    if image.bits_per_component != Some(8) {
        return Some(Err(Unreadable(
            "its scan is not 8 bits a channel, which quire cannot hand to OCR yet".into(),
        )));
    }
    let size = usize::try_from(w.saturating_mul(h).saturating_mul(channels)).ok()?;
    if raw.len() < size {
        return Some(Err(Unreadable("its scan has fewer pixels than it says".into())));
    }
    let mut pnm = format!("P{}\n{w} {h}\n255\n", if channels == 1 { 5 } else { 6 }).into_bytes();
    pnm.extend_from_slice(&raw[..size]);
    Some(Ok(pnm))
}
