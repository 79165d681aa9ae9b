//! The cryptography of sealed notes, all of it from audited crates: Argon2id turns a passphrase into a key,
//! XChaCha20-Poly1305 encrypts and authenticates, HPKE (RFC 9180: X25519, HKDF-SHA256, ChaCha20-Poly1305) gives each
//! note a key that anyone can make and only the holder of the workspace secret can open. Nothing here is a cipher
//! of our own: this module only lays out bytes and says what each key is bound to.
//!
//! A sealed blob (a note's body, a revision, an attachment, a snapshot in the change log):
//!
//! ```text
//! 1 byte    format (1)
//! 32 bytes  HPKE encapsulated key          } the note key's header: the same for every blob
//! 48 bytes  the note key, sealed by HPKE   } one sealing pass writes for a note
//! 24 bytes  XChaCha20 nonce (random)
//! rest      XChaCha20-Poly1305(note key, nonce, content, aad = note id, kind, version)
//! ```

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hpke::aead::ChaCha20Poly1305 as HpkeChaCha;
use hpke::kdf::HkdfSha256;
use hpke::kem::X25519HkdfSha256;
use hpke::{Deserializable, Kem as _, OpModeR, OpModeS, Serializable};
use zeroize::{Zeroize, Zeroizing};

/// A 32-byte secret that is wiped when dropped.
pub(crate) type Secret = Zeroizing<[u8; 32]>;

pub(crate) type PublicKey = <X25519HkdfSha256 as hpke::Kem>::PublicKey;
pub(crate) type PrivateKey = <X25519HkdfSha256 as hpke::Kem>::PrivateKey;
type EncappedKey = <X25519HkdfSha256 as hpke::Kem>::EncappedKey;

const FORMAT: u8 = 1;
const ENCAPPED: usize = 32;
const WRAPPED_KEY: usize = 32 + 16;
/// The note key's header: format, encapsulated key, sealed note key.
pub(crate) const HEADER: usize = 1 + ENCAPPED + WRAPPED_KEY;
const NONCE: usize = 24;
const TAG: usize = 16;
const HPKE_INFO: &[u8] = b"quire sealed note key v1";

/// Why a blob could not be opened: it is not one (too short, an unknown format), or its check failed (changed,
/// damaged, moved from another note or version, or sealed for another workspace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    Malformed,
    Check,
}

pub(crate) fn random_secret() -> Secret {
    let mut bytes = Zeroizing::new([0u8; 32]);
    // The operating system's generator; failing to have one is not something quire can go on without.
    getrandom::fill(bytes.as_mut()).expect("the operating system gives no random bytes");
    bytes
}

fn random_nonce() -> [u8; NONCE] {
    let mut nonce = [0u8; NONCE];
    getrandom::fill(&mut nonce).expect("the operating system gives no random bytes");
    nonce
}

/// The workspace's key pair, derived from its 32-byte random secret (the "workspace key").
pub(crate) fn key_pair(secret: &Secret) -> (PrivateKey, PublicKey) {
    X25519HkdfSha256::derive_keypair(secret.as_ref())
}

pub(crate) fn public_key_bytes(key: &PublicKey) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&key.to_bytes());
    out
}

pub(crate) fn public_key_from(bytes: &[u8]) -> Option<PublicKey> {
    PublicKey::from_bytes(bytes).ok()
}

/// Encrypts `plain` under a 32-byte key: nonce then ciphertext.
pub(crate) fn encrypt(key: &[u8; 32], plain: &[u8], aad: &[u8]) -> Vec<u8> {
    let cipher = XChaCha20Poly1305::new(key.into());
    let nonce = random_nonce();
    let sealed = cipher
        .encrypt(&XNonce::from(nonce), Payload { msg: plain, aad })
        .expect("XChaCha20-Poly1305 encrypts any message below its size limit");
    let mut out = Vec::with_capacity(NONCE + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    out
}

/// The reverse of [`encrypt`].
pub(crate) fn decrypt(key: &[u8; 32], sealed: &[u8], aad: &[u8]) -> Result<Zeroizing<Vec<u8>>, OpenError> {
    if sealed.len() < NONCE + TAG {
        return Err(OpenError::Malformed);
    }
    let (nonce, body) = sealed.split_at(NONCE);
    let cipher = XChaCha20Poly1305::new(key.into());
    cipher
        .decrypt(
            &XNonce::try_from(nonce).map_err(|_| OpenError::Malformed)?,
            Payload { msg: body, aad },
        )
        .map(Zeroizing::new)
        .map_err(|_| OpenError::Check)
}

/// A note's content key, with the header that lets the workspace secret recover it.
pub(crate) struct NoteKey {
    pub(crate) header: [u8; HEADER],
    pub(crate) key: Secret,
}

impl NoteKey {
    /// A fresh key for a note, sealed to the workspace's public key: no secret is needed to make one.
    pub(crate) fn new(public: &PublicKey, note_id: &str) -> NoteKey {
        let key = random_secret();
        let (encapped, wrapped) = hpke::single_shot_seal::<HpkeChaCha, HkdfSha256, X25519HkdfSha256>(
            &OpModeS::Base,
            public,
            HPKE_INFO,
            key.as_ref(),
            note_id.as_bytes(),
        )
        .expect("HPKE seals a 32-byte key to a valid public key");
        let mut header = [0u8; HEADER];
        header[0] = FORMAT;
        header[1..1 + ENCAPPED].copy_from_slice(&encapped.to_bytes());
        header[1 + ENCAPPED..].copy_from_slice(&wrapped);
        NoteKey { header, key }
    }

    /// Recovers the key from a blob's header with the workspace's private key.
    pub(crate) fn open(private: &PrivateKey, note_id: &str, blob: &[u8]) -> Result<NoteKey, OpenError> {
        let header = header_of(blob)?;
        let encapped = EncappedKey::from_bytes(&header[1..1 + ENCAPPED]).map_err(|_| OpenError::Malformed)?;
        let mut opened = hpke::single_shot_open::<HpkeChaCha, HkdfSha256, X25519HkdfSha256>(
            &OpModeR::Base,
            private,
            &encapped,
            HPKE_INFO,
            &header[1 + ENCAPPED..],
            note_id.as_bytes(),
        )
        .map_err(|_| OpenError::Check)?;
        if opened.len() != 32 {
            opened.zeroize();
            return Err(OpenError::Malformed);
        }
        let mut key = Zeroizing::new([0u8; 32]);
        key.copy_from_slice(&opened);
        opened.zeroize();
        let mut copy = [0u8; HEADER];
        copy.copy_from_slice(header);
        Ok(NoteKey { header: copy, key })
    }

    /// Seals one piece of a note's content, bound to the note, to what it is and to its version.
    pub(crate) fn seal(&self, note_id: &str, kind: &str, version: i64, plain: &[u8]) -> Vec<u8> {
        let body = encrypt(&self.key, plain, &content_aad(note_id, kind, version));
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend_from_slice(&self.header);
        out.extend_from_slice(&body);
        out
    }

    /// Opens a blob this key sealed; the note, kind and version must be the ones it was sealed with.
    pub(crate) fn unseal(
        &self,
        note_id: &str,
        kind: &str,
        version: i64,
        blob: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, OpenError> {
        if header_of(blob)? != self.header {
            return Err(OpenError::Check);
        }
        decrypt(&self.key, &blob[HEADER..], &content_aad(note_id, kind, version))
    }
}

/// The note key's header at the start of a blob.
pub(crate) fn header_of(blob: &[u8]) -> Result<&[u8], OpenError> {
    if blob.len() < HEADER + NONCE + TAG || blob[0] != FORMAT {
        return Err(OpenError::Malformed);
    }
    Ok(&blob[..HEADER])
}

fn content_aad(note_id: &str, kind: &str, version: i64) -> Vec<u8> {
    format!("quire sealed v1\0{note_id}\0{kind}\0{version}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_opens_only_for_its_note_kind_and_version() {
        let secret = random_secret();
        let (private, public) = key_pair(&secret);
        let key = NoteKey::new(&public, "n1");
        let blob = key.seal("n1", "body", 3, b"the secret");
        let opened = NoteKey::open(&private, "n1", &blob).unwrap();
        assert_eq!(&opened.unseal("n1", "body", 3, &blob).unwrap()[..], b"the secret");
        assert_eq!(opened.unseal("n1", "body", 2, &blob).unwrap_err(), OpenError::Check);
        assert_eq!(opened.unseal("n1", "revision", 3, &blob).unwrap_err(), OpenError::Check);
        // Moved to another note: the header's key does not open for it.
        assert_eq!(NoteKey::open(&private, "n2", &blob).err(), Some(OpenError::Check));
        // Another workspace's secret opens nothing.
        let (other, _) = key_pair(&random_secret());
        assert_eq!(NoteKey::open(&other, "n1", &blob).err(), Some(OpenError::Check));
        // Every flipped byte is caught.
        for i in 0..blob.len() {
            let mut damaged = blob.clone();
            damaged[i] ^= 0x20;
            let result = NoteKey::open(&private, "n1", &damaged).and_then(|k| k.unseal("n1", "body", 3, &damaged));
            assert!(result.is_err(), "byte {i} flipped went unnoticed");
        }
        assert_eq!(header_of(&blob[..10]).unwrap_err(), OpenError::Malformed);
    }

    #[test]
    fn the_plain_text_is_nowhere_in_a_blob() {
        let (_, public) = key_pair(&random_secret());
        let blob = NoteKey::new(&public, "n").seal("n", "body", 1, b"marker phrase marker phrase");
        assert!(!blob.windows(6).any(|w| w == b"marker"));
    }
}
