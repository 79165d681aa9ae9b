//! Step 1 of a sync: the changed documents take their rows' state, and what no batch holds yet becomes batches in
//! the outbox, all in one transaction.

use quire_core::replica::{ATTACHMENT_DOC, SyncDoc, TREE_DOC};
use quire_core::{Reader, Writer};

use super::map::{note_state, notebook_state};
use super::{BATCH_BYTES, Device, SyncError, SyncReport, load_doc, own_actor, setting, store_doc};
use crate::batch::{Batch, Entry};
use crate::doc::{Clash, Lineage, NoteDoc, NoteState, TreeDoc};
use crate::file::seal_file;
use crate::layout::{DeviceId, SyncPath};

impl Device {
    pub(super) fn fold(&self, report: &mut SyncReport) -> Result<(), SyncError> {
        self.ws.write(&own_actor(&self.name), |w| -> Result<(), SyncError> {
            let dirty = w.sync_dirty()?;
            let mut entries = Vec::new();
            for id in &dirty {
                let entry = if id == TREE_DOC {
                    self.fold_tree(w)?
                } else if id.starts_with(ATTACHMENT_DOC) {
                    self.fold_attachment(w, id)?
                } else {
                    self.fold_note(w, id)?
                };
                entries.extend(entry);
                w.clear_sync_dirty(id)?;
            }
            if entries.is_empty() {
                return Ok(());
            }
            report.sent_docs += entries.len();
            let acks = acks(w)?;
            let mut seq = next_seq(w)?;
            for chunk in split(entries) {
                let batch = Batch {
                    name: self.name.clone(),
                    acks: acks.clone(),
                    entries: chunk,
                };
                let path = SyncPath::Batch(self.me, seq);
                let sealed = seal_file(&self.file_key, self.target.id(), &path, &batch.to_stored())?;
                w.push_sync_outbox(seq, &sealed)?;
                seq += 1;
            }
            w.set_sync_config(setting::NEXT_SEQ, &seq.to_be_bytes())?;
            // Its acknowledgements say what was applied here.
            w.set_sync_config(setting::UNACKED, &[0])?;
            Ok(())
        })
    }

    /// A note's rows into its document; the entry for the next batch, if the document has operations no batch holds.
    pub(super) fn fold_note(&self, w: &mut Writer<'_>, id: &str) -> Result<Option<Entry>, SyncError> {
        let stored = load_doc(w, id)?;
        let (mut doc, mut generation, exported) = match &stored {
            Some(stored) => (
                note_doc(&stored.doc, self.peer)?,
                stored.generation,
                stored.exported.clone(),
            ),
            None => (NoteDoc::new(self.peer)?, 0, Vec::new()),
        };
        let current = doc.state();
        let wanted = match local_note_state(w, id, current.as_ref())? {
            Some(wanted) => Some(wanted),
            // Emptied when sealed, then deleted for good before this fold: the other devices still hold the note.
            None if stored.as_ref().is_some_and(|s| s.doc.is_empty()) => Some(NoteState {
                id: id.to_owned(),
                purged: true,
                ..NoteState::default()
            }),
            // Nothing to fold; the document may still hold operations no batch carries (a deletion folded in while
            // another device's changes were applied here).
            None => None,
        };
        // A note sealed since its document last held it plain starts a new document: the old one's history holds
        // its plain text, which must not stay here or travel on.
        // What the sealings so far saw of the note's documents, when this fold starts a new one (see `Lineage`).
        let mut lineage = None;
        let bytes = match wanted {
            Some(wanted) if needs_restart(&wanted, current.as_ref()) => {
                let seen = doc.lineage().with(generation.max(0) as u64, doc.version());
                doc = NoteDoc::new(self.peer)?;
                generation = generation
                    .checked_add(1)
                    .ok_or(SyncError::Settings("a note's generation"))?;
                doc.fold(&wanted)?;
                doc.set_lineage(&seen)?;
                lineage = Some(seen);
                doc.save()?
            }
            wanted => {
                // Conflicts the person kept both versions of: the text did not change, so the document says it.
                for kept in w.both_kept_sync_conflicts(id)? {
                    doc.settle(&Clash {
                        base: kept.base.clone(),
                        ours: kept.ours.clone(),
                        theirs: kept.theirs.clone(),
                    })?;
                    w.drop_sync_conflict(kept.id)?;
                }
                if let Some(wanted) = &wanted {
                    doc.fold(wanted)?;
                    fold_choices(w, id, &mut doc)?;
                    // A document core emptied when the note was sealed here: the others learn which of their plain
                    // edits the sealed text holds already (see `apply_note`). Also when it was opened again before
                    // this fold: their edits then merge into its plain text.
                    if stored.as_ref().is_some_and(|s| s.doc.is_empty()) {
                        if let Some(from) = w.sync_sealed_from(id)? {
                            doc.set_sealed_from(&from)?;
                        }
                        // Which plain edits the sealing saw, whatever it sealed: a device with edits beyond it
                        // keeps them beside the note (see `apply_note`).
                        if let Some(seen) = w.sync_sealed_seen(id)? {
                            doc.set_sealed_seen(&seen)?;
                            // And for a device two documents behind or more, what the earlier sealings saw.
                            let before = Lineage::decode(&w.sync_lineage(id)?.unwrap_or_default());
                            let seen = before.with(generation.saturating_sub(1).max(0) as u64, seen);
                            doc.set_lineage(&seen)?;
                            lineage = Some(seen);
                        }
                    }
                }
                if !doc.changed_since(&exported) {
                    return Ok(None);
                }
                doc.updates_since(&exported)?
            }
        };
        let version = doc.version();
        store_doc(
            w,
            id,
            &SyncDoc {
                generation,
                doc: doc.save()?,
                exported: version.clone(),
            },
        )?;
        // After the store: the rows they update exist then.
        if let Some(lineage) = lineage {
            w.set_sync_lineage(id, &lineage.encode())?;
        }
        if let Some(state) = doc.state() {
            record_base(w, id, &version, &state)?;
        }
        Ok(Some(Entry {
            doc: id.to_owned(),
            generation: generation.max(0) as u64,
            bytes,
        }))
    }

    /// The notebooks into the tree's document (a notebook the tree has and the rows do not is gone).
    pub(super) fn fold_tree(&self, w: &mut Writer<'_>) -> Result<Option<Entry>, SyncError> {
        let stored = load_doc(w, TREE_DOC)?;
        let (mut doc, exported) = match &stored {
            Some(stored) => (TreeDoc::load(&stored.doc, self.peer)?, stored.exported.clone()),
            None => (TreeDoc::new(self.peer)?, Vec::new()),
        };
        fold_tree_rows(w, &mut doc)?;
        if !doc.changed_since(&exported) {
            return Ok(None);
        }
        let bytes = doc.updates_since(&exported)?;
        store_doc(
            w,
            TREE_DOC,
            &SyncDoc {
                generation: 0,
                doc: doc.save()?,
                exported: doc.version(),
            },
        )?;
        Ok(Some(Entry {
            doc: TREE_DOC.to_owned(),
            generation: 0,
            bytes,
        }))
    }
}

/// What a note's document should hold for its rows here: the rows, or for a note deleted here for good a
/// tombstone (`None` if the document never held the note: nothing to say).
pub(super) fn local_note_state(
    w: &Writer<'_>,
    id: &str,
    current: Option<&NoteState>,
) -> Result<Option<NoteState>, SyncError> {
    Ok(match w.synced_note(id)? {
        Some(row) => Some(note_state(&row)),
        None => match current {
            Some(current) if !current.purged => Some(NoteState {
                purged: true,
                ..current.clone()
            }),
            _ => None,
        },
    })
}

/// The choices made here of a note's conflicts (of one version, or the merge by words), into its document (see
/// `NoteDoc::choose`).
pub(super) fn fold_choices(w: &Writer<'_>, id: &str, doc: &mut NoteDoc) -> Result<(), SyncError> {
    for (c, kept) in w.resolved_sync_conflicts(id)? {
        doc.choose(&Clash::key(&c.base, &c.ours, &c.theirs), &kept)?;
    }
    Ok(())
}

/// A note's stored document; an emptied one (core empties it when the note is sealed) starts again.
pub(super) fn note_doc(bytes: &[u8], peer: u64) -> Result<NoteDoc, SyncError> {
    Ok(if bytes.is_empty() {
        NoteDoc::new(peer)?
    } else {
        NoteDoc::load(bytes, peer)?
    })
}

/// Whether a note's document must start again before it takes `wanted`: the note is sealed now, and the document
/// holds it plain (its history has the plain text) or holds plain text beside a ciphertext.
/// Keeps beside a plain note's document its version and the hash of the body it holds, `state` (see core's
/// `set_sync_doc_base`).
pub(super) fn record_base(w: &mut Writer<'_>, id: &str, version: &[u8], state: &NoteState) -> Result<(), SyncError> {
    if state.sealed.is_none() {
        w.set_sync_doc_base(id, version, &quire_core::replica::body_hash(&state.body))?;
    }
    Ok(())
}

pub(super) fn needs_restart(wanted: &NoteState, current: Option<&NoteState>) -> bool {
    wanted.sealed.is_some() && current.is_some_and(|current| current.sealed.is_none() || !current.body.is_empty())
}

/// The notebooks' rows into the tree's document: a notebook the tree has and the rows do not is gone.
pub(super) fn fold_tree_rows(w: &Writer<'_>, doc: &mut TreeDoc) -> Result<(), SyncError> {
    let rows = w.synced_notebooks()?;
    let mut wanted: Vec<_> = rows.iter().map(notebook_state).collect();
    for known in doc.state() {
        if !known.gone && !rows.iter().any(|row| row.id == known.id) {
            wanted.push(crate::doc::NotebookState { gone: true, ..known });
        }
    }
    doc.fold(&wanted)?;
    Ok(())
}

/// The last batch of each other device applied here (forgotten ones included: what was applied was applied).
pub(super) fn acks(w: &Reader<'_>) -> Result<Vec<(DeviceId, u64)>, SyncError> {
    Ok(w.sync_devices()?
        .into_iter()
        .filter(|d| d.applied > 0)
        .filter_map(|d| d.id.parse::<DeviceId>().ok().map(|id| (id, d.applied)))
        .collect())
}

pub(super) fn next_seq(w: &Reader<'_>) -> Result<u64, SyncError> {
    let bytes = w
        .sync_config(setting::NEXT_SEQ)?
        .ok_or(SyncError::Settings(setting::NEXT_SEQ))?;
    let bytes: [u8; 8] = bytes.try_into().map_err(|_| SyncError::Settings(setting::NEXT_SEQ))?;
    Ok(u64::from_be_bytes(bytes))
}

/// Entries in batches of about [`BATCH_BYTES`] (one larger entry is a batch of its own), in the order they apply.
fn split(mut entries: Vec<Entry>) -> Vec<Vec<Entry>> {
    // The tree, then notes, then attachments: a batch never holds an attachment whose note comes in a later one.
    entries.sort_by_key(|e| match e.doc.as_str() {
        TREE_DOC => 0,
        doc if doc.starts_with(ATTACHMENT_DOC) => 2,
        _ => 1,
    });
    chunks(entries, |e| e.bytes.len() + e.doc.len())
}

/// Items in runs of about [`BATCH_BYTES`] by `size`, in order (one larger item is a run of its own).
pub(super) fn chunks<T>(items: Vec<T>, size: impl Fn(&T) -> usize) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = Vec::new();
    let mut total = 0;
    for item in items {
        let len = size(&item);
        match out.last_mut() {
            Some(last) if total + len <= BATCH_BYTES => {
                total += len;
                last.push(item);
            }
            _ => {
                total = len;
                out.push(vec![item]);
            }
        }
    }
    out
}
