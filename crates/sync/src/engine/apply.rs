//! Steps 2 and 3 of a sync: upload the outbox; read other devices' batches and apply them in causal order.

use std::collections::{BTreeMap, VecDeque};

use quire_core::Writer;
use quire_core::replica::{ATTACHMENT_DOC, SyncDevice, SyncDoc, SyncedNotebook, TREE_DOC};

/// The documents in one file from which their search entries are written together at the end of its transaction.
const BULK: usize = 64;

/// What applying the tree leaves for after the notes: the live notebooks, the removed ones, whether the tree had
/// changes of its own here.
type TreeApplied = (Vec<SyncedNotebook>, Vec<String>, bool);

use super::fold::{fold_choices, fold_tree_rows, local_note_state, needs_restart, note_doc};
use super::gap::Gap;
use super::map::{note_rows, note_state, notebook_row};
use super::snapshots::Survey;
use super::{Device, SyncError, SyncReport, device_actor, load_doc, now_millis, own_actor, setting, store_doc};
use crate::batch::{Batch, Entry};
use crate::doc::{NoteDoc, TreeDoc};
use crate::file::open_file;
use crate::layout::{DeviceId, SyncPath};
use crate::target::TargetError;

impl Device {
    /// Writes the outbox's batches to the target, each dropped from the outbox once it is there.
    pub(super) async fn upload(&self, report: &mut SyncReport) -> Result<(), SyncError> {
        let (outbox, rewritten) = self.ws.read(&own_actor(&self.name), |r| {
            Ok::<_, quire_core::Error>((r.sync_outbox()?, super::scrub::rewritten(&r.sync_configs()?)))
        })?;
        for (seq, bytes) in outbox {
            let path = SyncPath::Batch(self.me, seq);
            match self.target.put_new(&path, bytes.clone()).await {
                Ok(()) => {}
                // A run that stopped after the upload and before the outbox knew it; the batch may have been
                // rewritten here since (a note sealed), and what is there is its earlier version.
                Err(TargetError::Exists(_)) => {
                    if !rewritten.contains(&seq) && self.target.get(&path).await? != bytes {
                        return Err(SyncError::Invalid(format!(
                            "{} on the target is not the batch this device made under that number: another copy \
                             of this workspace file syncs as this same device. Keep one copy; `quire sync leave` \
                             and `quire sync join` on the other.",
                            path.full()
                        )));
                    }
                }
                Err(other) => return Err(other.into()),
            }
            self.ws.write(&own_actor(&self.name), |w| w.remove_sync_outbox(seq))?;
            report.sent_batches += 1;
        }
        if !rewritten.is_empty() {
            self.ws.write(&own_actor(&self.name), |w| {
                if w.sync_outbox_count()? == 0 {
                    w.set_sync_config(super::setting::REWRITTEN, b"[]")?;
                }
                Ok::<_, quire_core::Error>(())
            })?;
        }
        Ok(())
    }

    /// Reads every other device's batches after the last one applied here and applies those whose
    /// acknowledgements are met, until none is left that can be. A device whose next batch was removed by
    /// compaction is caught up from a snapshot first. Returns what it saw on the target.
    pub(super) async fn apply_others(&self, report: &mut SyncReport) -> Result<Survey, SyncError> {
        let listing = self.target.list_devices().await?;
        report.ignored.extend(listing.foreign.iter().map(|f| f.to_string()));
        let mut known: BTreeMap<String, SyncDevice> = self
            .ws
            .read(&own_actor(&self.name), |r| r.sync_devices())?
            .into_iter()
            .map(|d| (d.id.clone(), d))
            .collect();
        let mut survey = Survey::default();
        for device in listing.found {
            let batches = self.target.list_batches(&device).await?;
            report.ignored.extend(batches.foreign.iter().map(|f| f.to_string()));
            survey.batches.insert(device, batches.found);
        }
        self.catch_up(&mut survey, &mut known, report).await?;
        let mut queues: Vec<(DeviceId, VecDeque<(u64, Batch)>)> = Vec::new();
        let mut gaps = Vec::new();
        for (&device, found) in &survey.batches {
            // A forgotten device is no longer waited for, but what it wrote is still applied when it is there (a
            // device forgotten by mistake, or back after all, syncs again).
            if device == self.me {
                continue;
            }
            let applied = known.get(&device.to_string()).map_or(0, |d| d.applied);
            // Forgotten here (`quire sync forget`): a hole in its batches is no longer waited for, nor reported.
            let forgotten = known.get(&device.to_string()).is_some_and(|d| d.forgotten.is_some());
            let mut queue = VecDeque::new();
            for (expected, &seq) in (applied + 1..).zip(found.iter().filter(|&&seq| seq > applied)) {
                if seq != expected && forgotten {
                    break;
                }
                if seq != expected {
                    // A batch not here yet (a folder that syncs out of order, a listing that lags, a file lost):
                    // later ones wait, and the wait is reported.
                    gaps.push(Gap {
                        device: device.to_string(),
                        // Named below, once the batches before the hole are applied.
                        name: device.to_string(),
                        missing: expected,
                        later: found.last().copied().unwrap_or(seq),
                        since: now_millis(),
                    });
                    break;
                }
                let path = SyncPath::Batch(device, seq);
                let bytes = match self.target.get(&path).await {
                    Ok(bytes) => bytes,
                    Err(TargetError::Missing(_)) => break,
                    Err(other) => return Err(other.into()),
                };
                let batch = open_file(&self.file_key, self.target.id(), &path, &bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|plain| Batch::from_stored(&plain).ok_or_else(|| "not a batch quire reads".to_owned()));
                match batch {
                    Ok(batch) => queue.push_back((seq, batch)),
                    Err(reason) => {
                        report.refused.push(format!("{}: {reason}", path.full()));
                        break;
                    }
                }
            }
            queues.push((device, queue));
        }

        loop {
            let mut progress = false;
            for (device, queue) in &mut queues {
                while let Some((seq, batch)) = queue.front() {
                    let ready = batch.acks.iter().all(|(other, needed)| {
                        *other == self.me
                            || known
                                .get(&other.to_string())
                                .is_some_and(|d| d.forgotten.is_some() || d.applied >= *needed)
                    });
                    if !ready {
                        break;
                    }
                    match self.apply_batch(device, *seq, batch, known.get(&device.to_string())) {
                        Ok((notes, record)) => {
                            report.applied_batches += 1;
                            report.applied_notes += notes;
                            known.insert(record.id.clone(), record);
                            queue.pop_front();
                            progress = true;
                        }
                        Err(error) => {
                            let path = SyncPath::Batch(*device, *seq);
                            report
                                .refused
                                .push(format!("{}: could not be applied: {error}", path.full()));
                            queue.clear();
                        }
                    }
                }
            }
            if !progress {
                break;
            }
        }
        report.waiting = queues.iter().map(|(_, q)| q.len()).sum();
        for gap in &mut gaps {
            if let Some(known) = known.get(&gap.device) {
                gap.name.clone_from(&known.name);
            }
        }
        report.gaps = self.record_gaps(gaps)?;
        report.conflicts += self.conflicts_found.swap(0, std::sync::atomic::Ordering::Relaxed);
        report.kept_aside += self.asides_found.swap(0, std::sync::atomic::Ordering::Relaxed);
        Ok(survey)
    }

    /// One batch, in one transaction: its documents, then the device's record. Returns how many notes it changed
    /// here, and the record.
    fn apply_batch(
        &self,
        device: &DeviceId,
        seq: u64,
        batch: &Batch,
        prior: Option<&SyncDevice>,
    ) -> Result<(usize, SyncDevice), SyncError> {
        let acked = batch
            .acks
            .iter()
            .find(|(other, _)| *other == self.me)
            .map_or(0, |(_, seq)| *seq);
        let record = SyncDevice {
            id: device.to_string(),
            name: batch.name.clone(),
            applied: seq,
            acked: prior.map_or(0, |p| p.acked).max(acked),
            seen: now_millis(),
            // Its batches are applied, but a device forgotten here stays forgotten (a batch of it delivered late
            // must not hold compaction back again); `quire sync status` shows it seen.
            forgotten: prior.and_then(|p| p.forgotten),
        };
        let docs: Vec<(&Entry, DeviceId)> = batch.entries.iter().map(|e| (e, *device)).collect();
        let notes = self
            .ws
            .write(&device_actor(&batch.name, device), |w| -> Result<usize, SyncError> {
                let notes = self.apply_entries(w, &docs)?;
                w.put_sync_device(&record)?;
                if !docs.is_empty() {
                    // Changes applied: the next sync says so in a batch (an empty batch gets no answer).
                    w.set_sync_config(setting::UNACKED, &[1])?;
                }
                Ok(notes)
            })?;
        Ok((notes, record))
    }

    /// Documents from one file (a batch, or a snapshot's part), each with the device whose write it holds: the tree
    /// first, then each note, then attachments, then the notebooks removed. Returns how many notes it changed here.
    pub(super) fn apply_entries(&self, w: &mut Writer<'_>, docs: &[(&Entry, DeviceId)]) -> Result<usize, SyncError> {
        if docs.len() >= BULK {
            // Many notes in one transaction (a join, a snapshot, a device back after a while): their full-text
            // entries and links are written once at the end, as an import does.
            w.defer_search_index();
        }
        let mut tree = None;
        for (entry, _) in docs.iter().filter(|(e, _)| e.doc == TREE_DOC) {
            tree = Some(self.apply_tree(w, entry)?);
        }
        let mut notes = 0;
        let is_note = |e: &Entry| e.doc != TREE_DOC && !e.doc.starts_with(ATTACHMENT_DOC);
        for (entry, origin) in docs.iter().filter(|(e, _)| is_note(e)) {
            if self.apply_note(w, entry, origin)? {
                notes += 1;
            }
        }
        // Attachments after the notes they belong to.
        for (entry, origin) in docs.iter().filter(|(e, _)| e.doc.starts_with(ATTACHMENT_DOC)) {
            self.apply_attachment(w, origin, entry)?;
        }
        // Notebooks removed elsewhere go once the notes that moved out of them have (and only if empty here): after
        // every batch, since those notes may come in a later one.
        let gone = match &tree {
            Some((_, gone, _)) => gone.clone(),
            None => match load_doc(w, TREE_DOC)? {
                Some(stored) => TreeDoc::load(&stored.doc, self.peer)?
                    .state()
                    .into_iter()
                    .filter(|n| n.gone)
                    .map(|n| n.id)
                    .collect(),
                None => Vec::new(),
            },
        };
        if !gone.is_empty() {
            w.apply_synced_notebooks(&[], &gone)?;
        }
        if let Some((live, gone, dirty)) = tree {
            // A removed notebook that still holds notes here is not a change of this device's (folding it would
            // bring it back everywhere): it goes when they have left.
            let rows: Vec<_> = w
                .synced_notebooks()?
                .into_iter()
                .filter(|n| !gone.contains(&n.id))
                .collect();
            if dirty || rows != live {
                w.mark_sync_dirty(TREE_DOC)?;
            } else {
                w.clear_sync_dirty(TREE_DOC)?;
            }
        }
        Ok(notes)
    }

    /// One note's operations: merged with what changed here and was not folded yet, then written to its rows. The
    /// places where they changed the same lines as a change here are recorded as conflicts, from `origin`.
    fn apply_note(&self, w: &mut Writer<'_>, entry: &Entry, origin: &DeviceId) -> Result<bool, SyncError> {
        let id = entry.doc.as_str();
        let incoming = i64::try_from(entry.generation)
            .ok()
            .filter(|g| *g < i64::MAX)
            .ok_or_else(|| SyncError::Invalid(format!("note {id}: generation {} is out of range", entry.generation)))?;
        let stored = load_doc(w, id)?;
        // A note new here: its document is exactly what came (stored as it came, without exporting it again).
        let fresh = stored.is_none();
        let dirty = w.is_sync_dirty(id)?;
        // Choices made here of this note's conflicts, and the body they left: another device's opposite choice made
        // at the same time must not remove both versions (see `conflicts::restored`).
        let chosen = if fresh {
            Vec::new()
        } else {
            w.resolved_sync_conflicts(id)?
        };
        let before_body = if chosen.is_empty() {
            None
        } else {
            w.synced_note(id)?.map(|row| row.body)
        };
        // The plain document a sealed note's new one replaces here, with what changed here folded in: its edits the
        // sealing device lacked are kept (see `kept_from`).
        let mut older = None;
        // Whether the incoming document replaces the stored one (a new note here, or a new generation).
        let mut started = false;
        let (mut doc, generation, exported) = match stored {
            // Operations of a document the note has since left (it was sealed since): superseded.
            Some(stored) if stored.generation > incoming => return Ok(false),
            Some(stored) if stored.generation == incoming => {
                let mut doc = note_doc(&stored.doc, self.peer)?;
                if dirty && let Some(local) = local_note_state(w, id, doc.state().as_ref())? {
                    if needs_restart(&local, doc.state().as_ref()) {
                        // Sealed here since the last fold: the next fold starts the note's next generation, which
                        // supersedes these operations of the old one (folding into the old document would keep
                        // its plain history).
                        return Ok(false);
                    }
                    doc.fold(&local)?;
                    fold_choices(w, id, &mut doc)?;
                }
                (doc, stored.generation, stored.exported)
            }
            // A new note here, or its document started again elsewhere (sealed): it replaces this one.
            other => {
                // Versions of one document say nothing of another's: the new one says which version of each earlier
                // document its sealings saw (of the one just before, `sealed_seen`; of older ones, its lineage).
                let previous = other.filter(|s| !s.doc.is_empty() && s.generation < incoming);
                if let Some(stored) = previous {
                    let mut plain = note_doc(&stored.doc, self.peer)?;
                    if dirty
                        && let Some(local) = local_note_state(w, id, plain.state().as_ref())?
                        && !needs_restart(&local, plain.state().as_ref())
                    {
                        plain.fold(&local)?;
                    }
                    older = Some((plain, stored.generation));
                }
                started = true;
                (NoteDoc::new(self.peer)?, incoming, Vec::new())
            }
        };
        let clean = !doc.changed_since(&exported);
        let imported = doc.import(&entry.bytes)?;
        if imported.pending {
            // Built on operations that never reached this device (those of a device forgotten here): applying it
            // would keep part of it in memory only. Refused, and reported.
            return Err(SyncError::Invalid(format!(
                "note {id}: this change builds on changes of a device whose batches were not applied here"
            )));
        }
        let Some(state) = doc.state() else {
            return Ok(false);
        };
        if state.id != id {
            return Err(SyncError::Invalid(format!(
                "the batch's entry for note {id} holds note {}",
                state.id
            )));
        }
        if state.purged {
            w.apply_synced_purge(id)?;
        } else {
            let mut rows = note_rows(&state);
            let mut aside = None;
            let mut clashes = imported.clashes;
            // The version of the replaced document the sealing saw (a device two documents behind or more reads it
            // in the lineage: it caught up from a snapshot holding only the newest).
            let seen = older.as_ref().and_then(|(_, was)| {
                if was.checked_add(1) == Some(incoming) {
                    doc.sealed_seen()
                } else {
                    doc.lineage().seen(was.max(&0).unsigned_abs()).map(<[u8]>::to_vec)
                }
            });
            let older = older.map(|(older, was)| (older, was.checked_add(1) == Some(incoming)));
            if let Some(body) = older
                .as_ref()
                .filter(|(_, next)| *next)
                .and_then(|(older, _)| kept_from(older, &doc))
            {
                // Sealed elsewhere from an older text: this one, which has everything that one had and more, is
                // sealed here instead (anyone may seal), and goes out as the note's sealed text in the next fold.
                rows.body = body;
                rows.sealed = None;
            } else if let Some((base, ours)) = older
                .as_ref()
                .zip(seen.as_ref())
                .and_then(|((older, _), seen)| unseen_edits(older, seen))
            {
                // Merged at once only by a device that made some of those edits: every device that received them
                // would merge them too, and two merges of one edit meet as two insertions (found in review: lines
                // twice with three devices). The others keep them beside the note, merged at the person's look,
                // by then usually a change made already (counted once).
                let author = older
                    .as_ref()
                    .zip(seen.as_ref())
                    .is_some_and(|((older, _), seen)| older.wrote_beyond(seen));
                if rows.sealed.is_some() || !author {
                    aside = Some((base, ours));
                } else {
                    // Sealed elsewhere and opened since (plain again): merged here, as an offline save is, and sent
                    // with the next fold.
                    let (merged, found) = crate::doc::merge_body(&base, &ours, &rows.body)?;
                    rows.body = merged;
                    clashes.extend(found);
                }
            }
            if let Some(before) = before_body.filter(|_| imported.concurrent) {
                for (conflict, kept) in &chosen {
                    let Some(body) = crate::conflicts::restored(conflict, kept, &before, &rows.body) else {
                        continue;
                    };
                    // Only when another device chose the other version at the same time (its choice is in the
                    // document: an edit that removed the lines is not a choice), and of the devices that chose, only
                    // the lowest peer puts both versions back, to be chosen again: two would put them back twice
                    // (found by the chaos run with three devices: a line there twice). The others get them from it,
                    // and keep their choice on record until then: both versions back in the note undo it, and the
                    // conflict is asked there too (`conflicts::open`; found in use: asked on one device only).
                    let key = crate::doc::Clash::key(&conflict.base, &conflict.ours, &conflict.theirs);
                    if doc.restorer(&key) == Some(doc.peer()) {
                        w.drop_sync_conflict(conflict.id)?;
                        rows.body = body;
                        clashes.push(crate::doc::Clash {
                            base: conflict.base.clone(),
                            ours: conflict.ours.clone(),
                            theirs: conflict.theirs.clone(),
                        });
                    }
                }
            }
            w.apply_synced_note(&rows)?;
            if let Some(lost) = &imported.lost_sealed {
                // Both devices edited the sealed note at once: the other's body won here (one value, the last
                // writer's). This device's is kept beside it, as it was sealed, and merged in when opened.
                let ours = (lost.ours.0, lost.ours.1.as_slice());
                let base = lost.base.as_ref().map(|(v, piece)| (*v, piece.as_slice()));
                w.record_sync_aside_sealed(id, &origin.to_string(), ours, base, now_millis())?;
                self.asides_found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            if let Some((base, ours)) = aside {
                // Sealed elsewhere without edits made here (or received here) that neither text holds whole: this
                // device's text stays beside the note, sealed with it, and is merged in when the person opens it.
                w.record_sync_aside(id, &origin.to_string(), &base, &ours, now_millis())?;
                self.asides_found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            // Conflicts a device settled by keeping both versions (the text tells nothing): not asked here either.
            let settled = doc.settled();
            let open = |c: &str, o: &str, t: &str| !settled.holds(c, o, t);
            clashes.retain(|c| open(&c.base, &c.ours, &c.theirs));
            for known in w.sync_conflicts(Some(id))? {
                if !open(&known.base, &known.ours, &known.theirs) {
                    w.drop_sync_conflict(known.id)?;
                }
            }
            self.record_conflicts(w, id, origin, clashes)?;
        }
        let settled = match w.synced_note(id)? {
            Some(row) => !state.purged && same_note(&note_state(&row), &state),
            None => state.purged,
        };
        let version = doc.version();
        let bytes = if fresh { entry.bytes.clone() } else { doc.save()? };
        self.settle(
            w,
            id,
            generation,
            &bytes,
            version.clone(),
            exported,
            clean,
            dirty || !settled,
        )?;
        super::fold::record_base(w, id, &version, &state)?;
        if started {
            // Kept beside the document too: sealing the note here empties it, and the next one starts from this.
            w.set_sync_lineage(id, &doc.lineage().encode())?;
        }
        Ok(true)
    }

    /// Records the places where another device's change met one made here (each once).
    fn record_conflicts(
        &self,
        w: &mut Writer<'_>,
        id: &str,
        origin: &DeviceId,
        clashes: Vec<crate::doc::Clash>,
    ) -> Result<(), SyncError> {
        if clashes.is_empty() {
            return Ok(());
        }
        let known = w.sync_conflicts(Some(id))?;
        for clash in clashes {
            if known.iter().any(|c| c.ours == clash.ours && c.theirs == clash.theirs) {
                continue;
            }
            w.record_sync_conflict(&quire_core::conflicts::SyncConflict::new(
                id,
                &origin.to_string(),
                &clash.base,
                &clash.ours,
                &clash.theirs,
                now_millis(),
            ))?;
            self.conflicts_found.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// The notebook tree's operations, merged with what changed here, then written to the notebooks (all but the
    /// removals: the caller makes those after the batch's notes).
    fn apply_tree(&self, w: &mut Writer<'_>, entry: &Entry) -> Result<TreeApplied, SyncError> {
        let stored = load_doc(w, TREE_DOC)?;
        let dirty = w.is_sync_dirty(TREE_DOC)?;
        let (mut doc, exported) = match stored {
            Some(stored) => (TreeDoc::load(&stored.doc, self.peer)?, stored.exported),
            None => (TreeDoc::new(self.peer)?, Vec::new()),
        };
        if dirty {
            fold_tree_rows(w, &mut doc)?;
        }
        let clean = !doc.changed_since(&exported);
        if doc.import(&entry.bytes)?.pending {
            return Err(SyncError::Invalid(
                "the notebooks: this change builds on changes of a device whose batches were not applied here".into(),
            ));
        }
        let state = doc.state();
        let live: Vec<_> = state.iter().filter(|n| !n.gone).map(notebook_row).collect();
        let gone: Vec<String> = state.iter().filter(|n| n.gone).map(|n| n.id.clone()).collect();
        w.apply_synced_notebooks(&live, &[])?;
        self.settle(w, TREE_DOC, 0, &doc.save()?, doc.version(), exported, clean, dirty)?;
        Ok((live, gone, dirty))
    }

    /// Stores a document after an import. With no operations of its own unsent before the import, everything it
    /// holds is on the target now; with rows that still differ from it (changed here, or adjusted by the write),
    /// it stays marked changed for the next fold.
    #[expect(clippy::too_many_arguments, reason = "one document's outcome, stored in one place")]
    fn settle(
        &self,
        w: &mut Writer<'_>,
        id: &str,
        generation: i64,
        doc: &[u8],
        version: Vec<u8>,
        exported: Vec<u8>,
        clean: bool,
        changed_here: bool,
    ) -> Result<(), SyncError> {
        store_doc(
            w,
            id,
            &SyncDoc {
                generation,
                doc: doc.to_vec(),
                exported: if clean { version } else { exported },
            },
        )?;
        if changed_here {
            w.mark_sync_dirty(id)?;
        } else {
            w.clear_sync_dirty(id)?;
        }
        Ok(())
    }
}

/// sync.md #3: a note sealed on a device that was behind. When the sealing device said which version of the plain
/// document its sealed text was made from, and the plain document here holds all of that and more (edits that
/// device had not received), the plain text here is the merge of both: returned, to be sealed here. `None` when the
/// sealed text is as new as this, or its device did not know (it had changed the text since; the sealed text wins,
/// as for an edit made while the note was sealed elsewhere).
fn kept_from(older: &NoteDoc, sealed: &NoteDoc) -> Option<String> {
    let plain = older.state().filter(|s| s.sealed.is_none() && !s.purged)?;
    let from = sealed.sealed_from()?;
    (sealed.state()?.sealed.is_some() && older.extends(&from)).then_some(plain.body)
}

/// sync.md #3, the other half: a note sealed on a device that had not seen edits this plain document holds. The
/// edits beyond what it saw (`seen`, a version of this document), as `(base, body)` (the body the two shared, and
/// this document's): kept beside the sealed note until the person opens it, or merged at once when it was opened
/// since. `None` when there are none, or the sealed text has them all.
fn unseen_edits(older: &NoteDoc, seen: &[u8]) -> Option<(String, String)> {
    older.state().filter(|s| s.sealed.is_none() && !s.purged)?;
    older.body_beyond(seen)
}

/// Whether a note's rows say what its merged state says, but for `updated`. Tag names compare without case, as the workspace keeps
/// them (`Work` and `work` are one tag): otherwise two devices spelling a tag differently would rewrite it forever.
fn same_note(row: &crate::doc::NoteState, state: &crate::doc::NoteState) -> bool {
    let lower = |tags: &std::collections::BTreeSet<String>| {
        tags.iter()
            .map(|t| t.to_ascii_lowercase())
            .collect::<std::collections::BTreeSet<_>>()
    };
    let mut row = row.clone();
    let mut state = state.clone();
    // A change applied here moves `updated` past what the note had (see `apply_synced_note`): not a difference.
    row.updated = state.updated;
    if lower(&row.tags) == lower(&state.tags) {
        row.tags.clear();
        state.tags.clear();
    }
    row == state
}
