//! The reading of attachments' text beside a server (`quire serve`, `quire mcp`): a thread that looks for waiting
//! attachments every few seconds (an upload, a synced file, a note attached in a terminal) and reads them one by
//! one, with a status the server shows. Dropping [`Reading`] stops it between two files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quire_core::{Actor, Workspace};

use crate::{Ocr, job};

/// How often it looks for attachments to read.
pub const LOOK_EVERY: Duration = Duration::from_secs(3);

/// Where the reading stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadingView {
    /// The file being read, with how many are done and found in this round.
    pub now: Option<(String, usize, usize)>,
    /// Files read since the server started.
    pub read: usize,
    /// Images and scans waiting for Tesseract.
    pub waiting_for_ocr: u64,
    /// Whether Tesseract is there.
    pub ocr: bool,
    /// The last round's failure (the workspace could not be read or written), cleared by a round that works.
    pub error: Option<String>,
}

/// The running reader; dropping it stops it.
#[derive(Debug)]
pub struct Reading {
    view: Arc<Mutex<ReadingView>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reading {
    /// Starts reading `ws`'s waiting attachments, with `ocr` for images and scans.
    pub fn start(ws: &Workspace, ocr: Option<Ocr>) -> std::io::Result<Reading> {
        let view = Arc::new(Mutex::new(ReadingView {
            ocr: ocr.is_some(),
            ..ReadingView::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (ws, view, stop) = (ws.clone(), Arc::clone(&view), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("quire-capture".into())
                .spawn(move || run(&ws, ocr.as_ref(), &view, &stop))?
        };
        Ok(Reading {
            view,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it stands now.
    pub fn view(&self) -> ReadingView {
        self.view.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A shared handle on [`Reading::view`], for a status read elsewhere.
    pub fn shared_view(&self) -> Arc<Mutex<ReadingView>> {
        Arc::clone(&self.view)
    }
}

impl Drop for Reading {
    /// Stops between two files. A file being read (a long scan) is not waited for beyond two seconds: the thread is
    /// left to end with the process, its write (one transaction) whole or not made.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            for _ in 0..20 {
                if thread.is_finished() {
                    let _ = thread.join();
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn run(ws: &Workspace, ocr: Option<&Ocr>, view: &Mutex<ReadingView>, stop: &AtomicBool) {
    let set = |f: &dyn Fn(&mut ReadingView)| f(&mut view.lock().unwrap_or_else(|e| e.into_inner()));
    while !stop.load(Ordering::Relaxed) {
        let result = job::run(
            ws,
            ocr,
            &mut |p| set(&|v| v.now = Some((p.title.to_owned(), p.done, p.total))),
            &|| stop.load(Ordering::Relaxed),
        );
        let counts = ws.read(&Actor::User, |r| r.attachment_extraction());
        set(&|v| {
            v.now = None;
            match &result {
                Ok(report) => {
                    v.read += report.read;
                    v.error = None;
                }
                Err(e) => v.error = Some(e.to_string()),
            }
            if let Ok(counts) = &counts {
                v.waiting_for_ocr = counts.waiting_for_ocr;
            }
        });
        if let Err(e) = &result {
            tracing::warn!("reading attachments' text failed: {e}");
        }
        // Slept in steps, so that a stop is quick.
        for _ in 0..(LOOK_EVERY.as_millis() / 100) {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
