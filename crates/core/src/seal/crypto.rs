//! The cryptography of sealed notes, all of it from audited crates: Argon2id turns a passphrase into a key,
//! XChaCha20-Poly1305 encrypts and authenticates, HPKE (RFC 9180: X25519, HKDF-SHA256, ChaCha20-Poly1305) gives each
//! note a key that anyone can make and only the holder of the workspace secret can open. Nothing here is a cipher
//! of our own: this module only lays out bytes and says what each key is bound to.
//!
//! A sealed blob (a note's body, a revision, an attachment, a snapshot in the change log):
//!
//! ```text
//! 1 byte    format: 1, the note key sealed by HPKE (anyone can seal); 2, wrapped by the workspace's own key (sealed
//!           by a writer holding the unlocked key: opening it needs no X25519 operation)
//! format 1: 32 bytes HPKE encapsulated key, 48 bytes the note key sealed by HPKE     } the note key's header: the
//! format 2: 24 bytes nonce, 48 bytes the note key by XChaCha20-Poly1305              } same in every blob of a pass
//! 24 bytes  XChaCha20 nonce (random)
//! rest      XChaCha20-Poly1305(note key, nonce, content, aad = note id, kind, version)
//! ```
//!
//! Both wrappings of the note key are bound to the note's id.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hpke::aead::ChaCha20Poly1305 as HpkeChaCha;
use hpke::kdf::HkdfSha256;
use hpke::kem::X25519HkdfSha256;
use hpke::{Deserializable, Kem as _, OpModeR, OpModeS, Serializable};
use zeroize::{Zeroize, Zeroizing};

use crate::error::{Error, Result};

/// A 32-byte secret that is wiped when dropped.
pub(crate) type Secret = Zeroizing<[u8; 32]>;

pub(crate) type PublicKey = <X25519HkdfSha256 as hpke::Kem>::PublicKey;
pub(crate) type PrivateKey = <X25519HkdfSha256 as hpke::Kem>::PrivateKey;
type EncappedKey = <X25519HkdfSha256 as hpke::Kem>::EncappedKey;

const BY_PUBLIC_KEY: u8 = 1;
const BY_SECRET: u8 = 2;
const ENCAPPED: usize = 32;
const NONCE: usize = 24;
const WRAPPED_KEY: usize = 32 + 16;
/// The note key's header by format: format byte, then the encapsulated key or a nonce, then the wrapped note key.
fn header_len(format: u8) -> Option<usize> {
    match format {
        BY_PUBLIC_KEY => Some(1 + ENCAPPED + WRAPPED_KEY),
        BY_SECRET => Some(1 + NONCE + WRAPPED_KEY),
        _ => None,
    }
}
const TAG: usize = 16;
const HPKE_INFO: &[u8] = b"quire sealed note key v1";

/// Why a blob could not be opened: it is not one (too short, an unknown format), or its check failed (changed,
/// damaged, moved from another note or version, or sealed for another workspace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    Malformed,
    Check,
}

/// A failure of something that cannot fail with valid inputs (the operating system's random generator, an AEAD
/// below its size limit): said, never a panic.
fn failed(what: impl std::fmt::Display) -> Error {
    Error::invalid(format!("Sealing failed: {what}. Nothing was written."))
}

/// Random bytes from the operating system's generator.
pub(crate) fn fill_random(bytes: &mut [u8]) -> Result<()> {
    getrandom::fill(bytes).map_err(|e| failed(format_args!("the operating system gave no random bytes ({e})")))
}

pub(crate) fn random_secret() -> Result<Secret> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    fill_random(bytes.as_mut())?;
    Ok(bytes)
}

fn random_nonce() -> Result<[u8; NONCE]> {
    let mut nonce = [0u8; NONCE];
    fill_random(&mut nonce)?;
    Ok(nonce)
}

/// The key that wraps note keys when the writer holds the workspace key (format 2), derived from it.
pub(crate) fn wrapping_key(secret: &Secret) -> Result<Secret> {
    derive_key(secret, b"quire note keys v1")
}

/// A key derived from the workspace key for one purpose (`label`), with HKDF-SHA256.
pub(crate) fn derive_key(secret: &Secret, label: &[u8]) -> Result<Secret> {
    let mut out = Zeroizing::new([0u8; 32]);
    hkdf::Hkdf::<sha2::Sha256>::new(Some(b"quire"), secret.as_ref())
        .expand(label, out.as_mut())
        .map_err(|e| failed(format_args!("HKDF ({e})")))?;
    Ok(out)
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
pub(crate) fn encrypt(key: &[u8; 32], plain: &[u8], aad: &[u8]) -> Result<Vec<u8>> {
    let cipher = XChaCha20Poly1305::new(key.into());
    let nonce = random_nonce()?;
    let sealed = cipher
        .encrypt(&XNonce::from(nonce), Payload { msg: plain, aad })
        .map_err(|_| failed("XChaCha20-Poly1305 refused the message"))?;
    let mut out = Vec::with_capacity(NONCE + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
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
    pub(crate) header: Vec<u8>,
    pub(crate) key: Secret,
}

impl NoteKey {
    /// A fresh key for a note, sealed to the workspace's public key: no secret is needed to make one.
    pub(crate) fn new(public: &PublicKey, note_id: &str) -> Result<NoteKey> {
        let key = random_secret()?;
        let (encapped, wrapped) = hpke::single_shot_seal::<HpkeChaCha, HkdfSha256, X25519HkdfSha256>(
            &OpModeS::Base,
            public,
            HPKE_INFO,
            key.as_ref(),
            note_id.as_bytes(),
        )
        .map_err(|e| failed(format_args!("HPKE ({e})")))?;
        let mut header = Vec::with_capacity(1 + ENCAPPED + WRAPPED_KEY);
        header.push(BY_PUBLIC_KEY);
        header.extend_from_slice(&encapped.to_bytes());
        header.extend_from_slice(&wrapped);
        Ok(NoteKey { header, key })
    }

    /// A fresh key for a note, wrapped by a key derived from the workspace secret (`wrapping`): for a writer that
    /// holds it, so that opening costs no X25519 operation.
    pub(crate) fn new_wrapped(wrapping: &Secret, note_id: &str) -> Result<NoteKey> {
        let key = random_secret()?;
        let mut header = Vec::with_capacity(1 + NONCE + WRAPPED_KEY);
        header.push(BY_SECRET);
        header.extend_from_slice(&encrypt(wrapping, key.as_ref(), note_id.as_bytes())?);
        Ok(NoteKey { header, key })
    }

    /// Recovers the key from a blob's header with the workspace's private key, or the key derived from its secret.
    pub(crate) fn open(
        private: &PrivateKey,
        wrapping: &Secret,
        note_id: &str,
        blob: &[u8],
    ) -> Result<NoteKey, OpenError> {
        let header = header_of(blob)?;
        if header[0] == BY_SECRET {
            let opened = decrypt(wrapping, &header[1..], note_id.as_bytes())?;
            if opened.len() != 32 {
                return Err(OpenError::Malformed);
            }
            let mut key = Zeroizing::new([0u8; 32]);
            key.copy_from_slice(&opened);
            return Ok(NoteKey {
                header: header.to_vec(),
                key,
            });
        }
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
        Ok(NoteKey {
            header: header.to_vec(),
            key,
        })
    }

    /// Seals one piece of a note's content, bound to the note, to what it is and to its version.
    pub(crate) fn seal(&self, note_id: &str, kind: &str, version: i64, plain: &[u8]) -> Result<Vec<u8>> {
        let body = encrypt(&self.key, plain, &content_aad(note_id, kind, version))?;
        let mut out = Vec::with_capacity(self.header.len() + body.len());
        out.extend_from_slice(&self.header);
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Opens a blob this key sealed; the note, kind and version must be the ones it was sealed with.
    pub(crate) fn unseal(
        &self,
        note_id: &str,
        kind: &str,
        version: i64,
        blob: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, OpenError> {
        if header_of(blob)? != self.header.as_slice() {
            return Err(OpenError::Check);
        }
        decrypt(
            &self.key,
            &blob[self.header.len()..],
            &content_aad(note_id, kind, version),
        )
    }
}

/// The note key's header at the start of a blob.
pub(crate) fn header_of(blob: &[u8]) -> Result<&[u8], OpenError> {
    let len = blob
        .first()
        .and_then(|format| header_len(*format))
        .ok_or(OpenError::Malformed)?;
    if blob.len() < len + NONCE + TAG {
        return Err(OpenError::Malformed);
    }
    Ok(&blob[..len])
}

fn content_aad(note_id: &str, kind: &str, version: i64) -> Vec<u8> {
    format!("quire sealed v1\0{note_id}\0{kind}\0{version}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_opens_only_for_its_note_kind_and_version() {
        let secret = random_secret().unwrap();
        let (private, public) = key_pair(&secret);
        let wrapping = random_secret().unwrap();
        for key in [
            NoteKey::new(&public, "n1").unwrap(),
            NoteKey::new_wrapped(&wrapping, "n1").unwrap(),
        ] {
            check_blob(&private, &wrapping, &key);
        }
    }

    fn check_blob(private: &PrivateKey, wrapping: &Secret, key: &NoteKey) {
        let blob = key.seal("n1", "body", 3, b"the secret").unwrap();
        let opened = NoteKey::open(private, wrapping, "n1", &blob).unwrap();
        assert_eq!(&opened.unseal("n1", "body", 3, &blob).unwrap()[..], b"the secret");
        assert_eq!(opened.unseal("n1", "body", 2, &blob).unwrap_err(), OpenError::Check);
        assert_eq!(opened.unseal("n1", "revision", 3, &blob).unwrap_err(), OpenError::Check);
        // Moved to another note: the header's key does not open for it.
        assert_eq!(
            NoteKey::open(private, wrapping, "n2", &blob).err(),
            Some(OpenError::Check)
        );
        // Another workspace's secret opens nothing.
        let (other, _) = key_pair(&random_secret().unwrap());
        assert_eq!(
            NoteKey::open(&other, &random_secret().unwrap(), "n1", &blob).err(),
            Some(OpenError::Check)
        );
        // Every flipped byte is caught.
        for i in 0..blob.len() {
            let mut damaged = blob.clone();
            damaged[i] ^= 0x20;
            let result =
                NoteKey::open(private, wrapping, "n1", &damaged).and_then(|k| k.unseal("n1", "body", 3, &damaged));
            assert!(result.is_err(), "byte {i} flipped went unnoticed");
        }
        assert_eq!(header_of(&blob[..10]).unwrap_err(), OpenError::Malformed);
    }

    #[test]
    fn the_plain_text_is_nowhere_in_a_blob() {
        let (_, public) = key_pair(&random_secret().unwrap());
        let blob = NoteKey::new(&public, "n")
            .unwrap()
            .seal("n", "body", 1, b"marker phrase marker phrase")
            .unwrap();
        assert!(!blob.windows(6).any(|w| w == b"marker"));
    }
}
