//! Capture (issue 50): files attached to notes with their text read first (outside any write), and the reading of
//! the attachments whose text waits, for `quire note attach`, `quire capture` and `quire attachments read`.

use std::path::Path;

use anyhow::{Context, bail};
use quire_capture::{Extracted, Ocr};
use quire_core::{Actor, NewAttachment, Workspace};

/// A file ready to attach: its attachment (the text included) and what reading it found.
#[derive(Debug)]
pub struct Prepared {
    /// The attachment to add.
    pub attachment: NewAttachment,
    /// Its pages, when its text was read (a PDF, an image, a text file).
    pub pages: Option<Extracted>,
    /// Why its text was not read, when it was not (a kind of file without text to read, Tesseract missing).
    pub unread: Option<String>,
    /// When its text was not read, what the attachment's reading state is to be (`none`, `ocr`, `failed: ...`;
    /// migration 025), so that the background reading does not try it again for nothing.
    pub extraction: Option<String>,
}

/// Reads the file at `path` and its text (a PDF's by page, an image's by OCR with `ocr`), before any write: a
/// large PDF never holds the workspace's writes back.
pub fn prepare(path: &Path, ocr: Option<&Ocr>) -> anyhow::Result<Prepared> {
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_dir() {
        bail!("{} is a folder: attach its files one by one", path.display());
    }
    if meta.len() > quire_core::MAX_ATTACHMENT_BYTES as u64 {
        bail!(
            "{} is {} bytes; an attachment may have {} at most",
            path.display(),
            meta.len(),
            quire_core::MAX_ATTACHMENT_BYTES
        );
    }
    let data = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let title = path
        .file_name()
        .map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
    let mime = quire_capture::sniff(&data, &title).to_owned();
    let (pages, unread, extraction) = if quire_capture::reads(&mime) {
        match quire_capture::extract(&mime, &data, ocr) {
            // Scanned pages left for Tesseract: read again, whole, once it is there.
            Ok(found) if found.has_words() => {
                let waits = (found.unread_scans > 0).then(|| "ocr".to_owned());
                (Some(found), None, waits)
            }
            Ok(found) if found.unread_scans > 0 => (None, found.notes.last().cloned(), Some("ocr".to_owned())),
            Ok(_) => (None, Some("it holds no words".to_owned()), Some("none".to_owned())),
            Err(e @ quire_capture::CaptureError::NoOcr) => (None, Some(e.to_string()), Some("ocr".to_owned())),
            Err(e) => (None, Some(e.to_string()), Some(format!("failed: {e}"))),
        }
    } else {
        (None, None, Some("none".to_owned()))
    };
    let text = pages
        .as_ref()
        .map(|p| p.text())
        .filter(|t| t.len() <= quire_core::MAX_BODY_BYTES);
    Ok(Prepared {
        attachment: NewAttachment {
            title,
            mime,
            data,
            text,
        },
        pages,
        unread,
        extraction,
    })
}

/// How the reading of attachments' text stands, in one line for a status (`None` when nothing waits or failed).
pub fn status_line(counts: &quire_core::ExtractionCounts, ocr: bool) -> Option<String> {
    let mut parts = Vec::new();
    if counts.waiting > 0 {
        parts.push(format!("{} attachment(s) wait to be read", counts.waiting));
    }
    if counts.waiting_for_ocr > 0 {
        parts.push(if ocr {
            format!("{} wait for OCR", counts.waiting_for_ocr)
        } else {
            format!(
                "{} image(s) or scan(s) need Tesseract (`apt-get install tesseract-ocr`)",
                counts.waiting_for_ocr
            )
        });
    }
    if counts.failed > 0 {
        parts.push(format!("{} could not be read", counts.failed));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// What became of one attached file (the CLI's `--json` of `quire note attach` and `quire capture`).
#[derive(Debug, serde::Serialize)]
pub struct Attached {
    /// The attachment's id.
    pub id: String,
    /// Its note.
    pub note_id: String,
    /// Its file name.
    pub title: String,
    /// Its media type.
    pub mime: String,
    /// Its size in bytes.
    pub size: u64,
    /// Pages whose text was read (a PDF's, an image's one), when it was.
    pub pages: Option<usize>,
    /// Of those, read by OCR.
    pub ocr_pages: usize,
    /// Why its text was not read, or pages that could not be.
    pub notes: Vec<String>,
}

/// Reads each file and its text (`reading` is told of each before it starts), before any write.
fn read_files(
    files: &[std::path::PathBuf],
    ocr: Option<&Ocr>,
    reading: &mut dyn FnMut(Option<&Path>),
) -> anyhow::Result<Vec<Prepared>> {
    let mut prepared = Vec::new();
    for file in files {
        reading(Some(file));
        let ready = prepare(file, ocr);
        reading(None);
        prepared.push(ready?);
    }
    Ok(prepared)
}

/// Adds the files read to `note_id`, in the caller's write. A file whose text could not be read is marked so, and
/// not read again in the background (a sealed note's attachment refuses the mark, and needs it not: only plain ones
/// are read in the background).
fn add_files(
    w: &mut quire_core::Writer<'_>,
    note_id: &str,
    prepared: &[Prepared],
) -> quire_core::Result<Vec<quire_core::AttachmentInfo>> {
    let mut infos = Vec::new();
    for file in prepared {
        let info = w.add_attachment(note_id, file.attachment.clone())?;
        if let Some(state) = &file.extraction {
            match w.set_attachment_text(&info.id, file.attachment.text.as_deref(), state) {
                Ok(()) | Err(quire_core::Error::Invalid(_)) => {}
                Err(e) => return Err(e),
            }
        }
        infos.push(info);
    }
    Ok(infos)
}

fn described(infos: Vec<quire_core::AttachmentInfo>, prepared: Vec<Prepared>) -> Vec<Attached> {
    infos
        .into_iter()
        .zip(prepared)
        .map(|(info, file)| Attached {
            pages: file.pages.as_ref().map(|p| p.pages.len()),
            ocr_pages: file
                .pages
                .as_ref()
                .map_or(0, |p| p.pages.iter().filter(|p| p.ocr).count()),
            notes: file
                .pages
                .map(|p| p.notes)
                .unwrap_or_default()
                .into_iter()
                .chain(file.unread)
                .collect(),
            id: info.id,
            note_id: info.note_id,
            title: info.title,
            mime: info.mime,
            size: info.size,
        })
        .collect()
}

/// Reads each file's text (`reading` is told of each before it starts), then attaches them all to `note_id` in one
/// write, as the person: a file that cannot be read attaches none.
pub fn attach(
    ws: &Workspace,
    note_id: &str,
    files: &[std::path::PathBuf],
    ocr: Option<&Ocr>,
    reading: &mut dyn FnMut(Option<&Path>),
) -> anyhow::Result<Vec<Attached>> {
    let prepared = read_files(files, ocr, reading)?;
    let infos = ws.write(&Actor::User, |w| add_files(w, note_id, &prepared))?;
    Ok(described(infos, prepared))
}

/// The attachment of `note_id` that `which` names: its id, or its file name when one attachment has it.
pub fn find_attachment(ws: &Workspace, note_id: &str, which: &str) -> anyhow::Result<quire_core::AttachmentInfo> {
    let files = ws.read(&Actor::User, |r| r.attachments(note_id))?;
    let by_id: Vec<_> = files.iter().filter(|a| a.id == which).collect();
    let matching: Vec<_> = if by_id.is_empty() {
        files.iter().filter(|a| a.title.eq_ignore_ascii_case(which)).collect()
    } else {
        by_id
    };
    match matching.as_slice() {
        [one] => Ok((*one).clone()),
        [] => bail!(
            "the note has no attachment {which:?}; its attachments: {}",
            if files.is_empty() {
                "none".to_owned()
            } else {
                files
                    .iter()
                    .map(|a| format!("{} ({})", a.title, a.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        several => bail!(
            "{} attachments are called {which:?}: name one by its id ({})",
            several.len(),
            several.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A quick capture: its note and what was attached to it.
#[derive(Debug, serde::Serialize)]
pub struct Captured {
    /// The new note.
    pub note_id: String,
    /// Its title.
    pub title: String,
    /// The inbox notebook's path.
    pub notebook: String,
    /// Its files.
    pub attachments: Vec<Attached>,
}

/// A quick capture: a note titled `title` (else the first file's name, else the text's first line) with `text`, in
/// the inbox notebook (made when missing), with `files` attached and their text read. The files are read first, and
/// the note and its files written in one transaction: a file that cannot be read leaves nothing behind.
pub fn capture(
    ws: &Workspace,
    config: &crate::settings::CaptureConfig,
    title: Option<&str>,
    text: &str,
    files: &[std::path::PathBuf],
    ocr: Option<&Ocr>,
    reading: &mut dyn FnMut(Option<&Path>),
) -> anyhow::Result<Captured> {
    if files.is_empty() && text.trim().is_empty() {
        bail!("nothing to capture: give files, or --text");
    }
    let title = title
        .map(str::to_owned)
        .or_else(|| {
            files
                .first()
                .and_then(|f| f.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .or_else(|| {
            text.lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim().chars().take(80).collect())
        })
        .unwrap_or_else(|| "Capture".to_owned());
    let prepared = read_files(files, ocr, reading)?;
    let inbox = config.inbox();
    let (note_id, infos) = ws.write(&Actor::User, |w| {
        let notebook = match w.find_notebook(&inbox)? {
            Some(found) => found.id,
            None => {
                w.create_notebook_path(Some(quire_core::ROOT_NOTEBOOK_ID), &inbox)?
                    .notebook
                    .id
            }
        };
        let id = w.reserve_id()?;
        w.create_note_as(
            &id,
            quire_core::NewNote {
                notebook_id: Some(notebook),
                ..quire_core::NewNote::new(title.clone(), text)
            },
        )?;
        let infos = add_files(w, &id, &prepared)?;
        Ok::<_, quire_core::Error>((id, infos))
    })?;
    Ok(Captured {
        note_id,
        title,
        notebook: inbox,
        attachments: described(infos, prepared),
    })
}
