//! An imported Evernote export written out as one canonical text, for comparing with a fixture's expected Markdown:
//! each note's title, notebook, to-do state, tags, labels and attachments, then its body with `quire://` ids
//! replaced by the titles they name; then what the report said. Also a line diff of two such texts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use quire_core::{Actor, AttributeKind, Workspace};
use quire_import::{ImportOptions, ImportReport, Outcome};

/// Imports `source` (an `.enex` file) into a fresh workspace in `dir` and renders what arrived.
pub(crate) fn import_and_render(source: &Path, dir: &Path) -> String {
    let ws = Workspace::open(dir.join("fixture.quire")).unwrap();
    let report = quire_import::import(&ws, source, &ImportOptions::default(), &|_, _| {})
        .map_err(|e| format!("{} could not be imported at all: {e}", source.display()))
        .unwrap();
    render(&ws, &report)
}

/// Every note the report names, in its order, then the report's failures and notes.
pub(crate) fn render(ws: &Workspace, report: &ImportReport) -> String {
    let mut out = String::new();
    let mut seen = Vec::new();
    for item in &report.items {
        if let Some(id) = &item.note_id
            && !seen.contains(id)
        {
            seen.push(id.clone());
            out.push_str(&render_note(ws, id));
        }
    }
    let _ = writeln!(
        out,
        "=== report: {} imported, {} failed, {} attachments ===",
        report.imported, report.failed, report.attachments
    );
    for item in &report.items {
        if item.outcome == Outcome::Imported && item.notes.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}: {}", item.path, outcome_name(item.outcome));
        for note in &item.notes {
            let _ = writeln!(out, "  {note}");
        }
    }
    out
}

fn render_note(ws: &Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| {
        let note = r.note(id)?;
        let summary = &note.summary;
        let notebook: Vec<String> = r
            .notebook_path(&summary.notebook_id)?
            .into_iter()
            .filter(|nb| nb.id != quire_core::ROOT_NOTEBOOK_ID)
            .map(|nb| nb.title)
            .collect();
        let mut out = format!("=== note: {} ===\n", summary.title);
        let _ = writeln!(out, "notebook: {}", notebook.join("/"));
        let todo = match (summary.is_todo, summary.todo_completed) {
            (false, _) => "no".to_owned(),
            (true, None) => "open".to_owned(),
            (true, Some(done)) => format!("done {}", iso(&done.to_rfc3339())),
        };
        let _ = writeln!(out, "to-do: {todo}");
        if !summary.tags.is_empty() {
            let _ = writeln!(out, "tags: {}", summary.tags.join(", "));
        }
        let mut labels: Vec<(String, String)> = r
            .attributes(id)?
            .into_iter()
            .map(|a| match a.kind {
                // A label holding a structured value says so.
                AttributeKind::Label if a.value_type == quire_core::ValueType::Json => {
                    (format!("label {} (json)", a.name), a.value)
                }
                AttributeKind::Label => (format!("label {}", a.name), a.value),
                _ => (
                    format!("relation {}", a.name),
                    r.note_summary(&a.value).map_or(a.value, |n| n.title),
                ),
            })
            .collect();
        labels.sort();
        for (name, value) in labels {
            let _ = writeln!(out, "{name}: {value}");
        }
        let mut attachments: Vec<(String, String)> =
            r.attachments(id)?.into_iter().map(|a| (a.title, a.mime)).collect();
        attachments.sort();
        for (title, mime) in attachments {
            let _ = writeln!(out, "attachment: {title} ({mime})");
        }
        out.push_str("---\n");
        out.push_str(&name_ids(&note.body, |kind, id| match kind {
            "note" => r.note_summary(id).ok().map(|n| n.title),
            _ => r.attachment(id).ok().map(|a| a.title),
        }));
        if !note.body.ends_with('\n') {
            out.push_str("\n[the body does not end with a newline]\n");
        }
        Ok::<_, quire_core::Error>(out)
    })
    .unwrap()
}

/// `quire://note/ID` and `quire://attachment/ID` with the title each names in braces (`{?}` for an id that names
/// nothing).
fn name_ids(body: &str, title: impl Fn(&str, &str) -> Option<String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find("quire://") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "quire://".len()..];
        let kind = ["note/", "attachment/"].into_iter().find(|k| after.starts_with(k));
        let id_len = kind.map_or(0, |k| {
            after[k.len()..].bytes().take_while(|b| b.is_ascii_hexdigit()).count()
        });
        match kind {
            Some(k) if id_len == 32 => {
                let id = &after[k.len()..k.len() + id_len];
                let name = title(k.trim_end_matches('/'), id).unwrap_or_else(|| "?".into());
                let _ = write!(out, "quire://{k}{{{name}}}");
                rest = &after[k.len() + id_len..];
            }
            _ => {
                out.push_str("quire://");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `2024-03-05T10:00:00.000Z` as `2024-03-05T10:00:00Z`.
fn iso(rfc3339: &str) -> String {
    rfc3339.replace(".000Z", "Z")
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Imported => "imported",
        Outcome::Updated => "updated",
        Outcome::Unchanged => "unchanged",
        Outcome::Conflict => "conflict",
        Outcome::Failed => "failed",
        Outcome::Skipped => "skipped",
    }
}

/// The lines of `expected` and `actual` that differ, as a unified diff reads (`-` expected, `+` actual, two lines
/// of context), from their longest common subsequence.
pub(crate) fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', b[j]));
            j += 1;
        } else {
            ops.push(('-', a[i]));
            i += 1;
        }
    }
    // Keep the changed lines and two lines around each.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, (op, _))| *op != ' ')
        .map(|(k, _)| k)
        .collect();
    let near = |k: usize| changed.iter().any(|&c| c.abs_diff(k) <= 2);
    let mut out = String::from("--- expected\n+++ actual\n");
    let mut skipped = false;
    for (k, (op, line)) in ops.iter().enumerate() {
        if near(k) {
            if skipped {
                out.push_str("@@\n");
                skipped = false;
            }
            let _ = writeln!(out, "{op}{}", visible(line));
        } else {
            skipped = true;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        out.push_str("(the two differ in the newline at the end)\n");
    }
    out
}

/// A line with the white space a reader cannot see made visible: a non-breaking space as `⍽`, a tab as `→`, and
/// a `⏎` after trailing white space.
fn visible(line: &str) -> String {
    let mut shown = line.replace('\u{a0}', "⍽").replace('\t', "→");
    if line.ends_with([' ', '\t', '\u{a0}']) {
        shown.push('⏎');
    }
    shown
}

/// The fixtures' names (file stems), sorted, with their paths.
pub(crate) fn fixtures(dir: &Path) -> BTreeMap<String, std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "enex"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect()
}
