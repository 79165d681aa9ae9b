//! A Standard Notes backup, decrypted (`{"items": [...]}`, in a `.txt` or `.json` file, or a folder holding it).
//!
//! Notes with their title, text and times; tags (nested by their parent tags, `parent/child`) as tags; pinned and
//! archived as labels; a note in the trash goes to quire's trash; notes a note links to are listed at its end as
//! links. An encrypted backup is refused with what to do instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{AppNote, from_micros, json};
use crate::frontmatter::{FrontMatter, time_of};
use crate::source::Source;
use crate::{Error, Outcome};

/// Whether an item of a backup's `items` looks like one.
fn is_item(item: &Value) -> bool {
    item.get("content_type").is_some() && item.get("uuid").is_some()
}

/// The backup file in what was given: the file, or the first `.txt`/`.json` file of a folder that is a backup.
fn backup_file(source: &Path) -> Option<PathBuf> {
    if source.is_file() {
        return Some(source.to_path_buf());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(source)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt" || x == "json"))
        .collect();
    files.sort();
    files.into_iter().find(|p| is_backup(p))
}

/// Whether the file is a backup: its first item looks like one.
fn is_backup(file: &Path) -> bool {
    json::first_element_is(file, &["items"], false, is_item)
}

/// Whether `source` is a Standard Notes backup (what auto-detection asks).
pub(crate) fn is_standard_notes(source: &Path) -> bool {
    backup_file(source).is_some_and(|p| is_backup(&p))
}

/// A flag Standard Notes keeps in the item's content or in its app data.
fn flag(content: &Value, name: &str) -> bool {
    content[name].as_bool() == Some(true) || content["appData"]["org.standardnotes.sn"][name].as_bool() == Some(true)
}

pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let unreadable = |reason: String| Error::Source {
        path: source.display().to_string(),
        reason,
    };
    let file = backup_file(source).ok_or_else(|| unreadable("no Standard Notes backup in it".into()))?;
    let file = file.canonicalize().map_err(|e| unreadable(e.to_string()))?;
    // First what every note needs of the others (tags, titles), then the notes one at a time.
    let mut tags: HashMap<String, Value> = HashMap::new();
    let mut titles: HashMap<String, String> = HashMap::new();
    let mut encrypted = false;
    let found = json::each_element(&file, &["items"], &mut |_, _, item| {
        if item["deleted"].as_bool() == Some(true) {
            return json::Next::More;
        }
        encrypted |= item["content"].is_string();
        let Some(uuid) = item["uuid"].as_str().map(str::to_owned) else {
            return json::Next::More;
        };
        if item["content_type"] == "Tag" {
            tags.insert(uuid, item);
        } else if item["content_type"] == "Note" {
            let title = item["content"]["title"].as_str().unwrap_or("Untitled").to_owned();
            titles.insert(uuid, title);
        }
        json::Next::More
    })
    .map_err(|e| unreadable(e.0))?;
    // An empty backup (`"items": []`) is one, with nothing in it; a file without `items` is not.
    if found == 0 {
        return Err(unreadable("not a Standard Notes backup: it has no items".into()));
    }
    if encrypted {
        return Err(unreadable(
            "an encrypted backup: in Standard Notes, export a decrypted backup (Settings, Backups, \"Decrypted\") and \
             import that"
                .into(),
        ));
    }
    // Tags: their names with their parents', and the notes each names.
    let path_of = |uuid: &str| -> String {
        let mut parts = Vec::new();
        let mut at = Some(uuid.to_owned());
        let mut seen = std::collections::HashSet::new();
        while let Some(id) = at.take() {
            // A cycle of parents (a damaged backup) stops where it comes round.
            if !seen.insert(id.clone()) {
                break;
            }
            let Some(tag) = tags.get(id.as_str()) else { break };
            parts.push(tag["content"]["title"].as_str().unwrap_or_default().trim().to_owned());
            at = refs(tag)
                .find(|r| r["reference_type"] == "TagToParentTag")
                .and_then(|r| r["uuid"].as_str().map(str::to_owned));
        }
        parts.reverse();
        parts.retain(|p| !p.is_empty());
        parts.join("/")
    };
    let mut note_tags: HashMap<String, Vec<String>> = HashMap::new();
    for (uuid, tag) in &tags {
        let name = path_of(uuid);
        for r in refs(tag).filter(|r| r["content_type"] == "Note") {
            if let Some(note) = r["uuid"].as_str() {
                note_tags.entry(note.to_owned()).or_default().push(name.clone());
            }
        }
    }
    let root = file.parent().map(Path::to_path_buf).unwrap_or_default();
    // Notes are known by their uuids wherever the backup is: a newer backup updates what an older one brought.
    let mut out = Source::new("standard-notes".to_owned(), root);
    out.flag_labels = &["pinned", "archived"];
    let mut notes = 0;
    let mut read_one = |v: Value| {
        let i = notes;
        notes += 1;
        let Some(uuid) = v["uuid"].as_str() else {
            out.fail(
                format!("items[{i}]"),
                Outcome::Failed,
                "a note without a uuid: not imported",
            );
            return;
        };
        let rel = format!("{uuid}.txt");
        out.targets.insert(uuid.to_owned(), rel.clone());
        let v = &v;
        let content = &v["content"];
        let mut body = content["text"].as_str().unwrap_or_default().to_owned();
        let linked: Vec<String> = refs(v)
            .filter(|r| r["content_type"] == "Note")
            .filter_map(|r| r["uuid"].as_str())
            .filter_map(|id| Some(format!("- [{}](:/{id})", titles.get(id)?.replace(['[', ']'], ""))))
            .collect();
        if !linked.is_empty() {
            body = format!("{}\n\nLinked notes:\n\n{}\n", body.trim_end(), linked.join("\n"));
        }
        let mut meta = FrontMatter {
            created: from_micros(&v["created_at_timestamp"]).or_else(|| v["created_at"].as_str().and_then(time_of)),
            updated: content["appData"]["org.standardnotes.sn"]["client_updated_at"]
                .as_str()
                .and_then(time_of)
                .or_else(|| from_micros(&v["updated_at_timestamp"]))
                .or_else(|| v["updated_at"].as_str().and_then(time_of)),
            trashed: flag(content, "trashed"),
            tags: note_tags.remove(uuid).unwrap_or_default(),
            ..FrontMatter::default()
        };
        meta.tags.sort();
        meta.tags.dedup();
        for name in ["pinned", "archived"] {
            if flag(content, name) {
                meta.json_labels.push((name.into(), "true".into()));
            }
        }
        let title = content["title"]
            .as_str()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .or_else(|| super::title_from_text(&body))
            .unwrap_or_else(|| "Untitled".into());
        // Its tags are items of their own: a tag added at the source changes the note too.
        let mut said = serde_json::to_vec(v).unwrap_or_default();
        said.extend_from_slice(meta.tags.join("\n").as_bytes());
        let note = AppNote {
            shown: Some(format!("{title} ({uuid})")),
            rel,
            folder: String::new(),
            title,
            body,
            meta,
            notices: Vec::new(),
        };
        out.notes.push(note.parsed(&said));
    };
    json::each_element(&file, &["items"], &mut |_, _, item| {
        if item["deleted"].as_bool() != Some(true) && item["content_type"] == "Note" {
            read_one(item);
        }
        json::Next::More
    })
    .map_err(|e| unreadable(e.0))?;
    Ok(out)
}

/// An item's references.
fn refs(item: &Value) -> impl Iterator<Item = &Value> {
    item["content"]["references"].as_array().into_iter().flatten()
}
