//! What both kinds of document share: the envelope around loro's bytes and the loro document under it.
//!
//! loro imports any loro bytes into any document, so the bytes a document exports say what they are:
//! `QDOC` | format 1 | kind (`n` note, `t` tree) | id length (u16, big-endian) | id (UTF-8; the note's id, or ""
//! for the tree or a note with no state yet) | loro's bytes. A note's bytes go into no other note's document.

use loro::{ExportMode, LoroDoc, VersionVector};

use super::{DocError, internal};

const MAGIC: &[u8; 4] = b"QDOC";
const FORMAT: u8 = 1;

/// Which document the bytes are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Note,
    Tree,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Note => b'n',
            Kind::Tree => b't',
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Note => "a note's document",
            Kind::Tree => "the notebook tree's document",
        }
    }
}

/// A loro document with the peer id of the device writing it.
pub(super) struct Replica {
    pub(super) doc: LoroDoc,
    kind: Kind,
}

impl Replica {
    pub(super) fn new(kind: Kind, peer: u64) -> Result<Self, DocError> {
        let doc = LoroDoc::new();
        doc.set_peer_id(peer).map_err(|_| DocError::ReservedPeer(peer))?;
        Ok(Self { doc, kind })
    }

    /// A document from bytes `save` (or `updates_since`) gave.
    pub(super) fn load(kind: Kind, bytes: &[u8], peer: u64) -> Result<Self, DocError> {
        let replica = Self::new(kind, peer)?;
        let loro_bytes = replica.open(bytes, "")?;
        replica
            .doc
            .import(loro_bytes)
            .map_err(|e| DocError::Damaged(e.to_string()))?;
        Ok(replica)
    }

    /// The whole document, in the envelope: all its operations, without the state they make (loading replays them,
    /// which for one note's document is quick, and the text is not stored twice).
    pub(super) fn save(&self, id: &str) -> Result<Vec<u8>, DocError> {
        let bytes = self.doc.export(ExportMode::all_updates()).map_err(internal)?;
        Ok(self.seal(id, &bytes))
    }

    /// The operations this document has, as an encoded version vector.
    pub(super) fn version(&self) -> Vec<u8> {
        self.doc.oplog_vv().encode()
    }

    /// Whether the document has operations that `version` (empty: none) lacks; a damaged `version` counts as
    /// lacking everything.
    pub(super) fn has_ops_beyond(&self, version: &[u8]) -> bool {
        let from = if version.is_empty() {
            VersionVector::new()
        } else {
            match VersionVector::decode(version) {
                Ok(from) => from,
                Err(_) => return true,
            }
        };
        self.doc.oplog_vv().partial_cmp(&from) != Some(std::cmp::Ordering::Equal)
    }

    /// The operations that `version` lacks, in the envelope; an empty `version` means from the start.
    pub(super) fn updates_since(&self, id: &str, version: &[u8]) -> Result<Vec<u8>, DocError> {
        let from = if version.is_empty() {
            VersionVector::new()
        } else {
            VersionVector::decode(version).map_err(|_| DocError::BadVersion)?
        };
        let bytes = self.doc.export(ExportMode::updates(&from)).map_err(internal)?;
        Ok(self.seal(id, &bytes))
    }

    /// Imports bytes of this document (`id` is the note's, "" when it has none yet). Bad bytes change nothing.
    /// Returns loro's account: the operations applied, and those waiting for others.
    pub(super) fn import(&self, id: &str, bytes: &[u8]) -> Result<loro::ImportStatus, DocError> {
        let loro_bytes = self.open(bytes, id)?;
        // loro checks the bytes (magic, checksum, version) before it applies any of them.
        self.doc
            .import(loro_bytes)
            .map_err(|e| DocError::Damaged(e.to_string()))
    }

    fn seal(&self, id: &str, loro_bytes: &[u8]) -> Vec<u8> {
        // A note id is short; one longer than the header can say is cut (it is only a check, not a key).
        let len = u16::try_from(id.len()).unwrap_or(u16::MAX);
        let id = &id.as_bytes()[..usize::from(len)];
        let mut out = Vec::with_capacity(8 + id.len() + loro_bytes.len());
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        out.push(self.kind.byte());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(id);
        out.extend_from_slice(loro_bytes);
        out
    }

    /// Checks the envelope against this document (of note `id`, "" for any) and returns loro's bytes.
    fn open<'a>(&self, bytes: &'a [u8], id: &str) -> Result<&'a [u8], DocError> {
        let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or(DocError::NotADocument)?;
        let [format, kind, len_hi, len_lo, rest @ ..] = rest else {
            return Err(DocError::NotADocument);
        };
        if *format != FORMAT {
            return Err(DocError::Damaged(format!(
                "format {format} is not one this quire reads (it reads {FORMAT})"
            )));
        }
        let found = match *kind {
            b'n' => Kind::Note,
            b't' => Kind::Tree,
            _ => return Err(DocError::NotADocument),
        };
        if found != self.kind {
            return Err(DocError::WrongKind {
                expected: self.kind.name(),
                found: found.name(),
            });
        }
        let len = usize::from(u16::from_be_bytes([*len_hi, *len_lo]));
        if rest.len() < len {
            return Err(DocError::Damaged("the bytes end inside their header".into()));
        }
        let (found_id, loro_bytes) = rest.split_at(len);
        let found_id = std::str::from_utf8(found_id)
            .map_err(|_| DocError::Damaged("the note id in the header is not text".into()))?;
        if !id.is_empty() && !found_id.is_empty() && found_id != id {
            return Err(DocError::OtherNote {
                expected: id.to_owned(),
                found: found_id.to_owned(),
            });
        }
        Ok(loro_bytes)
    }
}
