//! Writing one note of a source: found again by its import record (unchanged, a conflict, or updated) or new, in
//! its notebook, with its tags, labels and the files it links to as attachments.

use std::collections::{HashMap, HashSet};

use quire_core::{
    Error as CoreError, ImportRecord, NewAttachment, NewNote, NewNotebook, NoteUpdate, ROOT_NOTEBOOK_ID, Writer,
};

use crate::relink::{Ids, linked_files, read_back, resolve_path, rewrite_labels, rewrite_links};
use crate::source::{Head, Link, Parsed, Source, read_plain_file};
use crate::{ImportOptions, ItemReport, Outcome};

/// What the write steps have made so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct State {
    pub(crate) items: Vec<ItemReport>,
    /// Relative path of a note file → note id.
    pub(crate) ids: HashMap<String, String>,
    /// Relative path of a file → attachment id.
    pub(crate) attachments: HashMap<String, String>,
    /// Relative path of a file → the note it is an attachment of (the note's relative path).
    pub(crate) owners: HashMap<String, String>,
    /// Relative folder → notebook id.
    pub(crate) notebooks: HashMap<String, String>,
    /// Notes whose links are rewritten once every note has an id (indexes into the source's notes).
    pub(crate) to_link: Vec<usize>,
    /// Attachments that were there before (found again on a re-import): not counted as added.
    pub(crate) reused: HashSet<String>,
    /// The import records of the notes still to write, when the fast pass looked them up (a note still in quire).
    pub(crate) records: HashMap<usize, Option<ImportRecord>>,
    /// A note (index into the source's notes) → its report (index into `items`).
    pub(crate) item_of: HashMap<usize, usize>,
    /// Notes unchanged at the source (indexes into the source's notes), for [`relink_unchanged`].
    pub(crate) unchanged: Vec<usize>,
}

/// How much care a write takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The pass without savepoints: the note is written once, its links already pointing at the ids reserved
    /// for every note and attachment; any refusal is returned (the pass is run again with care).
    Fast,
    /// Inside a batch's savepoint: any refusal is returned, to take the batch back.
    Batch,
    /// In savepoints of its own: a refused label or attachment is reported and the note kept.
    Careful,
}

/// Writes the note file `i`. `Careful`: in a savepoint of its own, with its failure reported rather than returned
/// (the way a batch that failed is done again); otherwise any failure is returned, to take the batch (or the
/// fast pass) back.
pub(crate) fn write_one(
    w: &mut Writer<'_>,
    read: &Source,
    key: &str,
    i: usize,
    options: &ImportOptions,
    state: &mut State,
    mode: Mode,
) -> Result<(), CoreError> {
    let careful = mode == Mode::Careful;
    let parsed = &read.notes.get(i).map_err(|e| read_back(&read.notes[i].rel, e))?;
    let mut item = ItemReport {
        path: parsed.shown.clone(),
        outcome: Outcome::Imported,
        note_id: None,
        notes: parsed.notices.clone(),
    };
    // Looked up already by the fast pass.
    let record = match state.records.remove(&i) {
        Some(record) => record,
        None => record_of(w, key, &read.notes[i], options.into.as_deref())?,
    };
    let existing = record.as_ref();
    if let Some(record) = existing {
        item.note_id = Some(record.note_id.clone());
        state.ids.insert(parsed.rel.clone(), record.note_id.clone());
        if record.source_hash == parsed.hash {
            item.outcome = Outcome::Unchanged;
            state.unchanged.push(i);
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
        // In quire's trash and changed at the source (restored from its app's trash, say): back out, then updated
        // (and back to the trash when the source has it there still). Unchanged at the source, it stays where the
        // person put it.
        if w.note_summary(&record.note_id).is_ok_and(|n| n.deleted.is_some()) {
            w.restore_note(&record.note_id)?;
        }
    }
    let write = |w: &mut Writer<'_>, item: &mut ItemReport, state: &mut State| {
        let notebook = notebook_for(w, read, &parsed.folder, options.into.as_deref(), &mut state.notebooks)?;
        write_note(w, read, i, parsed, &notebook, existing, state, item, mode)
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

/// Notes unchanged at the source whose relative links name a note that is new in this import (its file had failed
/// before, or came later: found in use, such a link stayed as written after the file was fixed and imported again):
/// those links are made now, in the text as it is in quire, when that text is as the last import left it. Nothing
/// else of the note is touched (its attachments, labels, relations and protection are the person's since).
pub(crate) fn relink_unchanged(
    w: &mut Writer<'_>,
    read: &Source,
    key: &str,
    state: &mut State,
) -> Result<(), CoreError> {
    let new: HashSet<&str> = state
        .item_of
        .iter()
        .filter(|(_, at)| {
            state
                .items
                .get(**at)
                .is_some_and(|item| item.outcome == Outcome::Imported)
        })
        .map(|(i, _)| read.notes[*i].rel.as_str())
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    for &i in &state.unchanged {
        let parsed = read.notes.get(i).map_err(|e| read_back(&read.notes[i].rel, e))?;
        let mut made = Vec::new();
        for link in parsed.links() {
            let Link::Path { target, .. } = link else {
                continue;
            };
            let Some(rel) = resolve_path(read, &parsed.folder, target) else {
                continue;
            };
            if let (true, Some(id)) = (new.contains(rel.as_str()), state.ids.get(&rel)) {
                let anchor = target.split_once('#').map(|(_, a)| format!("#{a}")).unwrap_or_default();
                made.push((target.clone(), format!("quire://note/{id}{anchor}")));
            }
        }
        let Some(record) = (if made.is_empty() {
            None
        } else {
            w.import_record(key, &parsed.rel)?
        }) else {
            continue;
        };
        let Ok(note) = w.note(&record.note_id) else {
            continue;
        };
        if note.summary.is_protected
            || note.summary.deleted.is_some()
            || note_hash(&note.summary.title, &note.body) != record.note_hash
        {
            continue;
        }
        let mut body = note.body.clone();
        for (target, to) in &made {
            body = body.replace(&format!("]({target})"), &format!("]({to})"));
        }
        if body == note.body {
            continue;
        }
        let relinked = w.attempt(|w| {
            let note = w.update_note(
                &record.note_id,
                NoteUpdate {
                    body: Some(body.clone()),
                    ..NoteUpdate::default()
                },
            )?;
            w.record_import(
                key,
                &parsed.rel,
                &ImportRecord {
                    note_hash: note_hash(&note.summary.title, &note.body),
                    ..record.clone()
                },
            )
        });
        let said = match relinked {
            Ok(()) => format!(
                "its links to {} now point at the notes this import brought",
                made.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>().join(", ")
            ),
            Err(e) if e.is_caller_error() => format!("its links left as written at the last import stay so: {e}"),
            Err(e) => return Err(e),
        };
        if let Some(item) = state.item_of.get(&i).and_then(|at| state.items.get_mut(*at)) {
            item.notes.push(said);
        }
    }
    Ok(())
}

/// What an earlier import made of `parsed`, if anything: its record (a note deleted for good is imported again; one in
/// the trash is the same note). A day's journal with no record takes the day's daily note when that is there and
/// empty (`quire today` made it before the import): filled, not made again.
pub(crate) fn record_of(
    w: &Writer<'_>,
    key: &str,
    parsed: &Head,
    into: Option<&str>,
) -> Result<Option<ImportRecord>, CoreError> {
    if let Some(record) = w
        .import_record(key, &parsed.rel)?
        .filter(|r| w.note_summary(&r.note_id).is_ok())
    {
        return Ok(Some(record));
    }
    if !parsed.daily || into.is_some() {
        return Ok(None);
    }
    for note in w.notes_named(&parsed.title)? {
        if note.deleted.is_some()
            || note.title != parsed.title
            || w.notebook_path_text(&note.notebook_id)? != parsed.folder
        {
            continue;
        }
        let full = w.note(&note.id)?;
        if full.body.trim().is_empty() {
            return Ok(Some(ImportRecord {
                note_hash: note_hash(&full.summary.title, &full.body),
                note_id: note.id,
                source_hash: String::new(),
            }));
        }
    }
    Ok(None)
}

/// The notebook for a folder, created (with its parents) when missing; found by title on a re-import.
pub(crate) fn notebook_for(
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

/// Writes one note (new, or updated from its source) with its tags, labels and attachments; returns its id.
#[expect(
    clippy::too_many_arguments,
    reason = "the steps of one note share the writer, the source, the state and the report; a struct would only rename them"
)]
fn write_note(
    w: &mut Writer<'_>,
    source: &Source,
    i: usize,
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
            state.owners.insert(file.clone(), parsed.rel.clone());
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
            mime: source
                .mimes
                .get(&file)
                .cloned()
                .unwrap_or_else(|| mime_of(&title).to_owned()),
            title,
            data,
            text: None,
        };
        let id = if mode == Mode::Fast {
            let id = w.reserve_id()?;
            state.attachments.insert(file.clone(), id.clone());
            state.owners.insert(file.clone(), parsed.rel.clone());
            id
        } else {
            String::new()
        };
        to_add.push((file, id, attachment));
    }
    let ids = Ids {
        notes: &state.ids,
        attachments: &state.attachments,
        owners: &state.owners,
    };
    let body = if mode == Mode::Fast {
        rewrite_links(source, i, parsed, &ids, &mut Vec::new())?
    } else {
        source
            .notes
            .body(i)
            .map_err(|e| read_back(&parsed.shown, e))?
            .into_owned()
    };
    // Links in labels are rewritten as the body's: all at once in the fast pass (every id is known), otherwise to
    // what is known so far, and again by the linking step.
    let labels = rewrite_labels(source, parsed, &ids, &mut Vec::new());
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
    if existing.is_some() {
        for flag in source.flag_labels {
            let kept = labels.iter().any(|(name, ..)| name == flag);
            if !kept {
                let gone: Vec<String> = w
                    .attributes(&id)?
                    .into_iter()
                    .filter(|a| a.kind == quire_core::AttributeKind::Label && a.name == *flag)
                    .map(|a| a.id)
                    .collect();
                for attribute in gone {
                    w.delete_attribute(&id, &attribute)?;
                }
            }
        }
    }
    for (name, value, json) in labels {
        if quire_core::is_dangerous_attribute(&name) {
            item.notes.push(format!(
                "front matter key '{name}' not kept: {}",
                CoreError::DangerousAttribute(name.clone())
            ));
            continue;
        }
        // Without care, a refusal fails the whole batch (done again with care), so nothing half-written stays.
        let set = if mode == Mode::Careful {
            w.attempt(|w| set_label(w, &id, &name, &value, json))
        } else {
            Ok(set_label(w, &id, &name, &value, json)?)
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
                state.owners.insert(file.clone(), parsed.rel.clone());
                state.attachments.insert(file, info.id);
            }
            Err(e) => lost.push(format!("{file} not attached: {e}")),
        }
    }
    // A note in the source app's trash goes to quire's (once: a re-import finds it there).
    if meta.trashed && w.note_summary(&id)?.deleted.is_none() {
        w.trash_note(&id)?;
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

/// Sets a label from the source: text, or a structured value (JSON text).
pub(crate) fn set_label(
    w: &mut Writer<'_>,
    note: &str,
    name: &str,
    value: &str,
    json: bool,
) -> Result<quire_core::Attribute, CoreError> {
    if json {
        w.set_json_label(note, name, value)
    } else {
        w.set_attribute(note, quire_core::AttributeKind::Label, name, value)
    }
}

/// A hash of a note's title and body, to see later whether it changed in quire.
pub(crate) fn note_hash(title: &str, body: &str) -> String {
    quire_core::import_note_hash(title, body)
}

/// A media type from a file name's extension.
fn mime_of(name: &str) -> &'static str {
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
