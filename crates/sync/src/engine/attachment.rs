//! Attachments in sync: each one a document of its own (`a:` and its id) whose whole content travels in a batch entry
//! whenever it changes, last writer wins. No merge: a file is replaced, not edited. The winner of two concurrent
//! changes is the higher (generation, device): the same on every device, whatever order the batches arrive in.
//!
//! The stored document holds the generation, the device that wrote it (`doc`), and a hash of the content last sent
//! or applied (`exported`), so that a fold sends only what changed.

use quire_core::Writer;
use quire_core::replica::{ATTACHMENT_DOC, SyncDoc, SyncedAttachment};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{Device, SyncError, load_doc, store_doc};
use crate::batch::Entry;
use crate::layout::DeviceId;

/// Before the hash in `exported`: the attachment is to be sent again as it is (see [`Device::send_attachments_again`]).
const SEND_AGAIN: &[u8] = b"send-again:";

/// What travels of an attachment besides its bytes.
#[derive(Serialize, Deserialize)]
struct Meta {
    note: String,
    title: String,
    mime: String,
    size: i64,
    text: Option<String>,
    sealed: bool,
    created: i64,
}

/// The entry's bytes: empty for an attachment deleted; else the metadata's length (u32), the metadata (JSON) and the
/// file (or its sealed form).
pub(super) fn encode(attachment: &SyncedAttachment) -> Result<Vec<u8>, SyncError> {
    let meta = Meta {
        note: attachment.note_id.clone(),
        title: attachment.title.clone(),
        mime: attachment.mime.clone(),
        size: attachment.size,
        text: attachment.text.clone(),
        sealed: attachment.sealed.is_some(),
        created: attachment.created,
    };
    let meta = serde_json::to_vec(&meta).map_err(|e| SyncError::Invalid(e.to_string()))?;
    let payload = attachment.sealed.as_deref().unwrap_or(&attachment.data);
    let mut out = Vec::with_capacity(4 + meta.len() + payload.len());
    out.extend_from_slice(&(meta.len() as u32).to_be_bytes());
    out.extend_from_slice(&meta);
    out.extend_from_slice(payload);
    Ok(out)
}

fn decode(id: &str, bytes: &[u8]) -> Option<SyncedAttachment> {
    let (len, rest) = bytes.split_first_chunk::<4>()?;
    let len = u32::from_be_bytes(*len) as usize;
    let meta: Meta = serde_json::from_slice(rest.get(..len)?).ok()?;
    let payload = rest.get(len..)?.to_vec();
    let (data, sealed) = if meta.sealed {
        (Vec::new(), Some(payload))
    } else {
        (payload, None)
    };
    Some(SyncedAttachment {
        id: id.to_owned(),
        note_id: meta.note,
        title: meta.title,
        mime: meta.mime,
        size: meta.size,
        data,
        text: if meta.sealed { None } else { meta.text },
        sealed,
        created: meta.created,
    })
}

fn hash(bytes: &[u8]) -> Vec<u8> {
    Sha256::digest(bytes).to_vec()
}

impl Device {
    /// An attachment's row into the next batch, if it changed since it was last sent or applied.
    pub(super) fn fold_attachment(&self, w: &mut Writer<'_>, doc_id: &str) -> Result<Option<Entry>, SyncError> {
        let id = &doc_id[ATTACHMENT_DOC.len()..];
        let stored = load_doc(w, doc_id)?;
        let bytes = match w.synced_attachment(id)? {
            Some(row) => encode(&row)?,
            // Deleted here: said once, if it was ever sent or received.
            None if stored.is_some() => Vec::new(),
            None => return Ok(None),
        };
        let digest = hash(&bytes);
        if stored.as_ref().is_some_and(|s| s.exported == digest) {
            return Ok(None);
        }
        // Marked to send again (a new target): the same content, as the generation and device it has, so that a
        // newer version elsewhere still wins over it.
        let again = stored
            .as_ref()
            .filter(|s| s.exported.strip_prefix(SEND_AGAIN) == Some(digest.as_slice()));
        let (generation, origin) = match again {
            Some(stored) => (stored.generation, stored.doc.clone()),
            None => (
                stored
                    .as_ref()
                    .map_or(0, |s| s.generation)
                    .checked_add(1)
                    .ok_or(SyncError::Settings("an attachment's generation"))?,
                self.me.as_bytes().to_vec(),
            ),
        };
        store_doc(
            w,
            doc_id,
            &SyncDoc {
                generation,
                doc: origin,
                exported: digest,
            },
        )?;
        Ok(Some(Entry {
            doc: doc_id.to_owned(),
            generation: generation.max(0) as u64,
            bytes,
        }))
    }

    /// Whether the attachment's row differs from what was last sent or applied.
    fn changed_here(&self, w: &Writer<'_>, id: &str, stored: &SyncDoc) -> Result<bool, SyncError> {
        let bytes = match w.synced_attachment(id)? {
            Some(row) => encode(&row)?,
            None => Vec::new(),
        };
        let sent = stored.exported.strip_prefix(SEND_AGAIN).unwrap_or(&stored.exported);
        Ok(hash(&bytes) != sent)
    }

    /// Marks every attachment to be sent again by the next fold, as it is (`start` on a target: the marks said what
    /// the earlier target had, and a new one has none of it; security of the data, found in use: a device that left
    /// and started syncing with a new folder sent its notes there but none of its attachments).
    pub(super) fn send_attachments_again(w: &mut Writer<'_>) -> Result<(), SyncError> {
        for doc_id in w
            .sync_doc_ids()?
            .into_iter()
            .filter(|id| id.starts_with(ATTACHMENT_DOC))
        {
            let Some(mut stored) = load_doc(w, &doc_id)? else {
                continue;
            };
            if stored.exported.starts_with(SEND_AGAIN) {
                continue;
            }
            stored.exported = [SEND_AGAIN, stored.exported.as_slice()].concat();
            store_doc(w, &doc_id, &stored)?;
        }
        Ok(())
    }

    /// Another device's version of an attachment, written if it wins over the one here. Returns whether it did.
    pub(super) fn apply_attachment(
        &self,
        w: &mut Writer<'_>,
        from: &DeviceId,
        entry: &Entry,
    ) -> Result<bool, SyncError> {
        let doc_id = entry.doc.as_str();
        let id = &doc_id[ATTACHMENT_DOC.len()..];
        let incoming = i64::try_from(entry.generation)
            .ok()
            .filter(|g| *g < i64::MAX)
            .ok_or_else(|| SyncError::Invalid(format!("attachment {id}: generation out of range")))?;
        let stored = load_doc(w, doc_id)?;
        // A change made here and not folded yet competes as the generation its fold will give it.
        let ours = match &stored {
            Some(stored) if w.is_sync_dirty(doc_id)? && self.changed_here(w, id, stored)? => {
                Some((stored.generation + 1, self.me.as_bytes().to_vec()))
            }
            Some(stored) => Some((stored.generation, stored.doc.clone())),
            None => None,
        };
        if let Some((generation, device)) = &ours
            && (incoming, from.as_bytes().as_slice()) <= (*generation, device.as_slice())
        {
            return Ok(false);
        }
        let incoming_attachment = if entry.bytes.is_empty() {
            None
        } else {
            Some(
                decode(id, &entry.bytes)
                    .ok_or_else(|| SyncError::Invalid(format!("attachment {id}: not an attachment quire reads")))?,
            )
        };
        // An attachment of a note that is not here (deleted for good here) is not written, and nothing is recorded:
        // a deletion is sent only for what was here.
        if let Some(attachment) = &incoming_attachment
            && w.synced_note(&attachment.note_id)?.is_none()
        {
            return Ok(false);
        }
        match &incoming_attachment {
            None => w.apply_synced_attachment_gone(id)?,
            Some(attachment) => w.apply_synced_attachment(attachment)?,
        }
        store_doc(
            w,
            doc_id,
            &SyncDoc {
                generation: incoming,
                doc: from.as_bytes().to_vec(),
                exported: hash(&entry.bytes),
            },
        )?;
        // Written as it came: nothing of it to send back. Changed by the write (sealed here, or its note missing):
        // the next fold sends what the row says.
        let now = match w.synced_attachment(id)? {
            Some(row) => encode(&row)?,
            None => Vec::new(),
        };
        if now == entry.bytes {
            w.clear_sync_dirty(doc_id)?;
        } else {
            w.mark_sync_dirty(doc_id)?;
        }
        Ok(true)
    }
}
