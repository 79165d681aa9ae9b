//! The keys of sync: the sync key a workspace hands over (derived from its workspace key, outside this crate) and the
//! file key derived from it that seals every file on a target. Both are wiped from memory when dropped, cannot be
//! cloned, and print no bytes.

use std::fmt;

use zeroize::Zeroizing;

/// HKDF's info for the file key. A new kind of key gets a new info string, never this one.
const FILE_KEY_INFO: &[u8] = b"quire sync files v1";
/// HKDF's salt, the one the workspace's other derived keys use.
const SALT: &[u8] = b"quire";

/// The 32-byte secret sync is given: every key of sync is derived from it. Whoever holds it can read and write
/// everything on the targets of that workspace.
pub struct SyncKey(Zeroizing<[u8; 32]>);

impl SyncKey {
    /// Takes the 32 bytes the workspace derived for sync. (Wipe your copy: `bytes` is moved in, but a caller's
    /// array may have been copied before.)
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(Zeroizing::new(bytes))
    }

    /// The 32 bytes, for the workspace to keep (a device syncs while locked).
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key that seals and opens the files on a target: HKDF-SHA256 of the sync key, info `quire sync files v1`.
    pub fn file_key(&self) -> FileKey {
        let mut out = Zeroizing::new([0u8; 32]);
        #[expect(clippy::expect_used, reason = "HKDF-SHA256 refuses only outputs over 8,160 bytes")]
        hkdf::Hkdf::<sha2::Sha256>::new(Some(SALT), self.0.as_ref())
            .expand(FILE_KEY_INFO, out.as_mut())
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        FileKey(out)
    }
}

impl fmt::Debug for SyncKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SyncKey(hidden)")
    }
}

/// The key of XChaCha20-Poly1305 for the files on a target ([`crate::seal_file`], [`crate::open_file`]).
pub struct FileKey(Zeroizing<[u8; 32]>);

impl FileKey {
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for FileKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FileKey(hidden)")
    }
}

#[cfg(test)]
mod tests {
    use super::SyncKey;

    #[test]
    fn the_file_key_is_derived_not_copied_and_never_printed() {
        let key = SyncKey::from_bytes([7; 32]);
        let file = key.file_key();
        assert_ne!(file.bytes(), &[7; 32]);
        assert_eq!(file.bytes(), SyncKey::from_bytes([7; 32]).file_key().bytes());
        assert_ne!(file.bytes(), SyncKey::from_bytes([8; 32]).file_key().bytes());
        assert_eq!(format!("{key:?} {file:?}"), "SyncKey(hidden) FileKey(hidden)");
    }
}
