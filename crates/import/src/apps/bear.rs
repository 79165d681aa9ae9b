//! Bear: a backup (`.bear2bk`, a zip, unpacked by `unzip.rs`) or a folder of TextBundles (`Title.textbundle/` with
//! `text.markdown` or `text.md`, `info.json` and `assets/`), or one bundle (a `.textpack` is a zipped one).
//!
//! A bundle is a note: its title from its first `# ` line (else the bundle's name), its text the rest; its tags are
//! those of its text, `#tag`, `#nested/tag` and Bear's `#multi word tag#`; its assets are attachments; Bear's
//! dates, pin and archive from `info.json` (`net.shinyfrog.bear`); a note in Bear's trash goes to quire's.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::AppNote;
use crate::frontmatter::{FrontMatter, time_of};
use crate::source::{Source, read_plain_file};
use crate::{Error, Outcome};

const BUNDLE: &str = ".textbundle";

/// A TextBundle: a `.textbundle` folder, or a folder holding a bundle's files at its top (a `.textpack` unzipped).
fn is_bundle(path: &Path) -> bool {
    let named = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().to_lowercase().ends_with(BUNDLE));
    let files =
        path.join("info.json").is_file() && (path.join("text.markdown").is_file() || path.join("text.md").is_file());
    super::real_dir(path) && (named || files)
}

/// The bundles of what was given: itself, or the bundles in it.
fn bundles(source: &Path) -> Vec<PathBuf> {
    if is_bundle(source) {
        return vec![source.to_path_buf()];
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(source)
        .map(|entries| entries.flatten().map(|e| e.path()).filter(|p| is_bundle(p)).collect())
        .unwrap_or_default();
    found.sort();
    found
}

/// Whether `source` is Bear's (or holds TextBundles).
pub(crate) fn is_bear(source: &Path) -> bool {
    !bundles(source).is_empty()
}

pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let given = super::folder(source)?;
    // One bundle given: it is the top of the source (nothing beside it is read).
    let list = if is_bundle(&given) {
        vec![given.clone()]
    } else {
        bundles(&given)
    };
    let root = given.clone();
    if list.is_empty() {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "no TextBundles (.textbundle folders) in it: is it Bear's backup?".into(),
        });
    }
    // Notes are known by Bear's ids wherever the backup is: a newer backup updates what an older one brought. Bundles
    // another app wrote have no ids: then by the folder they come from (a `.textpack`'s bundle is always "text").
    let ids = list.iter().all(|b| bear_id(b).is_some());
    let key = if ids {
        "bear".to_owned()
    } else {
        given.display().to_string()
    };
    let mut out = Source::new(key, root.clone());
    out.flag_labels = &["pinned", "archived"];
    for bundle in list {
        // Its path below the top (empty for the bundle given), which its assets are found by.
        let inside = bundle
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let name = match bundle.file_name() {
            Some(n) if !inside.is_empty() || n.to_string_lossy().to_lowercase().ends_with(BUNDLE) => {
                n.to_string_lossy().into_owned()
            }
            // An unzipped `.textpack`: its folder's name is a temporary one.
            _ => "text".to_owned(),
        };
        for entry in walkdir::WalkDir::new(bundle.join("assets"))
            .follow_root_links(false)
            .follow_links(false)
            .sort_by_file_name()
        {
            let Ok(entry) = entry else { continue };
            if entry.file_type().is_file()
                && let Ok(rel) = entry.path().strip_prefix(&root)
            {
                let rel = rel.to_string_lossy().replace('\\', "/");
                out.files.insert(rel, entry.metadata().map(|m| m.len()).unwrap_or(0));
            }
        }
        match note(&bundle, &name) {
            Ok((mut note, said)) => {
                // Assets are linked from the bundle (`assets/x.png`): from the top of the source.
                let at = if inside.is_empty() {
                    String::new()
                } else {
                    format!("{inside}/")
                };
                note.body = super::from_top(&note.body, "](assets/", &format!("{at}assets/"), &out.files);
                out.notes.push(note.parsed(&said));
            }
            Err(reason) => out.fail(name, Outcome::Failed, reason),
        }
    }
    Ok(out)
}

fn note(bundle: &Path, name: &str) -> Result<(AppNote, Vec<u8>), super::Unread> {
    let text = ["text.markdown", "text.md", "text.txt"]
        .iter()
        .map(|f| bundle.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| super::Unread("no text.markdown or text.md in it".into()))?;
    let bytes = crate::source::read_note_bytes(&text)?;
    if bytes.len() > quire_core::MAX_BODY_BYTES {
        return Err(super::Unread(format!(
            "{} bytes: more than a note may hold",
            bytes.len()
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| super::Unread(format!("not UTF-8 text ({e})")))?;
    let info: Value = read_plain_file(&bundle.join("info.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let bear = &info["net.shinyfrog.bear"];
    let stem = if name.to_lowercase().ends_with(BUNDLE) {
        name.get(..name.len() - BUNDLE.len()).unwrap_or(name).trim()
    } else {
        name.trim()
    };
    // Bear 2 keeps a note's front matter (YAML) above its title.
    let raw = text.clone();
    let (yaml, text) = crate::frontmatter::split(&raw);
    let front = match yaml.map(crate::frontmatter::parse) {
        Some(Ok(front)) => Some(front),
        Some(Err(e)) => return Err(super::Unread(format!("its front matter is not YAML it can read: {e}"))),
        None => None,
    };
    let text = text.trim_start_matches('\n').to_owned();
    let (title, body) = match text.strip_prefix("# ") {
        Some(rest) => {
            let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
            (line.trim().to_owned(), after.trim_start_matches('\n').to_owned())
        }
        None => (stem.to_owned(), text.clone()),
    };
    let mut meta = FrontMatter {
        created: bear["creationDate"].as_str().and_then(time_of),
        updated: bear["modificationDate"].as_str().and_then(time_of),
        trashed: flag(bear, "trashed"),
        tags: tags(&body),
        ..FrontMatter::default()
    };
    if let Some(front) = front {
        meta.tags.extend(front.tags);
        meta.aliases = front.aliases;
        meta.labels = front.labels;
        meta.json_labels = front.json_labels;
        meta.created = front.created.or(meta.created);
        meta.updated = front.updated.or(meta.updated);
    }
    for label in ["pinned", "archived"] {
        if flag(bear, label) {
            meta.json_labels.push((label.into(), "true".into()));
        }
    }
    let mut notices = Vec::new();
    if flag(bear, "locked") {
        notices.push("locked in Bear: imported unlocked (protect it in quire to keep it from AI tools)".to_owned());
    }
    let mut said = raw.into_bytes();
    said.extend_from_slice(info.to_string().as_bytes());
    let id = bear["uniqueIdentifier"].as_str().filter(|id| !id.is_empty());
    let note = AppNote {
        rel: id.map_or_else(|| name.to_owned(), str::to_owned),
        shown: id.map(|_| name.to_owned()),
        folder: String::new(),
        title: if title.is_empty() { stem.to_owned() } else { title },
        body,
        meta,
        notices,
    };
    Ok((note, said))
}

fn flag(bear: &Value, name: &str) -> bool {
    bear[name].as_i64() == Some(1) || bear[name].as_bool() == Some(true)
}

/// Bear's tags in a text: `#tag` and `#nested/tag` as Markdown hashtags are read, and `#multi word tag#`.
fn tags(body: &str) -> Vec<String> {
    let mut found = quire_core::markdown::hashtags(body);
    for line in body.lines() {
        let mut rest = line;
        while let Some(at) = rest.find('#') {
            let before_ok = rest[..at].chars().last().is_none_or(char::is_whitespace);
            let after = &rest[at + 1..];
            if before_ok
                && !after.starts_with([' ', '#'])
                && let Some(end) = after.find('#')
            {
                let tag = &after[..end];
                let closes = after[end + 1..].chars().next().is_none_or(char::is_whitespace);
                if closes && tag.contains(' ') && !tag.ends_with(' ') {
                    // `#multi word tag#` is one tag; its first word alone is not.
                    let first = tag.split(' ').next().unwrap_or_default();
                    found.retain(|t| t != first);
                    found.push(tag.to_owned());
                    rest = &after[end + 1..];
                    continue;
                }
            }
            rest = after;
        }
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|t| seen.insert(t.to_lowercase()));
    found
}

/// Bear's id of a bundle (`uniqueIdentifier` in its `info.json`).
fn bear_id(bundle: &Path) -> Option<String> {
    let info: Value = serde_json::from_slice(&read_plain_file(&bundle.join("info.json")).ok()?).ok()?;
    info["net.shinyfrog.bear"]["uniqueIdentifier"]
        .as_str()
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}
