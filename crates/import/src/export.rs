//! Exporting a workspace (or one notebook) as Markdown files: a folder per notebook, one `.md` file per note with
//! front matter, its attachments beside it, and `quire://` links turned into relative paths (`markdown`) or
//! `[[wikilinks]]` (`obsidian`, with `.obsidian/app.json` so Obsidian opens the folder as a vault). Names are safe
//! on every platform and stable: the same workspace exports to the same files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quire_core::links::LinkKind;
use quire_core::{Actor, Note, Page, ROOT_NOTEBOOK_ID, Reader};
use serde::Serialize;
use yaml_rust2::Yaml;

use crate::Error;
use crate::frontmatter::render;
use crate::names::Folder;

/// The shape of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportFormat {
    /// Plain Markdown: links between notes as relative paths.
    #[default]
    Markdown,
    /// An Obsidian vault: links between notes as `[[wikilinks]]`.
    Obsidian,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// The shape.
    pub format: ExportFormat,
    /// Only this notebook (id) and what is inside it; the whole workspace when `None`.
    pub notebook: Option<String>,
    /// Protected notes and notebooks too (left out by default).
    pub include_protected: bool,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportReport {
    /// The folder.
    pub dir: String,
    /// Notebooks written as folders.
    pub notebooks: u64,
    /// Notes written.
    pub notes: u64,
    /// Attachments written.
    pub attachments: u64,
    /// Protected notes left out: those protected themselves and those in a protected notebook (or one inside it).
    pub protected_left_out: u64,
    /// Files of an earlier export into the same folder that this one removed (notes deleted or renamed since).
    pub removed: u64,
}

struct Planned {
    note: Note,
    /// The note's file, relative to the export folder.
    path: String,
    /// Attachments whose file name is not their title: file name → title.
    renamed: Vec<(String, String)>,
    /// Every attachment's file name (beside the note).
    attached: Vec<String>,
}

/// The list of the files an export wrote, kept in its folder so that the next export there removes those it no
/// longer writes.
const MANIFEST: &str = ".quire-export.json";

/// Exports the workspace `ws` into `dir` (created when missing). Exporting again into the same folder replaces
/// the files of the earlier export and removes those of notes no longer there.
pub fn export(ws: &quire_core::Workspace, dir: &Path, options: &ExportOptions) -> Result<ExportReport, Error> {
    let plan = ws.read(&Actor::User, |r| plan_export(r, options))?;
    write_export(plan, dir)
}

/// What an export will write, read in one transaction: [`plan_export`] then [`write_export`] is [`export`] through a
/// read the caller opens (the app's unlocked one, when sealed notes are exported with `--include-protected`).
pub struct ExportPlan(Files);

/// Reads what an export of `options` writes, as the reader `r` sees the workspace.
pub fn plan_export(r: &Reader<'_>, options: &ExportOptions) -> Result<ExportPlan, quire_core::Error> {
    plan(r, options).map(ExportPlan)
}

/// Writes a planned export into `dir` (created when missing), as [`export`] does.
pub fn write_export(plan: ExportPlan, dir: &Path) -> Result<ExportReport, Error> {
    let files = plan.0;
    let mut report = files.report;
    report.dir = dir.display().to_string();
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        context: format!("cannot create {}", dir.display()),
        source,
    })?;
    for folder in &files.dirs {
        let target = safe_join(dir, folder)?;
        std::fs::create_dir_all(&target).map_err(|source| Error::Io {
            context: format!("cannot create {}", target.display()),
            source,
        })?;
    }
    for (path, bytes) in &files.files {
        let target = safe_join(dir, path)?;
        let merged;
        let bytes = if path == ".obsidian/app.json" {
            // A vault's own settings are kept: only where attachments go is set.
            merged = merge_app_json(&target, bytes);
            &merged
        } else {
            bytes
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                context: format!("cannot create {}", parent.display()),
                source,
            })?;
        }
        std::fs::write(&target, bytes).map_err(|source| Error::Io {
            context: format!("cannot write {}", target.display()),
            source,
        })?;
    }
    // An earlier export into this folder: its files that this one did not write (notes deleted or renamed since)
    // are removed, so the folder is the workspace as it is now; nothing else in the folder is touched.
    let manifest = dir.join(MANIFEST);
    let written: std::collections::BTreeSet<&str> = files.files.iter().map(|(path, _)| path.as_str()).collect();
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let earlier: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
        // Never the vault's own settings, which an export only adds to.
        for path in earlier
            .iter()
            .filter(|p| !written.contains(p.as_str()) && !p.starts_with(".obsidian/"))
        {
            if let Ok(target) = safe_join(dir, path)
                && std::fs::symlink_metadata(&target).is_ok_and(|m| m.is_file())
            {
                let _ = std::fs::remove_file(&target);
                report.removed += 1;
            }
        }
    }
    let list = serde_json::to_vec_pretty(&written).unwrap_or_default();
    std::fs::write(&manifest, list).map_err(|source| Error::Io {
        context: format!("cannot write {}", manifest.display()),
        source,
    })?;
    Ok(report)
}

/// Obsidian's `app.json` as it is in the folder already, with `attachmentFolderPath` set as the export needs; the
/// export's own when there is none (or it is not a JSON object).
fn merge_app_json(existing: &Path, ours: &[u8]) -> Vec<u8> {
    let read = |bytes: &[u8]| serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(bytes).ok();
    let (Some(mut theirs), Some(ours_map)) = (std::fs::read(existing).ok().and_then(|b| read(&b)), read(ours)) else {
        return ours.to_vec();
    };
    theirs.extend(ours_map);
    serde_json::to_vec_pretty(&theirs).unwrap_or_else(|_| ours.to_vec())
}

/// `dir` joined with a relative path the export made (never absolute, never `..`).
fn safe_join(dir: &Path, path: &str) -> Result<PathBuf, Error> {
    let mut out = dir.to_path_buf();
    for part in path.split('/') {
        let normal = matches!(
            Path::new(part).components().collect::<Vec<_>>().as_slice(),
            [std::path::Component::Normal(_)]
        );
        if !normal || part.contains([':', '\\']) {
            return Err(Error::Format(format!("refusing to write the unsafe path {path}")));
        }
        out.push(part);
        // Nothing is written through a symbolic link already in the folder (it could lead anywhere).
        if std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(Error::Format(format!(
                "{} is a symbolic link: refusing to write through it",
                out.display()
            )));
        }
    }
    Ok(out)
}

struct Files {
    /// Every notebook's folder, empty ones included.
    dirs: Vec<String>,
    files: Vec<(String, Vec<u8>)>,
    report: ExportReport,
}

fn plan(r: &Reader<'_>, options: &ExportOptions) -> Result<Files, quire_core::Error> {
    let top = options.notebook.clone().unwrap_or_else(|| ROOT_NOTEBOOK_ID.to_owned());
    let all = r.notebooks()?;
    let by_id: HashMap<&str, &quire_core::Notebook> = all.iter().map(|nb| (nb.id.as_str(), nb)).collect();
    let mut report = ExportReport::default();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    // Folders: each notebook below the top, in a stable order, named uniquely within its parent.
    let mut folders: HashMap<String, String> = HashMap::from([(top.clone(), String::new())]);
    let mut namers: HashMap<String, Folder> = HashMap::new();
    let mut order = r.notebook_subtree(&top)?;
    order.retain(|id| *id != top);
    let depth = |id: &str| r.notebook_path(id).map(|p| p.len()).unwrap_or(0);
    let mut keyed: Vec<(usize, String, i64, String)> = order
        .iter()
        .filter_map(|id| by_id.get(id.as_str()))
        .map(|nb| {
            (
                depth(&nb.id),
                nb.title.to_lowercase(),
                nb.created.as_millis(),
                nb.id.clone(),
            )
        })
        .collect();
    keyed.sort();
    // The notes of a protected notebook, and of the notebooks inside it, are left out with it: counted here.
    let counts = r.notebook_note_counts()?;
    for (_, _, _, id) in keyed {
        let Some(nb) = by_id.get(id.as_str()) else { continue };
        let Some(parent) = nb.parent_id.as_deref() else {
            continue;
        };
        // Parents come first: one without a folder was left out, and this one goes with it.
        let left_out = nb.is_protected && !options.include_protected;
        let parent_folder = match folders.get(parent) {
            Some(folder) if !left_out => folder.clone(),
            _ => {
                report.protected_left_out += counts.get(&nb.id).copied().unwrap_or(0);
                continue;
            }
        };
        let name = namers.entry(parent.to_owned()).or_default().claim(&nb.title, "");
        let folder = join(&parent_folder, &name);
        folders.insert(nb.id.clone(), folder.clone());
        dirs.push(folder.clone());
        report.notebooks += 1;
        // A notebook whose folder name is not its title (characters no file system takes, a clash) says its title.
        if nb.is_protected || nb.icon.is_some() || name != nb.title {
            let mut fields = vec![
                ("quire_notebook", Yaml::Boolean(true)),
                ("title", Yaml::String(nb.title.clone())),
            ];
            if nb.is_protected {
                fields.push(("protected", Yaml::Boolean(true)));
            }
            if let Some(icon) = &nb.icon {
                fields.push(("icon", Yaml::String(icon.clone())));
            }
            let name = namers.entry(nb.id.clone()).or_default().claim("_notebook", ".md");
            files.push((join(&folder, &name), render(&fields).into_bytes()));
        }
    }
    // Notes: per folder, by title, then creation, then id.
    let mut planned: Vec<Planned> = Vec::new();
    // Attachment id → its file, and whether the file's name is the attachment's title.
    let mut attachment_paths: HashMap<String, (String, bool)> = HashMap::new();
    let mut notebook_ids: Vec<(&String, &String)> = folders.iter().collect();
    notebook_ids.sort_by(|a, b| a.1.cmp(b.1));
    for (notebook, folder) in notebook_ids {
        let mut notes = Vec::new();
        let mut offset = 0;
        loop {
            let page = r.notes_in_notebook(notebook, Page { offset, limit: 100 })?;
            offset += page.items.len() as u64;
            notes.extend(page.items);
            if !page.has_more {
                break;
            }
        }
        notes.sort_by(|a, b| {
            (a.title.to_lowercase(), a.created, &a.id).cmp(&(b.title.to_lowercase(), b.created, &b.id))
        });
        let namer = namers.entry(notebook.clone()).or_default();
        // `_notebook.md` describes a folder: no note may take that name.
        namer.reserve("_notebook.md");
        for summary in notes {
            if summary.is_protected && !options.include_protected {
                report.protected_left_out += 1;
                continue;
            }
            let note = r.note(&summary.id)?;
            let name = namer.claim(&note.summary.title, ".md");
            let path = join(folder, &name);
            let mut renamed = Vec::new();
            let mut attached = Vec::new();
            for attachment in r.attachments_of(&note)? {
                // Only a plain extension is kept; an attachment called `x.md` must not come back as a note.
                let (stem, extension) = match attachment.title.rsplit_once('.') {
                    Some((stem, ext))
                        if !stem.is_empty()
                            && (1..=10).contains(&ext.len())
                            && ext.chars().all(|c| c.is_ascii_alphanumeric())
                            && !ext.eq_ignore_ascii_case("md") =>
                    {
                        (stem.to_owned(), format!(".{ext}"))
                    }
                    // `x.md` as `x.md.txt`: the title comes back through `attachment_titles`.
                    Some((_, ext)) if ext.eq_ignore_ascii_case("md") => (attachment.title.clone(), ".txt".to_owned()),
                    _ => (attachment.title.clone(), String::new()),
                };
                let file_name = namer.claim(&stem, &extension);
                if file_name != attachment.title {
                    renamed.push((file_name.clone(), attachment.title.clone()));
                }
                attached.push(file_name.clone());
                let file = join(folder, &file_name);
                files.push((file.clone(), r.attachment_data(&attachment.id)?));
                attachment_paths.insert(attachment.id.clone(), (file, file_name == attachment.title));
                report.attachments += 1;
            }
            planned.push(Planned {
                note,
                path,
                renamed,
                attached,
            });
        }
    }
    // Wikilink targets: the title when no other exported note shares it, else its path without `.md`.
    // A wikilink finds a note by title or alias: a title is only used when no other exported note has it as either.
    let mut title_count: HashMap<String, usize> = HashMap::new();
    for p in &planned {
        let mut keys = std::collections::BTreeSet::from([p.note.summary.title.trim().to_lowercase()]);
        for attribute in r.attributes(&p.note.summary.id)? {
            if attribute.kind == quire_core::AttributeKind::Label && attribute.name == "aliases" {
                keys.extend(attribute.value.split(',').map(|a| a.trim().to_lowercase()));
            }
        }
        keys.remove("");
        for key in keys {
            *title_count.entry(key).or_default() += 1;
        }
    }
    let paths: HashMap<&str, &Planned> = planned.iter().map(|p| (p.note.summary.id.as_str(), p)).collect();
    let wiki_target = |p: &Planned| {
        let title = &p.note.summary.title;
        // `[[X.md]]` is read as the note X, so a title ending in `.md` cannot be a wikilink's.
        (title_count.get(&title.trim().to_lowercase()) == Some(&1)
            && !title.contains(['#', '|', '[', ']', '/', '^'])
            && !title.to_lowercase().trim_end().ends_with(".md"))
        .then(|| title.clone())
    };
    // A relation's target: a wikilink (obsidian, where one names it) or the relative path to its file; a relation
    // to a note not exported is left out.
    let relation_link = |from: &Planned, id: &str| {
        let target = paths.get(id)?;
        Some(match options.format {
            ExportFormat::Obsidian => wiki_target(target)
                .map(|name| format!("[[{name}]]"))
                .unwrap_or_else(|| relative_link(&from.path, &target.path)),
            ExportFormat::Markdown => relative_link(&from.path, &target.path),
        })
    };
    for p in &planned {
        let links = Links {
            from: p,
            format: options.format,
            notes: &paths,
            attachments: &attachment_paths,
            wiki_target: &wiki_target,
        };
        let body = links.rewrite_body(r)?;
        let mut text = front_matter(r, &p.note, &p.renamed, &p.attached, &|id| relation_link(p, id), &links)?;
        text.push_str(&body);
        files.push((p.path.clone(), text.into_bytes()));
        report.notes += 1;
    }
    if options.format == ExportFormat::Obsidian {
        // Attachments are beside their notes: Obsidian's "same folder as the current file".
        files.push((
            ".obsidian/app.json".to_owned(),
            b"{\n  \"attachmentFolderPath\": \"./\"\n}\n".to_vec(),
        ));
    }
    Ok(Files { dirs, files, report })
}

fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// A path from the folder of `from` to `to` (both relative to the export folder), with spaces and the like
/// percent-encoded so every Markdown reader follows it.
fn relative_link(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map(|(_, d)| d.to_vec())
        .unwrap_or_default();
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), from_dir.len() - common).collect();
    parts.extend(to_parts[common..].iter().map(|p| encode(p)));
    parts.join("/")
}

fn encode(part: &str) -> String {
    let mut out = String::new();
    for byte in part.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// How one note's `quire://` links are written in an export: what they point at, and the format.
struct Links<'a> {
    from: &'a Planned,
    format: ExportFormat,
    notes: &'a HashMap<&'a str, &'a Planned>,
    attachments: &'a HashMap<String, (String, bool)>,
    wiki_target: &'a dyn Fn(&Planned) -> Option<String>,
}

/// A `quire://` link in a text: where it is, and what it points at.
struct LinkAt {
    byte: usize,
    len: usize,
    kind: LinkKind,
    heading: Option<String>,
    note_id: Option<String>,
    attachment_id: Option<String>,
}

impl Links<'_> {
    /// The body with its `quire://` links turned into what the format uses.
    fn rewrite_body(&self, r: &Reader<'_>) -> Result<String, quire_core::Error> {
        let links: Vec<LinkAt> = r
            .outgoing_links(&self.from.note.summary.id)?
            .into_iter()
            .filter(|link| link.label.is_none())
            .map(|link| LinkAt {
                byte: link.byte,
                len: link.len,
                kind: link.kind,
                heading: link.heading,
                note_id: link.note_id,
                attachment_id: link.attachment_id,
            })
            .collect();
        Ok(self.rewrite(&self.from.note.body, &links))
    }

    /// A label's text with its `quire://` links (`related: "[x](quire://note/ID)"`) written as in the body.
    fn rewrite_label(&self, text: &str) -> String {
        let links: Vec<LinkAt> = quire_core::links::extract(text)
            .into_iter()
            .map(|link| LinkAt {
                byte: link.byte,
                len: link.len,
                kind: link.kind,
                note_id: (link.kind == LinkKind::Note).then(|| link.target.clone()),
                attachment_id: (link.kind == LinkKind::Attachment).then(|| link.target.clone()),
                heading: link.heading,
            })
            .collect();
        self.rewrite(text, &links)
    }

    fn rewrite(&self, text: &str, links: &[LinkAt]) -> String {
        let p = self.from;
        let mut body = text.to_owned();
        // Replacements made so far (from the end): where, and how much longer they made the text. A link with an
        // image inside (`[![pic](quire://attachment/A)](quire://note/B)`) has grown by its image's.
        let mut done: Vec<(usize, isize)> = Vec::new();
        for link in links.iter().rev() {
            let grown: isize = done
                .iter()
                .filter(|(at, _)| (link.byte..link.byte + link.len).contains(at))
                .map(|(_, by)| by)
                .sum();
            let Some(len) = link.len.checked_add_signed(grown) else {
                continue;
            };
            let Some(original) = body.get(link.byte..link.byte + len) else {
                continue;
            };
            let image = original.starts_with('!');
            let label = original
                .trim_start_matches('!')
                .strip_prefix('[')
                .and_then(|rest| rest.rsplit_once("](").map(|(label, _)| label.to_owned()))
                .unwrap_or_default();
            let anchor = link.heading.as_ref().map(|h| format!("#{h}")).unwrap_or_default();
            let replacement = match link.kind {
                LinkKind::Note => {
                    let Some(target) = link.note_id.as_deref().and_then(|id| self.notes.get(id)) else {
                        continue;
                    };
                    match (self.format, (self.wiki_target)(target)) {
                        // A text with brackets (an image inside the link) cannot be a wikilink's alias.
                        (ExportFormat::Obsidian, Some(name)) if !label.contains(['[', ']']) => {
                            let alias = if label.is_empty() || label == target.note.summary.title {
                                String::new()
                            } else {
                                format!("|{label}")
                            };
                            format!("[[{name}{anchor}{alias}]]")
                        }
                        // Markdown; or a title a wikilink cannot carry, or one several notes share: a relative link.
                        _ => format!(
                            "[{label}]({}{})",
                            relative_link(&p.path, &target.path),
                            encode_anchor(&anchor)
                        ),
                    }
                }
                LinkKind::Attachment => {
                    let Some((path, named_as_title)) =
                        link.attachment_id.as_deref().and_then(|id| self.attachments.get(id))
                    else {
                        continue;
                    };
                    // An embed names the file, and a file renamed on export (a clash) would not find its
                    // attachment by that name again: a relative link then, as in Markdown; so is an image inside
                    // a link's text, where an embed is not read.
                    let inside = links
                        .iter()
                        .any(|other| other.byte < link.byte && link.byte + link.len <= other.byte + other.len);
                    // An image with alt text of its own, or an anchor (`photo.jpg#interface`), keeps the Markdown
                    // form it was written in: an embed (`![[photo.jpg]]`) carries neither.
                    let file_name = path.rsplit('/').next().unwrap_or(path);
                    let stem = file_name.rsplit_once('.').map_or(file_name, |(stem, _)| stem);
                    let own_alt = image && !label.is_empty() && label != *path && label != file_name && label != stem;
                    let keeps_markdown = own_alt || (image && !anchor.is_empty());
                    if self.format == ExportFormat::Obsidian && *named_as_title && !inside && !keeps_markdown {
                        // A link's text comes along as its alias (an image's alt text would read as its size).
                        let alias = if image || label.is_empty() || label == *path || label.contains(['[', ']', '|']) {
                            String::new()
                        } else {
                            format!("|{label}")
                        };
                        format!("{}[[{path}{alias}]]", if image { "!" } else { "" })
                    } else {
                        format!(
                            "{}[{label}]({}{})",
                            if image { "!" } else { "" },
                            relative_link(&p.path, path),
                            encode_anchor(&anchor)
                        )
                    }
                }
                LinkKind::Wikilink | LinkKind::Embed => continue,
            };
            body.replace_range(link.byte..link.byte + len, &replacement);
            done.push((link.byte, replacement.len() as isize - len as isize));
        }
        body
    }
}

fn encode_anchor(anchor: &str) -> String {
    match anchor.strip_prefix('#') {
        Some(heading) => format!("#{}", encode(heading)),
        None => String::new(),
    }
}

/// The note's front matter.
fn front_matter(
    r: &Reader<'_>,
    note: &Note,
    renamed: &[(String, String)],
    attached: &[String],
    relation_link: &dyn Fn(&str) -> Option<String>,
    links: &Links<'_>,
) -> Result<String, quire_core::Error> {
    let s = &note.summary;
    let mut fields: Vec<(&str, Yaml)> = vec![("title", Yaml::String(s.title.clone()))];
    if !s.tags.is_empty() {
        fields.push((
            "tags",
            Yaml::Array(s.tags.iter().map(|t| Yaml::String(t.clone())).collect()),
        ));
    }
    fields.push(("created", Yaml::String(crate::frontmatter::date_or_time(s.created))));
    fields.push(("updated", Yaml::String(crate::frontmatter::date_or_time(s.updated))));
    if s.is_todo {
        fields.push(("todo", Yaml::Boolean(true)));
        fields.push((
            "completed",
            s.todo_completed
                .map_or(Yaml::Boolean(false), |t| Yaml::String(t.to_rfc3339())),
        ));
    }
    if s.is_protected {
        fields.push(("protected", Yaml::Boolean(true)));
    }
    let attributes = r.attributes(&s.id)?;
    let mut extra: Vec<(String, Yaml)> = Vec::new();
    let mut relations = yaml_rust2::yaml::Hash::new();
    let mut hidden = yaml_rust2::yaml::Hash::new();
    for attribute in attributes {
        if attribute.kind == quire_core::AttributeKind::Relation {
            if let Some(link) = relation_link(&attribute.value) {
                relations.insert(Yaml::String(attribute.name.clone()), Yaml::String(link));
            }
            continue;
        }
        if attribute.name == "aliases" && attribute.value_type == quire_core::ValueType::Json {
            extra.push(("aliases".to_owned(), label_yaml(&attribute, links)));
        } else if attribute.name == "aliases" {
            let aliases: Vec<Yaml> = attribute
                .value
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| Yaml::String(a.to_owned()))
                .collect();
            extra.push(("aliases".to_owned(), Yaml::Array(aliases)));
        } else if KNOWN_KEYS.contains(&attribute.name.to_lowercase().as_str()) {
            // A label named like a key quire reads itself goes under `quire_labels`, and comes back as a label.
            hidden.insert(Yaml::String(attribute.name.clone()), label_yaml(&attribute, links));
        } else {
            extra.push((attribute.name.clone(), label_yaml(&attribute, links)));
        }
    }
    if !relations.is_empty() {
        extra.push(("relations".to_owned(), Yaml::Hash(relations)));
    }
    if !hidden.is_empty() {
        extra.push(("quire_labels".to_owned(), Yaml::Hash(hidden)));
    }
    if !attached.is_empty() {
        extra.push((
            "attachments".to_owned(),
            Yaml::Array(attached.iter().map(|a| Yaml::String(a.clone())).collect()),
        ));
    }
    if !renamed.is_empty() {
        let mut titles = yaml_rust2::yaml::Hash::new();
        for (file, title) in renamed {
            titles.insert(Yaml::String(file.clone()), Yaml::String(title.clone()));
        }
        extra.push(("attachment_titles".to_owned(), Yaml::Hash(titles)));
    }
    let mut map = yaml_rust2::yaml::Hash::new();
    for (key, value) in fields {
        map.insert(Yaml::String(key.to_owned()), value);
    }
    for (key, value) in extra {
        map.insert(Yaml::String(key), value);
    }
    let mut out = String::new();
    let mut emitter = yaml_rust2::YamlEmitter::new(&mut out);
    if emitter.dump(&Yaml::Hash(map)).is_err() {
        return Ok(String::new());
    }
    Ok(format!("{out}\n---\n"))
}

/// A label as front matter: text as a string, a structured value as the YAML of its type (a list, a number, a
/// boolean, a map, null), the links in either written as the format writes links.
fn label_yaml(attribute: &quire_core::Attribute, links: &Links<'_>) -> Yaml {
    let structured = match attribute.value_type {
        quire_core::ValueType::Json => crate::frontmatter::json_to_yaml(&attribute.value),
        quire_core::ValueType::Text => None,
    };
    let value = structured.unwrap_or_else(|| Yaml::String(attribute.value.clone()));
    if !attribute.value.contains("quire://") {
        return value;
    }
    crate::frontmatter::map_strings(&value, &mut |text| links.rewrite_label(text))
}

/// Front matter keys quire reads itself: a label with one of these names would be read back as something else.
const KNOWN_KEYS: &[&str] = &[
    "attachment_titles",
    "relations",
    "quire_labels",
    "attachments",
    "title",
    "tags",
    "tag",
    "aliases",
    "alias",
    "created",
    "date",
    "created_at",
    "updated",
    "modified",
    "updated_at",
    "todo",
    "is_todo",
    "completed",
    "done",
    "protected",
    "quire_notebook",
    "icon",
];
