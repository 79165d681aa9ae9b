//! A Roam Research graph exported as JSON: an array of pages, each a title and its blocks (`string`, `uid`,
//! `children`, `heading`, times in milliseconds).
//!
//! Pages are notes of their blocks as a Markdown outline (a heading block a heading inside its item); daily pages
//! (`February 7th, 2024`) are quire's daily notes, their Roam title an alias; a namespace (`a/b`) is a notebook
//! path, the full name an alias; `{{[[TODO]]}}` and `{{[[DONE]]}}` are tasks; `((uid))` references are links to the
//! block's page showing its text; `key:: value` attributes stay, and queries read them as fields.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use quire_core::{PeriodicSettings, Timestamp};
use serde_json::Value;

use super::outline::{Block, daily_place, journal_day, referenced, resolve_refs, task};
use super::{AppNote, json, read_json};
use crate::frontmatter::FrontMatter;
use crate::source::Source;
use crate::{Error, Outcome};

/// Blocks nested deeper than this are put at this depth.
const MAX_DEPTH: usize = 64;

/// Whether a file is a Roam graph: an array whose first pages (up to 20) are objects, one of them titled.
fn is_graph(file: &Path) -> bool {
    let (mut objects, mut titled) = (true, false);
    let read = json::each_element(file, &[], &mut |_, i, page| {
        objects &= page.is_object();
        titled |= page.get("title").is_some_and(Value::is_string);
        if i >= 19 || !objects {
            json::Next::Stop
        } else {
            json::Next::More
        }
    });
    read.is_ok() && objects && titled
}

/// Whether `source` is a Roam JSON export (a file, or a folder holding one `.json` file that is).
pub(crate) fn is_roam(source: &Path) -> bool {
    !files_of(source).is_empty()
}

/// The Roam exports of what was given: the file, or every one in the folder.
fn files_of(source: &Path) -> Vec<std::path::PathBuf> {
    let candidates: Vec<std::path::PathBuf> = if source.is_file() {
        vec![source.to_path_buf()]
    } else {
        let mut found: Vec<_> = std::fs::read_dir(source)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        found.sort();
        found
    };
    candidates
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) && is_graph(p))
        .collect()
}

pub(crate) fn read(source: &Path, daily: &PeriodicSettings) -> Result<Source, Error> {
    let unreadable = |reason: String| Error::Source {
        path: source.display().to_string(),
        reason,
    };
    let files = files_of(source);
    if files.is_empty() {
        // Say why the file given is not one: not JSON, or not an array of pages.
        let why = match source.is_file().then(|| read_json(source)) {
            Some(Err(e)) => e.0,
            _ => "no Roam JSON export (an array of pages with titles) in it".into(),
        };
        return Err(unreadable(why));
    }
    let file = source.canonicalize().map_err(|e| unreadable(e.to_string()))?;
    let root = if file.is_dir() {
        file.clone()
    } else {
        file.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut out = Source::new(file.display().to_string(), root);
    // Three reads of the export, a page at a time: the blocks references name, then those blocks' texts with the
    // titles their pages will have, then the pages.
    let mut named = HashSet::new();
    each_page(&files, &mut |_, page| mentions(&page["children"], &mut named)).map_err(|e| unreadable(e.0))?;
    let mut blocks = HashMap::new();
    each_page(&files, &mut |_, page| {
        let (_, title, _) = place(&page, daily);
        collect(&page["children"], &title, &named, &mut blocks, 0);
    })
    .map_err(|e| unreadable(e.0))?;
    drop(named);
    let mut seen = HashMap::new();
    each_page(&files, &mut |i, page| {
        let page = &page;
        let (folder, title, mut meta) = place(page, daily);
        let Some(roam_title) = page["title"].as_str() else {
            out.fail(
                format!("page {i}"),
                Outcome::Failed,
                "a page without a title: not imported",
            );
            return;
        };
        // Two pages of one title (Roam allows none, a damaged export might): both kept, the second's record apart.
        let n = seen.entry(roam_title.to_owned()).or_insert(0);
        *n += 1;
        let rel = if *n == 1 {
            roam_title.to_owned()
        } else {
            format!("{roam_title} ({n})")
        };
        let mut notices = Vec::new();
        let mut body = String::new();
        outline(&page["children"], 0, &blocks, &mut body, &mut notices);
        if body.contains("{{") {
            notices.push("Roam's components ({{[[table]]}}, {{embed}}, ...) stay as written".to_owned());
        }
        let (first, last) = times(page);
        meta.created = first;
        meta.updated = last.or(first);
        let note = AppNote {
            rel,
            shown: None,
            folder,
            title,
            body,
            meta,
            notices,
        };
        out.notes
            .push(note.parsed(&serde_json::to_vec(page).unwrap_or_default()));
    })
    .map_err(|e| unreadable(e.0))?;
    Ok(out)
}

/// A page's notebook, title and aliases: a daily page in the daily notebook titled by its day, a namespace's page
/// in its notebook path.
fn place(page: &Value, daily: &PeriodicSettings) -> (String, String, FrontMatter) {
    let title = page["title"].as_str().unwrap_or_default().trim().to_owned();
    let mut meta = FrontMatter::default();
    if let Some(day) = journal_day(&title) {
        meta.aliases.push(title.clone());
        let (folder, title) = daily_place(day, daily, &mut meta);
        return (folder, title, meta);
    }
    match title.rsplit_once('/') {
        Some((namespace, leaf)) if !leaf.trim().is_empty() && !namespace.trim().is_empty() => {
            meta.aliases.push(title.clone());
            (namespace.trim().to_owned(), leaf.trim().to_owned(), meta)
        }
        _ => (String::new(), title, meta),
    }
}

/// Every page of the export's files, numbered across them, one at a time.
fn each_page(files: &[std::path::PathBuf], each: &mut dyn FnMut(usize, Value)) -> Result<(), crate::source::Unread> {
    let mut i = 0;
    for file in files {
        json::each_element(file, &[], &mut |_, _, page| {
            each(i, page);
            i += 1;
            json::Next::More
        })?;
    }
    Ok(())
}

/// The ids of the blocks that blocks below `children` reference.
fn mentions(children: &Value, into: &mut HashSet<String>) {
    for child in children.as_array().into_iter().flatten() {
        if let Some(text) = child["string"].as_str() {
            referenced(text, into);
        }
        // As deep as `outline` writes blocks (serde_json's own limit, 128, keeps it from the stack's).
        mentions(&child["children"], into);
    }
}

/// The blocks below `children` that some block references (`named`), by uid, with their page's title.
fn collect(children: &Value, page: &str, named: &HashSet<String>, blocks: &mut HashMap<String, Block>, depth: usize) {
    for child in children.as_array().into_iter().flatten() {
        if let Some(uid) = child["uid"].as_str().filter(|uid| named.contains(*uid)) {
            let text = child["string"].as_str().unwrap_or_default();
            let text = text.lines().next().unwrap_or_default();
            let text = todo(text).map_or_else(|| text.to_owned(), |t| t[4..].to_owned());
            blocks.insert(
                uid.to_owned(),
                Block {
                    page: page.to_owned(),
                    text,
                },
            );
        }
        if depth < MAX_DEPTH {
            collect(&child["children"], page, named, blocks, depth + 1);
        }
    }
}

/// `{{[[TODO]]}} x` / `{{TODO}} x` as a task (`[ ] x`), `DONE` done.
fn todo(text: &str) -> Option<String> {
    for (mark, word) in [
        ("{{[[TODO]]}}", "TODO"),
        ("{{TODO}}", "TODO"),
        ("{{[[DONE]]}}", "DONE"),
        ("{{DONE}}", "DONE"),
    ] {
        if let Some(rest) = text.trim_start().strip_prefix(mark) {
            return task(&format!("{word} {}", rest.trim()));
        }
    }
    None
}

fn outline(
    children: &Value,
    depth: usize,
    blocks: &HashMap<String, Block>,
    out: &mut String,
    notices: &mut Vec<String>,
) {
    let indent = "    ".repeat(depth.min(MAX_DEPTH));
    for child in children.as_array().into_iter().flatten() {
        let text = child["string"].as_str().unwrap_or_default();
        let text = todo(text).unwrap_or_else(|| text.to_owned());
        let text = fences(&aliased_links(&styles(&text)));
        let heading = child["heading"].as_u64().filter(|h| (1..=6).contains(h));
        let mut lines = text.lines();
        let first = lines.next().unwrap_or_default();
        let first = match heading {
            Some(h) => format!("{} {first}", "#".repeat(h as usize)),
            None => first.to_owned(),
        };
        out.push_str(&format!("{indent}- {}\n", resolve_refs(&first, blocks, notices)));
        for line in lines {
            out.push_str(&format!("{indent}  {}\n", resolve_refs(line, blocks, notices)));
        }
        outline(&child["children"], depth + 1, blocks, out, notices);
    }
}

/// Roam's own emphasis as Markdown's, outside code: `__italics__` is `*italics*` (in Markdown it would be bold),
/// `^^highlight^^` is `==highlight==`.
fn styles(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                return part.to_owned();
            }
            let mut part = part.to_owned();
            for (mark, markdown) in [("__", "*"), ("^^", "==")] {
                if part.matches(mark).count() >= 2 {
                    let pieces: Vec<&str> = part.split(mark).collect();
                    let pairs = (pieces.len() - 1) / 2 * 2;
                    let mut joined = String::new();
                    for (k, piece) in pieces.iter().enumerate() {
                        if k > 0 {
                            joined.push_str(if k <= pairs { markdown } else { mark });
                        }
                        joined.push_str(piece);
                    }
                    part = joined;
                }
            }
            part
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// Roam's link with its own text, `[label]([[Page]])`, as a wikilink that shows it: `[[Page|label]]`.
fn aliased_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("]([[") {
        let Some(open) = rest[..at].rfind('[') else { break };
        let Some(end) = rest[at + 4..].find("]])") else { break };
        let page = &rest[at + 4..at + 4 + end];
        let label = &rest[open + 1..at];
        out.push_str(&rest[..open]);
        out.push_str(&format!("[[{page}|{}]]", label.replace(['[', ']', '|'], "")));
        rest = &rest[at + 4 + end + 3..];
    }
    out.push_str(rest);
    out
}

/// A code block Roam writes with its closing fence on the code's last line (```` (+ 1 2)``` ````): the fence on a
/// line of its own, as Markdown needs it to close.
fn fences(text: &str) -> String {
    if !text.trim_start().starts_with("```") || !text.contains('\n') {
        return text.to_owned();
    }
    let trimmed = text.trim_end();
    match trimmed.strip_suffix("```") {
        Some(code) if !code.ends_with('\n') && code.contains('\n') => format!("{code}\n```"),
        _ => text.to_owned(),
    }
}

/// A page's first and last time: its own, else its blocks'.
fn times(page: &Value) -> (Option<Timestamp>, Option<Timestamp>) {
    let mut all = Vec::new();
    fn walk(v: &Value, all: &mut Vec<i64>, depth: usize) {
        for key in ["create-time", "edit-time"] {
            if let Some(t) = v[key].as_i64().filter(|t| *t > 0) {
                all.push(t);
            }
        }
        if depth < MAX_DEPTH {
            for child in v["children"].as_array().into_iter().flatten() {
                walk(child, all, depth + 1);
            }
        }
    }
    walk(page, &mut all, 0);
    let created = page["create-time"].as_i64().or_else(|| all.iter().min().copied());
    (created.map(Timestamp), all.iter().max().copied().map(Timestamp))
}
