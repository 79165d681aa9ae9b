//! Importing a Joplin export: a RAW folder (one file per item, `resources/` beside them) or a JEX archive (the same
//! files in a tar).
//!
//! Each item file is Joplin's serialisation: for a note the title, a blank line, the body, a blank line, then
//! `key: value` lines (`id`, `parent_id`, `type_`, times, to-do fields). Folders become notebooks (their tree kept),
//! tags and note–tag items become tags, resources attachments of the notes that link them, and `:/ID` links point
//! at the new notes and attachments. A JEX archive is unpacked into a temporary folder first, keeping only entries
//! whose names are those of Joplin items (`ID.md`, `resources/ID.ext`): nothing is written anywhere else, whatever
//! the archive's paths say.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use quire_core::Timestamp;
use sha2::{Digest, Sha256};

use crate::Error;
use crate::Outcome;
use crate::frontmatter::FrontMatter;
use crate::source::{Parsed, Source, Unread, read_plain_file};
use quire_core::hex;

/// Joplin's item types (`type_`).
const NOTE: u32 = 1;
const FOLDER: u32 = 2;
const RESOURCE: u32 = 4;
const TAG: u32 = 5;
const NOTE_TAG: u32 = 6;

/// The most bytes an item file may have (a note's body and its properties).
const MAX_ITEM: u64 = quire_core::MAX_BODY_BYTES as u64 + 64 * 1024;

/// Notebooks nested deeper than this are put at the top.
const MAX_NESTING: usize = 64;

/// Whether `dir` looks like a Joplin RAW export: a top-level `ID.md` file that ends with a `type_:` line.
pub(crate) fn is_raw_export(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().take(200).any(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        name.strip_suffix(".md").is_some_and(is_item_id)
            && std::fs::symlink_metadata(entry.path()).is_ok_and(|m| m.is_file() && m.len() <= MAX_ITEM)
            && read_plain_file(&entry.path()).is_ok_and(|bytes| {
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .rev()
                    .any(|l| l.starts_with("type_: "))
            })
    })
}

/// A Joplin item id: 32 lower-case hex digits.
fn is_item_id(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Reads a Joplin export (a JEX file or a RAW folder).
pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let path = source.canonicalize().map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    if path.is_dir() {
        let mut out = Source::new(path.display().to_string(), path.clone());
        read_items(&mut out);
        if out.notes.is_empty() && out.folders.is_empty() && out.failures.is_empty() {
            return Err(Error::Source {
                path: source.display().to_string(),
                reason: "no Joplin items in it: is it a RAW export folder?".into(),
            });
        }
        return Ok(out);
    }
    let mut out = Source::unpacked(path.display().to_string(), "quire-jex-")?;
    let root = out.root.clone();
    unpack(&path, &root, &mut out)?;
    read_items(&mut out);
    Ok(out)
}

/// Unpacks the Joplin items of the JEX archive `jex` into `into`, reporting every entry left out.
fn unpack(jex: &Path, into: &Path, out: &mut Source) -> Result<(), Error> {
    let file = std::fs::File::open(jex).map_err(|e| Error::Source {
        path: jex.display().to_string(),
        reason: e.to_string(),
    })?;
    std::fs::create_dir(into.join("resources")).map_err(|e| Error::Io {
        context: "cannot make a folder to unpack the archive in".into(),
        source: e,
    })?;
    let mut archive = tar::Archive::new(std::io::BufReader::new(file));
    let entries = archive.entries().map_err(|e| Error::Source {
        path: jex.display().to_string(),
        reason: format!("not a JEX archive (a tar file): {e}"),
    })?;
    let mut read_any = false;
    for entry in entries {
        let mut entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                out.fail(
                    jex.display().to_string(),
                    Outcome::Failed,
                    format!("the archive is damaged or cut short, nothing after this point was read: {e}"),
                );
                break;
            }
        };
        read_any = true;
        let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        let name = raw_name.trim_start_matches("./");
        let (folder, file_name) = name.rsplit_once('/').unwrap_or(("", name));
        let (stem, extension) = file_name.split_once('.').unwrap_or((file_name, ""));
        let plain_extension = extension.len() <= 20 && extension.bytes().all(|b| b.is_ascii_alphanumeric());
        let allowed = match folder {
            "" => is_item_id(stem) && extension == "md",
            "resources" => is_item_id(stem) && plain_extension,
            _ => false,
        };
        if !allowed {
            let outside = name.starts_with('/') || name.split(['/', '\\']).any(|part| part == "..");
            out.fail(
                raw_name.clone(),
                if outside { Outcome::Failed } else { Outcome::Skipped },
                if outside {
                    "a path that leads out of the archive: not unpacked"
                } else {
                    "not a Joplin item: not unpacked"
                },
            );
            continue;
        }
        if !kind.is_file() {
            out.fail(raw_name, Outcome::Failed, "not a plain file (a link?): not unpacked");
            continue;
        }
        let size = entry.size();
        let limit = if folder.is_empty() {
            MAX_ITEM
        } else {
            quire_core::MAX_ATTACHMENT_BYTES as u64
        };
        if size > limit {
            out.fail(
                raw_name,
                Outcome::Failed,
                format!("{size} bytes: more than quire takes ({limit} bytes); not unpacked"),
            );
            continue;
        }
        // Only the checked name is joined, so the file lands in the folder whatever the entry's path said.
        let target = if folder.is_empty() {
            into.join(file_name)
        } else {
            into.join("resources").join(file_name)
        };
        let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&target) {
            Ok(file) => file,
            // Nothing was created, so nothing is removed: the file there is an earlier entry's, which stays.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                out.fail(
                    raw_name,
                    Outcome::Failed,
                    "a second entry of this name in the archive: the first one was unpacked, this one was not",
                );
                continue;
            }
            Err(e) => {
                out.fail(raw_name, Outcome::Failed, format!("cannot unpack it: {e}"));
                continue;
            }
        };
        // From here on the file is this entry's own: a failure removes it.
        let written = std::io::copy(&mut (&mut entry).take(limit), &mut file);
        drop(file);
        match written {
            Ok(copied) if copied == size => {}
            // The archive ended inside this entry: what came of it is not kept.
            Ok(copied) => {
                let _ = std::fs::remove_file(&target);
                out.fail(
                    raw_name,
                    Outcome::Failed,
                    format!("cut short: {copied} of its {size} bytes are in the archive; not unpacked"),
                );
            }
            Err(e) => {
                let _ = std::fs::remove_file(&target);
                out.fail(raw_name, Outcome::Failed, format!("cannot unpack it: {e}"));
            }
        }
    }
    if !read_any {
        return Err(Error::Source {
            path: jex.display().to_string(),
            reason: "no Joplin items in it: is it a JEX export?".into(),
        });
    }
    Ok(())
}

/// One item file, split into its properties and (for notes) its title and body.
struct Item {
    file: String,
    props: HashMap<String, String>,
    title: String,
    body: String,
    hash: String,
}

impl Item {
    fn prop(&self, key: &str) -> &str {
        self.props.get(key).map_or("", String::as_str)
    }

    fn kind(&self) -> u32 {
        self.prop("type_").parse().unwrap_or(0)
    }

    fn id(&self) -> &str {
        self.prop("id")
    }

    fn time(&self, key: &str) -> Option<Timestamp> {
        let user = self.prop(&format!("user_{key}"));
        let text = if user.is_empty() { self.prop(key) } else { user };
        Timestamp::parse_rfc3339(text.trim())
    }
}

/// Whether Joplin had the item in its trash (`deleted_time`, Joplin 3).
fn is_deleted(item: &Item) -> bool {
    !matches!(item.prop("deleted_time"), "" | "0")
}

/// Links to resources written as HTML in a Markdown note (Joplin's editor writes a resized picture as
/// `<img src=":/ID" width="300">`) as Markdown links, so they are attached and rewritten like the others.
fn html_resource_links(body: &str) -> String {
    if !body.contains("=\":/") {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let Some(end) = tail.find('>') else {
            break;
        };
        let tag = &tail[..=end];
        let lower = tag.to_ascii_lowercase();
        let attribute = |name: &str| {
            let at = lower.find(&format!(" {name}=\""))? + name.len() + 3;
            let len = tag[at..].find('"')?;
            Some(&tag[at..at + len])
        };
        let id = attribute("src")
            .and_then(|v| v.strip_prefix(":/"))
            .filter(|id| is_item_id(id));
        if lower.starts_with("<img")
            && let Some(id) = id
        {
            out.push_str(&format!("![{}](:/{id})", attribute("alt").unwrap_or("")));
            rest = &tail[end + 1..];
            continue;
        }
        let href = attribute("href")
            .and_then(|v| v.strip_prefix(":/"))
            .filter(|id| is_item_id(id));
        if lower.starts_with("<a ")
            && let Some(id) = href
            && let Some(close) = tail[end + 1..].to_ascii_lowercase().find("</a>")
        {
            let text = &tail[end + 1..end + 1 + close];
            if !text.contains('<') {
                out.push_str(&format!("[{text}](:/{id})"));
                rest = &tail[end + 1 + close + 4..];
                continue;
            }
        }
        out.push('<');
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}

/// Joplin's serialisation, read from the end: `key: value` lines up to the first blank line, then the title (first
/// line), a blank line, and the body.
fn parse_item(file: &str, text: &str) -> Result<Item, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut props = HashMap::new();
    let mut end = lines.len();
    while end > 0 {
        let line = lines[end - 1].trim_end_matches('\r').trim();
        if line.is_empty() {
            if props.is_empty() && end == lines.len() {
                // A trailing newline.
                end -= 1;
                continue;
            }
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!("not a Joplin item: the line '{line}' is not a property"));
        };
        let value = value.trim().replace("\\n", "\n").replace("\\r", "\r");
        props.insert(key.trim().to_owned(), value);
        end -= 1;
    }
    if !props.contains_key("type_") || !props.contains_key("id") {
        return Err("not a Joplin item: it has no `id` or `type_` property".into());
    }
    // What is above the properties: the title, a blank line, the body (the blank line before the properties is
    // not part of it).
    let above = &lines[..end.saturating_sub(1)];
    let title = above
        .first()
        .map(|l| l.trim_end_matches('\r').to_owned())
        .unwrap_or_default();
    let body = if above.len() > 2 {
        above[2..].join("\n")
    } else {
        String::new()
    };
    Ok(Item {
        file: file.to_owned(),
        props,
        title,
        body,
        hash: hex(&Sha256::digest(text.as_bytes())),
    })
}

/// Reads the item file `name` of `root`.
fn read_item(root: &Path, name: &str) -> Result<Item, Unread> {
    let path = root.join(name);
    let meta = std::fs::symlink_metadata(&path).map_err(|e| Unread(e.to_string()))?;
    if meta.len() > MAX_ITEM {
        return Err(Unread(format!("{} bytes: more than a note may hold", meta.len())));
    }
    let bytes = read_plain_file(&path).map_err(|e| Unread(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| Unread(format!("not UTF-8 text ({e})")))?;
    parse_item(name, &text).map_err(Unread)
}

/// Reads every item file of `out.root` into `out`.
fn read_items(out: &mut Source) {
    let root = out.root.clone();
    let mut items = Vec::new();
    let mut names: Vec<String> = match std::fs::read_dir(&root) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .collect(),
        Err(e) => {
            out.fail(
                root.display().to_string(),
                Outcome::Failed,
                format!("cannot read it: {e}"),
            );
            return;
        }
    };
    names.sort();
    for name in names {
        if !name.strip_suffix(".md").is_some_and(is_item_id) {
            continue;
        }
        match read_item(&root, &name) {
            // A note's body is read again when its turn comes: the items held are bodiless.
            Ok(item) if item.kind() == NOTE => items.push(Item {
                body: String::new(),
                ..item
            }),
            Ok(item) => items.push(item),
            Err(reason) => out.fail(name, Outcome::Failed, format!("cannot read it: {}", reason.0)),
        }
    }
    // Resource files: `resources/ID.ext`, found by id.
    let mut resource_files: HashMap<String, (String, u64)> = HashMap::new();
    let resources = root.join("resources");
    // Not a folder reached through a symbolic link: that could lead anywhere.
    let real_folder = std::fs::symlink_metadata(&resources).is_ok_and(|m| m.is_dir());
    if real_folder && let Ok(entries) = std::fs::read_dir(&resources) {
        for entry in entries.flatten() {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            let stem = name.split('.').next().unwrap_or(&name);
            if meta.is_file() && is_item_id(stem) {
                resource_files.insert(stem.to_owned(), (format!("resources/{name}"), meta.len()));
            }
        }
    }
    let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id(), i)).collect();

    // Notebooks: each folder's key is the path of ids from the top, so namesakes stay apart.
    let mut folder_keys: BTreeMap<String, String> = BTreeMap::new();
    for item in items.iter().filter(|i| i.kind() == FOLDER) {
        let mut chain = vec![item.id().to_owned()];
        let mut parent = item.prop("parent_id");
        while !parent.is_empty() && chain.len() < MAX_NESTING {
            let Some(up) = by_id.get(parent).filter(|p| p.kind() == FOLDER) else {
                break;
            };
            if chain.iter().any(|c| c == up.id()) {
                break;
            }
            chain.push(up.id().to_owned());
            parent = up.prop("parent_id");
        }
        chain.reverse();
        folder_keys.insert(item.id().to_owned(), chain.join("/"));
    }
    for item in items.iter().filter(|i| i.kind() == FOLDER) {
        let key = folder_keys[item.id()].clone();
        if is_deleted(item) {
            continue;
        }
        let icon = serde_json::from_str::<serde_json::Value>(item.prop("icon"))
            .ok()
            .and_then(|v| v["emoji"].as_str().map(str::to_owned))
            .filter(|e| !e.is_empty());
        let title = item.title.trim();
        out.notebooks.insert(
            key.clone(),
            FrontMatter {
                title: Some(if title.is_empty() {
                    "Untitled".into()
                } else {
                    title.to_owned()
                }),
                icon,
                ..FrontMatter::default()
            },
        );
        // Parents before children, so an empty notebook's place is known.
        out.folders.push(key);
    }
    out.folders.sort_by_key(|k| k.matches('/').count());

    let tags: HashMap<&str, &str> = items
        .iter()
        .filter(|i| i.kind() == TAG)
        .map(|i| (i.id(), i.title.trim()))
        .collect();
    let mut note_tags: HashMap<&str, Vec<String>> = HashMap::new();
    for link in items.iter().filter(|i| i.kind() == NOTE_TAG) {
        if let Some(tag) = tags.get(link.prop("tag_id")).filter(|t| !t.is_empty()) {
            note_tags
                .entry(link.prop("note_id"))
                .or_default()
                .push((*tag).to_owned());
        }
    }
    // Resources: the files the notes link to by `:/ID`, with their titles.
    let mut resource_titles: HashMap<String, String> = HashMap::new();
    let mut resource_hashes: HashMap<&str, String> = HashMap::new();
    for item in items.iter().filter(|i| i.kind() == RESOURCE) {
        let Some((rel, size)) = resource_files.get(item.id()) else {
            continue;
        };
        if item.prop("encryption_blob_encrypted") == "1" || item.prop("encryption_applied") == "1" {
            out.fail(
                rel.clone(),
                Outcome::Failed,
                "encrypted by Joplin: not attached (export again with encryption turned off)",
            );
            continue;
        }
        resource_hashes.insert(item.id(), format!("{}:{size}", item.hash));
        out.files.insert(rel.clone(), *size);
        out.targets.insert(item.id().to_owned(), rel.clone());
        let title = [item.title.trim(), item.prop("filename")]
            .into_iter()
            .find(|t| !t.is_empty())
            .map_or_else(|| rel.rsplit('/').next().unwrap_or(rel).to_owned(), str::to_owned);
        // A title without the file's extension gets it, so the attachment's type is known.
        let extension = item.prop("file_extension");
        let title = if !extension.is_empty()
            && !title
                .to_lowercase()
                .ends_with(&format!(".{}", extension.to_lowercase()))
        {
            format!("{title}.{extension}")
        } else {
            title
        };
        resource_titles.insert(rel.rsplit('/').next().unwrap_or(rel).to_owned(), title);
    }
    for item in items.iter().filter(|i| i.kind() == NOTE) {
        out.targets.insert(item.id().to_owned(), item.file.clone());
    }

    let mut converter = None;
    for item in &items {
        // Notebooks, tags and resources are read above; settings, revisions, master keys, alarms are not notes.
        if item.kind() != NOTE {
            continue;
        }
        if is_deleted(item) {
            out.fail(item.file.clone(), Outcome::Skipped, "in Joplin's trash: not imported");
            continue;
        }
        if item.prop("encryption_applied") == "1" {
            out.fail(
                item.file.clone(),
                Outcome::Failed,
                "encrypted by Joplin: export it again with encryption turned off",
            );
            continue;
        }
        // Its body, read again (the same file, unless it changed meanwhile).
        let item = match read_item(&root, &item.file) {
            Ok(again) if again.hash == item.hash => again,
            Ok(_) => {
                let reason = "it changed while the export was read: import again";
                out.fail(item.file.clone(), Outcome::Failed, reason);
                continue;
            }
            Err(reason) => {
                out.fail(
                    item.file.clone(),
                    Outcome::Failed,
                    format!("cannot read it: {}", reason.0),
                );
                continue;
            }
        };
        let item = &item;
        let mut meta = FrontMatter {
            created: item.time("created_time"),
            updated: item.time("updated_time"),
            todo: item.prop("is_todo") == "1",
            tags: note_tags.remove(item.id()).unwrap_or_default(),
            ..FrontMatter::default()
        };
        if meta.todo {
            let done: i64 = item.prop("todo_completed").parse().unwrap_or(0);
            meta.completed = Some((done > 0).then_some(Timestamp(done)));
            // quire has no due dates: a label keeps it.
            let due: i64 = item.prop("todo_due").parse().unwrap_or(0);
            if due > 0 {
                meta.labels.push(("due".to_owned(), Timestamp(due).to_rfc3339()));
            }
        }
        for key in ["source_url", "author"] {
            let value = item.prop(key).trim();
            if !value.is_empty() {
                meta.labels.push((key.to_owned(), value.to_owned()));
            }
        }
        // The notes' resource links name files `resources/ID.ext`; their titles are the resources'.
        meta.attachment_titles = resource_titles
            .iter()
            .filter(|(file, _)| {
                item.body
                    .contains(&format!(":/{}", file.split('.').next().unwrap_or(file)))
            })
            .map(|(file, title)| (file.clone(), title.clone()))
            .collect();
        let html = item.prop("markup_language") == "2";
        // In a Markdown note, HTML links to resources become Markdown links; an HTML note is converted whole.
        let mut body = if html {
            item.body.clone()
        } else {
            html_resource_links(&item.body)
        };
        if html {
            // An HTML note (a web clip): its text as Markdown.
            match crate::enex::html_to_markdown(&body, converter.get_or_insert_with(crate::enex::converter)) {
                Ok(markdown) => body = markdown,
                Err(reason) => {
                    out.fail(item.file.clone(), Outcome::Failed, reason.to_string());
                    continue;
                }
            }
        }
        let folder = folder_keys.get(item.prop("parent_id")).cloned().unwrap_or_default();
        let title = item.title.trim();
        let title = if title.is_empty() {
            "Untitled".to_owned()
        } else {
            title.to_owned()
        };
        // What the note is at the source: its file, and its tags and resources, which live in items of their own.
        let mut hasher = Sha256::new();
        hasher.update(item.hash.as_bytes());
        let mut tags = meta.tags.clone();
        tags.sort();
        for tag in &tags {
            hasher.update([0]);
            hasher.update(tag.as_bytes());
        }
        let mut linked: Vec<&String> = resource_hashes
            .iter()
            .filter(|(id, _)| item.body.contains(&format!(":/{id}")))
            .map(|(_, hash)| hash)
            .collect();
        linked.sort();
        for hash in linked {
            hasher.update([1]);
            hasher.update(hash.as_bytes());
        }
        out.notes.push(Parsed {
            rel: item.file.clone(),
            shown: format!("{title} ({})", item.file),
            folder,
            title,
            body,
            meta,
            hash: hex(&hasher.finalize()),
            links: Default::default(),
            notices: Vec::new(),
        });
    }
}
