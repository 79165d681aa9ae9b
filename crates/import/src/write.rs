//! Writing a source, whatever its format, into the workspace as one change set of the import actor, then the
//! report. Every note first (each file an attachment as its note is written), then the linking step once every
//! note has an id: relative links become `quire://` links, relations are set; protection comes last, so the import
//! can still write inside what it protects.

use std::path::Path;

use quire_core::{Error as CoreError, ImportRecord, NoteUpdate, Writer};

use crate::relink::{Ids, read_back, resolve_relation, rewrite_labels, rewrite_links, unresolved_wikilinks};
use crate::source::{Parsed, Source};
use crate::write_note::{Mode, State, note_hash, notebook_for, record_of, relink_unchanged, set_label, write_one};
use crate::{Error, ImportFormat, ImportOptions, ImportReport, ItemReport, Outcome, Progress};

/// Writes what was read from `source` into the workspace, as one change set.
pub(crate) fn write(
    ws: &quire_core::Workspace,
    source: &Path,
    mut read: Source,
    format: ImportFormat,
    options: &ImportOptions,
    progress: Progress<'_>,
) -> Result<ImportReport, Error> {
    read.index_notes();
    let read = &read;
    let key = read.key.clone();
    // The history names the file or folder given; records are kept under the source's key (an app's exports share
    // one, so a new download updates what an older one brought).
    let given = source
        .canonicalize()
        .map_or_else(|_| source.display().to_string(), |p| p.display().to_string());
    let actor = quire_core::Actor::Import { source: given };
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
                let record = record_of(w, &key, parsed, options.into.as_deref())?;
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
            // The batch's notes read back once, for the linking and for what the report says of their links.
            let notes = chunk
                .iter()
                .map(|i| read.notes.get(*i).map_err(|e| read_back(&read.notes[*i].rel, e)))
                .collect::<Result<Vec<_>, _>>()?;
            let link_batch = |w: &mut Writer<'_>| {
                for (i, parsed) in chunk.iter().zip(&notes) {
                    link_one(w, read, &key, *i, parsed, &state, false)?;
                }
                Ok(())
            };
            let batch = if fast { link_batch(w) } else { w.attempt(link_batch) };
            if fast && let Err(e) = batch {
                return Err(if e.is_caller_error() { Stop::Again } else { Stop::Core(e) });
            }
            for (i, parsed) in chunk.iter().zip(&notes) {
                let result = match batch {
                    Ok(()) => Ok(Vec::new()),
                    Err(_) => link_one(w, read, &key, *i, parsed, &state, true),
                };
                let mut warnings = Vec::new();
                let ids = Ids {
                    notes: &state.ids,
                    attachments: &state.attachments,
                    owners: &state.owners,
                };
                if let Err(e) = rewrite_links(read, *i, parsed, &ids, &mut warnings) {
                    warnings.push(e.to_string());
                }
                rewrite_labels(read, parsed, &ids, &mut warnings);
                if matches!(format, ImportFormat::Markdown | ImportFormat::Obsidian) {
                    let mut exists = |name: &str| w.notes_named(name).is_ok_and(|found| !found.is_empty());
                    unresolved_wikilinks(read, parsed, &mut exists, &mut warnings);
                }
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
        relink_unchanged(w, read, &key, &mut state)?;
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

/// Rewrites the relative links of note file `i`, sets the relations its front matter names, protects it if its
/// front matter says so, and records where it came from. `careful`: the rewrite and each relation in a savepoint
/// of its own, and when one fails (a body grown past the limit) the note keeps its links as written, and is still
/// protected and recorded; the reasons are returned as warnings.
fn link_one(
    w: &mut Writer<'_>,
    read: &Source,
    key: &str,
    i: usize,
    parsed: &Parsed,
    state: &State,
    careful: bool,
) -> Result<Vec<String>, CoreError> {
    let Some(id) = state.ids.get(&parsed.rel) else {
        return Ok(Vec::new());
    };
    let mut warnings = Vec::new();
    let ids = Ids {
        notes: &state.ids,
        attachments: &state.attachments,
        owners: &state.owners,
    };
    let body = rewrite_links(read, i, parsed, &ids, &mut warnings)?;
    let labels = rewrite_labels(read, parsed, &ids, &mut warnings);
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
    // Labels whose links were written before their targets had ids (the careful pass): written again.
    let labels: Vec<_> = labels
        .into_iter()
        .filter(|(_, value, _)| value.contains("quire://"))
        .collect();
    let had = if labels.is_empty() {
        Vec::new()
    } else {
        w.attributes(id)?
    };
    for (name, value, json) in labels {
        let same = had
            .iter()
            .any(|a| a.kind == quire_core::AttributeKind::Label && a.name == name && a.value == value);
        if same
            || !had
                .iter()
                .any(|a| a.kind == quire_core::AttributeKind::Label && a.name == name)
        {
            continue;
        }
        let relabel = |w: &mut Writer<'_>| set_label(w, id, &name, &value, json);
        if careful {
            match w.attempt(relabel) {
                Ok(_) => {}
                Err(e) if e.is_caller_error() => problem.push(format!("front matter key '{name}' not kept: {e}")),
                Err(e) => return Err(e),
            }
        } else {
            relabel(w)?;
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
