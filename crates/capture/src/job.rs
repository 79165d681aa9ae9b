//! Reading the text of every attachment that waits for it: one file at a time, each read outside any transaction
//! and written in one short one, so the person's writes never wait on a PDF. `quire serve` runs it in the
//! background (quire-host); `quire attachments read` runs it with a progress bar.

use quire_core::{Actor, Error, Workspace};

use crate::{CaptureError, Ocr, extract};

/// Where the job is, before each file.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    /// Files done so far.
    pub done: usize,
    /// Files this run found waiting.
    pub total: usize,
    /// The file it starts on.
    pub title: &'a str,
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Files whose text was read.
    pub read: usize,
    /// Pages read, over those files.
    pub pages: usize,
    /// Pages read by OCR.
    pub ocr_pages: usize,
    /// Files with no text to read (another kind of file, or no words in it).
    pub none: usize,
    /// Files (or some pages of them) waiting for Tesseract.
    pub waiting_for_ocr: usize,
    /// Files that failed, by title, with why.
    pub failed: Vec<(String, String)>,
    /// Pages that could not be read, by file title.
    pub notes: Vec<(String, String)>,
}

/// How old a claim on a file must be to count as left by a process that died reading it.
pub const CLAIM_STALE_MS: i64 = 60 * 60 * 1000;

/// Reads the text of every attachment waiting for it (with `ocr`, also those that waited for Tesseract), calling
/// `progress` before each. Stops between files when `stop` says so.
pub fn run(
    ws: &Workspace,
    ocr: Option<&Ocr>,
    progress: &mut dyn FnMut(Progress<'_>),
    stop: &dyn Fn() -> bool,
) -> Result<Report, Error> {
    let waiting = ws.read(&Actor::User, |r| r.attachments_to_read(ocr.is_some(), 100_000))?;
    let mut report = Report::default();
    for (done, info) in waiting.iter().enumerate() {
        if stop() {
            break;
        }
        // Claimed first, in its own transaction: another process (`quire serve` beside `quire mcp`) does not read it
        // too, and a file that kills the process reading it is not tried again after a restart.
        if !ws.write(&Actor::User, |w| w.claim_attachment_reading(&info.id, CLAIM_STALE_MS))? {
            continue;
        }
        progress(Progress {
            done,
            total: waiting.len(),
            title: &info.title,
        });
        let data = match ws.read(&Actor::User, |r| r.attachment_data(&info.id)) {
            Ok(data) => data,
            // Deleted, or sealed, since the list was read: nothing to do.
            Err(Error::NotFound(_) | Error::Locked { .. }) => continue,
            Err(e) => return Err(e),
        };
        let (text, state) = match extract(&info.mime, &data, ocr) {
            Ok(found) => {
                report
                    .notes
                    .extend(found.notes.iter().map(|n| (info.title.clone(), n.clone())));
                let waits = found.unread_scans > 0;
                if waits {
                    report.waiting_for_ocr += 1;
                }
                if found.has_words() {
                    report.read += 1;
                    report.pages += found.pages.len();
                    report.ocr_pages += found.pages.iter().filter(|p| p.ocr).count();
                    (Some(fit(found.text())), if waits { "ocr" } else { "read" }.to_owned())
                } else if waits {
                    (None, "ocr".to_owned())
                } else {
                    report.none += 1;
                    (None, "none".to_owned())
                }
            }
            Err(CaptureError::NoOcr) => {
                report.waiting_for_ocr += 1;
                (None, "ocr".to_owned())
            }
            Err(CaptureError::Unsupported(_)) => {
                report.none += 1;
                (None, "none".to_owned())
            }
            Err(e) => {
                report.failed.push((info.title.clone(), e.to_string()));
                (None, format!("failed: {e}"))
            }
        };
        match ws.write(&Actor::User, |w| {
            w.set_attachment_text(&info.id, text.as_deref(), &state)
        }) {
            // Deleted since, or sealed since (its text is read when it is attached again).
            Ok(()) | Err(Error::NotFound(_)) => {}
            // Refused (a text the workspace will not hold): recorded as failed, so it is not read again and again.
            Err(Error::Invalid(why)) => {
                report.failed.push((info.title.clone(), why.clone()));
                let failed = format!("failed: {why}");
                match ws.write(&Actor::User, |w| w.set_attachment_text(&info.id, None, &failed)) {
                    Ok(()) | Err(Error::NotFound(_) | Error::Invalid(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}

/// At most what a note's body may hold: a huge text is cut at a character boundary.
fn fit(mut text: String) -> String {
    let max = quire_core::MAX_BODY_BYTES;
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}
