//! A snapshot: every document a device holds, whole, as of the batches it had applied, in parts of a few MiB
//! (`d/D/s/N-PART`, from part 1) and a manifest written last (part 0, no documents): a snapshot whose manifest is
//! there is whole. It lets a device that finds another's early batches removed start from it instead, and lets each
//! device remove its own batches once every device still syncing has applied them (compaction).
//!
//! A part's plaintext: `QSNP` | format 1 | maker's name (u16 length, UTF-8) | part (u32, from 1) | parts (u32) |
//! covers (u32 count; each a device id of 16 bytes, the u64 number of its last batch the state holds, 1 if the
//! maker had forgotten it (else 0), and its name, u16 length) | entries (u32 count; each a document id (u16 length), its u64 generation, the 16-byte id of the device
//! whose write it holds (attachments: ties between two writes are broken by it) and the document (u32 length)).
//! Every part carries the covers and the count, so any part tells what the whole is. Stored as `QSNZ` and the bytes
//! packed (see [`crate::pack`]).

use crate::batch::{Cursor, Entry, put_short};
use crate::layout::DeviceId;

const MAGIC: &[u8; 4] = b"QSNP";
const FORMAT: u8 = 1;
const PACKED: &[u8; 4] = b"QSNZ";

/// What a snapshot holds of one device: the last of its batches applied into it, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cover {
    /// The device.
    pub(crate) device: DeviceId,
    /// Its last batch the snapshot holds.
    pub(crate) seq: u64,
    /// The name it gave itself.
    pub(crate) name: String,
    /// Whether the maker had forgotten it (it holds no device's compaction back).
    pub(crate) forgotten: bool,
}

/// One document of a snapshot, and the device whose write of it the snapshot holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Whole {
    /// The document: its id, generation and every operation of its generation (an attachment: its content).
    pub(crate) entry: Entry,
    /// The device that wrote it last (for an attachment; the maker for the others).
    pub(crate) origin: DeviceId,
}

/// One part of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Part {
    /// The name of the device that made it.
    pub(crate) name: String,
    /// Its number, from 1; 0 for the manifest.
    pub(crate) part: u32,
    /// How many parts the snapshot has.
    pub(crate) parts: u32,
    /// What the whole snapshot holds of each device (the maker included).
    pub(crate) covers: Vec<Cover>,
    /// The documents of this part.
    pub(crate) docs: Vec<Whole>,
}

impl Part {
    /// The part as stored: compressed.
    pub(crate) fn to_stored(&self) -> Vec<u8> {
        let mut out = PACKED.to_vec();
        out.extend_from_slice(&crate::pack::pack(&self.encode()));
        out
    }

    /// A part from [`Part::to_stored`]'s bytes; `None` if they are not one, whole.
    pub(crate) fn from_stored(bytes: &[u8]) -> Option<Part> {
        Part::decode(&crate::pack::unpack(bytes.strip_prefix(PACKED.as_slice())?)?)
    }

    fn encode(&self) -> Vec<u8> {
        let size = self
            .docs
            .iter()
            .map(|d| 30 + d.entry.doc.len() + d.entry.bytes.len())
            .sum::<usize>();
        let mut out = Vec::with_capacity(32 + self.name.len() + self.covers.len() * 40 + size);
        out.extend_from_slice(MAGIC);
        out.push(FORMAT);
        put_short(&mut out, self.name.as_bytes());
        out.extend_from_slice(&self.part.to_be_bytes());
        out.extend_from_slice(&self.parts.to_be_bytes());
        out.extend_from_slice(&(self.covers.len() as u32).to_be_bytes());
        for cover in &self.covers {
            out.extend_from_slice(cover.device.as_bytes());
            out.extend_from_slice(&cover.seq.to_be_bytes());
            out.push(u8::from(cover.forgotten));
            put_short(&mut out, cover.name.as_bytes());
        }
        out.extend_from_slice(&(self.docs.len() as u32).to_be_bytes());
        for whole in &self.docs {
            put_short(&mut out, whole.entry.doc.as_bytes());
            out.extend_from_slice(&whole.entry.generation.to_be_bytes());
            out.extend_from_slice(whole.origin.as_bytes());
            out.extend_from_slice(&(whole.entry.bytes.len() as u32).to_be_bytes());
            out.extend_from_slice(&whole.entry.bytes);
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<Part> {
        let mut r = Cursor::new(bytes);
        if r.take(4)? != MAGIC || r.take(1)? != [FORMAT] {
            return None;
        }
        let name = r.short_text()?;
        let part = r.u32()?;
        let parts = r.u32()?;
        if part > parts {
            return None;
        }
        let count = r.u32()? as usize;
        let mut covers = Vec::with_capacity(count.min(r.left() / 26));
        for _ in 0..count {
            let device = DeviceId::from_bytes(r.take(16)?.try_into().ok()?);
            let seq = r.u64()?;
            let forgotten = match r.take(1)? {
                [0] => false,
                [1] => true,
                _ => return None,
            };
            covers.push(Cover {
                device,
                seq,
                name: r.short_text()?,
                forgotten,
            });
        }
        let count = r.u32()? as usize;
        let mut docs = Vec::with_capacity(count.min(r.left() / 30));
        for _ in 0..count {
            let doc = r.short_text()?;
            let generation = r.u64()?;
            let origin = DeviceId::from_bytes(r.take(16)?.try_into().ok()?);
            let len = r.u32()? as usize;
            docs.push(Whole {
                entry: Entry {
                    doc,
                    generation,
                    bytes: r.take(len)?.to_vec(),
                },
                origin,
            });
        }
        (r.left() == 0).then_some(Part {
            name,
            part,
            parts,
            covers,
            docs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let part = Part {
            name: "desk".into(),
            part: 2,
            parts: 3,
            covers: vec![Cover {
                device: DeviceId::from_bytes([1; 16]),
                seq: 9,
                name: "laptop".into(),
                forgotten: true,
            }],
            docs: vec![Whole {
                entry: Entry {
                    doc: "a:xyz".into(),
                    generation: 4,
                    bytes: vec![5, 6],
                },
                origin: DeviceId::from_bytes([2; 16]),
            }],
        };
        let stored = part.to_stored();
        assert_eq!(Part::from_stored(&stored), Some(part.clone()));
        let plain = part.encode();
        for cut in 0..plain.len() {
            assert_eq!(Part::decode(&plain[..cut]), None, "cut at {cut}");
        }
        let mut longer = plain.clone();
        longer.push(0);
        assert_eq!(Part::decode(&longer), None);
        // A batch is not a part.
        assert_eq!(Part::from_stored(&crate::batch::Batch::default().to_stored()), None);
        let beyond = Part { part: 4, ..part };
        assert_eq!(Part::decode(&beyond.encode()), None);
    }
}
