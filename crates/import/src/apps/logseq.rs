//! A Logseq graph (Markdown files): `pages/` and `journals/`, `assets/` beside them, `logseq/config.edn`.
//!
//! Pages are notes titled as Logseq names them (`title::`, else the file's name with `___` or `%2F` as `/`); a
//! namespace (`a/b`) is a notebook path, the full name kept as an alias so `[[a/b]]` finds it. Journals are daily
//! notes (quire's daily notebook, titled by the day, Logseq's name of the day an alias). Page properties
//! (`key:: value` before the first block) give the tags, aliases and labels (numbers and booleans typed); blocks
//! stay an outline; `TODO`/`DOING`/`NOW`/`LATER`/`DONE`/`CANCELED` are tasks with their priority, `SCHEDULED` and
//! `DEADLINE` as the Tasks plugin writes them; a block reference is a link to the block's page showing its text;
//! `id::`, `collapsed::` and `:LOGBOOK:` are Logseq's bookkeeping and left out. `logseq/` (settings, backups) is
//! not read.

use std::collections::HashMap;
use std::path::Path;

use quire_core::PeriodicSettings;
use sha2::{Digest, Sha256};

use super::outline::{Block, daily_place, journal_day, long_name, resolve_refs, task};
use crate::frontmatter::FrontMatter;
use crate::relink::percent_decode;
use crate::source::{Parsed, Source};
use crate::{Error, Outcome};

/// Whether `dir` is a Logseq graph.
pub(crate) fn is_logseq(dir: &Path) -> bool {
    dir.join("logseq/config.edn").is_file() || (dir.join("pages").is_dir() && dir.join("journals").is_dir())
}

/// A page read, before its blocks are rewritten.
struct Page {
    rel: String,
    folder: String,
    title: String,
    body: String,
    meta: FrontMatter,
    hash: String,
}

pub(crate) fn read(source: &Path, daily: &PeriodicSettings) -> Result<Source, Error> {
    let root = super::folder(source)?;
    let mut out = Source::new(root.display().to_string(), root.clone());
    for entry in walkdir::WalkDir::new(root.join("assets"))
        .follow_root_links(false)
        .follow_links(false)
        .sort_by_file_name()
    {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_file() {
            let rel = entry
                .path()
                .strip_prefix(&root)
                .map(|p| p.to_string_lossy().replace('\\', "/"));
            if let Ok(rel) = rel {
                let name = rel.rsplit('/').next().unwrap_or(&rel).to_lowercase();
                out.by_name.entry(name).or_default().push(rel.clone());
                out.files.insert(rel, entry.metadata().map(|m| m.len()).unwrap_or(0));
            }
        }
    }
    for (dir, journal) in [("pages", false), ("journals", true)] {
        if !super::real_dir(&root.join(dir)) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for path in files {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let rel = format!("{dir}/{name}");
            let Some(stem) = name.strip_suffix(".md") else {
                if name.ends_with(".org") {
                    out.fail(
                        rel,
                        Outcome::Skipped,
                        "an Org-mode page: quire reads a graph's Markdown pages",
                    );
                }
                continue;
            };
            match read_page(&path, &rel, stem, journal, daily) {
                Ok(page) => out.notes.push(Parsed {
                    shown: page.rel.clone(),
                    rel: page.rel,
                    folder: page.folder,
                    title: page.title,
                    body: page.body,
                    meta: page.meta,
                    hash: page.hash,
                    links: Default::default(),
                    notices: Vec::new(),
                }),
                Err(reason) => out.fail(rel, Outcome::Failed, reason),
            }
        }
    }
    // Markdown elsewhere in the graph (a folder of notes beside it, a draft at the top) is not a page: said.
    let elsewhere = walkdir::WalkDir::new(&root)
        .max_depth(4)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            e.depth() == 0
                || !(name.starts_with('.')
                    || (e.depth() == 1 && ["pages", "journals", "logseq"].contains(&name.as_ref())))
        })
        .flatten()
        .filter(|e| e.file_type().is_file() && e.file_name().to_string_lossy().to_lowercase().ends_with(".md"));
    for entry in elsewhere {
        if let Ok(rel) = entry.path().strip_prefix(&root) {
            out.fail(
                rel.to_string_lossy().replace('\\', "/"),
                Outcome::Skipped,
                "not in the graph's pages/ or journals/: not a page (import its folder as Markdown to bring it in)",
            );
        }
    }
    if out.notes.is_empty() && out.failures.is_empty() {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "no pages or journals in it: is it a Logseq graph?".into(),
        });
    }
    // Every block with an id, by its id (Logseq gives one only to a block something references), then each page's
    // references resolved: the pages are read back one at a time.
    let unread = |e: std::io::Error| Error::Io {
        context: "cannot read back a page of the graph".into(),
        source: e,
    };
    let mut blocks = HashMap::new();
    for (i, page) in out.notes.iter().enumerate() {
        let mut last = String::new();
        for line in out.notes.body(i).map_err(unread)?.lines() {
            let text = line.trim_start();
            if let Some(id) = text.strip_prefix("id:: ") {
                blocks.insert(
                    id.trim().to_owned(),
                    Block {
                        page: page.title.clone(),
                        text: last.clone(),
                    },
                );
            } else if let Some(item) = text.strip_prefix("- ") {
                last = task(item).map_or_else(|| item.to_owned(), |t| t[4..].to_owned());
            }
        }
    }
    for i in 0..out.notes.len() {
        let files = &out.files;
        let edited = out.notes.edit(i, |page| {
            let mut notices = Vec::new();
            let body = blocks_of(&page.body, &blocks, &mut notices);
            // Assets are linked from the pages' folder (`../assets/x.png`): from the top of the graph.
            page.body = super::from_top(&body, "](../assets/", "assets/", files);
            page.notices = notices;
        });
        edited.map_err(unread)?;
    }
    Ok(out)
}

fn read_page(
    path: &Path,
    rel: &str,
    stem: &str,
    journal: bool,
    daily: &PeriodicSettings,
) -> Result<Page, super::Unread> {
    let bytes = crate::source::read_note_bytes(path)?;
    if bytes.len() > quire_core::MAX_BODY_BYTES {
        return Err(super::Unread(format!(
            "{} bytes: more than a note may hold",
            bytes.len()
        )));
    }
    let hash = quire_core::hex(&Sha256::digest(&bytes));
    let text = String::from_utf8(bytes).map_err(|e| super::Unread(format!("not UTF-8 text ({e})")))?;
    let text = text.replace("\r\n", "\n");
    // Page properties: the `key:: value` lines before the first block.
    let mut meta = FrontMatter::default();
    let mut title = None;
    let mut body_at = 0;
    for line in text.split_inclusive('\n') {
        let Some((key, value)) = line.trim_end().split_once(":: ") else {
            break;
        };
        if key.is_empty() || key.contains(char::is_whitespace) || line.starts_with('-') {
            break;
        }
        body_at += line.len();
        let value = value.trim();
        match key.to_lowercase().as_str() {
            "title" => title = Some(value.to_owned()),
            "tags" => meta.tags.extend(names(value)),
            "alias" => meta.aliases.extend(names(value)),
            // Logseq's own bookkeeping.
            "collapsed" | "id" => {}
            _ if value == "true" || value == "false" || value.parse::<f64>().is_ok_and(f64::is_finite) => {
                meta.json_labels.push((key.to_owned(), value.to_owned()));
            }
            _ => meta.labels.push((key.to_owned(), value.to_owned())),
        }
    }
    let body = text[body_at..].trim_start_matches('\n').to_owned();
    // Logseq keeps no times in its files: the file's are the page's.
    let modified = std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .map(quire_core::Timestamp);
    meta.created = modified;
    meta.updated = modified;
    let name = percent_decode(&stem.replace("___", "/"));
    let (folder, title) = match (journal, journal_day(stem)) {
        (true, Some(day)) => {
            // Logseq names a journal `Feb 7th, 2024`; links by that name still find it.
            meta.aliases.push(long_name(day, true));
            // A journal was written on its day.
            let (y, m, d) = day;
            meta.created = crate::frontmatter::time_of(&format!("{y:04}-{m:02}-{d:02}")).or(meta.created);
            daily_place(day, daily, &mut meta)
        }
        _ => {
            let full = title.unwrap_or(name).trim().to_owned();
            match full.rsplit_once('/') {
                Some((namespace, leaf)) if !leaf.trim().is_empty() => {
                    meta.aliases.push(full.clone());
                    let folder = namespace.split('/').map(str::trim).collect::<Vec<_>>().join("/");
                    (folder, leaf.trim().to_owned())
                }
                _ => (String::new(), full),
            }
        }
    };
    Ok(Page {
        rel: rel.to_owned(),
        folder,
        title,
        body,
        meta,
        hash,
    })
}

/// Names of a property's value: `a, [[b c]], #d`.
fn names(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(|v| {
            v.trim()
                .trim_start_matches('#')
                .trim_start_matches("[[")
                .trim_end_matches("]]")
                .trim()
                .to_owned()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// The blocks of a page as Markdown: tasks, their dates, references resolved, Logseq's bookkeeping left out.
fn blocks_of(body: &str, blocks: &HashMap<String, Block>, notices: &mut Vec<String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut logbook = false;
    let mut fence = false;
    for line in body.lines() {
        let text = line.trim_start();
        let indent = &line[..line.len() - text.len()];
        // A fence opens on a block's line (`- ```js`) or on a line of its own, and closes on a line of its own.
        let after = text.strip_prefix("- ").unwrap_or(text);
        let marker = after.starts_with("```");
        if marker || fence {
            // `- ```x```` opens and closes on one line.
            if marker && !(after.len() > 3 && after[3..].contains("```")) {
                fence = !fence;
            }
            out.push(line.to_owned());
            continue;
        }
        if logbook {
            logbook = text != ":END:";
            continue;
        }
        if text == ":LOGBOOK:" {
            logbook = true;
            continue;
        }
        let bare = text.strip_prefix("- ").unwrap_or(text);
        if text.starts_with("id:: ") || text.starts_with("collapsed:: ") || bare == "collapsed:: true" {
            continue;
        }
        // `SCHEDULED: <2024-02-07 Wed>` and `DEADLINE: ...` under a task: its dates, on its line.
        if let Some((sign, rest)) = text
            .strip_prefix("SCHEDULED: <")
            .map(|r| ("⏳", r))
            .or_else(|| text.strip_prefix("DEADLINE: <").map(|r| ("📅", r)))
            && let Some(last) = out.last_mut()
            && last.trim_start().starts_with("- [")
        {
            let inner = rest.trim_end_matches('>');
            let day = inner.split_whitespace().next().unwrap_or_default();
            last.push_str(&format!(" {sign} {day}"));
            if let Some(every) = repeat(inner) {
                last.push_str(&format!(" 🔁 {every}"));
            }
            continue;
        }
        let line = match text.strip_prefix("- ").and_then(task) {
            Some(task) => format!("{indent}- {task}"),
            None => line.to_owned(),
        };
        out.push(resolve_refs(&line, blocks, notices));
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// A repeater (`.+1w`, `++2d`, `+1m`) as the Tasks plugin's recurrence.
fn repeat(inner: &str) -> Option<String> {
    let mark = inner
        .split_whitespace()
        .find(|w| w.starts_with('+') || w.starts_with(".+"))?;
    let digits = mark.trim_start_matches(['.', '+']);
    let (n, unit) = digits.split_at(digits.find(|c: char| !c.is_ascii_digit())?);
    let n: u32 = n.parse().ok()?;
    let unit = match unit {
        "d" => "day",
        "w" => "week",
        "m" => "month",
        "y" => "year",
        _ => return None,
    };
    Some(if n == 1 {
        format!("every {unit}")
    } else {
        format!("every {n} {unit}s")
    })
}
