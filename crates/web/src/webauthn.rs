//! WebAuthn, the server's half of a device's passkey: the challenges it hands out, and the checks of what the
//! browser sends back, when a passkey is made (its public key, taken from the authenticator's data) and when one
//! signs in (its signature over the authenticator's data and the page's client data).
//!
//! Attestation is not asked for (`none`): the device adding a passkey is already signed in with its pairing, and a
//! passkey's maker proves nothing more to a notes server. What is checked, each time: the challenge is one this
//! server handed out for this purpose, unused and not older than five minutes; the client data's type and origin
//! (the page's, as the request's `Origin` said it, which the security layer accepted); the relying party (the
//! origin's host name) by its hash in the authenticator's data; the user's presence; and at sign-in, the signature,
//! with the key kept when the passkey was made, and the counter (in the device store, so that two sign-ins at once
//! cannot both pass it).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ciborium::Value;
use serde::Deserialize;
use sha2::Digest as _;

use crate::devices::{Passkey, PasskeyKey};

/// Why a passkey was refused, in words for the person.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub(crate) String);

fn refused(why: impl Into<String>) -> Refused {
    Refused(why.into())
}

/// `bytes` in base64url without padding, as WebAuthn writes them.
pub(crate) fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The bytes of base64url `text` (padded or not).
pub(crate) fn unb64(text: &str, what: &str) -> Result<Vec<u8>, Refused> {
    URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .map_err(|_| refused(format!("The passkey's {what} is not base64url.")))
}

/// What a challenge was handed out for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Making a passkey for the device of this id.
    Add(String),
    /// Signing in with a passkey.
    SignIn,
}

/// The challenges: nothing is kept when one is handed out (anyone may ask for a sign-in challenge, so a table of
/// them would be anyone's to fill). A challenge is 16 random bytes, the time it was made, and an HMAC of both and
/// of its purpose under a key of this server's run; answering one checks the HMAC and the age, and keeps it among
/// the used ones until it is too old anyway. Only answers keep anything, and answers are limited (a sign-in counts
/// as an attempt; adding a passkey needs a device's session).
#[derive(Debug)]
pub(crate) struct Challenges {
    key: ring::hmac::Key,
    started: Instant,
    used: Mutex<HashMap<Vec<u8>, Instant>>,
}

impl Challenges {
    /// How long a challenge can be answered.
    pub(crate) const LIFE: Duration = Duration::from_secs(5 * 60);
    /// The most answers remembered at once.
    const MOST_USED: usize = 10_000;

    /// Challenges under a new key; `None` without system randomness.
    pub(crate) fn new() -> Option<Challenges> {
        let secret = quire_loopback::new_key().ok()?;
        Some(Challenges {
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret),
            started: Instant::now(),
            used: Mutex::default(),
        })
    }

    /// A new challenge for `purpose`, in base64url.
    pub(crate) fn make(&self, purpose: &Purpose) -> Result<String, Refused> {
        let random = quire_loopback::new_key().map_err(|e| refused(format!("No randomness for a challenge: {e}.")))?;
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut challenge = random[..16].to_vec();
        challenge.extend_from_slice(&millis.to_be_bytes());
        let tag = ring::hmac::sign(&self.key, &[challenge.as_slice(), &purpose_bytes(purpose)].concat());
        challenge.extend_from_slice(tag.as_ref());
        Ok(b64(&challenge))
    }

    /// Uses up `challenge`, which must have been made here for `purpose`, be young enough, and not be used yet.
    pub(crate) fn take(&self, challenge: &str, purpose: &Purpose) -> Result<(), Refused> {
        let stale = || refused("This passkey request is too old or was not made here: try again.");
        let bytes = unb64(challenge, "challenge").map_err(|_| stale())?;
        if bytes.len() != 16 + 8 + 32 {
            return Err(stale());
        }
        let (body, tag) = bytes.split_at(24);
        ring::hmac::verify(&self.key, &[body, &purpose_bytes(purpose)].concat(), tag).map_err(|_| stale())?;
        let mut millis = [0u8; 8];
        millis.copy_from_slice(&body[16..24]);
        let made = Duration::from_millis(u64::from_be_bytes(millis));
        if self.started.elapsed().saturating_sub(made) >= Challenges::LIFE {
            return Err(stale());
        }
        let mut used = self.used.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        used.retain(|_, at| at.elapsed() < Challenges::LIFE);
        if used.len() >= Challenges::MOST_USED {
            return Err(refused(
                "Too many passkey requests at once: try again in a few minutes.",
            ));
        }
        if used.insert(body.to_vec(), Instant::now()).is_some() {
            return Err(stale());
        }
        Ok(())
    }
}

/// What a challenge's HMAC binds it to beside its body.
fn purpose_bytes(purpose: &Purpose) -> Vec<u8> {
    match purpose {
        Purpose::SignIn => b"sign in".to_vec(),
        Purpose::Add(device) => [b"add for ".as_slice(), device.as_bytes()].concat(),
    }
}

/// The page that asks, as the request's `Origin` says (the security layer accepted it as this server's), and the
/// relying party it implies: the origin's host name. A passkey belongs to a name, never to an address: browsers
/// refuse one for `https://192.168.1.5`.
#[derive(Debug, Clone)]
pub(crate) struct Party {
    pub(crate) origin: String,
    pub(crate) rp_id: String,
}

impl Party {
    pub(crate) fn of(origin: Option<&str>) -> Result<Party, Refused> {
        let origin = origin.ok_or_else(|| refused("The request did not say which page sent it."))?;
        let host = origin
            .split_once("://")
            .map(|(_, rest)| rest)
            .ok_or_else(|| refused("The request's page is not one quire serves."))?;
        let name = if host.starts_with('[') {
            host
        } else {
            host.rsplit_once(':').map_or(host, |(name, _)| name)
        };
        if name.starts_with('[') || name.parse::<std::net::Ipv4Addr>().is_ok() || name.is_empty() {
            return Err(refused(
                "Passkeys work when quire is reached by a name (such as https://notes.example.org or localhost), not by \
                 an IP address: this device signs in with its pairing only.",
            ));
        }
        Ok(Party {
            origin: origin.to_owned(),
            rp_id: name.to_ascii_lowercase(),
        })
    }
}

#[derive(Deserialize)]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
    #[serde(default, rename = "crossOrigin")]
    cross_origin: bool,
}

/// Checks the client data (of `kind`, from `party`'s page, not framed by another site) and uses up its challenge.
fn client_data(
    json: &[u8],
    kind: &str,
    party: &Party,
    challenges: &Challenges,
    purpose: &Purpose,
) -> Result<(), Refused> {
    let data: ClientData =
        serde_json::from_slice(json).map_err(|_| refused("The passkey's client data is not WebAuthn's."))?;
    challenges.take(&data.challenge, purpose)?;
    if data.kind != kind {
        return Err(refused("The passkey answered another kind of request."));
    }
    if data.origin != party.origin || data.cross_origin {
        return Err(refused("The passkey was used by another page than quire's."));
    }
    Ok(())
}

/// The authenticator's data: the relying party's hash, the flags, the counter, and what follows.
struct AuthData<'a> {
    flags: u8,
    sign_count: u32,
    rest: &'a [u8],
}

const USER_PRESENT: u8 = 0x01;
const USER_VERIFIED: u8 = 0x04;
const ATTESTED: u8 = 0x40;

fn auth_data<'a>(bytes: &'a [u8], party: &Party) -> Result<AuthData<'a>, Refused> {
    if bytes.len() < 37 {
        return Err(refused("The authenticator's data is too short."));
    }
    let rp_hash = sha2::Sha256::digest(party.rp_id.as_bytes());
    if bytes[..32] != rp_hash[..] {
        return Err(refused("The passkey is for another site."));
    }
    let flags = bytes[32];
    if flags & USER_PRESENT == 0 {
        return Err(refused("The authenticator did not check that someone was there."));
    }
    // A passkey signs a device in without a code: the authenticator must have checked who is there too (a
    // fingerprint, a face, the screen lock, a key's PIN).
    if flags & USER_VERIFIED == 0 {
        return Err(refused(
            "The authenticator did not check who is there (fingerprint, face, screen lock or PIN).",
        ));
    }
    let sign_count = u32::from_be_bytes([bytes[33], bytes[34], bytes[35], bytes[36]]);
    Ok(AuthData {
        flags,
        sign_count,
        rest: &bytes[37..],
    })
}

/// A passkey just made, checked: its id, its public key and its counter.
#[derive(Debug)]
pub(crate) struct NewPasskey {
    pub(crate) id: Vec<u8>,
    pub(crate) key: PasskeyKey,
    pub(crate) sign_count: u32,
}

/// Checks the answer to `navigator.credentials.create` (the credential `id`, its client data and its attestation
/// object) for the device `purpose` names.
pub(crate) fn registration(
    party: &Party,
    challenges: &Challenges,
    purpose: &Purpose,
    id: &[u8],
    client_data_json: &[u8],
    attestation_object: &[u8],
) -> Result<NewPasskey, Refused> {
    client_data(client_data_json, "webauthn.create", party, challenges, purpose)?;
    let attestation: Value =
        ciborium::from_reader(attestation_object).map_err(|_| refused("The passkey's attestation is not CBOR."))?;
    let data = entry(&attestation, |k| k.as_text() == Some("authData"))
        .and_then(Value::as_bytes)
        .ok_or_else(|| refused("The passkey's attestation has no authenticator data."))?;
    let data = auth_data(data, party)?;
    if data.flags & ATTESTED == 0 || data.rest.len() < 18 {
        return Err(refused("The authenticator's data holds no new credential."));
    }
    let length = usize::from(u16::from_be_bytes([data.rest[16], data.rest[17]]));
    let after = &data.rest[18..];
    if after.len() < length || length == 0 || length > 1023 {
        return Err(refused("The new credential's id is damaged."));
    }
    let (credential, mut cose) = after.split_at(length);
    if credential != id {
        return Err(refused("The new credential is not the one the page named."));
    }
    let key: Value = ciborium::from_reader(&mut cose).map_err(|_| refused("The passkey's public key is not CBOR."))?;
    Ok(NewPasskey {
        id: credential.to_vec(),
        key: cose_key(&key)?,
        sign_count: data.sign_count,
    })
}

/// The value of a CBOR map's first entry whose key passes `key`.
fn entry(map: &Value, key: impl Fn(&Value) -> bool) -> Option<&Value> {
    map.as_map()?.iter().find(|(k, _)| key(k)).map(|(_, v)| v)
}

/// A COSE key (RFC 9053) as kept: ES256, EdDSA on Ed25519, or RS256.
fn cose_key(key: &Value) -> Result<PasskeyKey, Refused> {
    let int = |label: i64| {
        entry(key, |k| {
            k.as_integer().and_then(|i| i64::try_from(i).ok()) == Some(label)
        })
    };
    let number = |label| {
        int(label)
            .and_then(Value::as_integer)
            .and_then(|i| i64::try_from(i).ok())
    };
    let bytes = |label, size: Option<usize>| {
        int(label)
            .and_then(Value::as_bytes)
            .filter(|b| size.is_none_or(|s| b.len() == s))
            .ok_or_else(|| refused("The passkey's public key is damaged."))
    };
    match (number(1), number(3)) {
        (Some(2), Some(-7)) if number(-1) == Some(1) => {
            let mut point = vec![4u8];
            point.extend_from_slice(bytes(-2, Some(32))?);
            point.extend_from_slice(bytes(-3, Some(32))?);
            Ok(PasskeyKey::ES256 { point: b64(&point) })
        }
        (Some(1), Some(-8)) if number(-1) == Some(6) => Ok(PasskeyKey::EdDSA {
            key: b64(bytes(-2, Some(32))?),
        }),
        (Some(3), Some(-257)) => {
            let n = bytes(-1, None)?;
            // ring checks signatures of 2048 to 8192 bits only: a key it cannot check is refused now, not at
            // every sign-in.
            if !(256..=1024).contains(&n.len()) {
                return Err(refused("This passkey's RSA key is not 2048 to 8192 bits long."));
            }
            Ok(PasskeyKey::RS256 {
                n: b64(n),
                e: b64(bytes(-2, None)?),
            })
        }
        _ => Err(refused(
            "This passkey's kind of key is not one quire checks (ES256, Ed25519 or RS256).",
        )),
    }
}

/// Checks the answer to `navigator.credentials.get` for `passkey` (its kept public key and page): its client data, its
/// authenticator's data and its signature over both. The authenticator's counter comes back, for the store to check.
pub(crate) fn assertion(
    party: &Party,
    challenges: &Challenges,
    passkey: &Passkey,
    client_data_json: &[u8],
    authenticator_data: &[u8],
    signature: &[u8],
) -> Result<u32, Refused> {
    // The passkey signs in on the page it was made on only: another page of the same host name (another port,
    // another scheme) may get the person to use it, but the browser's answer names that page.
    if party.origin != passkey.origin {
        return Err(refused(format!("This passkey signs in at {} only.", passkey.origin)));
    }
    client_data(client_data_json, "webauthn.get", party, challenges, &Purpose::SignIn)?;
    let data = auth_data(authenticator_data, party)?;
    let mut signed = authenticator_data.to_vec();
    signed.extend_from_slice(&sha2::Sha256::digest(client_data_json));
    let damaged = |_| refused("The passkey kept here is damaged: end the device and pair it again.");
    let checked = match &passkey.key {
        PasskeyKey::ES256 { point } => ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_ASN1,
            unb64(point, "key").map_err(damaged)?,
        )
        .verify(&signed, signature),
        PasskeyKey::EdDSA { key } => {
            ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, unb64(key, "key").map_err(damaged)?)
                .verify(&signed, signature)
        }
        PasskeyKey::RS256 { n, e } => ring::signature::RsaPublicKeyComponents {
            n: unb64(n, "key").map_err(damaged)?,
            e: unb64(e, "key").map_err(damaged)?,
        }
        .verify(&ring::signature::RSA_PKCS1_2048_8192_SHA256, &signed, signature),
    };
    checked.map_err(|_| refused("The passkey's signature is wrong."))?;
    Ok(data.sign_count)
}

#[cfg(test)]
#[path = "webauthn_tests.rs"]
mod tests;
