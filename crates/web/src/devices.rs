//! Devices: the person's other devices (a phone, a tablet, a laptop) that reach this server with a credential of
//! their own instead of the key in the address `quire serve` prints.
//!
//! A device is paired once: `quire device pair NAME` (or Settings) makes a one-time code, valid for a few minutes,
//! that the device opens at `/pair`; the server trades it for the device's own token, which the device keeps in an
//! HttpOnly cookie for a long time. Each device may be limited to some notebooks and to reading. `quire device
//! revoke NAME` ends it: the next request of that device, and its open event stream, are refused.
//!
//! The devices are kept in `devices.json` beside config.toml (mode 0600): names, limits and the SHA-256 of each
//! token and code, never a token or a code. Every process that changes the file holds a lock on `devices.json.lock`
//! while it reads, changes and replaces it, so a pairing redeemed by the server while a terminal revokes another
//! device loses neither. The server reads the file again whenever it changed (a `stat` per request), so a
//! revocation made in a terminal applies to the very next request.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The file of devices, beside config.toml.
pub const DEVICES_FILE: &str = "devices.json";

/// How long a pairing code can be used, unless told otherwise.
pub const PAIRING_MINUTES: u32 = 10;

/// How long a device's last use is not written again: its `last_seen` is right to within this.
const SEEN_EVERY_MS: i64 = 5 * 60 * 1000;

/// The characters of a pairing code: Crockford's base 32 (no I, L, O or U, which read as other characters).
const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// What can go wrong with the devices' file or a pairing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The file could not be read, locked or written.
    #[error("the devices file {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not one quire wrote.
    #[error("the devices file {path} is damaged ({message}); move it away to start again with no devices")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
    /// The request is not valid as asked; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// No device or pairing of this name.
    #[error("no device named {0:?} (`quire device list` shows them)")]
    NoSuchDevice(String),
    /// The code is wrong, was used already, or is too old.
    #[error("that pairing code is not valid: it may be mistyped, used already, or older than its time")]
    BadCode,
    /// A passkey was refused; the message says why.
    #[error("{0}")]
    Passkey(String),
    /// No randomness for a token or a code.
    #[error("cannot make a token: {0}")]
    Random(String),
}

/// A notebook a device is limited to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotebookLimit {
    /// The notebook's id (what the limit follows when the notebook is renamed or moved).
    pub id: String,
    /// Its path when the device was paired, for the lists.
    pub path: String,
}

/// What a device may do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeviceLimits {
    /// The workspace it was paired for (its file); a server of another workspace does not let it in.
    #[serde(default)]
    pub workspace: Option<String>,
    /// The notebooks it reaches (with what is inside them); empty: the whole workspace.
    #[serde(default)]
    pub notebooks: Vec<NotebookLimit>,
    /// It reads and never writes.
    #[serde(default)]
    pub read_only: bool,
}

impl DeviceLimits {
    /// Whether the device reaches the whole workspace and may write: it may then do what the computer's own page
    /// does, but pair or end devices.
    pub fn is_full(&self) -> bool {
        self.notebooks.is_empty() && !self.read_only
    }

    /// The name a workspace's file is kept by here: its path, made absolute.
    pub fn workspace_of(ws: &quire_core::Workspace) -> Option<String> {
        let path = ws.path()?;
        Some(
            std::fs::canonicalize(path)
                .unwrap_or_else(|_| path.to_owned())
                .display()
                .to_string(),
        )
    }

    /// Whether the device may use the workspace `ws`.
    pub fn reaches(&self, ws: &quire_core::Workspace) -> bool {
        self.workspace.is_none() || self.workspace == DeviceLimits::workspace_of(ws)
    }
}

/// A paired device as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Device {
    /// The name the person gave it; unique.
    pub name: String,
    /// The id its cookie names.
    pub id: String,
    /// SHA-256 of its token, in hex.
    pub token_hash: String,
    /// When it was paired (milliseconds since the epoch).
    pub paired: i64,
    /// When it was last seen, to within five minutes.
    #[serde(default)]
    pub last_seen: Option<i64>,
    /// What it may do.
    #[serde(flatten)]
    pub limits: DeviceLimits,
    /// Its passkeys: it signs in again with one of them, without a new code, when its cookie is gone (cleared, or
    /// another browser of the same phone: the app installed on the home screen keeps cookies of its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passkeys: Vec<Passkey>,
    /// SHA-256 of the tokens its passkey sign-ins gave (each browser of the device keeps its own), the latest last;
    /// past eight, a new sign-in ends the oldest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_tokens: Vec<String>,
}

/// The most passkeys a device keeps, and the most tokens its passkey sign-ins give beside the pairing's.
const MOST_PASSKEYS: usize = 10;
const MOST_MORE_TOKENS: usize = 8;

/// A device's passkey (a WebAuthn credential made on the device): the server keeps its public key only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passkey {
    /// The credential's id, in base64url.
    pub id: String,
    /// Its public key.
    pub key: PasskeyKey,
    /// The page it was made on (`https://notes.example.org`): it signs in on that page only, whatever another page
    /// of the same host name (another port, another scheme) says.
    pub origin: String,
    /// The authenticator's signature counter when last used (0: the authenticator keeps none).
    pub sign_count: u32,
    /// When it was added (milliseconds since the epoch).
    pub added: i64,
}

/// A passkey's public key, by its algorithm (byte strings in base64url).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "alg")]
pub enum PasskeyKey {
    /// ECDSA on P-256 with SHA-256 (COSE -7): the point, uncompressed.
    ES256 {
        /// `04 || x || y`.
        point: String,
    },
    /// Ed25519 (COSE -8).
    EdDSA {
        /// The 32-byte key.
        key: String,
    },
    /// RSASSA-PKCS1-v1_5 with SHA-256 (COSE -257).
    RS256 {
        /// The modulus.
        n: String,
        /// The exponent.
        e: String,
    },
}

/// A pairing code not yet used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pairing {
    /// The name the device will have.
    pub name: String,
    /// SHA-256 of the code as typed without its dash, in hex.
    pub code_hash: String,
    /// When the code stops working (milliseconds since the epoch).
    pub expires: i64,
    /// What the device will be allowed.
    #[serde(flatten)]
    pub limits: DeviceLimits,
}

/// The devices' file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DeviceFile {
    /// The paired devices.
    #[serde(default)]
    pub devices: Vec<Device>,
    /// The codes not yet used.
    #[serde(default)]
    pub pairings: Vec<Pairing>,
}

/// A pairing just made: the code, shown once.
#[derive(Debug, Clone)]
pub struct NewCode {
    /// The code, as `XXXXX-XXXXX`.
    pub code: String,
    /// When it stops working (milliseconds since the epoch).
    pub expires: i64,
    /// A code not yet used for the same name was replaced: it opens nothing now.
    pub replaced: bool,
}

/// A device just paired, with its token (kept by the device only).
#[derive(Debug, Clone)]
pub struct Paired {
    /// The device as kept.
    pub device: Device,
    /// Its token.
    pub token: String,
}

/// The devices' file and what was last read of it.
#[derive(Debug)]
pub struct DeviceStore {
    path: PathBuf,
    cached: Mutex<(Option<Stamp>, DeviceFile)>,
}

/// What says that the file changed: its modification time, length and inode (a replaced file is a new inode).
type Stamp = (std::time::SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.modified().ok()?, meta.len(), inode))
}

fn now() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn sha256_hex(text: &str) -> String {
    quire_core::hex(&sha2::Sha256::digest(text.as_bytes()))
}

/// A code as typed, made canonical: capitals, without dashes or spaces, with the letters that read as digits read
/// as digits (O as 0, I and L as 1).
fn canonical_code(typed: &str) -> String {
    typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            other => other,
        })
        .collect()
}

impl DeviceStore {
    /// The devices kept in `dir` (the configuration directory).
    pub fn in_dir(dir: &Path) -> DeviceStore {
        DeviceStore {
            path: dir.join(DEVICES_FILE),
            cached: Mutex::new((None, DeviceFile::default())),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The devices and pairings as the file holds them now (read again when it changed since the last read; a file
    /// that cannot be read is said in the log, and nothing is paired then: no device gets in).
    pub fn current(&self) -> DeviceFile {
        let mut cached = self.cached.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = stamp(&self.path);
        if now.is_none() || now != cached.0 {
            cached.1 = match self.read() {
                Ok(file) => file,
                Err(e) => {
                    tracing::warn!(error = %e, "no device can sign in");
                    DeviceFile::default()
                }
            };
            cached.0 = now;
        }
        cached.1.clone()
    }

    fn read(&self) -> Result<DeviceFile, DeviceError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| DeviceError::Damaged {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DeviceFile::default()),
            Err(source) => Err(self.file_error(source)),
        }
    }

    fn file_error(&self, source: std::io::Error) -> DeviceError {
        DeviceError::File {
            path: self.path.clone(),
            source,
        }
    }

    /// Reads the file under its lock, lets `change` change it (codes past their time are dropped first), and
    /// replaces it with the result unless `change` refused.
    fn update<T>(&self, change: impl FnOnce(&mut DeviceFile) -> Result<T, DeviceError>) -> Result<T, DeviceError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| self.file_error(e))?;
        }
        let lock_path = self.path.with_extension("json.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| self.file_error(e))?;
        lock.lock().map_err(|e| self.file_error(e))?;
        let mut file = self.read()?;
        let now = now();
        file.pairings.retain(|p| p.expires > now);
        let out = change(&mut file)?;
        let text = serde_json::to_string_pretty(&file).map_err(|e| DeviceError::Invalid(e.to_string()))?;
        quire_loopback::write_private(&self.path, &text).map_err(|e| self.file_error(e))?;
        drop(lock);
        Ok(out)
    }

    /// A one-time code that pairs a device named `name` with `limits`, usable for `minutes`. A code not yet used for
    /// the same name is replaced.
    pub fn pair(&self, name: &str, limits: DeviceLimits, minutes: u32) -> Result<NewCode, DeviceError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 60 || name.chars().any(char::is_control) {
            return Err(DeviceError::Invalid(
                "a device's name is 1 to 60 characters, with no line breaks".into(),
            ));
        }
        if !(1..=24 * 60).contains(&minutes) {
            return Err(DeviceError::Invalid(
                "a pairing code lasts from 1 minute to a day".into(),
            ));
        }
        let random = random_bytes()?;
        let letters: String = random[..10]
            .iter()
            .map(|b| CODE_ALPHABET[usize::from(b % 32)] as char)
            .collect();
        let code = format!("{}-{}", &letters[..5], &letters[5..]);
        let expires = now() + i64::from(minutes) * 60_000;
        let code_hash = sha256_hex(&letters);
        self.update(|file| {
            if file.devices.iter().any(|d| d.name == name) {
                return Err(DeviceError::Invalid(format!(
                    "a device is named {name:?} already: pick another name, or end that one first (`quire device revoke {name}`)"
                )));
            }
            let before = file.pairings.len();
            file.pairings.retain(|p| p.name != name);
            let replaced = file.pairings.len() < before;
            file.pairings.push(Pairing {
                name: name.to_owned(),
                code_hash,
                expires,
                limits,
            });
            Ok(replaced)
        })
        .map(|replaced| NewCode {
            code,
            expires,
            replaced,
        })
    }

    /// Trades a pairing code for a device and its token; the code opens nothing after. A code made for another
    /// workspace than `workspace` (the server's) is not this server's to take.
    pub fn redeem(&self, typed: &str, workspace: Option<&str>) -> Result<Paired, DeviceError> {
        let hash = sha256_hex(&canonical_code(typed));
        let token = quire_core::hex(&random_bytes()?);
        let id = quire_core::hex(&random_bytes()?[..12]);
        self.update(|file| {
            let at = file
                .pairings
                .iter()
                .position(|p| {
                    quire_loopback::constant_time_eq(p.code_hash.as_bytes(), hash.as_bytes())
                        && (p.limits.workspace.is_none() || p.limits.workspace.as_deref() == workspace)
                })
                .ok_or(DeviceError::BadCode)?;
            let pairing = file.pairings.remove(at);
            let device = Device {
                name: pairing.name,
                id,
                token_hash: sha256_hex(&token),
                paired: now(),
                last_seen: Some(now()),
                limits: pairing.limits,
                passkeys: Vec::new(),
                more_tokens: Vec::new(),
            };
            file.devices.retain(|d| d.name != device.name);
            file.devices.push(device.clone());
            Ok(Paired { device, token })
        })
    }

    /// The device whose cookie this is (`ID.TOKEN`), if it is still paired.
    pub fn device(&self, cookie: &str) -> Option<Device> {
        let (id, token) = cookie.split_once('.')?;
        let hash = sha256_hex(token);
        let same = |kept: &String| quire_loopback::constant_time_eq(kept.as_bytes(), hash.as_bytes());
        self.current()
            .devices
            .into_iter()
            .find(|d| d.id == id && (same(&d.token_hash) || d.more_tokens.iter().any(same)))
    }

    /// Adds `passkey` to the device of id `device`; the device's passkeys are then counted.
    pub fn add_passkey(&self, device: &str, passkey: Passkey) -> Result<usize, DeviceError> {
        self.update(|file| {
            if file
                .devices
                .iter()
                .any(|d| d.passkeys.iter().any(|p| p.id == passkey.id))
            {
                return Err(DeviceError::Passkey("This passkey is added already.".into()));
            }
            let device = file
                .devices
                .iter_mut()
                .find(|d| d.id == device)
                .ok_or_else(|| DeviceError::Passkey("This device is no longer paired.".into()))?;
            if device.passkeys.len() >= MOST_PASSKEYS {
                return Err(DeviceError::Passkey(format!(
                    "This device has {MOST_PASSKEYS} passkeys already: pair it again to start afresh."
                )));
            }
            device.passkeys.push(passkey);
            Ok(device.passkeys.len())
        })
    }

    /// The device whose passkey has the id `credential`, with that passkey.
    pub fn passkey(&self, credential: &str) -> Option<(Device, Passkey)> {
        self.current().devices.into_iter().find_map(|d| {
            let passkey = d.passkeys.iter().find(|p| p.id == credential)?.clone();
            Some((d, passkey))
        })
    }

    /// The device of the passkey `credential` signed in with it, its authenticator's counter now `sign_count`: a
    /// new token for the browser that did (the device's other browsers keep theirs). A counter that did not grow
    /// (when the authenticator keeps one) says the passkey was copied: refused.
    pub fn signed_in_with_passkey(&self, credential: &str, sign_count: u32) -> Result<Paired, DeviceError> {
        let token = quire_core::hex(&random_bytes()?);
        self.update(|file| {
            let device = file
                .devices
                .iter_mut()
                .find(|d| d.passkeys.iter().any(|p| p.id == credential))
                .ok_or_else(|| DeviceError::Passkey("This passkey's device is no longer paired.".into()))?;
            if let Some(passkey) = device.passkeys.iter_mut().find(|p| p.id == credential) {
                if (sign_count != 0 || passkey.sign_count != 0) && sign_count <= passkey.sign_count {
                    return Err(DeviceError::Passkey(
                        "This passkey's counter went back, as a copied passkey's does: it is refused. End the device \
                         and pair it again."
                            .into(),
                    ));
                }
                passkey.sign_count = sign_count;
            }
            device.more_tokens.push(sha256_hex(&token));
            let extra = device.more_tokens.len().saturating_sub(MOST_MORE_TOKENS);
            device.more_tokens.drain(..extra);
            device.last_seen = Some(now());
            Ok(Paired {
                device: device.clone(),
                token: token.clone(),
            })
        })
    }

    /// Ends the device (or the pairing) named `name`: its next request is refused.
    pub fn revoke(&self, name: &str) -> Result<(), DeviceError> {
        self.update(|file| {
            let before = file.devices.len() + file.pairings.len();
            file.devices.retain(|d| d.name != name);
            file.pairings.retain(|p| p.name != name);
            if before == file.devices.len() + file.pairings.len() {
                return Err(DeviceError::NoSuchDevice(name.to_owned()));
            }
            Ok(())
        })
    }

    /// Notes that the device was seen now, when that was not written within five minutes.
    pub fn seen(&self, device: &Device) {
        let now = now();
        if device.last_seen.is_some_and(|seen| now - seen < SEEN_EVERY_MS) {
            return;
        }
        let id = device.id.clone();
        let result = self.update(|file| {
            if let Some(d) = file.devices.iter_mut().find(|d| d.id == id) {
                d.last_seen = Some(now);
            }
            Ok(())
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "a device's last use was not written");
        }
    }
}

/// 256 random bits from the system.
fn random_bytes() -> Result<[u8; 32], DeviceError> {
    quire_loopback::new_key().map_err(|e| DeviceError::Random(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_pairs_once_and_a_revoked_device_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::in_dir(dir.path());
        let code = store.pair("phone", DeviceLimits::default(), 10).unwrap();
        assert!(
            store.pair("phone", DeviceLimits::default(), 10).is_ok(),
            "a new code replaces the old one"
        );
        assert!(
            matches!(store.redeem(&code.code, None), Err(DeviceError::BadCode)),
            "the replaced code is dead"
        );
        let code = store.pair("phone", DeviceLimits::default(), 10).unwrap();
        // As a person may type it: small letters, an O for a zero, no dash.
        let typed = code.code.to_lowercase().replace('-', " ").replace('0', "o");
        let paired = store.redeem(&typed, None).unwrap();
        assert!(
            matches!(store.redeem(&code.code, None), Err(DeviceError::BadCode)),
            "a code pairs once"
        );
        let cookie = format!("{}.{}", paired.device.id, paired.token);
        assert_eq!(store.device(&cookie).unwrap().name, "phone");
        assert!(
            store
                .device(&format!("{}.{}", paired.device.id, "0".repeat(64)))
                .is_none()
        );
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(!text.contains(&paired.token) && !text.contains(&code.code.replace('-', "")));
        assert!(
            store.pair("phone", DeviceLimits::default(), 10).is_err(),
            "names are unique"
        );
        // Another handle on the same file (the terminal's) revokes; this one sees it at once.
        DeviceStore::in_dir(dir.path()).revoke("phone").unwrap();
        assert!(store.device(&cookie).is_none());
        assert!(matches!(store.revoke("phone"), Err(DeviceError::NoSuchDevice(_))));
    }

    #[test]
    fn a_passkey_signs_in_with_a_token_of_its_own_and_a_counter_that_grows() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::in_dir(dir.path());
        let code = store.pair("phone", DeviceLimits::default(), 10).unwrap();
        let paired = store.redeem(&code.code, None).unwrap();
        let cookie = |p: &Paired| format!("{}.{}", p.device.id, p.token);
        let passkey = Passkey {
            id: "cred".into(),
            origin: "https://notes.example.org".into(),
            key: PasskeyKey::EdDSA { key: "AAAA".into() },
            sign_count: 3,
            added: 0,
        };
        assert_eq!(store.add_passkey(&paired.device.id, passkey.clone()).unwrap(), 1);
        assert!(store.add_passkey(&paired.device.id, passkey).is_err(), "added once");
        let again = store.signed_in_with_passkey("cred", 4).unwrap();
        assert!(store.device(&cookie(&paired)).is_some() && store.device(&cookie(&again)).is_some());
        assert!(
            matches!(store.signed_in_with_passkey("cred", 4), Err(DeviceError::Passkey(_))),
            "a counter that did not grow"
        );
        for count in 5..5 + u32::try_from(MOST_MORE_TOKENS).unwrap() {
            store.signed_in_with_passkey("cred", count).unwrap();
        }
        assert!(
            store.device(&cookie(&again)).is_none(),
            "the oldest sign-in's token ended"
        );
        assert!(store.device(&cookie(&paired)).is_some(), "the pairing's stays");
        store.revoke("phone").unwrap();
        assert!(store.passkey("cred").is_none());
        assert!(store.signed_in_with_passkey("cred", 50).is_err());
    }

    #[test]
    fn codes_are_canonical_as_typed() {
        assert_eq!(canonical_code(" ab1o-il0 "), "AB10110");
    }
}
