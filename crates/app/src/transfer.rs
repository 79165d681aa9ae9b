//! `quire import` and `quire export`, over quire-import.

use std::process::ExitCode;

use quire_core::Workspace;
use quire_import::{ExportFormat, ExportOptions, ImportFormat, ImportOptions, Outcome};

use crate::cli::{ExportArgs, ExportFormatArg, ImportArgs};
use crate::output::{Output, plural};
use crate::unlock::Unlocker;

pub(crate) fn import(out: &Output, ws: &Workspace, args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let (format, Some(path)) = (args.format, &args.path) else {
        if args.format == Some(None) {
            // `--format` alone: every format, with what it keeps.
            if out.json {
                let list = ImportFormat::ALL
                    .iter()
                    .map(|f| serde_json::json!({ "name": f.name(), "keeps": f.keeps() }));
                return crate::output::json_value(&serde_json::Value::Array(list.collect()))
                    .map(|()| ExitCode::SUCCESS);
            }
            let rows: String = ImportFormat::ALL
                .iter()
                .map(|f| format!("  {:<15} {}\n", f.name(), f.keeps()))
                .collect();
            crate::output::text(&format!("quire import --format FORMAT reads:\n{rows}"))?;
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("error: give what to import: quire import PATH --format FORMAT");
        return Ok(ExitCode::from(2));
    };
    let into = match &args.into {
        Some(name) => match crate::lookup::find_notebook(ws, name) {
            Ok(id) => Some(id),
            // Nothing can be imported: exit code 2, as the help says.
            Err(e) => {
                // A missing notebook can be created; an ambiguous title needs its path instead (the error says so).
                let message = match e.downcast_ref::<crate::lookup::NoSuchNotebook>() {
                    Some(missing) => format!(
                        "{e}; create it first with `quire notebook add {}`, or leave out --into",
                        crate::output::shell_word(&missing.path)
                    ),
                    None => e.to_string(),
                };
                if out.json {
                    crate::output::json_value(&serde_json::json!({ "error": message }))?;
                }
                eprintln!("error: {message}");
                return Ok(ExitCode::from(2));
            }
        },
        None => None,
    };
    let options = ImportOptions {
        format: format.flatten().unwrap_or_default(),
        into,
        dry_run: args.dry_run,
        force: args.force,
        // Journals (Logseq's, Roam's daily pages) become daily notes where `quire today` looks for them.
        daily: quire_host::settings::periodic(quire_core::Period::Day).ok(),
    };
    let bar = if out.json {
        indicatif::ProgressBar::hidden()
    } else {
        indicatif::ProgressBar::new(0)
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files, {per_sec}, {eta} left")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let result = quire_import::import(ws, path, &options, &progress);
    bar.finish_and_clear();
    let report = match result {
        Ok(report) => report,
        Err(e) => {
            // Nothing was imported: exit code 2, with the reason (as JSON too with --json).
            if out.json {
                crate::output::json_value(&serde_json::json!({ "error": e.to_string() }))?;
            }
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let trouble = report.failed + report.conflicts > 0;
    // Nothing came in, and something failed (a source too damaged to read a note of): as an unreadable source.
    let nothing = report.imported + report.updated + report.unchanged + report.conflicts == 0 && report.failed > 0;
    if out.json {
        crate::output::json_value(&serde_json::to_value(&report)?)?;
    } else {
        let mut text = format!(
            "{}{} imported, {} updated, {} unchanged, {}, {} failed; {}\n",
            if report.dry_run {
                "dry run, nothing was written; an import would give: "
            } else {
                ""
            },
            report.imported,
            report.updated,
            report.unchanged,
            plural(report.conflicts, "conflict"),
            report.failed,
            plural(report.attachments, "attachment")
        );
        for item in &report.items {
            let label = match item.outcome {
                Outcome::Failed => "failed",
                Outcome::Conflict => "conflict",
                Outcome::Skipped => "skipped",
                _ if !item.notes.is_empty() => "note",
                _ => continue,
            };
            for line in &item.notes {
                text.push_str(&format!("  {label}: {}: {line}\n", item.path));
            }
        }
        if let Some(id) = &report.change_set_id {
            text.push_str(&format!("to take the whole import back: quire undo {id}\n"));
        }
        crate::output::text(&text)?;
    }
    Ok(if nothing {
        ExitCode::from(2)
    } else if trouble {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `1 note`, `2 notes`.
/// `quire export`: sealed notes are exported (as plain text) only with `--include-protected`, which then asks for
/// the passphrase; the plan is read through the key, the files written after.
pub(crate) fn export(out: &Output, ws: &Workspace, keys: &Unlocker, args: &ExportArgs) -> anyhow::Result<()> {
    let notebook = match &args.notebook {
        Some(name) => Some(crate::lookup::find_notebook(ws, name)?),
        None => None,
    };
    let options = ExportOptions {
        format: match args.format {
            ExportFormatArg::Markdown => ExportFormat::Markdown,
            ExportFormatArg::Obsidian => ExportFormat::Obsidian,
        },
        notebook,
        include_protected: args.include_protected,
    };
    let plan = keys.read(ws, |r| Ok(quire_import::plan_export(r, &options)?))?;
    let report = quire_import::write_export(plan, &args.dir)?;
    if out.json {
        return crate::output::json_value(&serde_json::to_value(&report)?);
    }
    let mut text = format!(
        "exported {}, {} and {} to {}\n",
        plural(report.notes, "note"),
        plural(report.attachments, "attachment"),
        plural(report.notebooks, "notebook"),
        report.dir
    );
    if report.removed > 0 {
        text.push_str(&format!(
            "{} removed: written by the last export here, for notes no longer there\n",
            plural(report.removed, "file")
        ));
    }
    match report.protected_left_out {
        0 => {}
        1 => text.push_str("1 protected note was left out (--include-protected exports it)\n"),
        n => text.push_str(&format!(
            "{n} protected notes were left out (--include-protected exports them)\n"
        )),
    }
    crate::output::text(&text)
}
