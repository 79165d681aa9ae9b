//! Compression of what sync stores: a batch's plaintext before it is sealed, and each merge document in the
//! workspace. LZ4 (`lz4_flex`, already in the tree through loro): note text compresses to about half, which keeps
//! the sync state near the size of the text it holds. `u32` big-endian length of the original | LZ4 block.
//! Compressing before encrypting tells someone who reads the target how compressible a batch is, on top of its size.

/// The largest original a packed buffer may claim: more than any batch (4 MiB of operations, or one whole note's
/// document) or document quire writes; a larger claim is refused before anything is allocated.
const MAX_UNPACKED: usize = 256 << 20;

/// `bytes`, compressed.
pub(crate) fn pack(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + bytes.len() / 2);
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&lz4_flex::block::compress(bytes));
    out
}

/// The original of [`pack`]'s bytes; `None` for bytes it did not make (cut off, damaged, or claiming too much).
pub(crate) fn unpack(bytes: &[u8]) -> Option<Vec<u8>> {
    let (len, block) = bytes.split_first_chunk::<4>()?;
    let len = u32::from_be_bytes(*len) as usize;
    if len > MAX_UNPACKED {
        return None;
    }
    let out = lz4_flex::block::decompress(block, len).ok()?;
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_refuses_what_it_did_not_pack() {
        let text = "the same words again and again, the same words again and again ".repeat(50);
        let packed = pack(text.as_bytes());
        assert!(packed.len() < text.len() / 4, "{} of {}", packed.len(), text.len());
        assert_eq!(unpack(&packed).unwrap(), text.as_bytes());
        assert_eq!(unpack(&pack(b"")).unwrap(), b"");
        for cut in 0..packed.len() {
            assert!(
                unpack(&packed[..cut]).is_none_or(|out| out != text.as_bytes()),
                "cut at {cut}"
            );
        }
        let mut huge = packed.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(unpack(&huge), None);
    }
}
