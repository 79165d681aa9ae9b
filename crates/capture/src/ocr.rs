//! OCR with Tesseract's command-line program (Debian's `tesseract-ocr`), run on each image: quire runs without it,
//! and says how to add it when an image waits for it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::CaptureError;

/// Images Tesseract reads (through Leptonica).
pub(crate) fn is_image(mime: &str) -> bool {
    let mime = mime.to_ascii_lowercase();
    [
        "image/png",
        "image/jpeg",
        "image/jpg",
        "image/gif",
        "image/tiff",
        "image/webp",
        "image/bmp",
        "image/x-portable-anymap",
    ]
    .contains(&mime.as_str())
}

/// Tesseract, found, with the languages to read.
#[derive(Debug, Clone)]
pub struct Ocr {
    program: PathBuf,
    languages: String,
    limit: Duration,
}

impl Ocr {
    /// At most this long for one image: a huge or hostile one is given up, not waited for.
    pub const LIMIT: Duration = Duration::from_secs(120);

    /// Tesseract from `QUIRE_TESSERACT`, else `tesseract` on the PATH, reading `languages` (Tesseract's codes
    /// joined by `+`, as `eng+deu`; empty: English). `None` when it is not installed.
    pub fn find(languages: &str) -> Option<Self> {
        let program = std::env::var_os("QUIRE_TESSERACT")
            .map(PathBuf::from)
            .or_else(|| on_path("tesseract"))?;
        let ocr = Self {
            program,
            languages: if languages.trim().is_empty() {
                "eng".to_owned()
            } else {
                languages.trim().to_owned()
            },
            limit: Self::LIMIT,
        };
        ocr.version().is_some().then_some(ocr)
    }

    /// The languages it reads.
    pub fn languages(&self) -> &str {
        &self.languages
    }

    /// Tesseract's version line, as it prints it.
    pub fn version(&self) -> Option<String> {
        let out = Command::new(&self.program).arg("--version").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        text.lines()
            .next()
            .map(str::to_owned)
            .filter(|l| l.contains("tesseract"))
    }

    /// The text of one image (PNG, JPEG, TIFF, GIF, WebP, BMP or PNM bytes).
    pub fn read(&self, image: &[u8]) -> Result<String, CaptureError> {
        let mut child = Command::new(&self.program)
            .args(["stdin", "stdout", "-l", &self.languages])
            // One thread each: the job runs beside the person's work, and Tesseract's own threads make a single
            // image slower on a shared machine, not faster.
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| CaptureError::Ocr(format!("{} could not start: {e}", self.program.display())))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| CaptureError::Ocr("no input to Tesseract".into()))?;
        let bytes = image.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&bytes));
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let read_all = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut out = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut out);
                }
                out
            })
        };
        let out = read_all(stdout.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let err = read_all(stderr.map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().map_err(|e| CaptureError::Ocr(e.to_string()))? {
                break status;
            }
            if started.elapsed() > self.limit {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CaptureError::Ocr(format!(
                    "Tesseract took more than {} s on one image and was stopped",
                    self.limit.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = writer.join();
        let text = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
        let errors = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
        if !status.success() {
            let said = errors
                .lines()
                .find(|l| !l.trim().is_empty() && !l.starts_with("Estimating resolution"))
                .unwrap_or("no reason given");
            return Err(CaptureError::Ocr(format!("Tesseract refused the image: {said}")));
        }
        Ok(tidy(&text))
    }
}

/// Tesseract's text without its page's form feed and trailing blank lines.
fn tidy(text: &str) -> String {
    let text = text.replace(quire_core::pages::PAGE_BREAK, "");
    text.trim_end().to_owned()
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
