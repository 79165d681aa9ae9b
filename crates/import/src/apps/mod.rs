//! Importers of other apps' exports (issue 51): each reads its export into a [`Source`] of notes, notebooks and
//! files, and the common writer does the rest (one change set, re-import updates, links, attachments, the report).
//!
//! - [`keep`]: a Google Keep Takeout folder (a JSON file per note, attachments beside them).
//! - [`simplenote`]: Simplenote's `notes.json` export.
//! - [`standard_notes`]: a Standard Notes backup (decrypted JSON).
//! - [`html`]: a folder of HTML files.
//! - [`notion`]: a Notion export (Markdown & CSV).
//! - [`bear`]: Bear's backup, or TextBundles.
//! - [`logseq`]: a Logseq graph; [`roam`]: a Roam Research JSON export (their outlines share `outline`).

pub(crate) mod bear;
pub(crate) mod html;
mod json;
pub(crate) mod keep;
pub(crate) mod logseq;
pub(crate) mod notion;
pub(crate) mod notion_html;
mod outline;
pub(crate) mod roam;
pub(crate) mod simplenote;
pub(crate) mod standard_notes;

use std::path::{Path, PathBuf};

use quire_core::{Timestamp, hex};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::frontmatter::FrontMatter;
use crate::source::{Parsed, read_plain_file};

/// The most bytes a JSON file read whole may have (a Keep note's; the one-file exports are read a note at a time).
pub(crate) const MAX_JSON: u64 = 512 * 1024 * 1024;

/// A note of an app's export, with the parts every format has; `said` is everything the source says about it (its
/// JSON, say), hashed to see later whether it changed there.
pub(crate) struct AppNote {
    pub(crate) rel: String,
    /// How the report names it, when not by `rel` (a note known by an id: its title and id).
    pub(crate) shown: Option<String>,
    pub(crate) folder: String,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) meta: FrontMatter,
    pub(crate) notices: Vec<String>,
}

impl AppNote {
    pub(crate) fn parsed(self, said: &[u8]) -> Parsed {
        let mut hasher = Sha256::new();
        hasher.update(said);
        Parsed {
            shown: self.shown.unwrap_or_else(|| self.rel.clone()),
            rel: self.rel,
            folder: self.folder,
            title: self.title,
            body: self.body,
            meta: self.meta,
            hash: hex(&hasher.finalize()),
            links: Default::default(),
            notices: self.notices,
        }
    }
}

/// Whether `path` is a folder itself, not a symbolic link to one: nothing outside the source is read, so a link
/// inside it (`assets -> /proc/self`) is never followed.
pub(crate) fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The source folder, canonical, or why it cannot be read.
pub(crate) fn folder(source: &Path) -> Result<PathBuf, Error> {
    let root = source.canonicalize().map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    if !root.is_dir() {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "not a folder".into(),
        });
    }
    Ok(root)
}

pub(crate) use crate::source::Unread;

/// Reads a JSON file of the source (a plain file, not too large).
pub(crate) fn read_json(path: &Path) -> Result<(Vec<u8>, serde_json::Value), Unread> {
    let size = std::fs::symlink_metadata(path)
        .map_err(|e| Unread(format!("cannot read it: {e}")))?
        .len();
    if size > MAX_JSON {
        return Err(Unread(format!("{size} bytes: too large to read")));
    }
    let bytes = read_plain_file(path).map_err(|e| Unread(format!("cannot read it: {e}")))?;
    let value = serde_json::from_slice(&bytes).map_err(|e| Unread(format!("not JSON: {e}")))?;
    Ok((bytes, value))
}

/// A time in microseconds since the epoch (Keep's, Standard Notes'), as a timestamp.
pub(crate) fn from_micros(value: &serde_json::Value) -> Option<Timestamp> {
    let micros = value.as_i64().or_else(|| value.as_str().and_then(|s| s.parse().ok()))?;
    (micros > 0).then_some(Timestamp(micros / 1000))
}

/// A title from the first line of a text, for a note whose export has none: its first 80 characters, Markdown's
/// heading marks left out.
pub(crate) fn title_from_text(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches('#').trim();
    let mut title: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        title.push('…');
    }
    (!title.is_empty()).then_some(title)
}

/// A link to a file of the source in Markdown, its path percent-encoded where Markdown needs it: an image for
/// an image, otherwise the file's name.
pub(crate) fn file_link(rel: &str, mime: Option<&str>) -> String {
    let encoded: String = rel
        .chars()
        .map(|c| match c {
            ' ' => "%20".to_owned(),
            '(' => "%28".to_owned(),
            ')' => "%29".to_owned(),
            '<' => "%3C".to_owned(),
            '>' => "%3E".to_owned(),
            c => c.to_string(),
        })
        .collect();
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let image = mime.map_or_else(
        || {
            let lower = name.to_lowercase();
            [".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".heic"]
                .iter()
                .any(|e| lower.ends_with(e))
        },
        |m| m.starts_with("image/"),
    );
    let label = name.replace(['[', ']'], "");
    if image {
        format!("![{label}]({encoded})")
    } else {
        format!("[{label}]({encoded})")
    }
}

/// Links written relative to a folder that is not the note's (`](../assets/x.png)` in a Logseq page, `](assets/x.png)`
/// in a TextBundle) pointed from the top of the source (`](/assets/x.png)`), when the file is there: a link to a file
/// the export lacks stays as written, and the report names it so.
pub(crate) fn from_top(
    text: &str,
    written: &str,
    top: &str,
    files: &std::collections::BTreeMap<String, u64>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(written) {
        let path_at = at + written.len();
        let end = rest[path_at..]
            .find([')', ' ', '>'])
            .map_or(rest.len(), |e| path_at + e);
        let target = format!("{}{}", top.trim_start_matches('/'), &rest[path_at..end]);
        out.push_str(&rest[..at]);
        if files.contains_key(&crate::relink::percent_decode(&target)) {
            out.push_str(&format!("](/{}", top.trim_start_matches('/').replace(' ', "%20")));
        } else {
            out.push_str(written);
        }
        rest = &rest[path_at..];
    }
    out.push_str(rest);
    out
}
