//! One Markdown file of a folder as a note: its checks, front matter, times, title and aliases.

use std::path::Path;

use quire_core::hex;
use sha2::{Digest, Sha256};

use crate::ImportFormat;
use crate::frontmatter::{self, FrontMatter};
use crate::source::{Parsed, links_of, read_plain_file};

/// Reads one `.md` file of a folder: checked (size, UTF-8, no NUL), hashed, its front matter parsed, its times
/// (the file's where the front matter gives none), title, aliases and (in a vault) inline `#tags`, and its links.
/// An Obsidian base (`.base`) as a note of views: its title the file's name, its body the views as queries and
/// the base itself (see `base.rs`); what did not convert is in its notices.
pub(crate) fn read_base(path: &Path, rel: &str) -> Result<Parsed, crate::base::NotABase> {
    use crate::base::NotABase;
    let bytes = read_plain_file(path).map_err(|e| NotABase(format!("cannot read it: {e}")))?;
    if bytes.len() > quire_core::MAX_BODY_BYTES / 2 {
        return Err(NotABase(format!("{} bytes: too large for a base", bytes.len())));
    }
    let hash = hex(&Sha256::digest(&bytes));
    let text = String::from_utf8(bytes).map_err(|e| NotABase(format!("not UTF-8 text ({e})")))?;
    let converted = crate::base::convert(&text)?;
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let stem = name.get(..name.len().saturating_sub(5)).unwrap_or(name).trim();
    let mut meta = FrontMatter::default();
    // `![[Books.base]]` in a note finds the note the base became.
    meta.aliases.push(name.to_owned());
    if let Ok(file) = std::fs::symlink_metadata(path) {
        meta.updated = file
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok())
            .map(quire_core::Timestamp);
        meta.created = meta.updated;
    }
    Ok(Parsed {
        rel: rel.to_owned(),
        shown: rel.to_owned(),
        folder: rel.rsplit_once('/').map(|(f, _)| f.to_owned()).unwrap_or_default(),
        title: if stem.is_empty() {
            "Untitled base".into()
        } else {
            stem.to_owned()
        },
        links: std::sync::OnceLock::from(links_of(&converted.body)),
        body: converted.body,
        meta,
        hash,
        notices: converted.notices,
    })
}

pub(crate) fn read_note(path: &Path, rel: &str, format: ImportFormat) -> Result<Parsed, String> {
    let bytes = crate::source::read_note_bytes(path).map_err(String::from)?;
    if bytes.len() > quire_core::MAX_BODY_BYTES {
        return Err(format!(
            "{} bytes: more than a note may hold ({} bytes)",
            bytes.len(),
            quire_core::MAX_BODY_BYTES
        ));
    }
    let hash = hex(&Sha256::digest(&bytes));
    let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text ({e}): convert it first"))?;
    if text.contains('\0') {
        return Err("it contains NUL bytes: not a text file".into());
    }
    let converted;
    let mut from_page = FrontMatter::default();
    let (yaml, body) = if format == ImportFormat::Html || format == ImportFormat::Notion {
        converted = if crate::apps::notion_html::is_notion_page(&text) {
            crate::apps::notion_html::convert(&text, &mut from_page)
        } else {
            crate::apps::html::convert(&text)
        };
        (None, converted.1.as_str())
    } else {
        converted = (None, String::new());
        frontmatter::split(&text)
    };
    let mut meta = match yaml {
        Some(yaml) => frontmatter::parse(yaml)?,
        None => from_page,
    };
    meta.title = meta.title.or(converted.0);
    // A page's scripts are programs, not text: left out, and said (found in use: dropped without a word).
    if (format == ImportFormat::Html || format == ImportFormat::Notion) && text.to_ascii_lowercase().contains("<script")
    {
        meta.notices
            .push("its scripts were left out (an import keeps a page's text, not its programs)".to_owned());
    }
    // Times the front matter does not give are the file's.
    if let Ok(file) = std::fs::symlink_metadata(path) {
        let time = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_millis()).ok())
                .map(quire_core::Timestamp)
        };
        let modified = time(file.modified());
        if meta.updated.is_none() {
            meta.updated = modified;
        }
        if meta.created.is_none() {
            meta.created = time(file.created()).or(modified);
        }
    }
    let stem = rel.rsplit('/').next().unwrap_or(rel);
    let stem = stem.rsplit_once('.').map_or(stem, |(s, _)| s);
    // The front matter's title as it is; a file name's with its whitespace tidied.
    let title = match &meta.title {
        Some(title) => title.trim().to_owned(),
        None => stem.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    let folder = rel.rsplit_once('/').map(|(f, _)| f.to_owned()).unwrap_or_default();
    // A title that is not the file's name: `[[file name]]` links (Obsidian finds notes by file name) still find
    // the note, through an alias. Not when the name is the title made safe for a file system (an export's).
    let safe = crate::names::safe_stem(&title);
    let exported = stem == safe
        || stem.strip_prefix(safe.as_str()).is_some_and(|rest| {
            rest.strip_prefix(" (")
                .and_then(|r| r.strip_suffix(')'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        });
    // Aliases are kept as one label separated by commas: a name with a comma cannot be one.
    if meta.title.is_some()
        && !exported
        && !stem.contains(',')
        && !stem.trim().is_empty()
        && !stem.trim().eq_ignore_ascii_case(&title)
        && !meta.aliases.iter().any(|a| a.trim().eq_ignore_ascii_case(stem.trim()))
    {
        meta.aliases.push(stem.trim().to_owned());
    }
    if format == ImportFormat::Obsidian {
        for tag in quire_core::markdown::hashtags(body) {
            if !meta.tags.iter().any(|t| t.eq_ignore_ascii_case(&tag)) {
                meta.tags.push(tag);
            }
        }
    }
    let notices = std::mem::take(&mut meta.notices);
    Ok(Parsed {
        rel: rel.to_owned(),
        shown: rel.to_owned(),
        folder,
        title: if title.is_empty() { "Untitled".into() } else { title },
        body: body.to_owned(),
        meta,
        hash,
        // Found here, on the core that read the file.
        links: std::sync::OnceLock::from(links_of(body)),
        notices,
    })
}
