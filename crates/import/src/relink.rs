//! The links of a note to other notes and files of its source: which files it links to (its attachments), and its
//! body with relative links turned into `quire://` links once every note and file has an id.

use std::collections::HashMap;
use std::path::{Component, Path};

use crate::source::{Link, Parsed, Source};

/// The source files (not notes) a note links to or embeds, as relative paths inside the source.
pub(crate) fn linked_files(source: &Source, parsed: &Parsed) -> Vec<String> {
    let mut out = Vec::new();
    // Those the front matter lists (an export lists every attachment, linked from the text or not).
    for name in &parsed.meta.attachments {
        if name.contains(['/', '\\']) || name == ".." {
            continue;
        }
        let file = if parsed.folder.is_empty() {
            name.clone()
        } else {
            format!("{}/{name}", parsed.folder)
        };
        if source.files.contains_key(&file) && !out.contains(&file) {
            out.push(file);
        }
    }
    for link in parsed.links() {
        let found = match link {
            Link::Path { target, .. } => resolve_path(source, &parsed.folder, target),
            Link::Wiki { target, .. } => resolve_wiki_file(source, &parsed.folder, target),
        };
        if let Some(file) = found
            && source.files.contains_key(&file)
            && !out.contains(&file)
        {
            out.push(file);
        }
    }
    out
}

/// A relative path link, resolved against the note's folder (or the source's top for `/...`); `None` when it leads
/// out of the source.
fn resolve_path(source: &Source, folder: &str, target: &str) -> Option<String> {
    let target = target.split('#').next().unwrap_or(target);
    if let Some(id) = target.strip_prefix(":/") {
        return source.targets.get(id).cloned();
    }
    let decoded = percent_decode(target);
    let mut parts: Vec<String> = if decoded.starts_with('/') {
        Vec::new()
    } else {
        folder.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect()
    };
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    let rel = parts.join("/");
    if source.files.contains_key(&rel) || source.note_rels.contains(&rel) {
        return Some(rel);
    }
    // Obsidian writes links relative to the vault's top as well.
    let from_top = decoded.trim_start_matches("./").to_owned();
    (source.files.contains_key(&from_top) || source.note_rels.contains(&from_top)).then_some(from_top)
}

/// The file a `[[wikilink]]` or `![[embed]]` names, by Obsidian's rules: a path from the top, or the file of that
/// name (in the attachment folder first, then beside the note, then the shortest path).
fn resolve_wiki_file(source: &Source, folder: &str, target: &str) -> Option<String> {
    let target = target.trim();
    if target.to_lowercase().ends_with(".md") || !target.contains('.') {
        return None;
    }
    if source.files.contains_key(target) {
        return Some(target.to_owned());
    }
    let name = target.rsplit('/').next().unwrap_or(target).to_lowercase();
    let candidates = source.by_name.get(&name)?;
    let in_folder = |f: &str, c: &str| c.rsplit_once('/').map(|(d, _)| d).unwrap_or("") == f;
    if let Some(attachments) = &source.attachment_folder
        && let Some(c) = candidates.iter().find(|c| in_folder(attachments, c))
    {
        return Some(c.clone());
    }
    if let Some(c) = candidates.iter().find(|c| in_folder(folder, c)) {
        return Some(c.clone());
    }
    candidates.iter().min_by_key(|c| (c.len(), (*c).clone())).cloned()
}

/// `%20` and the like decoded; the text as it is when the result would not be UTF-8.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 3 <= bytes.len()
            && bytes[i + 1].is_ascii_hexdigit()
            && bytes[i + 2].is_ascii_hexdigit()
            && let Ok(value) = u8::from_str_radix(&text[i + 1..i + 3], 16)
        {
            out.push(value);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// The body with its relative links to notes and files of the source turned into `quire://` links.
pub(crate) fn rewrite_links(
    source: &Source,
    parsed: &Parsed,
    ids: &HashMap<String, String>,
    attachments: &HashMap<String, String>,
    warnings: &mut Vec<String>,
) -> String {
    let mut body = parsed.body.clone();
    let mut paths: Vec<(usize, usize, String)> = Vec::new();
    for link in parsed.links() {
        let &Link::Path { ref target, start, end } = link else {
            continue;
        };
        let target = target.as_str();
        let anchor = target.split_once('#').map(|(_, a)| format!("#{a}")).unwrap_or_default();
        match resolve_path(source, &parsed.folder, target) {
            Some(rel) => {
                if let Some(id) = ids.get(&rel) {
                    paths.push((start, end, format!("quire://note/{id}{anchor}")));
                } else if let Some(id) = attachments.get(&rel) {
                    paths.push((start, end, format!("quire://attachment/{id}")));
                }
            }
            None if target.starts_with(":/") => {
                warnings.push(format!(
                    "the link to {target} names an item that is not in the source: left as written"
                ));
            }
            None => {
                let decoded = percent_decode(target.split('#').next().unwrap_or(target));
                if decoded.contains("..") {
                    warnings.push(format!("the link to {target} leads out of the source: left as written"));
                }
            }
        }
    }
    paths.sort_by_key(|(start, ..)| std::cmp::Reverse(*start));
    for (start, end, replacement) in paths {
        if body.is_char_boundary(start) && body.is_char_boundary(end) && end <= body.len() {
            body.replace_range(start..end, &replacement);
        }
    }
    body
}

/// The note a relation in front matter names: `[[Title]]` (a path from the top, a title, or a file name, the
/// shortest path first), or a relative path to the note's file.
pub(crate) fn resolve_relation(
    read: &Source,
    parsed: &Parsed,
    target: &str,
    ids: &HashMap<String, String>,
) -> Option<String> {
    let target = target.trim();
    let Some(inner) = target.strip_prefix("[[").and_then(|t| t.strip_suffix("]]")) else {
        return resolve_path(read, &parsed.folder, target).and_then(|rel| ids.get(&rel).cloned());
    };
    let name = inner.split(['|', '#']).next().unwrap_or(inner).trim();
    if let Some(id) = ids.get(&format!("{name}.md")) {
        return Some(id.clone());
    }
    let lower = name.to_lowercase();
    let mut titled = read.notes.iter().filter(|n| n.title.to_lowercase() == lower);
    if let (Some(one), None) = (titled.next(), titled.next()) {
        return ids.get(&one.rel).cloned();
    }
    let file = format!("{lower}.md");
    read.notes
        .iter()
        .filter(|n| n.rel.rsplit('/').next().is_some_and(|f| f.to_lowercase() == file))
        .min_by_key(|n| (n.rel.len(), n.rel.clone()))
        .and_then(|n| ids.get(&n.rel).cloned())
}
