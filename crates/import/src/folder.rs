//! Reading a folder of Markdown files, or an Obsidian vault: the folder is walked without following symbolic
//! links, hidden folders (`.obsidian`, `.git`, `.trash`) are left out, folders become notebooks, `.md` files notes
//! (read and parsed on every core) and every other file a candidate attachment.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::note_file::{read_base, read_note};
use crate::source::{Parsed, Source};
use crate::{Error, ImportFormat, ItemReport, Outcome};

/// Folders deeper than this are not walked (reported).
const MAX_DEPTH: usize = 64;

/// Reads the source folder: walks it, then reads and parses its `.md` files on every core.
pub(crate) fn read(source: &Path, format: ImportFormat) -> Result<Source, Error> {
    let root = crate::apps::folder(source)?;
    let attachment_folder = (format == ImportFormat::Obsidian)
        .then(|| std::fs::read_to_string(root.join(".obsidian/app.json")).ok())
        .flatten()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| {
            v["attachmentFolderPath"]
                .as_str()
                .map(|s| s.trim_start_matches("./").trim_matches('/').to_owned())
        })
        .filter(|s| !s.is_empty());
    let mut out = Source::new(root.display().to_string(), root.clone());
    out.attachment_folder = attachment_folder;
    let walker = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .max_depth(MAX_DEPTH)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    let mut found = Vec::new();
    // Obsidian bases, read as they are found (there are few).
    let mut bases = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                // The folder given itself (its relative path is empty) is named as it was given (found in use:
                // "failed: : cannot read it").
                let path = e.path().map(|p| relative(&root, p)).filter(|p| !p.is_empty());
                let why = match e.io_error() {
                    Some(io) => io.to_string(),
                    None => e.to_string(),
                };
                found.push(Found::Failure(ItemReport {
                    path: path.unwrap_or_else(|| root.display().to_string()),
                    outcome: Outcome::Failed,
                    note_id: None,
                    notes: vec![format!("cannot read it: {why}")],
                }));
                continue;
            }
        };
        let rel = relative(&root, entry.path());
        if entry.path().strip_prefix(&root).is_ok_and(|p| p.to_str().is_none()) {
            // Its name would not survive as text (and two such names could look alike): left out.
            found.push(Found::Failure(ItemReport {
                path: rel,
                outcome: Outcome::Skipped,
                note_id: None,
                notes: vec!["its name is not valid UTF-8: rename it to import it".into()],
            }));
            continue;
        }
        if entry.file_type().is_symlink() {
            found.push(Found::Failure(ItemReport {
                path: rel,
                outcome: Outcome::Skipped,
                note_id: None,
                notes: vec!["a symbolic link: not followed".into()],
            }));
            continue;
        }
        if entry.depth() == MAX_DEPTH && entry.file_type().is_dir() {
            found.push(Found::Failure(ItemReport {
                path: rel,
                outcome: Outcome::Failed,
                note_id: None,
                notes: vec![format!("nested more than {MAX_DEPTH} folders deep: not read")],
            }));
            continue;
        }
        if entry.file_type().is_dir() {
            if entry.depth() > 0 {
                out.folders.push(rel);
            }
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let lower = name.to_lowercase();
        // Notion's HTML export: its pages are `.html` files (this reader is only asked for that flavour).
        let note_file = if format == ImportFormat::Html || format == ImportFormat::Notion {
            crate::apps::html::is_html_name(&lower)
        } else {
            lower.ends_with(".md")
        };
        if note_file {
            // Read and parsed below, on every core.
            found.push(Found::Note {
                path: entry.path().to_owned(),
                rel,
                notebook_file: name == "_notebook.md",
            });
        } else if format == ImportFormat::Obsidian && name.to_lowercase().ends_with(".base") {
            match read_base(entry.path(), &rel) {
                Ok(parsed) => bases.push(parsed),
                Err(reason) => found.push(Found::Failure(ItemReport {
                    path: rel,
                    outcome: Outcome::Failed,
                    note_id: None,
                    notes: vec![reason.0],
                })),
            }
        } else {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            out.by_name.entry(name.to_lowercase()).or_default().push(rel.clone());
            out.files.insert(rel, size);
        }
    }
    // A folder of attachments alone (Obsidian's attachment folder, say) is where files are kept, not a notebook; an
    // empty folder still is one, since an export writes empty notebooks as empty folders.
    let note_folders = folders_holding(found.iter().filter_map(|f| match f {
        Found::Note { rel, .. } => Some(rel.as_str()),
        Found::Failure(_) => None,
    }));
    let file_folders = folders_holding(out.files.keys().map(String::as_str));
    out.folders
        .retain(|folder| note_folders.contains(folder) || !file_folders.contains(folder));
    // Parsing is most of reading a source: the files are shared out among the cores a window at a time (so that
    // only a window's notes are in memory before they go to the import's temporary file), and the results taken
    // in the order of the walk.
    let notes: Vec<(&PathBuf, &String)> = found
        .iter()
        .filter_map(|f| match f {
            Found::Note { path, rel, .. } => Some((path, rel)),
            Found::Failure(_) => None,
        })
        .collect();
    let mut windows = notes.chunks(PARSED_AT_ONCE);
    let mut parsed = std::collections::VecDeque::new();
    for item in &found {
        match item {
            Found::Failure(failure) => out.failures.push(failure.clone()),
            Found::Note { rel, notebook_file, .. } => {
                if parsed.is_empty()
                    && let Some(window) = windows.next()
                {
                    parsed = parse_window(window, format).into();
                }
                match parsed
                    .pop_front()
                    .unwrap_or_else(|| Err("not read (an internal error)".to_owned()))
                {
                    Ok(parsed) if parsed.meta.notebook || *notebook_file => {
                        out.notebooks.insert(parsed.folder.clone(), parsed.meta);
                    }
                    Ok(parsed) => out.notes.push(parsed),
                    Err(reason) => out.failures.push(ItemReport {
                        path: rel.clone(),
                        outcome: Outcome::Failed,
                        note_id: None,
                        notes: vec![reason],
                    }),
                }
            }
        }
    }
    out.notes.extend(bases);
    unread_files(source, &mut out)?;
    Ok(out)
}

/// Notes parsed together, shared out among the cores.
const PARSED_AT_ONCE: usize = 256;

/// Reads the notes of `window` on up to 8 cores, in order.
fn parse_window(window: &[(&PathBuf, &String)], format: ImportFormat) -> Vec<Result<Parsed, String>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 8);
    let share = window.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = window
            .chunks(share)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(path, rel)| read_note(path, rel, format))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|part| part.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// The files no note links (interop finding 2-#4: a folder of Google Keep or Tomboy files imported "0", exit 0,
/// saying nothing): a folder with no note at all is refused, naming the kinds of file it holds; otherwise each file
/// left out is said in the report.
fn unread_files(source: &Path, out: &mut Source) -> Result<(), Error> {
    if out.files.is_empty() {
        if out.notes.is_empty() && out.folders.is_empty() && out.failures.is_empty() {
            return Err(Error::Format(format!(
                "{} is empty: nothing to import",
                source.display()
            )));
        }
        return Ok(());
    }
    if out.notes.is_empty() && out.notebooks.is_empty() {
        let mut kinds: Vec<String> = out
            .files
            .keys()
            .map(|f| match f.rsplit('/').next().unwrap_or(f).rsplit_once('.') {
                Some((_, ext)) if !ext.is_empty() => format!(".{}", ext.to_lowercase()),
                _ => "without an extension".to_owned(),
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        return Err(Error::Format(format!(
            "{} holds no notes quire can read, only {} of kinds it does not import ({}): see `quire import \
             --format` for what it reads",
            source.display(),
            if out.files.len() == 1 {
                "1 file".to_owned()
            } else {
                format!("{} files", out.files.len())
            },
            kinds.join(", ")
        )));
    }
    let mut linked: HashSet<String> = HashSet::new();
    for i in 0..out.notes.len() {
        let parsed = out.notes.get(i).map_err(|e| Error::Io {
            context: format!("cannot read {} back from the import's temporary file", out.notes[i].rel),
            source: e,
        })?;
        linked.extend(crate::relink::linked_files(out, &parsed));
    }
    let mut left: Vec<String> = out.files.keys().filter(|f| !linked.contains(*f)).cloned().collect();
    left.sort();
    for path in left {
        out.failures.push(ItemReport {
            path,
            outcome: Outcome::Skipped,
            note_id: None,
            notes: vec!["no note links it: not imported (quire imports the notes and the files they link)".into()],
        });
    }
    Ok(())
}

/// Every folder that holds one of `paths` (relative, with `/`), directly or deeper down.
fn folders_holding<'a>(paths: impl Iterator<Item = &'a str>) -> HashSet<String> {
    let mut folders = HashSet::new();
    for path in paths {
        for (end, _) in path.match_indices('/') {
            folders.insert(path[..end].to_owned());
        }
    }
    folders
}

/// What the walk of a source found, in order: a note file to read, or a failure to report.
enum Found {
    Note {
        path: PathBuf,
        rel: String,
        notebook_file: bool,
    },
    Failure(ItemReport),
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
