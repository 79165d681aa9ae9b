//! The text of attachments (issue 50): a PDF's text page by page, and the words of images and scanned pages read by
//! OCR with Tesseract. The text is kept in the attachment's text column with its pages joined by form feeds
//! ([`quire_core::pages`]), so that search, `read_attachment` and the agent can name the page a word is on, and a
//! sealed note's attachment text is sealed with it as before.
//!
//! [`extract`] works on bytes and writes nothing; [`job`] finds the attachments whose text was never extracted and
//! writes what it finds, one attachment per transaction, so it never holds a write back for long.

pub mod background;
pub mod job;
mod ocr;
mod pdf;

pub use ocr::Ocr;

/// One page's text, and how it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// From 1.
    pub number: u32,
    /// Its text (empty when it has none that could be read).
    pub text: String,
    /// Read by OCR (an image, or a page that is a scan).
    pub ocr: bool,
}

/// What came out of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Every page, in order (an image is one).
    pub pages: Vec<Page>,
    /// What could not be read, for the person: a page quire could not read, OCR not installed.
    pub notes: Vec<String>,
    /// Scanned pages left unread because no OCR was given: read again once Tesseract is there.
    pub unread_scans: u32,
}

impl Extracted {
    /// The text as an attachment keeps it: the pages joined by form feeds.
    pub fn text(&self) -> String {
        let pages: Vec<&str> = self.pages.iter().map(|p| p.text.as_str()).collect();
        quire_core::pages::join(&pages)
    }

    /// Whether any page has a word.
    pub fn has_words(&self) -> bool {
        self.pages.iter().any(|p| p.text.chars().any(char::is_alphanumeric))
    }
}

/// Why a file gave no text.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// Not a kind of file quire reads text out of.
    #[error("quire does not read text out of {0} files")]
    Unsupported(String),
    /// The file is damaged, or not what its type says.
    #[error("the file could not be read: {0}")]
    Damaged(String),
    /// The file is an image (or only scans), and Tesseract is not there to read it.
    #[error(
        "reading the words of images needs Tesseract, which is not installed: install it (Debian and Ubuntu: \
         `apt-get install tesseract-ocr`; macOS: `brew install tesseract`) or set QUIRE_TESSERACT to its path"
    )]
    NoOcr,
    /// Tesseract failed on it.
    #[error("OCR failed: {0}")]
    Ocr(String),
}

/// Whether quire reads text out of files of this media type.
pub fn reads(mime: &str) -> bool {
    is_pdf(mime) || ocr::is_image(mime) || is_text(mime)
}

fn is_pdf(mime: &str) -> bool {
    mime.eq_ignore_ascii_case("application/pdf")
}

/// The text of a file of media type `mime`, by page. Images and the pages of a PDF that have no text of their own
/// (scans) are read by `ocr` when it is given; without it, a scanned page is empty and says so in
/// [`Extracted::notes`], and an image is [`CaptureError::NoOcr`].
pub fn extract(mime: &str, bytes: &[u8], ocr: Option<&Ocr>) -> Result<Extracted, CaptureError> {
    if is_pdf(mime) {
        return pdf::extract(bytes, ocr);
    }
    if ocr::is_image(mime) {
        let ocr = ocr.ok_or(CaptureError::NoOcr)?;
        let text = ocr.read(bytes)?;
        return Ok(Extracted {
            pages: vec![Page {
                number: 1,
                text,
                ocr: true,
            }],
            ..Extracted::default()
        });
    }
    if is_text(mime) {
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| CaptureError::Damaged("not UTF-8 text".into()))?;
        return Ok(Extracted {
            pages: vec![Page {
                number: 1,
                text: text.replace(quire_core::pages::PAGE_BREAK, "\n"),
                ocr: false,
            }],
            ..Extracted::default()
        });
    }
    Err(CaptureError::Unsupported(mime.to_owned()))
}

fn is_text(mime: &str) -> bool {
    let mime = mime.to_ascii_lowercase();
    ["text/plain", "text/markdown", "text/csv"]
        .iter()
        .any(|t| mime.starts_with(t))
}

/// The media type of a file, from its first bytes (or its name's extension when they say nothing).
pub fn sniff(bytes: &[u8], name: &str) -> &'static str {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    if starts(b"%PDF-") {
        "application/pdf"
    } else if starts(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if starts(b"\xff\xd8\xff") {
        "image/jpeg"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "image/gif"
    } else if starts(b"II*\0") || starts(b"MM\0*") {
        "image/tiff"
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else if starts(b"BM") && name.to_ascii_lowercase().ends_with(".bmp") {
        "image/bmp"
    } else {
        by_extension(name)
    }
}

fn by_extension(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    let ext = lower.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "mp4" => "video/mp4",
        "zip" => "application/zip",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        _ => "application/octet-stream",
    }
}
