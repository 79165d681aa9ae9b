//! The outbox after a note is sealed: batches made here and not uploaded yet may hold the note's earlier plain
//! operations (or an attachment's plain bytes), sealed with the sync key that lies in the same workspace file. They
//! lose those entries before anything else happens, also while the target is out of reach; the sealed note goes in a
//! later batch (core started its document again, and marked it changed).
//!
//! A batch rewritten here may already be on the target (a sync that stopped after the upload and before the outbox
//! knew it): the upload then finds the earlier bytes there, and takes them as uploaded ([`rewritten`]).

use std::collections::BTreeSet;

use quire_core::Workspace;
use quire_core::replica::{ATTACHMENT_DOC, TREE_DOC};

use super::{Device, Settings, SyncError, own_actor, setting};
use crate::batch::{Batch, Entry};
use crate::file::{open_file, seal_file};
use crate::key::SyncKey;
use crate::layout::SyncPath;

impl Device {
    /// Drops from the outbox's batches what a note sealed since they were made said in plain (see the module's
    /// docs); the number of batches rewritten. Reads no target: it runs while the target is away too.
    pub fn scrub_outbox(ws: &Workspace) -> Result<usize, SyncError> {
        let Some(settings) = Settings::read(ws)? else {
            return Ok(0);
        };
        let file_key = SyncKey::from_bytes(settings.key).file_key();
        ws.write(&own_actor(&settings.name), |w| -> Result<usize, SyncError> {
            let mut rewritten = rewritten(&w.sync_configs()?);
            let mut count = 0;
            for (seq, bytes) in w.sync_outbox()? {
                let path = SyncPath::Batch(settings.device, seq);
                let plain = open_file(&file_key, &settings.target_id, &path, &bytes)
                    .map_err(|e| SyncError::Invalid(format!("this device's unsent batch {seq}: {e}")))?;
                let mut batch = Batch::from_stored(&plain)
                    .ok_or_else(|| SyncError::Invalid(format!("this device's unsent batch {seq} is damaged")))?;
                let before = batch.entries.len();
                let mut kept = Vec::with_capacity(before);
                for entry in std::mem::take(&mut batch.entries) {
                    if !superseded_by_sealing(w, &entry)? {
                        kept.push(entry);
                    }
                }
                if kept.len() == before {
                    continue;
                }
                batch.entries = kept;
                w.replace_sync_outbox(
                    seq,
                    &seal_file(&file_key, &settings.target_id, &path, &batch.to_stored())?,
                )?;
                rewritten.insert(seq);
                count += 1;
            }
            if count > 0 {
                let bytes = serde_json::to_vec(&rewritten).map_err(|_| SyncError::Settings("rewritten batches"))?;
                w.set_sync_config(setting::REWRITTEN, &bytes)?;
            }
            Ok(count)
        })
    }
}

/// Whether an unsent entry holds what a sealing since made secret: a note's operations of a generation its document
/// has left (core starts a note's document again when it seals the note), or an attachment's state from before it
/// was sealed (the next fold sends its whole sealed row).
fn superseded_by_sealing(r: &quire_core::Reader<'_>, entry: &Entry) -> Result<bool, SyncError> {
    if entry.doc == TREE_DOC {
        return Ok(false);
    }
    if let Some(attachment) = entry.doc.strip_prefix(ATTACHMENT_DOC) {
        let sealed = r.synced_attachment(attachment)?.is_some_and(|a| a.sealed.is_some());
        return Ok(sealed && r.is_sync_dirty(&entry.doc)?);
    }
    let generation = r.sync_doc(&entry.doc)?.map_or(0, |d| d.generation.max(0) as u64);
    Ok(entry.generation < generation)
}

/// The outbox's batches rewritten by [`Device::scrub_outbox`] since the outbox was last empty.
pub(super) fn rewritten(configs: &std::collections::BTreeMap<String, Vec<u8>>) -> BTreeSet<u64> {
    configs
        .get(setting::REWRITTEN)
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .unwrap_or_default()
}
