//! A batch: what one device changed between two syncs, as the plaintext inside a sealed `d/D/b/SEQ` file.
//!
//! `QBAT` | format 1 | name (u16 length, UTF-8) | acknowledgements (u32 count; each a device id of 16 bytes and
//! the u64 number of its last batch the maker had applied) | entries (u32 count; each a document id (u16 length,
//! UTF-8: a note's id, or "" for the notebook tree), its u64 generation, and loro's bytes (u32 length)).
//! Integers are big-endian. Every length is checked against what is left: a cut-off or padded batch is refused.

use crate::layout::DeviceId;

const MAGIC: &[u8; 4] = b"QBAT";
const FORMAT: u8 = 1;
/// The stored form: `QBAZ` | the format-1 bytes packed (see [`crate::pack`]).
const PACKED: &[u8; 4] = b"QBAZ";

/// One document's operations in a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The note's id, or "" for the notebook tree.
    pub doc: String,
    /// The document's generation: a higher one replaces the document (a note sealed since starts again).
    pub generation: u64,
    /// The operations (a whole document when the generation starts).
    pub bytes: Vec<u8>,
}

/// What one device changed, and what it had seen when it did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Batch {
    /// The name of the device that made it (for history: "from device NAME").
    pub name: String,
    /// For each other device, the last of its batches the maker had applied: this batch is applied after them.
    pub acks: Vec<(DeviceId, u64)>,
    /// The documents it changes.
    pub entries: Vec<Entry>,
}

impl Batch {
    /// The batch as stored: compressed.
    pub fn to_stored(&self) -> Vec<u8> {
        let mut out = PACKED.to_vec();
        out.extend_from_slice(&crate::pack::pack(&self.encode()));
        out
    }

    /// A batch from [`Batch::to_stored`]'s bytes (or from [`Batch::encode`]'s); `None` if they are not one, whole.
    pub fn from_stored(bytes: &[u8]) -> Option<Batch> {
        match bytes.strip_prefix(PACKED.as_slice()) {
            Some(packed) => Batch::decode(&crate::pack::unpack(packed)?),
            None => Batch::decode(bytes),
        }
    }

    /// The bytes of the batch.
    pub fn encode(&self) -> Vec<u8> {
        let size = 16 + self.name.len() + self.acks.len() * 24;
        let size = size
            + self
                .entries
                .iter()
                .map(|e| 14 + e.doc.len() + e.bytes.len())
                .sum::<usize>();
        let mut out = Vec::with_capacity(size);
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        put_short(&mut out, self.name.as_bytes());
        out.extend_from_slice(&(self.acks.len() as u32).to_be_bytes());
        for (device, seq) in &self.acks {
            out.extend_from_slice(device.as_bytes());
            out.extend_from_slice(&seq.to_be_bytes());
        }
        out.extend_from_slice(&(self.entries.len() as u32).to_be_bytes());
        for entry in &self.entries {
            put_short(&mut out, entry.doc.as_bytes());
            out.extend_from_slice(&entry.generation.to_be_bytes());
            out.extend_from_slice(&(entry.bytes.len() as u32).to_be_bytes());
            out.extend_from_slice(&entry.bytes);
        }
        out
    }

    /// Reads a batch; `None` if the bytes are not one, whole.
    pub fn decode(bytes: &[u8]) -> Option<Batch> {
        let mut r = Cursor::new(bytes);
        if r.take(4)? != MAGIC || r.take(1)? != [FORMAT] {
            return None;
        }
        let name = r.short_text()?;
        let count = r.u32()? as usize;
        let mut acks = Vec::with_capacity(count.min(r.left() / 24));
        for _ in 0..count {
            let id: [u8; 16] = r.take(16)?.try_into().ok()?;
            acks.push((DeviceId::from_bytes(id), r.u64()?));
        }
        let count = r.u32()? as usize;
        let mut entries = Vec::with_capacity(count.min(r.left() / 14));
        for _ in 0..count {
            let doc = r.short_text()?;
            let generation = r.u64()?;
            let len = r.u32()? as usize;
            entries.push(Entry {
                doc,
                generation,
                bytes: r.take(len)?.to_vec(),
            });
        }
        (r.left() == 0).then_some(Batch { name, acks, entries })
    }
}

pub(crate) fn put_short(out: &mut Vec<u8>, bytes: &[u8]) {
    // Names and ids are short: a longer one is cut at a character boundary rather than written wrong.
    let mut len = bytes.len().min(u16::MAX as usize);
    while len < bytes.len() && std::str::from_utf8(&bytes[..len]).is_err() {
        len -= 1;
    }
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&bytes[..len]);
}

pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor { bytes, at: 0 }
    }

    pub(crate) fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    pub(crate) fn short_text(&mut self) -> Option<String> {
        let len = u16::from_be_bytes(self.take(2)?.try_into().ok()?) as usize;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let batch = Batch {
            name: "laptop".into(),
            acks: vec![(DeviceId::from_bytes([7; 16]), 42)],
            entries: vec![
                Entry {
                    doc: String::new(),
                    generation: 0,
                    bytes: vec![1, 2, 3],
                },
                Entry {
                    doc: "ab".repeat(16),
                    generation: 3,
                    bytes: vec![],
                },
            ],
        };
        let bytes = batch.encode();
        assert_eq!(Batch::decode(&bytes), Some(batch));
        for cut in 0..bytes.len() {
            assert_eq!(Batch::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Batch::decode(&longer), None);
        assert_eq!(Batch::decode(b"QBAT\x01\x00\x00\xff\xff\xff\xff"), None);
    }
}
