//! Google Keep, as Google Takeout exports it: a `Keep` folder (in `Takeout/`) with a JSON file per note and its
//! attachments beside them (an HTML file per note too, not read: the JSON says all of it).
//!
//! A note's text (its rich text as Markdown when it has some), a checklist as tasks (`- [ ]`, `- [x]`), labels as
//! tags, attachments linked from the end of the note, saved links as a list, its colour (when not the default) and
//! pin and archive as labels, created and edited times; a note in Keep's trash goes to quire's trash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{AppNote, file_link, from_micros, read_json, title_from_text};
use crate::enex::{converter, rich_html_to_markdown};
use crate::frontmatter::FrontMatter;
use crate::source::Source;
use crate::{Error, Outcome};

/// The folder of Keep's notes in what was given: the Takeout folder, its `Keep` folder, or a folder of them.
pub(crate) fn notes_folder(root: &Path) -> PathBuf {
    for inner in ["Takeout/Keep", "Keep", "Takeout/Google Keep", "Google Keep"] {
        if super::real_dir(&root.join(inner)) {
            return root.join(inner);
        }
    }
    root.to_path_buf()
}

/// Whether a JSON value is a Keep note.
fn is_note(value: &Value) -> bool {
    value.is_object()
        && [
            "createdTimestampUsec",
            "userEditedTimestampUsec",
            "textContent",
            "listContent",
        ]
        .iter()
        .any(|k| value.get(k).is_some())
}

/// Whether `dir` holds Keep notes (what auto-detection asks).
pub(crate) fn is_keep(dir: &Path) -> bool {
    let folder = notes_folder(dir);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return false;
    };
    entries.flatten().take(50).any(|e| {
        e.path().extension().is_some_and(|x| x == "json")
            && std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_file() && m.len() < 1 << 20)
            && read_json(&e.path()).is_ok_and(|(_, v)| is_note(&v))
    })
}

pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let given = super::folder(source)?;
    let root = notes_folder(&given);
    // Keep's notes have no ids, only files named by their titles: known by the folder they come from (a key for all
    // Takeouts would let two accounts' notes of one title overwrite each other).
    let mut out = Source::new(given.display().to_string(), root.clone());
    out.flag_labels = &["pinned", "archived", "color"];
    let mut names: Vec<(String, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(&root).map_err(|e| Error::Source {
        path: root.display().to_string(),
        reason: e.to_string(),
    })?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            out.fail(name, Outcome::Skipped, "a symbolic link: not followed");
        } else if meta.is_file() {
            let lower = name.to_lowercase();
            if lower.ends_with(".json") {
                names.push((name, entry.path()));
            } else if !lower.ends_with(".html") && lower != "labels.txt" {
                out.by_name.entry(lower).or_default().push(name.clone());
                out.files.insert(name, meta.len());
            }
        }
    }
    names.sort();
    for (name, path) in names {
        match read_json(&path) {
            Ok((bytes, value)) if is_note(&value) => {
                let note = note(&name, &value, &out.files);
                let mut said = bytes;
                // An attachment replaced at the source changes the note.
                for a in attachments(&value) {
                    if let Some(size) = out.files.get(&resolve(&a.0, &out.files).unwrap_or_default()) {
                        said.extend_from_slice(format!("\n{}:{size}", a.0).as_bytes());
                    }
                }
                out.notes.push(note.parsed(&said));
            }
            Ok(_) => out.fail(name, Outcome::Skipped, "not a Google Keep note"),
            Err(reason) => out.fail(name, Outcome::Failed, reason),
        }
    }
    if out.notes.is_empty() && out.failures.iter().all(|f| f.outcome == Outcome::Skipped) {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "no Google Keep notes in it: give the Takeout folder or its Keep folder".into(),
        });
    }
    Ok(out)
}

/// A note's attachments: file name as the JSON gives it, media type.
fn attachments(value: &Value) -> Vec<(String, Option<String>)> {
    value["attachments"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|a| {
                    let path = a["filePath"].as_str()?.to_owned();
                    Some((path, a["mimetype"].as_str().map(str::to_owned)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The file an attachment names. Takeout sometimes gives a `.jpeg` file the name `.jpg` in the JSON (or the other
/// way round): a file with the same stem is taken then.
fn resolve(name: &str, files: &BTreeMap<String, u64>) -> Option<String> {
    if name.contains('/') || name.contains('\\') {
        return None;
    }
    if files.contains_key(name) {
        return Some(name.to_owned());
    }
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    files
        .keys()
        .find(|f| f.rsplit_once('.').is_some_and(|(s, _)| s == stem))
        .cloned()
}

fn note(name: &str, v: &Value, files: &BTreeMap<String, u64>) -> AppNote {
    let mut notices = Vec::new();
    let mut body = match v["textContentHtml"].as_str().filter(|h| !h.trim().is_empty()) {
        Some(html) => rich_html_to_markdown(html, &converter()),
        None => v["textContent"].as_str().unwrap_or_default().to_owned(),
    };
    if let Some(items) = v["listContent"].as_array() {
        if !body.is_empty() && !body.ends_with('\n') {
            body.push('\n');
        }
        for item in items {
            // An item without text (a damaged file) is no task.
            let Some(text) = item["text"].as_str().map(|t| t.replace('\n', " ")) else {
                continue;
            };
            let done = item["isChecked"].as_bool().unwrap_or(false);
            body.push_str(&format!("- [{}] {}\n", if done { "x" } else { " " }, text.trim()));
        }
    }
    let mut links = Vec::new();
    for (file, mime) in attachments(v) {
        match resolve(&file, files) {
            Some(found) => links.push(file_link(&found, mime.as_deref())),
            None => notices.push(format!("attachment {file} is not in the export: not kept")),
        }
    }
    if !links.is_empty() {
        body = format!("{}\n\n{}\n", body.trim_end(), links.join("\n"));
    }
    let weblinks: Vec<String> = v["annotations"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|a| {
                    let url = a["url"].as_str()?;
                    let title = a["title"].as_str().filter(|t| !t.trim().is_empty()).unwrap_or(url);
                    Some(format!("- [{}](<{url}>)", title.replace(['[', ']'], "")))
                })
                .collect()
        })
        .unwrap_or_default();
    if !weblinks.is_empty() {
        body = format!("{}\n\nLinks:\n\n{}\n", body.trim_end(), weblinks.join("\n"));
    }
    let mut meta = FrontMatter {
        created: from_micros(&v["createdTimestampUsec"]),
        updated: from_micros(&v["userEditedTimestampUsec"]),
        ..FrontMatter::default()
    };
    if let Some(labels) = v["labels"].as_array() {
        meta.tags = labels
            .iter()
            .filter_map(|l| l["name"].as_str())
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect();
    }
    if let Some(color) = v["color"].as_str().filter(|c| !c.is_empty() && *c != "DEFAULT") {
        meta.labels.push(("color".into(), color.to_lowercase()));
    }
    for (key, label) in [("isPinned", "pinned"), ("isArchived", "archived")] {
        if v[key].as_bool() == Some(true) {
            meta.json_labels.push((label.into(), "true".into()));
        }
    }
    meta.trashed = v["isTrashed"].as_bool() == Some(true);
    if let Some(people) = v["sharees"].as_array().filter(|p| !p.is_empty()) {
        notices.push(format!(
            "shared in Keep with {} {}: who it was shared with is not kept",
            people.len(),
            if people.len() == 1 { "person" } else { "people" }
        ));
    }
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let title = v["title"]
        .as_str()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .or_else(|| title_from_text(&body))
        .unwrap_or_else(|| stem.to_owned());
    AppNote {
        rel: name.to_owned(),
        shown: None,
        folder: String::new(),
        title,
        body,
        meta,
        notices,
    }
}
