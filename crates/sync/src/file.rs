//! The format of every sealed file on a target: encrypted and authenticated with the file key, and bound to the
//! target and the path it was written to, so a file that was changed, renamed, replayed under another name or copied
//! from another target does not open.
//!
//! ```text
//! 4 bytes   b"QSY1"
//! 24 bytes  XChaCha20 nonce (random)
//! rest      XChaCha20-Poly1305(file key, nonce, plaintext, aad)
//! aad       b"quire-sync-v1\0" | target id (32 hex digits) | b"\0" | path relative to quire-sync/v1/
//! ```
//!
//! The target learns each file's size and time, nothing else.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::Zeroizing;

use crate::key::FileKey;
use crate::layout::{NoRandomness, SyncPath, TargetId, random_bytes};

/// The first bytes of every sealed file.
pub const MAGIC: &[u8; 4] = b"QSY1";
const NONCE: usize = 24;
const TAG: usize = 16;
const AAD_PREFIX: &[u8] = b"quire-sync-v1\0";

/// Why a file could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// It does not start with `QSY1`: quire did not write it (or not this version of the format).
    #[error("not a quire sync file: it does not start with the QSY1 header")]
    NotOurs,
    /// It starts like one but is too short to hold a nonce and a check: cut off.
    #[error("damaged: the file is cut off (too short to be a quire sync file)")]
    Truncated,
    /// Its check failed. Authenticated encryption cannot tell these apart, and must not: the bytes were changed (a
    /// damaged or tampered file), or the file was sealed with another key (another workspace), for another target,
    /// or under another path (renamed, or replayed in place of another file).
    #[error(
        "refused: the file's check failed: it was damaged or changed, or it was sealed with another key, for another \
         target or under another name"
    )]
    CheckFailed,
}

/// What the check binds besides the content.
fn aad(target: &TargetId, path: &SyncPath) -> Vec<u8> {
    let relative = path.relative();
    let mut aad = Vec::with_capacity(AAD_PREFIX.len() + 33 + relative.len());
    aad.extend_from_slice(AAD_PREFIX);
    aad.extend_from_slice(target.to_string().as_bytes());
    aad.push(0);
    aad.extend_from_slice(relative.as_bytes());
    aad
}

/// Seals `plaintext` for the file at `path` on the target `target`; nothing without random bytes for its nonce.
pub fn seal_file(key: &FileKey, target: &TargetId, path: &SyncPath, plaintext: &[u8]) -> Result<Vec<u8>, NoRandomness> {
    let mut nonce = [0u8; NONCE];
    random_bytes(&mut nonce)?;
    let cipher = XChaCha20Poly1305::new(key.bytes().into());
    let aad = aad(target, path);
    #[expect(
        clippy::expect_used,
        reason = "XChaCha20-Poly1305 seals any message below 256 GiB; a file is far smaller"
    )]
    let sealed = cipher
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: plaintext,
                aad: &aad,
            },
        )
        .expect("XChaCha20-Poly1305 seals any message below its size limit");
    let mut out = Vec::with_capacity(MAGIC.len() + NONCE + sealed.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Opens a file read from `path` on the target `target`. The plaintext is wiped from memory when dropped.
pub fn open_file(
    key: &FileKey,
    target: &TargetId,
    path: &SyncPath,
    file: &[u8],
) -> Result<Zeroizing<Vec<u8>>, FileError> {
    let Some(rest) = file.strip_prefix(MAGIC.as_slice()) else {
        return Err(FileError::NotOurs);
    };
    if rest.len() < NONCE + TAG {
        return Err(FileError::Truncated);
    }
    let (nonce, sealed) = rest.split_at(NONCE);
    let nonce = XNonce::try_from(nonce).map_err(|_| FileError::Truncated)?;
    let aad = aad(target, path);
    XChaCha20Poly1305::new(key.bytes().into())
        .decrypt(&nonce, Payload { msg: sealed, aad: &aad })
        .map(Zeroizing::new)
        .map_err(|_| FileError::CheckFailed)
}

#[cfg(test)]
mod tests {
    use super::{FileError, aad, open_file, seal_file};
    use crate::key::SyncKey;
    use crate::layout::{DeviceId, SyncPath, TargetId};

    #[test]
    fn the_check_binds_the_target_and_the_path_unambiguously() {
        let target: TargetId = "00112233445566778899aabbccddeeff".parse().unwrap();
        let device: DeviceId = "0123456789abcdef0123456789abcdef".parse().unwrap();
        let bound = aad(&target, &SyncPath::Batch(device, 3));
        let expected = format!("quire-sync-v1\0{target}\0d/{device}/b/000000000003");
        assert_eq!(bound, expected.as_bytes());
    }

    #[test]
    fn the_three_failures_are_told_apart() {
        let key = SyncKey::from_bytes([1; 32]).file_key();
        let target = TargetId::random().unwrap();
        let path = SyncPath::Batch(DeviceId::random().unwrap(), 1);
        let sealed = seal_file(&key, &target, &path, b"hello").unwrap();
        assert_eq!(&sealed[..4], b"QSY1");
        assert_eq!(sealed.len(), 4 + 24 + 5 + 16);
        assert_eq!(open_file(&key, &target, &path, &sealed).unwrap().as_slice(), b"hello");
        assert_eq!(open_file(&key, &target, &path, b"hello"), Err(FileError::NotOurs));
        assert_eq!(
            open_file(&key, &target, &path, &sealed[..40]),
            Err(FileError::Truncated)
        );
        let other = SyncKey::from_bytes([2; 32]).file_key();
        assert_eq!(open_file(&other, &target, &path, &sealed), Err(FileError::CheckFailed));
    }
}
