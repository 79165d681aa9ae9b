//! Importing a folder of Markdown files, or an Obsidian vault.
//!
//! Three steps. Reading: the folder is walked without following symbolic links, hidden folders (`.obsidian`,
//! `.git`, `.trash`) are left out, every `.md` file is read, checked (UTF-8, front matter, size) and hashed. Writing
//! the notes, each in a savepoint: its notebook (folders become notebooks, found again by title on a re-import), the
//! note with its original body, tags, label attributes (a dangerous one is refused and reported), and the files it
//! links to as attachments. Linking, once every note has an id: relative links to `.md` files and attachments
//! become `quire://` links; `[[wikilinks]]` stay as written (core resolves them). Protection comes last, so the
//! import can still write inside what it protects.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use quire_core::hex;
use quire_core::{
    Error as CoreError, ImportRecord, NewAttachment, NewNote, NewNotebook, NoteUpdate, ROOT_NOTEBOOK_ID, Writer,
};
use sha2::{Digest, Sha256};

use crate::frontmatter::{self, FrontMatter};
use crate::{Error, ImportFormat, ImportOptions, ImportReport, ItemReport, Outcome, Progress};

/// Folders deeper than this are not walked (reported).
const MAX_DEPTH: usize = 64;

/// One note of the source, read and checked (a `.md` file; a Joplin item; an Evernote note).
pub(crate) struct Parsed {
    /// Where it comes from, unique in the source and the same on every import of it (relative path with `/`, or a
    /// Joplin item's file, or an Evernote note's title and time): the key of its import record.
    pub(crate) rel: String,
    /// How the report names it (the relative path; for an Evernote note its title and time).
    pub(crate) shown: String,
    /// Its notebook: a relative folder with `/` (empty at the top), a key of [`Source::notebooks`] when that names
    /// the notebook's title.
    pub(crate) folder: String,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) meta: FrontMatter,
    /// A hash of everything the source says about it, to see later whether it changed there.
    pub(crate) hash: String,
    /// The links of its body, found once (see [`Parsed::links`]).
    pub(crate) links: std::sync::OnceLock<Vec<Link>>,
}

impl Parsed {
    /// The relative links and wikilinks of its body, outside code (an import looks at them four times per note).
    fn links(&self) -> &[Link] {
        self.links.get_or_init(|| links_of(&self.body))
    }
}

/// A source, read: the notes, notebooks and files to import, whatever the format.
pub(crate) struct Source {
    /// The source as recorded with each imported note (its canonical path).
    pub(crate) key: String,
    /// Where the files are read from (the source folder, or the folder an archive was unpacked into).
    pub(crate) root: PathBuf,
    pub(crate) notes: Vec<Parsed>,
    /// Every folder (relative, `/`), empty ones included: each becomes a notebook.
    pub(crate) folders: Vec<String>,
    /// `_notebook.md` files (or a format's notebooks): folder → what they say.
    pub(crate) notebooks: BTreeMap<String, FrontMatter>,
    /// Every other file: relative path → size.
    pub(crate) files: BTreeMap<String, u64>,
    /// File names (lower case) → relative paths, for Obsidian's by-name resolution.
    pub(crate) by_name: HashMap<String, Vec<String>>,
    /// Links by id (`[text](:/ID)`, as Joplin writes them and Evernote's media are turned into): ID → the relative
    /// path of the note or file it names.
    pub(crate) targets: HashMap<String, String>,
    pub(crate) failures: Vec<ItemReport>,
    pub(crate) attachment_folder: Option<String>,
    /// The folder an archive was unpacked into, removed when the import is done.
    pub(crate) _unpacked: Option<tempfile::TempDir>,
    /// Every note's `rel`, to resolve a link in constant time (filled by `write`).
    note_rels: std::collections::HashSet<String>,
}

impl Source {
    /// An empty source whose files are read from `root`, recorded as `key`.
    pub(crate) fn new(key: String, root: PathBuf) -> Source {
        Source {
            key,
            root,
            notes: Vec::new(),
            folders: Vec::new(),
            notebooks: BTreeMap::new(),
            files: BTreeMap::new(),
            by_name: HashMap::new(),
            targets: HashMap::new(),
            failures: Vec::new(),
            attachment_folder: None,
            _unpacked: None,
            note_rels: std::collections::HashSet::new(),
        }
    }

    /// An empty source recorded as `key` whose files are read from a new temporary folder (an archive unpacked,
    /// resources decoded), removed with the source.
    pub(crate) fn unpacked(key: String, prefix: &str) -> Result<Source, Error> {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(|e| Error::Io {
                context: "cannot make a temporary folder for the source's files".into(),
                source: e,
            })?;
        let mut out = Source::new(key, dir.path().to_path_buf());
        out._unpacked = Some(dir);
        Ok(out)
    }

    /// Reports `path` as not imported, for `reason`.
    pub(crate) fn fail(&mut self, path: impl Into<String>, outcome: Outcome, reason: impl Into<String>) {
        self.failures.push(ItemReport {
            path: path.into(),
            outcome,
            note_id: None,
            notes: vec![reason.into()],
        });
    }
}

pub(crate) fn import(
    ws: &quire_core::Workspace,
    source: &Path,
    format: ImportFormat,
    options: &ImportOptions,
    progress: Progress<'_>,
) -> Result<ImportReport, Error> {
    let read = read_source(source, format)?;
    write(ws, source, read, format, options, progress)
}

/// Writes what was read from `source` into the workspace, as one change set.
pub(crate) fn write(
    ws: &quire_core::Workspace,
    source: &Path,
    mut read: Source,
    format: ImportFormat,
    options: &ImportOptions,
    progress: Progress<'_>,
) -> Result<ImportReport, Error> {
    read.note_rels = read.notes.iter().map(|n| n.rel.clone()).collect();
    let read = &read;
    let key = read.key.clone();
    let actor = quire_core::Actor::Import { source: key.clone() };
    let mut report = ImportReport {
        source: source.display().to_string(),
        format: format.name().to_owned(),
        dry_run: options.dry_run,
        ..ImportReport::default()
    };
    let total = read.notes.len() as u64;
    // First without savepoints (each costs a flush of the full-text index, and the statements inside one keep
    // re-reading its undo pages): any refusal takes the whole pass back, and the import runs again with a
    // savepoint per batch, redoing a failed batch file by file.
    let pass = |fast: bool| {
        ws.write(&actor, |w| -> Result<_, Stop> {
        if let Some(into) = &options.into {
            let notebook = w.notebook(into)?;
            if w.notebook_path(into)?.iter().any(|nb| nb.is_protected) {
                return Err(Stop::Core(CoreError::Invalid(format!(
                    "Notebook '{}' is protected: nothing can be imported into it. Import elsewhere, or unprotect it first.",
                    notebook.title
                ))));
            }
        }
        // Thousands of notes: their full-text entries are written together at the end.
        w.defer_search_index();
        let mut state = State::default();
        if fast {
            // Every note's id before any is written: the one it was imported as before, or a fresh one.
            for (i, parsed) in read.notes.iter().enumerate() {
                let record = w
                    .import_record(&key, &parsed.rel)?
                    .filter(|r| w.note_summary(&r.note_id).is_ok_and(|n| n.deleted.is_none()));
                let id = match &record {
                    Some(record) => record.note_id.clone(),
                    None => w.reserve_id()?,
                };
                state.ids.insert(parsed.rel.clone(), id);
                state.records.insert(i, record);
            }
        }
        // Writing the notes, a batch at a time in one savepoint (a savepoint makes the full-text index flush, so one
        // per note cost more than the note); a batch with a failure is taken back and done again note by note.
        let mut start = 0;
        while start < read.notes.len() {
            let end = (start + BATCH).min(read.notes.len());
            progress(start as u64, total);
            // What to go back to when the batch fails (the pass without savepoints starts over instead, so it keeps
            // no copy).
            let before = if fast { State::default() } else { state.clone() };
            let write_batch = |w: &mut Writer<'_>, state: &mut State| {
                for i in start..end {
                    write_one(w, read, &key, i, options, state, if fast { Mode::Fast } else { Mode::Batch })?;
                }
                Ok(())
            };
            let batch = if fast {
                write_batch(w, &mut state)
            } else {
                w.attempt(|w| write_batch(w, &mut state))
            };
            if let Err(e) = batch {
                if fast {
                    return Err(if e.is_caller_error() { Stop::Again } else { Stop::Core(e) });
                }
                state = before;
                for i in start..end {
                    write_one(w, read, &key, i, options, &mut state, Mode::Careful)?;
                }
            }
            start = end;
        }
        progress(total, total);
        // Folders without notes are notebooks too.
        for folder in &read.folders {
            if !state.notebooks.contains_key(folder) {
                let made =
                    w.attempt(|w| notebook_for(w, read, folder, options.into.as_deref(), &mut state.notebooks));
                if let Err(e) = made {
                    state.items.push(ItemReport {
                        path: folder.clone(),
                        outcome: Outcome::Failed,
                        note_id: None,
                        notes: vec![format!("no notebook for this folder: {e}")],
                    });
                }
            }
        }
        // Linking: relative links become quire:// links, now that every note has an id; batched the same way.
        let to_link = std::mem::take(&mut state.to_link);
        for chunk in to_link.chunks(BATCH) {
            let link_batch = |w: &mut Writer<'_>| {
                for i in chunk {
                    link_one(w, read, &key, *i, &state, false)?;
                }
                Ok(())
            };
            let batch = if fast { link_batch(w) } else { w.attempt(link_batch) };
            if fast && let Err(e) = batch {
                return Err(if e.is_caller_error() { Stop::Again } else { Stop::Core(e) });
            }
            for i in chunk {
                let parsed = &read.notes[*i];
                let result = match batch {
                    Ok(()) => Ok(Vec::new()),
                    Err(_) => link_one(w, read, &key, *i, &state, true),
                };
                let mut warnings = Vec::new();
                rewrite_links(read, parsed, &state.ids, &state.attachments, &mut warnings);
                for (name, target) in &parsed.meta.relations {
                    if resolve_relation(read, parsed, target, &state.ids).is_none() {
                        warnings.push(format!(
                            "relation '{name}' not kept: {target} is not a note of the source"
                        ));
                    }
                }
                let problem = result?;
                if let Some(item) = state.item_of.get(i).and_then(|p| state.items.get_mut(*p)) {
                    item.notes.extend(warnings);
                    item.notes.extend(problem);
                }
            }
        }
        let State {
            mut items,
            attachments,
            notebooks,
            reused,
            ..
        } = state;
        // Notebooks described as protected, last.
        for (folder, meta) in &read.notebooks {
            if meta.protected
                && let Some(id) = notebooks.get(folder)
                && let Err(e) = w.attempt(|w| w.set_notebook_protected(id, true))
            {
                items.push(ItemReport {
                    path: format!("{folder}/_notebook.md"),
                    outcome: Outcome::Failed,
                    note_id: None,
                    notes: vec![format!("the notebook could not be protected: {e}")],
                });
            }
        }
        let change_set = w.change_set_id().map(str::to_owned);
        let added = attachments.values().filter(|id| !reused.contains(*id)).count();
        let done = (items, change_set, added as u64);
        if options.dry_run {
            // Everything ran, guards included; the error takes it all back.
            return Err(Stop::DryRun(done));
        }
        Ok(done)
    })
    };
    let outcome = match pass(true) {
        Err(Stop::Again) => pass(false),
        other => other,
    };
    let (mut items, change_set, attached) = match outcome {
        Ok(done) | Err(Stop::DryRun(done)) => done,
        Err(Stop::Core(e)) => return Err(Error::Core(e)),
        // The careful pass never asks for another.
        Err(Stop::Again) => return Err(Error::Format("the import could not be written".into())),
    };
    items.extend(read.failures.iter().cloned());
    for item in &items {
        match item.outcome {
            Outcome::Imported => report.imported += 1,
            Outcome::Updated => report.updated += 1,
            Outcome::Unchanged => report.unchanged += 1,
            Outcome::Conflict => report.conflicts += 1,
            Outcome::Failed => report.failed += 1,
            Outcome::Skipped => {}
        }
    }
    report.attachments = attached;
    report.items = items;
    report.change_set_id = if options.dry_run { None } else { change_set };
    Ok(report)
}

/// How the import's transaction ends early: a failure, a dry run's report (the transaction is rolled back), or a
/// refusal in the pass without savepoints (run again with them).
enum Stop {
    Again,
    Core(CoreError),
    DryRun((Vec<ItemReport>, Option<String>, u64)),
}

impl From<CoreError> for Stop {
    fn from(e: CoreError) -> Stop {
        Stop::Core(e)
    }
}

/// Notes written in one savepoint.
const BATCH: usize = 200;

/// What the write steps have made so far.
#[derive(Debug, Clone, Default)]
struct State {
    items: Vec<ItemReport>,
    /// Relative path of a note file → note id.
    ids: HashMap<String, String>,
    /// Relative path of a file → attachment id.
    attachments: HashMap<String, String>,
    /// Relative folder → notebook id.
    notebooks: HashMap<String, String>,
    /// Notes whose links are rewritten once every note has an id (indexes into the source's notes).
    to_link: Vec<usize>,
    /// Attachments that were there before (found again on a re-import): not counted as added.
    reused: std::collections::HashSet<String>,
    /// The import records of the notes still to write, when the fast pass looked them up (a note still in quire).
    records: HashMap<usize, Option<ImportRecord>>,
    /// A note (index into the source's notes) → its report (index into `items`).
    item_of: HashMap<usize, usize>,
}

/// Writes the note file `i`. `Careful`: in a savepoint of its own, with its failure reported rather than returned
/// (the way a batch that failed is done again); otherwise any failure is returned, to take the batch (or the
/// fast pass) back.
fn write_one(
    w: &mut Writer<'_>,
    read: &Source,
    key: &str,
    i: usize,
    options: &ImportOptions,
    state: &mut State,
    mode: Mode,
) -> Result<(), CoreError> {
    let careful = mode == Mode::Careful;
    let parsed = &read.notes[i];
    let mut item = ItemReport {
        path: parsed.shown.clone(),
        outcome: Outcome::Imported,
        note_id: None,
        notes: Vec::new(),
    };
    // Looked up already by the fast pass.
    let record = match state.records.remove(&i) {
        Some(record) => record,
        None => w
            .import_record(key, &parsed.rel)?
            .filter(|r| w.note_summary(&r.note_id).is_ok_and(|n| n.deleted.is_none())),
    };
    let existing = record.as_ref();
    if let Some(record) = existing {
        item.note_id = Some(record.note_id.clone());
        state.ids.insert(parsed.rel.clone(), record.note_id.clone());
        if record.source_hash == parsed.hash {
            item.outcome = Outcome::Unchanged;
            state.item_of.insert(i, state.items.len());
            state.items.push(item);
            return Ok(());
        }
        if w.note_summary(&record.note_id).is_ok_and(|n| n.is_protected) {
            item.outcome = Outcome::Conflict;
            item.notes.push(
                "protected in quire, so an import may not change it: left as it is (unprotect it to update it \
                 from the source)"
                    .to_owned(),
            );
            state.item_of.insert(i, state.items.len());
            state.items.push(item);
            return Ok(());
        }
        let changed_here = match w.note(&record.note_id) {
            Ok(note) => note_hash(&note.summary.title, &note.body) != record.note_hash,
            Err(_) => true,
        };
        if changed_here && !options.force {
            item.outcome = Outcome::Conflict;
            item.notes.push(
                "changed in quire and at the source since the last import: left as it is in quire \
                 (import with --force to overwrite it; a revision keeps its text)"
                    .to_owned(),
            );
            state.item_of.insert(i, state.items.len());
            state.items.push(item);
            return Ok(());
        }
        item.outcome = Outcome::Updated;
    }
    let write = |w: &mut Writer<'_>, item: &mut ItemReport, state: &mut State| {
        let notebook = notebook_for(w, read, &parsed.folder, options.into.as_deref(), &mut state.notebooks)?;
        write_note(w, read, parsed, &notebook, existing, state, item, mode)
    };
    let written = if careful {
        // Notebooks and attachments made inside a savepoint that is taken back are gone: forget them too.
        let known = state.notebooks.clone();
        let attached = state.attachments.clone();
        let result = w.attempt(|w| write(w, &mut item, state));
        if result.is_err() {
            state.notebooks = known;
            state.attachments = attached;
        }
        result
    } else {
        write(w, &mut item, state)
    };
    match written {
        Ok(id) => {
            state.ids.insert(parsed.rel.clone(), id.clone());
            item.note_id = Some(id);
            state.to_link.push(i);
        }
        // A refusal fails this file; a failure of the database stops the import (and takes it all back).
        Err(e) if careful && e.is_caller_error() => {
            item.outcome = Outcome::Failed;
            item.note_id = None;
            item.notes.push(e.to_string());
        }
        Err(e) => return Err(e),
    }
    state.item_of.insert(i, state.items.len());
    state.items.push(item);
    Ok(())
}

/// Rewrites the relative links of note file `i`, sets the relations its front matter names, protects it if its
/// front matter says so, and records where it came from. `careful`: the rewrite and each relation in a savepoint
/// of its own, and when one fails (a body grown past the limit) the note keeps its links as written, and is still
/// protected and recorded; the reasons are returned as warnings.
fn link_one(
    w: &mut Writer<'_>,
    read: &Source,
    key: &str,
    i: usize,
    state: &State,
    careful: bool,
) -> Result<Vec<String>, CoreError> {
    let parsed = &read.notes[i];
    let Some(id) = state.ids.get(&parsed.rel) else {
        return Ok(Vec::new());
    };
    let mut warnings = Vec::new();
    let body = rewrite_links(read, parsed, &state.ids, &state.attachments, &mut warnings);
    let mut problem = Vec::new();
    // The fast pass wrote the text with its links already rewritten; the careful one wrote it as it was.
    let mut note = w.note(id)?;
    if body != note.body {
        let update = |w: &mut Writer<'_>| {
            w.update_note(
                id,
                NoteUpdate {
                    body: Some(body.clone()),
                    ..NoteUpdate::default()
                },
            )
        };
        if careful {
            match w.attempt(update) {
                Ok(updated) => note = updated,
                Err(e) if e.is_caller_error() => problem.push(format!("its links were left as written: {e}")),
                Err(e) => return Err(e),
            }
        } else {
            note = update(w)?;
        }
    }
    for (name, target) in &parsed.meta.relations {
        let Some(target_id) = resolve_relation(read, parsed, target, &state.ids) else {
            continue;
        };
        let relate = |w: &mut Writer<'_>| w.set_attribute(id, quire_core::AttributeKind::Relation, name, &target_id);
        if careful {
            match w.attempt(relate) {
                Ok(_) => {}
                Err(e) if e.is_caller_error() => problem.push(format!("relation '{name}' not kept: {e}")),
                Err(e) => return Err(e),
            }
        } else {
            relate(w)?;
        }
    }
    if parsed.meta.protected {
        w.set_note_protected(id, true)?;
    }
    w.record_import(
        key,
        &parsed.rel,
        &ImportRecord {
            note_id: id.clone(),
            source_hash: parsed.hash.clone(),
            note_hash: note_hash(&note.summary.title, &note.body),
        },
    )?;
    Ok(problem)
}

/// The note a relation in front matter names: `[[Title]]` (a path from the top, a title, or a file name, the
/// shortest path first), or a relative path to the note's file.
fn resolve_relation(read: &Source, parsed: &Parsed, target: &str, ids: &HashMap<String, String>) -> Option<String> {
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

/// A hash of a note's title and body, to see later whether it changed in quire.
fn note_hash(title: &str, body: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(title.as_bytes());
    hasher.update([0]);
    hasher.update(body.as_bytes());
    hex(&hasher.finalize())
}

/// Reads the source folder.
fn read_source(source: &Path, format: ImportFormat) -> Result<Source, Error> {
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
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                found.push(Found::Failure(ItemReport {
                    path: e.path().map(|p| relative(&root, p)).unwrap_or_default(),
                    outcome: Outcome::Failed,
                    note_id: None,
                    notes: vec![format!("cannot read it: {e}")],
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
        if name.to_lowercase().ends_with(".md") {
            // Read and parsed below, on every core.
            found.push(Found::Note {
                path: entry.path().to_owned(),
                rel,
                notebook_file: name == "_notebook.md",
            });
        } else {
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            out.by_name.entry(name.to_lowercase()).or_default().push(rel.clone());
            out.files.insert(rel, size);
        }
    }
    // Parsing is most of reading a source: the files are shared out among the cores, and the results taken in
    // the order of the walk.
    let notes: Vec<(&PathBuf, &String)> = found
        .iter()
        .filter_map(|f| match f {
            Found::Note { path, rel, .. } => Some((path, rel)),
            Found::Failure(_) => None,
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 8);
    let share = notes.len().div_ceil(threads).max(1);
    let mut parsed: Vec<Result<Parsed, String>> = std::thread::scope(|scope| {
        let parts: Vec<_> = notes
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
            .collect::<Vec<_>>()
    })
    .into_iter()
    .rev()
    .collect();
    // A folder of attachments alone (Obsidian's attachment folder, say) is where files are kept, not a notebook; an
    // empty folder still is one, since an export writes empty notebooks as empty folders.
    let note_folders = folders_holding(found.iter().filter_map(|f| match f {
        Found::Note { rel, .. } => Some(rel.as_str()),
        Found::Failure(_) => None,
    }));
    let file_folders = folders_holding(out.files.keys().map(String::as_str));
    out.folders
        .retain(|folder| note_folders.contains(folder) || !file_folders.contains(folder));
    for item in found {
        match item {
            Found::Failure(failure) => out.failures.push(failure),
            Found::Note { rel, notebook_file, .. } => match parsed
                .pop()
                .unwrap_or_else(|| Err("not read (an internal error)".to_owned()))
            {
                Ok(parsed) if parsed.meta.notebook || notebook_file => {
                    out.notebooks.insert(parsed.folder.clone(), parsed.meta);
                }
                Ok(parsed) => out.notes.push(parsed),
                Err(reason) => out.failures.push(ItemReport {
                    path: rel,
                    outcome: Outcome::Failed,
                    note_id: None,
                    notes: vec![reason],
                }),
            },
        }
    }
    Ok(out)
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

/// Reads a file of the source, refusing one that has become a symbolic link since the walk.
pub(crate) fn read_plain_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.file_type().is_file() {
        return Err(std::io::Error::other("not a plain file (a symbolic link?): not read"));
    }
    std::fs::read(path)
}

fn read_note(path: &Path, rel: &str, format: ImportFormat) -> Result<Parsed, String> {
    let bytes = read_plain_file(path).map_err(|e| format!("cannot read it: {e}"))?;
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
    let (yaml, body) = frontmatter::split(&text);
    let mut meta = match yaml {
        Some(yaml) => frontmatter::parse(yaml)?,
        None => FrontMatter::default(),
    };
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
    let stem = &stem[..stem.len() - 3];
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
    })
}

/// The notebook for a folder, created (with its parents) when missing; found by title on a re-import.
fn notebook_for(
    w: &mut Writer<'_>,
    source: &Source,
    folder: &str,
    into: Option<&str>,
    known: &mut HashMap<String, String>,
) -> Result<String, CoreError> {
    let top = into.unwrap_or(ROOT_NOTEBOOK_ID).to_owned();
    if folder.is_empty() {
        return Ok(top);
    }
    if let Some(id) = known.get(folder) {
        return Ok(id.clone());
    }
    let (parent_folder, name) = folder.rsplit_once('/').unwrap_or(("", folder));
    // `_notebook.md` may say the notebook's title (an export does when the folder's name could not be it).
    let title = source
        .notebooks
        .get(folder)
        .and_then(|m| m.title.as_deref())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(name);
    // A `/` separates the notebooks of a path in quire, so a title holding one (Joplin allows it) keeps its look
    // with a division slash instead.
    let title = title.replace('/', "\u{2215}");
    let title = title.as_str();
    let parent = notebook_for(w, source, parent_folder, into, known)?;
    // Found again by title on a re-import; but a notebook another folder of this source already stands for is not
    // shared (two Joplin notebooks of the same name side by side stay two).
    let existing = w
        .notebooks_titled(title)?
        .into_iter()
        .find(|nb| {
            nb.title == title
                && nb.parent_id.as_deref() == Some(parent.as_str())
                && !known.values().any(|id| *id == nb.id)
        })
        .map(|nb| nb.id);
    let id = match existing {
        Some(id) => id,
        None => {
            w.create_notebook(NewNotebook {
                title: title.to_owned(),
                parent_id: Some(parent),
                icon: source.notebooks.get(folder).and_then(|m| m.icon.clone()),
            })?
            .id
        }
    };
    known.insert(folder.to_owned(), id.clone());
    Ok(id)
}

/// How much care a write takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The pass without savepoints: the note is written once, its links already pointing at the ids reserved
    /// for every note and attachment; any refusal is returned (the pass is run again with care).
    Fast,
    /// Inside a batch's savepoint: any refusal is returned, to take the batch back.
    Batch,
    /// In savepoints of its own: a refused label or attachment is reported and the note kept.
    Careful,
}

/// Writes one note (new, or updated from its source) with its tags, labels and attachments; returns its id.
#[expect(
    clippy::too_many_arguments,
    reason = "the steps of one note share the writer, the source, the state and the report; a struct would only rename them"
)]
fn write_note(
    w: &mut Writer<'_>,
    source: &Source,
    parsed: &Parsed,
    notebook: &str,
    existing: Option<&ImportRecord>,
    state: &mut State,
    item: &mut ItemReport,
    mode: Mode,
) -> Result<String, CoreError> {
    let meta = &parsed.meta;
    // The files it links to: found again on a re-import (by title and size), or read to be attached. In the fast
    // pass each gets its id now, so the text can link to it before it exists.
    let had: Vec<quire_core::AttachmentInfo> = match existing {
        Some(record) => w.attachments(&record.note_id)?,
        None => Vec::new(),
    };
    let mut to_add: Vec<(String, String, NewAttachment)> = Vec::new();
    // Attachments the note links but could not be given: a failure of their own, so the exit code shows it (the
    // note is imported without them).
    let mut lost: Vec<String> = Vec::new();
    for file in linked_files(source, parsed) {
        if state.attachments.contains_key(&file) {
            continue;
        }
        let name = file.rsplit('/').next().unwrap_or(&file).to_owned();
        // An export that had to rename the file (or a Joplin or Evernote resource) says the attachment's own title.
        let title = meta
            .attachment_titles
            .iter()
            .find(|(file_name, _)| *file_name == name)
            .map_or(name, |(_, title)| title.clone());
        let size = source.files.get(&file).copied().unwrap_or(0);
        if size > quire_core::MAX_ATTACHMENT_BYTES as u64 {
            lost.push(format!(
                "{file} not attached: {size} bytes, more than an attachment may hold"
            ));
            continue;
        }
        let data = match read_plain_file(&source.root.join(&file)) {
            Ok(data) => data,
            Err(e) => {
                lost.push(format!("{file} not attached: {e}"));
                continue;
            }
        };
        // Found again on a re-import by its title: kept when the bytes are the same, given the new bytes (same id,
        // so every link to it stays) when the file changed at the source.
        if let Some(found) = had.iter().find(|a| a.title == title && !state.reused.contains(&a.id)) {
            state.attachments.insert(file.clone(), found.id.clone());
            state.reused.insert(found.id.clone());
            if w.attachment_data(&found.id)? != data {
                match mode {
                    Mode::Careful => {
                        if let Err(e) = w.attempt(|w| w.replace_attachment_data(&found.id, data)) {
                            item.notes.push(format!("{file}: the older copy was kept: {e}"));
                        }
                    }
                    _ => {
                        w.replace_attachment_data(&found.id, data)?;
                    }
                }
            }
            continue;
        }
        let attachment = NewAttachment {
            mime: mime_of(&title).to_owned(),
            title,
            data,
            text: None,
        };
        let id = if mode == Mode::Fast {
            let id = w.reserve_id()?;
            state.attachments.insert(file.clone(), id.clone());
            id
        } else {
            String::new()
        };
        to_add.push((file, id, attachment));
    }
    let body = if mode == Mode::Fast {
        rewrite_links(source, parsed, &state.ids, &state.attachments, &mut Vec::new())
    } else {
        parsed.body.clone()
    };
    let id = match existing {
        Some(record) => {
            w.update_note(
                &record.note_id,
                NoteUpdate {
                    title: Some(parsed.title.clone()),
                    body: Some(body),
                    is_todo: Some(meta.todo || meta.completed.is_some()),
                    todo_completed: meta.completed,
                },
            )?;
            if w.note_summary(&record.note_id)?.notebook_id != notebook {
                w.move_note(&record.note_id, notebook)?;
            }
            let current = w.note_summary(&record.note_id)?.tags;
            for old in current
                .iter()
                .filter(|t| !meta.tags.iter().any(|n| n.eq_ignore_ascii_case(t)))
            {
                w.remove_tag(&record.note_id, old)?;
            }
            for tag in &meta.tags {
                w.add_tag(&record.note_id, tag)?;
            }
            record.note_id.clone()
        }
        None => {
            let new = NewNote {
                title: parsed.title.clone(),
                body,
                notebook_id: Some(notebook.to_owned()),
                is_todo: meta.todo || meta.completed.is_some(),
                tags: meta.tags.clone(),
                created: meta.created,
                updated: meta.updated.or(meta.created),
            };
            let id = match (mode, state.ids.get(&parsed.rel)) {
                (Mode::Fast, Some(id)) => {
                    w.create_note_as(id, new)?;
                    id.clone()
                }
                _ => w.create_note(new)?.summary.id,
            };
            if let Some(Some(done)) = meta.completed {
                w.update_note(
                    &id,
                    NoteUpdate {
                        todo_completed: Some(Some(done)),
                        ..NoteUpdate::default()
                    },
                )?;
            }
            id
        }
    };
    let mut labels = meta.labels.clone();
    if !meta.aliases.is_empty() {
        labels.push(("aliases".to_owned(), meta.aliases.join(", ")));
    }
    for (name, value) in labels {
        if quire_core::is_dangerous_attribute(&name) {
            item.notes.push(format!(
                "front matter key '{name}' not kept: {}",
                CoreError::DangerousAttribute(name.clone())
            ));
            continue;
        }
        // Without care, a refusal fails the whole batch (done again with care), so nothing half-written stays.
        let set = if mode == Mode::Careful {
            w.attempt(|w| w.set_attribute(&id, quire_core::AttributeKind::Label, &name, &value))
        } else {
            Ok(w.set_attribute(&id, quire_core::AttributeKind::Label, &name, &value)?)
        };
        if let Err(e) = set {
            item.notes.push(format!("front matter key '{name}' not kept: {e}"));
        }
    }
    for (file, attachment_id, attachment) in to_add {
        let added = match mode {
            Mode::Fast => Ok(w.add_attachment_as(&attachment_id, &id, attachment)?),
            Mode::Batch => Ok(w.add_attachment(&id, attachment)?),
            Mode::Careful => w.attempt(|w| w.add_attachment(&id, attachment)),
        };
        match added {
            Ok(info) => {
                state.attachments.insert(file, info.id);
            }
            Err(e) => lost.push(format!("{file} not attached: {e}")),
        }
    }
    if !lost.is_empty() {
        state.items.push(ItemReport {
            path: item.path.clone(),
            outcome: Outcome::Failed,
            note_id: None,
            notes: lost,
        });
    }
    Ok(id)
}

/// The source files (not notes) a note links to or embeds, as relative paths inside the source.
fn linked_files(source: &Source, parsed: &Parsed) -> Vec<String> {
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

pub(crate) enum Link {
    /// `[text](path)` or `![alt](path)`: where the URL is in the body.
    Path { target: String, start: usize, end: usize },
    /// `[[target]]` or `![[target]]`.
    Wiki { target: String },
}

/// The Markdown links with relative targets (no scheme) and the wikilinks of a body, outside code.
fn links_of(body: &str) -> Vec<Link> {
    let mut out = Vec::new();
    for link in quire_core::links::extract(body) {
        if matches!(
            link.kind,
            quire_core::links::LinkKind::Wikilink | quire_core::links::LinkKind::Embed
        ) {
            out.push(Link::Wiki { target: link.target });
        }
    }
    for line in quire_core::markdown::lines(body) {
        if matches!(
            line.kind,
            quire_core::markdown::LineKind::Code | quire_core::markdown::LineKind::Fence
        ) {
            continue;
        }
        let text = line.text;
        let mut search = 0;
        while let Some(found) = text[search..].find("](") {
            let open = search + found + 2;
            let Some(close) = text[open..].find(')') else { break };
            let inside = &text[open..open + close];
            let url_start = open + (inside.len() - inside.trim_start().len());
            let raw = inside.split_whitespace().next().unwrap_or("");
            let url = raw.trim_start_matches('<').trim_end_matches('>');
            let is_relative = !url.is_empty() && !url.contains(':') && !url.starts_with('#') && !url.starts_with("//")
                || url.starts_with(":/");
            let in_code = text[..search + found].matches('`').count() % 2 == 1;
            if is_relative && !in_code {
                out.push(Link::Path {
                    target: url.to_owned(),
                    start: line.byte + url_start,
                    end: line.byte + url_start + raw.len(),
                });
            }
            search = open + close + 1;
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
fn rewrite_links(
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

/// A media type from a file name's extension.
pub(crate) fn mime_of(name: &str) -> &'static str {
    let extension = name.rsplit('.').next().unwrap_or("").to_lowercase();
    match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "bmp" => "image/bmp",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "m4a" => "audio/mp4",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}
