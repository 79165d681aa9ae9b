//! Simplenote's export: `notes.json` (in the export's `source/` folder) with `activeNotes` and `trashedNotes`.
//!
//! A note's first line is its title and the rest its body; tags as tags; pinned as a label; the times; links
//! between notes (`simplenote://note/ID`) point at the notes they name; a note in Simplenote's trash goes to
//! quire's trash. Who a note was shared with and its public address are said in the report, not kept.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{AppNote, json};
use crate::frontmatter::{FrontMatter, time_of};
use crate::source::Source;
use crate::{Error, Outcome};

/// A first line longer than this (in characters) is not a title.
const MAX_TITLE_LINE: usize = 120;

/// The `notes.json` in what was given: the file, the export folder, or its `source/` folder.
fn notes_file(source: &Path) -> Option<PathBuf> {
    if source.is_file() {
        return Some(source.to_path_buf());
    }
    ["notes.json", "source/notes.json"]
        .iter()
        .map(|p| source.join(p))
        .find(|p| p.is_file())
}

/// The arrays of Simplenote's export, and whether a note in each is in the trash.
const LISTS: [(&str, bool); 2] = [("activeNotes", false), ("trashedNotes", true)];

/// Whether `source` is a Simplenote export (what auto-detection asks): its first note has an id and content.
pub(crate) fn is_simplenote(source: &Path) -> bool {
    notes_file(source).is_some_and(|p| {
        json::first_element_is(&p, &LISTS.map(|(key, _)| key), true, |v| {
            v.get("id").is_some() && v.get("content").is_some()
        })
    })
}

pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let unreadable = |reason: String| Error::Source {
        path: source.display().to_string(),
        reason,
    };
    let file =
        notes_file(source).ok_or_else(|| unreadable("no notes.json in it: is it a Simplenote export?".into()))?;
    let file = file.canonicalize().map_err(|e| unreadable(e.to_string()))?;
    let root = file.parent().map(Path::to_path_buf).unwrap_or_default();
    // Notes are known by Simplenote's ids wherever the export is: a newer export updates what an older one brought.
    let mut out = Source::new("simplenote".to_owned(), root);
    out.flag_labels = &["pinned"];
    let mut read_one = |list: &str, i: usize, v: Value| {
        let trashed = LISTS.iter().any(|(key, trashed)| *key == list && *trashed);
        let Some(id) = v["id"].as_str().filter(|id| !id.is_empty()) else {
            out.fail(
                format!("{list}[{i}]"),
                Outcome::Failed,
                "a note without an id: not imported",
            );
            return json::Next::More;
        };
        let rel = format!("{id}.txt");
        out.targets.insert(id.to_owned(), rel.clone());
        // Moved to the trash or out of it, the note changed.
        let mut said = serde_json::to_vec(&v).unwrap_or_default();
        said.extend_from_slice(if trashed { b"\ntrashed" } else { b"" });
        let note = note(&rel, &v, trashed);
        out.notes.push(note.parsed(&said));
        json::Next::More
    };
    let found = json::each_element(&file, &LISTS.map(|(key, _)| key), &mut read_one).map_err(|e| unreadable(e.0))?;
    if found == 0 {
        return Err(unreadable(
            "not a Simplenote export: it has no activeNotes or trashedNotes".into(),
        ));
    }
    Ok(out)
}

fn note(rel: &str, v: &Value, trashed: bool) -> AppNote {
    let content = v["content"].as_str().unwrap_or_default().replace("\r\n", "\n");
    let (first, rest) = content.split_once('\n').unwrap_or((&content, ""));
    let first = first.trim().trim_start_matches('#').trim();
    // A first line too long for a title is a paragraph: the body keeps it whole.
    let (title, rest) = if first.chars().count() > MAX_TITLE_LINE {
        (super::title_from_text(first).unwrap_or_default(), content.as_str())
    } else {
        (first.to_owned(), rest)
    };
    // Links between notes as Joplin writes them, which the import points at the notes they name.
    let body = rest.trim_start_matches('\n').replace("simplenote://note/", ":/");
    let mut meta = FrontMatter {
        created: v["creationDate"].as_str().and_then(time_of),
        updated: v["lastModified"].as_str().and_then(time_of),
        trashed,
        ..FrontMatter::default()
    };
    meta.tags = v["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    if v["pinned"].as_bool() == Some(true) {
        meta.json_labels.push(("pinned".into(), "true".into()));
    }
    let mut notices = Vec::new();
    if let Some(people) = v["collaboratorEmails"].as_array().filter(|p| !p.is_empty()) {
        notices.push(format!(
            "shared in Simplenote with {} {}: who it was shared with is not kept",
            people.len(),
            if people.len() == 1 { "person" } else { "people" }
        ));
    }
    if v["publicURL"].as_str().is_some() {
        notices.push("published in Simplenote: its public address is not kept".to_owned());
    }
    let title = if title.is_empty() { "Untitled".to_owned() } else { title };
    AppNote {
        shown: Some(format!("{title} ({})", rel.trim_end_matches(".txt"))),
        rel: rel.to_owned(),
        folder: String::new(),
        title,
        body,
        meta,
        notices,
    }
}
