//! Sealed notes: protected notes encrypted at rest, opened only with the workspace's passphrase.
//!
//! The key hierarchy (docs/sealing.md has it with the threat model):
//! - the *workspace key*, 32 random bytes made by `quire lock init`, from which an X25519 key pair is derived;
//! - it is stored only wrapped (XChaCha20-Poly1305): once by a key Argon2id derives from the passphrase (its
//!   parameters and salt stored beside it) and once by the recovery key (32 random bytes shown once);
//! - each sealed note has its own random *note key*, sealed with HPKE to the workspace's public key, so that any
//!   write (an import protecting what it brings in, a note moved into a protected notebook, an undo) can seal
//!   without the passphrase, and only [`Unlocked`] can open;
//! - every piece of a sealed note (body, revisions, attachments, change-log snapshots) is encrypted with its note
//!   key and bound to the note's id, what it is and its version.
//!
//! [`Unlocked`] is the capability to read sealed content. It is made only from the passphrase or the recovery key
//! ([`Workspace::unlock`](crate::Workspace::unlock)), it is not `Clone`, `Serialize` or `Debug`-printable, and only
//! [`read_unlocked`](crate::Workspace::read_unlocked) and [`write_unlocked`](crate::Workspace::write_unlocked) take
//! it, always as the user: a reader or writer made for any other actor has no place to hold it, so an AI actor, an
//! MCP client, a plugin or an import cannot be given it by mistake (and `cargo xtask layering` fails on a mention of
//! it in their crates).

pub(crate) mod crypto;
mod join;
mod lock;

use std::collections::HashMap;
use std::sync::Mutex;

use zeroize::Zeroizing;

pub use lock::{KdfParams, LockStatus, MIN_PASSPHRASE_CHARS, RecoveryKey, SealReport};
pub(crate) use lock::{check_key, sealer};

use crate::error::{Error, Result};
use crypto::{NoteKey, OpenError, PrivateKey, PublicKey, Secret};

/// The unlocked workspace key: what opens sealed notes. See the module docs for who may hold it.
pub struct Unlocked {
    secret: Secret,
    private: PrivateKey,
    public: [u8; 32],
    /// Wraps the note keys this key's holder seals (see `crypto`'s format 2).
    wrapping: Secret,
    /// Note keys already opened, by header: a note's body, revisions and attachments share one.
    opened: Mutex<HashMap<Vec<u8>, Secret>>,
}

impl std::fmt::Debug for Unlocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unlocked(..)")
    }
}

impl Unlocked {
    fn from_secret(secret: Secret) -> Result<Unlocked> {
        let (private, public) = crypto::key_pair(&secret);
        Ok(Unlocked {
            public: crypto::public_key_bytes(&public),
            wrapping: crypto::wrapping_key(&secret)?,
            secret,
            private,
            opened: Mutex::new(HashMap::new()),
        })
    }

    /// The public half, as stored in the workspace: a key opens only the workspace it was made for.
    pub(crate) fn public_bytes(&self) -> &[u8; 32] {
        &self.public
    }

    /// The note key a blob was sealed with.
    pub(crate) fn note_key(&self, note_id: &str, blob: &[u8]) -> std::result::Result<NoteKey, OpenError> {
        let header = crypto::header_of(blob)?;
        let mut cache = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(key) = cache.get(header) {
            return Ok(NoteKey {
                header: header.to_vec(),
                key: key.clone(),
            });
        }
        let key = NoteKey::open(&self.private, &self.wrapping, note_id, blob)?;
        if cache.len() >= 4096 {
            cache.clear();
        }
        cache.insert(key.header.clone(), key.key.clone());
        Ok(key)
    }

    /// A fresh note key wrapped by this key: what a writer holding it seals with.
    pub(crate) fn new_note_key(&self, note_id: &str) -> Result<NoteKey> {
        NoteKey::new_wrapped(&self.wrapping, note_id)
    }

    /// Opens one sealed piece of a note; `what` names it in the error ("its body", "revision 12").
    pub(crate) fn open(
        &self,
        note_id: &str,
        kind: &str,
        version: i64,
        blob: &[u8],
        what: &str,
    ) -> Result<Zeroizing<Vec<u8>>> {
        self.note_key(note_id, blob)
            .and_then(|key| key.unseal(note_id, kind, version, blob))
            .map_err(|_| Error::SealBroken {
                note_id: note_id.to_owned(),
                what: what.to_owned(),
            })
    }

    /// [`Unlocked::open`] for text.
    pub(crate) fn open_text(&self, note_id: &str, kind: &str, version: i64, blob: &[u8], what: &str) -> Result<String> {
        let bytes = self.open(note_id, kind, version, blob, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| Error::SealBroken {
            note_id: note_id.to_owned(),
            what: what.to_owned(),
        })
    }
}

/// What seals: the workspace's public key. Anyone may hold it; it opens nothing.
#[derive(Clone)]
pub(crate) struct Sealer {
    public: PublicKey,
}

impl Sealer {
    pub(crate) fn note_key(&self, note_id: &str) -> Result<NoteKey> {
        NoteKey::new(&self.public, note_id)
    }
}

/// The kinds a sealed piece is bound to (part of what it is encrypted with).
pub(crate) mod kind {
    /// A note's body; the version is the note's `version`.
    pub(crate) const BODY: &str = "body";
    /// A revision's body; the version is the revision's number.
    pub(crate) const REVISION: &str = "revision";
    /// An attachment's data and text; the version is 0, the id is bound as part of the kind.
    pub(crate) const ATTACHMENT: &str = "attachment";
    /// A sync conflict's texts (base, ours, theirs, as JSON); the version is the conflict's number.
    pub(crate) const CONFLICT: &str = "conflict";
}

/// An attachment's data and extracted text, as one sealed piece: the text's length (4 bytes), the text, the data.
pub(crate) fn pack_attachment(data: &[u8], text: Option<&str>) -> Zeroizing<Vec<u8>> {
    let text = text.map(str::as_bytes);
    let mut out = Zeroizing::new(Vec::with_capacity(5 + data.len() + text.map_or(0, <[u8]>::len)));
    match text {
        Some(text) => {
            out.push(1);
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text);
        }
        None => out.push(0),
    }
    out.extend_from_slice(data);
    out
}

/// The reverse of [`pack_attachment`].
pub(crate) fn unpack_attachment(packed: &[u8]) -> Option<(Vec<u8>, Option<String>)> {
    match packed.first()? {
        0 => Some((packed[1..].to_vec(), None)),
        1 => {
            let len = u32::from_le_bytes(packed.get(1..5)?.try_into().ok()?) as usize;
            let text = std::str::from_utf8(packed.get(5..5 + len)?).ok()?.to_owned();
            Some((packed[5 + len..].to_vec(), Some(text)))
        }
        _ => None,
    }
}

/// The kind an attachment's sealed piece is bound to: its id is part of it.
pub(crate) fn attachment_kind(attachment_id: &str) -> String {
    format!("{}:{attachment_id}", kind::ATTACHMENT)
}
