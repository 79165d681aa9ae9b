//! `quire note attach`, `quire note detach`, `quire capture` and `quire attachments read`: the wording around
//! quire-host's `capture` (files read before they are attached) and quire-capture's job.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use quire_core::{Actor, Workspace};
use quire_host::capture::Attached;

use crate::output::{Output, json_value, line};
use crate::unlock::Unlocker;

/// `quire capture`.
#[derive(Debug, Args)]
pub(crate) struct CaptureArgs {
    /// Files to attach (PDFs, images, anything); their text is read for search.
    pub(crate) files: Vec<PathBuf>,
    /// The note's text.
    #[arg(long, short, allow_hyphen_values = true)]
    pub(crate) text: Option<String>,
    /// The note's title. Default: the first file's name, else the text's first line.
    #[arg(long)]
    pub(crate) title: Option<String>,
}

/// `quire attachments`.
#[derive(Debug, Subcommand)]
pub(crate) enum AttachmentsCommand {
    /// Read the text of the attachments that wait for it (added in the web app, arrived by sync, images that
    /// waited for Tesseract), with a progress bar. `quire serve` and `quire mcp` do this in the background.
    Read,
}

fn bar(out: &Output, bar: indicatif::ProgressBar) -> indicatif::ProgressBar {
    if out.json || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        indicatif::ProgressBar::hidden()
    } else {
        bar
    }
}

/// A spinner that names the file being read.
fn spinner(out: &Output) -> (indicatif::ProgressBar, impl FnMut(Option<&std::path::Path>)) {
    let spinner = bar(out, indicatif::ProgressBar::new_spinner());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let shown = spinner.clone();
    let tell = move |file: Option<&std::path::Path>| {
        if let Some(file) = file {
            shown.set_message(format!("reading {}", file.display()));
        }
    };
    (spinner, tell)
}

fn attach_files(out: &Output, ws: &Workspace, note_id: &str, files: &[PathBuf]) -> anyhow::Result<Vec<Attached>> {
    let ocr = quire_host::settings::capture()?.ocr();
    let (spinner, mut tell) = spinner(out);
    let attached = quire_host::capture::attach(ws, note_id, files, ocr.as_ref(), &mut tell);
    spinner.finish_and_clear();
    attached
}

fn print_attached(out: &Output, note_title: &str, attached: &[Attached]) -> anyhow::Result<()> {
    if out.json {
        return json_value(&attached);
    }
    for file in attached {
        let read = match file.pages {
            Some(1) if file.ocr_pages == 1 => ", its words read by OCR".to_owned(),
            Some(pages) if file.ocr_pages > 0 => format!(", {pages} pages read ({} by OCR)", file.ocr_pages),
            Some(pages) => format!(", {pages} page{} read", if pages == 1 { "" } else { "s" }),
            None => String::new(),
        };
        line(&format!(
            "Attached {} to \"{note_title}\"{read} (id {}).",
            file.title, file.id
        ))?;
        for note in &file.notes {
            line(&format!("  {note}"))?;
        }
    }
    Ok(())
}

/// `quire note attach NOTE FILE...`.
pub(crate) fn attach(out: &Output, ws: &Workspace, note_id: &str, files: &[PathBuf]) -> anyhow::Result<()> {
    let title = ws.read(&Actor::User, |r| r.note_summary(note_id))?.title;
    let attached = attach_files(out, ws, note_id, files)?;
    print_attached(out, &title, &attached)
}

/// `quire note detach NOTE ATTACHMENT`.
pub(crate) fn detach(out: &Output, ws: &Workspace, keys: &Unlocker, note_id: &str, which: &str) -> anyhow::Result<()> {
    let found = quire_host::capture::find_attachment(ws, note_id, which)?;
    keys.write(ws, |w| Ok(w.delete_attachment(&found.id)?))?;
    if out.json {
        return json_value(&serde_json::json!({ "removed": found.id, "title": found.title }));
    }
    line(&format!(
        "Removed {} from the note (`quire undo` puts it back).",
        found.title
    ))
}

/// `quire capture [FILE...] [--text TEXT]`.
pub(crate) fn capture(out: &Output, ws: &Workspace, args: &CaptureArgs) -> anyhow::Result<()> {
    let config = quire_host::settings::capture()?;
    let ocr = config.ocr();
    let (spinner, mut tell) = spinner(out);
    let text = args.text.clone().unwrap_or_default();
    let title = args.title.as_deref();
    let captured = quire_host::capture::capture(ws, &config, title, &text, &args.files, ocr.as_ref(), &mut tell);
    spinner.finish_and_clear();
    let captured = captured?;
    if out.json {
        return json_value(&captured);
    }
    line(&format!(
        "Captured \"{}\" in {} (id {}).",
        captured.title, captured.notebook, captured.note_id
    ))?;
    print_attached(out, &captured.title, &captured.attachments)
}

/// `quire attachments read`.
pub(crate) fn read_waiting(out: &Output, ws: &Workspace) -> anyhow::Result<()> {
    let ocr = quire_host::settings::capture()?.ocr();
    let progress = bar(out, indicatif::ProgressBar::new(0));
    let report = quire_capture::job::run(
        ws,
        ocr.as_ref(),
        &mut |p| {
            progress.set_length(p.total as u64);
            progress.set_position(p.done as u64);
            progress.set_message(p.title.to_owned());
        },
        &|| false,
    )?;
    progress.finish_and_clear();
    let counts = ws.read(&Actor::User, |r| r.attachment_extraction())?;
    if out.json {
        return json_value(&serde_json::json!({
            "read": report.read, "pages": report.pages, "ocr_pages": report.ocr_pages, "none": report.none,
            "waiting_for_ocr": counts.waiting_for_ocr, "failed": report.failed,
        }));
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    if report.read + report.none + report.failed.len() + report.waiting_for_ocr == 0 {
        line("Nothing waits to be read.")?;
    } else {
        let ocr_pages = if report.ocr_pages > 0 {
            format!(", {} by OCR", report.ocr_pages)
        } else {
            String::new()
        };
        line(&format!(
            "Read {} file{} ({} page{}{ocr_pages}); {} without text to read.",
            report.read,
            plural(report.read),
            report.pages,
            plural(report.pages),
            report.none
        ))?;
    }
    for (title, why) in &report.failed {
        line(&format!("  {title}: {why}"))?;
    }
    if let Some(status) = quire_host::capture::status_line(&counts, ocr.is_some()) {
        line(&format!("{status}."))?;
    }
    Ok(())
}
