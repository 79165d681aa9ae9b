//! The links of a note to other notes and files of its source, in its body and in its labels' values: which files
//! it links to (its attachments), its text with relative links turned into `quire://` links once every note and file
//! has an id, and the links that name nothing, to report.
//!
//! A path resolves as Obsidian resolves it: relative to the note's folder, then from the top of the source, then
//! by its name anywhere (Obsidian's "shortest path when possible" writes a file's name alone when no other file
//! has it), a path without an extension as the note `.md` of that name. Among several files of one name, the one
//! in the attachment folder, then the one beside the note, then the one with the shortest path (fewest folders,
//! then fewest characters, then the first by name): Obsidian does not document its choice, and a vault it wrote
//! with shortest paths names a file alone only while no other file has its name.

use std::collections::HashMap;
use std::path::{Component, Path};

use crate::frontmatter::{json_to_yaml, map_strings, yaml_to_json};
use crate::source::{Link, Parsed, Source, links_of};

/// The source files (not notes) a note links to or embeds, in its body or its labels, as relative paths.
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
    let in_labels: Vec<Link> = label_texts(parsed).iter().flat_map(|text| links_of(text)).collect();
    for link in parsed.links().iter().chain(&in_labels) {
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

/// Every text of a note's labels that may hold a link: text values, and the strings inside structured ones.
fn label_texts(parsed: &Parsed) -> Vec<String> {
    let mut out: Vec<String> = parsed.meta.labels.iter().map(|(_, value)| value.clone()).collect();
    for (_, json) in &parsed.meta.json_labels {
        if let Some(value) = json_to_yaml(json) {
            map_strings(&value, &mut |text| {
                out.push(text.to_owned());
                text.to_owned()
            });
        }
    }
    out
}

/// A relative path link, resolved (see the module's documentation); `None` when it names nothing of the source or
/// leads out of it.
pub(crate) fn resolve_path(source: &Source, folder: &str, target: &str) -> Option<String> {
    let target = target.split('#').next().unwrap_or(target);
    if let Some(id) = target.strip_prefix(":/") {
        return source.targets.get(id).cloned();
    }
    let decoded = percent_decode(target);
    let with_md = format!("{decoded}.md");
    // `[x](Other note)`: the note of that name, as Obsidian reads a path without an extension; and `[x](Release
    // 1.0)`, whose last dot is not an extension's, the same way (the name as written is tried first).
    let is_markdown = decoded.to_ascii_lowercase().ends_with(".md");
    let forms: &[&str] = if is_markdown {
        &[decoded.as_str()]
    } else {
        &[decoded.as_str(), with_md.as_str()]
    };
    for form in forms {
        if let Some(found) = resolve_path_as_written(source, folder, form) {
            return Some(found);
        }
    }
    for form in forms {
        if form.split('/').any(|part| part == "..") {
            continue;
        }
        let path = form.trim_start_matches("./").trim_start_matches('/').to_lowercase();
        let name = path.rsplit('/').next().unwrap_or(&path);
        if let Some(found) = source
            .by_name
            .get(name)
            .and_then(|candidates| pick(source, folder, candidates, &path))
        {
            return Some(found);
        }
        if let Some(found) = pick(source, folder, &source.notes_by_name(name), &path) {
            return Some(found);
        }
    }
    None
}

/// A path relative to the note's folder (or from the top for `/...`), then from the top of the source.
fn resolve_path_as_written(source: &Source, folder: &str, decoded: &str) -> Option<String> {
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
    if source.files.contains_key(&rel) || source.is_note(&rel) {
        return Some(rel);
    }
    // Obsidian writes links relative to the vault's top as well.
    let from_top = decoded.trim_start_matches("./").to_owned();
    (source.files.contains_key(&from_top) || source.is_note(&from_top)).then_some(from_top)
}

/// Among the files (or notes) named like the end of `path` (lower case), those whose path ends with it, the one
/// Obsidian's shortest-path links mean (see the module's documentation).
fn pick(source: &Source, folder: &str, candidates: &[String], path: &str) -> Option<String> {
    let suffix = format!("/{path}");
    let matching: Vec<&String> = candidates
        .iter()
        .filter(|c| {
            let c = c.to_lowercase();
            c == path || c.ends_with(&suffix)
        })
        .collect();
    let folder_of = |c: &str| c.rsplit_once('/').map(|(d, _)| d.to_owned()).unwrap_or_default();
    if let Some(attachments) = &source.attachment_folder
        && let Some(c) = matching.iter().find(|c| folder_of(c) == *attachments)
    {
        return Some((*c).clone());
    }
    if let Some(c) = matching.iter().find(|c| folder_of(c) == folder) {
        return Some((*c).clone());
    }
    matching
        .into_iter()
        .min_by_key(|c| (c.matches('/').count(), c.len(), (*c).clone()))
        .cloned()
}

/// The file a `[[wikilink]]` or `![[embed]]` names, by Obsidian's rules: a path from the top, or the file of that
/// name (see [`pick`]).
fn resolve_wiki_file(source: &Source, folder: &str, target: &str) -> Option<String> {
    let target = target.trim();
    if target.to_lowercase().ends_with(".md") || !target.contains('.') {
        return None;
    }
    if source.files.contains_key(target) {
        return Some(target.to_owned());
    }
    let path = target.trim_start_matches('/').to_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    pick(source, folder, source.by_name.get(name)?, &path)
}

/// The file of the source a relative link names (relative to the note's folder, or from the top) that failed to
/// import, as the report names it.
fn failed_file<'a>(source: &'a Source, folder: &str, decoded: &str) -> Option<&'a str> {
    let beside = if folder.is_empty() {
        decoded.to_owned()
    } else {
        format!("{folder}/{decoded}")
    };
    source
        .failures
        .iter()
        .filter(|f| f.outcome == crate::Outcome::Failed)
        .map(|f| f.path.as_str())
        .find(|path| {
            [beside.as_str(), decoded]
                .iter()
                .any(|name| path == name || path.strip_suffix(".md") == Some(name))
        })
}

/// `%20` and the like decoded; the text as it is when the result would not be UTF-8.
pub(crate) fn percent_decode(text: &str) -> String {
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

/// A note that could not be read back from the import's temporary file, as an error.
pub(crate) fn read_back(shown: &str, e: std::io::Error) -> quire_core::Error {
    quire_core::Error::Io {
        context: format!("cannot read {shown} back from the import's temporary file"),
        source: e,
    }
}

/// What the notes and files of a source are in the workspace: relative path → note id, and → attachment id; and
/// which note (its relative path) each file is an attachment of.
pub(crate) struct Ids<'a> {
    pub(crate) notes: &'a HashMap<String, String>,
    pub(crate) attachments: &'a HashMap<String, String>,
    pub(crate) owners: &'a HashMap<String, String>,
}

/// The body of note `i` (`parsed`) with its relative links to notes and files of the source turned into
/// `quire://` links.
pub(crate) fn rewrite_links(
    source: &Source,
    i: usize,
    parsed: &Parsed,
    ids: &Ids<'_>,
    warnings: &mut Vec<String>,
) -> Result<String, quire_core::Error> {
    let body = source.notes.body(i).map_err(|e| read_back(&parsed.shown, e))?;
    Ok(rewrite_text(source, parsed, &body, parsed.links(), ids, warnings))
}

/// A note's labels with the links in their values rewritten as in its body: (name, value, whether it is JSON).
pub(crate) fn rewrite_labels(
    source: &Source,
    parsed: &Parsed,
    ids: &Ids<'_>,
    warnings: &mut Vec<String>,
) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for (name, value) in &parsed.meta.labels {
        let links = links_of(value);
        let value = rewrite_text(source, parsed, value, &links, ids, warnings);
        out.push((name.clone(), value, false));
    }
    for (name, json) in &parsed.meta.json_labels {
        let value = match json_to_yaml(json) {
            Some(yaml) if json.contains('[') => {
                let rewritten = map_strings(&yaml, &mut |text| {
                    rewrite_text(source, parsed, text, &links_of(text), ids, warnings)
                });
                if rewritten == yaml {
                    json.clone()
                } else {
                    yaml_to_json(&rewritten).unwrap_or_else(|| json.clone())
                }
            }
            _ => json.clone(),
        };
        out.push((name.clone(), value, true));
    }
    // A list, as the vault has it: an alias may hold a comma (`A, the first`), which text joined by commas would
    // split into two.
    if !parsed.meta.aliases.is_empty() {
        let list = serde_json::Value::from(parsed.meta.aliases.clone()).to_string();
        out.push(("aliases".to_owned(), list, true));
    }
    out
}

/// `text` with its relative links (found in it as `links`) to notes and files of the source turned into
/// `quire://` links; a wikilink or embed of a file whose name another attachment of the import has, where that
/// name would find the other one, becomes a Markdown link or image of its attachment, which no name can mistake.
fn rewrite_text(
    source: &Source,
    parsed: &Parsed,
    text: &str,
    links: &[Link],
    ids: &Ids<'_>,
    warnings: &mut Vec<String>,
) -> String {
    let folder = parsed.folder.as_str();
    let mut out = text.to_owned();
    let mut changes: Vec<(usize, usize, String)> = Vec::new();
    for link in links {
        match link {
            Link::Path { target, start, end } => {
                let anchor = target.split_once('#').map(|(_, a)| format!("#{a}")).unwrap_or_default();
                match resolve_path(source, folder, target) {
                    Some(rel) => {
                        if let Some(id) = ids.notes.get(&rel) {
                            changes.push((*start, *end, format!("quire://note/{id}{anchor}")));
                        } else if let Some(id) = ids.attachments.get(&rel) {
                            // An anchor after a file (`photo.jpg#interface`) is kept, for the export to give back.
                            changes.push((*start, *end, format!("quire://attachment/{id}{anchor}")));
                        }
                    }
                    None if target.starts_with(":/") => warnings.push(format!(
                        "the link to {target} names an item that is not in the source: left as written"
                    )),
                    None => {
                        let decoded = percent_decode(target.split('#').next().unwrap_or(target));
                        if decoded.split('/').any(|part| part == "..") {
                            warnings.push(format!("the link to {target} leads out of the source: left as written"));
                        } else if let Some(failed) = failed_file(source, folder, &decoded) {
                            warnings.push(format!(
                                "the link to {target} names {failed}, which was not imported (its failure is in this \
                                 report): left as written, until an import of the source brings it"
                            ));
                        } else if !decoded.is_empty() {
                            warnings.push(format!(
                                "the link to {target} names no note or file of the source: left as written"
                            ));
                        }
                    }
                }
            }
            Link::Wiki {
                target,
                embed,
                label,
                start,
                end,
            } => {
                let Some(file) = resolve_wiki_file(source, folder, target) else {
                    continue;
                };
                // The workspace finds a file by name among the note's own attachments first, then anywhere: the
                // name misleads when another attachment of that name is the note's, or is anywhere while this one
                // is another note's.
                let name = file.rsplit('/').next().unwrap_or(&file).to_lowercase();
                let own = |f: &String| ids.owners.get(f) == Some(&parsed.rel);
                let misleads = source.by_name.get(&name).is_some_and(|files| {
                    files.iter().any(|other| {
                        *other != file && ids.attachments.contains_key(other) && (own(other) || !own(&file))
                    })
                });
                if let (true, Some(id)) = (misleads, ids.attachments.get(&file)) {
                    let text = label.clone().unwrap_or_else(|| target.clone());
                    let bang = if *embed { "!" } else { "" };
                    changes.push((*start, *end, format!("{bang}[{text}](quire://attachment/{id})")));
                }
            }
        }
    }
    changes.sort_by_key(|(start, ..)| std::cmp::Reverse(*start));
    for (start, end, replacement) in changes {
        if out.is_char_boundary(start) && out.is_char_boundary(end) && end <= out.len() {
            out.replace_range(start..end, &replacement);
        }
    }
    out
}

/// The wikilinks of a note (body and labels) that name nothing, as reports: no note of the source is called so
/// (title, alias or file name), no file has that name or path, and no note of the workspace is called so
/// (`exists`); or several notes are, and nothing tells them apart.
pub(crate) fn unresolved_wikilinks(
    source: &Source,
    parsed: &Parsed,
    exists: &mut dyn FnMut(&str) -> bool,
    warnings: &mut Vec<String>,
) {
    let in_labels: Vec<Link> = label_texts(parsed).iter().flat_map(|text| links_of(text)).collect();
    let mut reported: Vec<String> = Vec::new();
    for link in parsed.links().iter().chain(&in_labels) {
        let Link::Wiki { target, embed, .. } = link else {
            continue;
        };
        let target = target.trim();
        if target.is_empty()
            || reported.iter().any(|r| r.eq_ignore_ascii_case(target))
            || resolve_wiki_file(source, &parsed.folder, target).is_some()
        {
            continue;
        }
        let shown = format!("{}[[{target}]]", if *embed { "!" } else { "" });
        match notes_named(source, parsed, target) {
            Named::One => continue,
            Named::Several(n) => warnings.push(format!(
                "the link {shown} may mean any of {n} notes of the source: it stays unresolved until one is renamed"
            )),
            Named::None if exists(target) => continue,
            Named::None => warnings.push(format!("the link {shown} names no note or file: left as written")),
        }
        reported.push(target.to_owned());
    }
}

/// How many notes of the source a wikilink names.
enum Named {
    None,
    One,
    Several(usize),
}

/// The notes of the source `[[target]]` names, narrowed as the workspace narrows them (a folder path before the
/// name; a note titled so before one with an alias; beside the linking note; the shortest path).
fn notes_named(source: &Source, parsed: &Parsed, target: &str) -> Named {
    let last = target.rsplit('/').next().unwrap_or(target).trim();
    let key = last.strip_suffix(".md").unwrap_or(last).to_lowercase();
    let found = source.notes_keyed(&key);
    let wanted: Vec<String> = target
        .split('/')
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let wanted = &wanted[..wanted.len().saturating_sub(1)];
    let folder_parts = |i: usize| -> Vec<String> {
        source.notes[i]
            .folder
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let mut notes: Vec<usize> = found
        .iter()
        .copied()
        .filter(|i| folder_parts(*i).ends_with(wanted))
        .collect();
    if notes
        .iter()
        .any(|i| source.notes[*i].title.trim().to_lowercase() == key)
    {
        notes.retain(|i| source.notes[*i].title.trim().to_lowercase() == key);
    }
    if notes.len() > 1 {
        let beside: Vec<usize> = notes
            .iter()
            .copied()
            .filter(|i| source.notes[*i].folder == parsed.folder)
            .collect();
        if !beside.is_empty() {
            notes = beside;
        } else {
            let shallowest = notes.iter().map(|i| folder_parts(*i).len()).min().unwrap_or(0);
            notes.retain(|i| folder_parts(*i).len() == shallowest);
        }
    }
    match notes.len() {
        0 => Named::None,
        1 => Named::One,
        n => Named::Several(n),
    }
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
