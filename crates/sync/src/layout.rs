//! The layout of a target: which files sync keeps under `quire-sync/v1/`, their names built in one place and read
//! back by one parser that refuses anything else, so a file sync did not write is reported, never read as its own.
//!
//! ```text
//! quire-sync/v1/target        plain JSON: {"format": 1, "target": T}, T = 32 lowercase hex (16 random bytes)
//! quire-sync/v1/keys/D.key    device D's copy of the workspace key, wrapped by the passphrase (opaque here)
//! quire-sync/v1/d/D/b/SEQ     device D's batch SEQ (12 decimal digits, zero-padded: listings sort by number)
//! quire-sync/v1/d/D/s/N-PART  part PART (6 digits, from 1) of device D's snapshot number N (12 digits); part 0
//!                             is its manifest, written last
//! quire-sync/tmp/             unfinished uploads (a file there is never read or listed as a batch)
//! ```
//!
//! D = 32 lowercase hex (16 random bytes): a device has no name on the target; its name travels inside its files.

use std::fmt;
use std::str::FromStr;

/// The folder of this layout, relative to the target's root.
pub(crate) const BASE: &str = "quire-sync/v1/";
/// Where unfinished uploads are written before they are renamed into place (beside `v1`, never inside the layout).
pub(crate) const TEMP: &str = "quire-sync/tmp/";
/// Digits of a sequence number in a file name.
const SEQ_DIGITS: usize = 12;
/// Digits of a snapshot's part number.
const PART_DIGITS: usize = 6;
/// The largest part number a name can hold.
pub const MAX_PART: u32 = 999_999;
/// The largest sequence number a name can hold.
pub const MAX_SEQ: u64 = 999_999_999_999;

/// A name or path that is not one of quire's sync layout, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotALayoutName(pub String);

/// The operating system gave no random bytes: no id, key or nonce can be made, so nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operating system gives no random bytes, so nothing can be sealed or named safely")]
pub struct NoRandomness;

/// Fills `bytes` from the operating system's random generator.
pub(crate) fn random_bytes(bytes: &mut [u8]) -> Result<(), NoRandomness> {
    getrandom::fill(bytes).map_err(|_| NoRandomness)
}

/// 16 random bytes, written as 32 lowercase hex digits.
fn random_16() -> Result<[u8; 16], NoRandomness> {
    let mut bytes = [0u8; 16];
    random_bytes(&mut bytes)?;
    Ok(bytes)
}

fn hex(bytes: &[u8; 16]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads exactly 32 lowercase hex digits.
fn parse_hex(text: &str) -> Option<[u8; 16]> {
    let is_lower_hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
    if text.len() != 32 || !text.bytes().all(is_lower_hex) {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// A device's id on a target: 16 random bytes, no hostname or name in it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeviceId([u8; 16]);

/// A target's id: 16 random bytes written once by `init`. Every file's check binds it, so a file copied from one
/// target to another fails to open.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TargetId([u8; 16]);

macro_rules! hex_id {
    ($name:ident, $what:literal) => {
        impl $name {
            /// A new random id.
            pub fn random() -> Result<Self, NoRandomness> {
                Ok(Self(random_16()?))
            }

            /// The id from its 16 bytes.
            pub fn from_bytes(bytes: [u8; 16]) -> Self {
                Self(bytes)
            }

            /// Its 16 bytes.
            pub fn as_bytes(&self) -> &[u8; 16] {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&hex(&self.0))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({self})", stringify!($name))
            }
        }

        impl FromStr for $name {
            type Err = NotALayoutName;

            fn from_str(text: &str) -> Result<Self, NotALayoutName> {
                parse_hex(text)
                    .map(Self)
                    .ok_or_else(|| NotALayoutName(format!("`{text}` is not a {}: 32 lowercase hex digits", $what)))
            }
        }
    };
}

hex_id!(DeviceId, "device id");
hex_id!(TargetId, "target id");

/// A file of the layout, relative to `quire-sync/v1/`. Only these are ever read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SyncPath {
    /// `target`: the target's format and id, plain.
    Target,
    /// `keys/D.key`: device D's wrapped copy of the workspace key.
    Key(DeviceId),
    /// `d/D/b/SEQ`: device D's batch number SEQ (from 1).
    Batch(DeviceId, u64),
    /// `d/D/s/N-PART`: part PART (from 1) of device D's snapshot number N (from 1); part 0 is its manifest.
    Snapshot(DeviceId, u64, u32),
}

/// Why a file on the target is not one of sync's: the path relative to the target's root, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Foreign {
    /// The path of the file or folder, relative to the target's root.
    pub path: String,
    /// What is wrong with it, for a person.
    pub reason: String,
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

fn seq_name(seq: u64) -> String {
    format!("{seq:0width$}", width = SEQ_DIGITS)
}

/// Reads a sequence number: exactly 12 decimal digits, from 1 to [`MAX_SEQ`].
pub(crate) fn parse_seq(name: &str) -> Option<u64> {
    if name.len() != SEQ_DIGITS || !name.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    name.parse().ok().filter(|&seq| seq >= 1)
}

impl SyncPath {
    /// The path relative to `quire-sync/v1/`: what a file's check binds.
    ///
    /// A sequence number must be from 1 to [`MAX_SEQ`]; [`crate::Target`] refuses others before writing.
    pub fn relative(&self) -> String {
        match self {
            SyncPath::Target => "target".to_owned(),
            SyncPath::Key(device) => format!("keys/{device}.key"),
            SyncPath::Batch(device, seq) => format!("d/{device}/b/{}", seq_name(*seq)),
            SyncPath::Snapshot(device, seq, part) => {
                format!("d/{device}/s/{}-{part:0width$}", seq_name(*seq), width = PART_DIGITS)
            }
        }
    }

    /// The path relative to the target's root (`quire-sync/v1/...`).
    pub fn full(&self) -> String {
        format!("{BASE}{}", self.relative())
    }

    /// The device whose file this is, if it belongs to one.
    pub fn device(&self) -> Option<DeviceId> {
        match self {
            SyncPath::Target => None,
            SyncPath::Key(device) | SyncPath::Batch(device, _) | SyncPath::Snapshot(device, _, _) => Some(*device),
        }
    }

    /// Whether its sequence number (if any) can be written as a name.
    pub(crate) fn seq_in_range(&self) -> bool {
        match self {
            SyncPath::Batch(_, seq) => (1..=MAX_SEQ).contains(seq),
            SyncPath::Snapshot(_, seq, part) => (1..=MAX_SEQ).contains(seq) && *part <= MAX_PART,
            SyncPath::Target | SyncPath::Key(_) => true,
        }
    }

    /// Reads a path relative to `quire-sync/v1/`; anything that [`SyncPath::relative`] would not write is refused
    /// with the reason.
    pub fn parse(relative: &str) -> Result<SyncPath, NotALayoutName> {
        let not = |why: String| NotALayoutName(why);
        let parts: Vec<&str> = relative.split('/').collect();
        match parts.as_slice() {
            ["target"] => Ok(SyncPath::Target),
            ["keys", name] => {
                let device = name
                    .strip_suffix(".key")
                    .ok_or_else(|| not("a file in keys/ that is not DEVICE.key".to_owned()))?;
                Ok(SyncPath::Key(device.parse()?))
            }
            ["d", device, "b", seq] => {
                let device: DeviceId = device.parse()?;
                let seq = parse_seq(seq)
                    .ok_or_else(|| not(format!("`{seq}` is not a sequence number: 12 decimal digits, from 1")))?;
                Ok(SyncPath::Batch(device, seq))
            }
            ["d", device, "s", name] => {
                let device: DeviceId = device.parse()?;
                let parsed = name.split_once('-').and_then(|(seq, part)| {
                    let part = (part.len() == PART_DIGITS && part.bytes().all(|c| c.is_ascii_digit()))
                        .then(|| part.parse::<u32>().ok())
                        .flatten()?;
                    Some((parse_seq(seq)?, part))
                });
                let (seq, part) = parsed.ok_or_else(|| {
                    not(format!(
                        "`{name}` is not a snapshot's part: 12 decimal digits from 1, a dash and 6 more"
                    ))
                })?;
                Ok(SyncPath::Snapshot(device, seq, part))
            }
            _ => Err(not("not a file of quire's sync layout".to_owned())),
        }
    }

    /// Reads a path relative to the target's root (with `quire-sync/v1/`), as a listing gives it.
    pub(crate) fn parse_full(full: &str) -> Result<SyncPath, Foreign> {
        let foreign = |reason: String| Foreign {
            path: full.to_owned(),
            reason,
        };
        let relative = full
            .strip_prefix(BASE)
            .ok_or_else(|| foreign("outside quire-sync/v1/".to_owned()))?;
        SyncPath::parse(relative).map_err(|e| foreign(e.0))
    }
}

impl fmt::Display for SyncPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.relative())
    }
}

#[cfg(test)]
mod tests {
    use super::{DeviceId, SyncPath, TargetId};

    const D: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn paths_are_written_and_read_back() {
        let device: DeviceId = D.parse().unwrap();
        for (path, text) in [
            (SyncPath::Target, "target".to_owned()),
            (SyncPath::Key(device), format!("keys/{D}.key")),
            (SyncPath::Batch(device, 1), format!("d/{D}/b/000000000001")),
            (
                SyncPath::Snapshot(device, 42, 3),
                format!("d/{D}/s/000000000042-000003"),
            ),
            (SyncPath::Batch(device, super::MAX_SEQ), format!("d/{D}/b/999999999999")),
        ] {
            assert_eq!(path.relative(), text);
            assert_eq!(SyncPath::parse(&text), Ok(path));
            assert_eq!(SyncPath::parse_full(&path.full()), Ok(path));
        }
    }

    #[test]
    fn anything_else_is_refused_with_a_reason() {
        let upper = D.to_uppercase();
        for text in [
            "",
            "target/",
            "targets",
            "keys/x.key",
            &format!("keys/{D}"),
            &format!("keys/{upper}.key"),
            "d/xyz/b/notanumber",
            &format!("d/{D}/b/notanumber"),
            &format!("d/{D}/b/1"),
            &format!("d/{D}/b/000000000000"),
            &format!("d/{D}/b/0000000000001"),
            &format!("d/{D}/b/+00000000001"),
            &format!("d/{D}/x/000000000001"),
            &format!("d/{D}/b/000000000001/x"),
            &format!("d/{D}/s/000000000001"),
            &format!("d/{D}/s/000000000000-000001"),
            &format!("d/{D}/s/000000000001-1"),
            &format!("d/{D}/s/000000000001-00000a"),
            &format!("d/{D}/b/000000000001-000001"),
            &format!("d/{D}/b/"),
            &format!("d/{D}0/b/000000000001"),
            "../target",
        ] {
            assert!(SyncPath::parse(text).is_err(), "{text:?} was read as a sync path");
        }
        let foreign = SyncPath::parse_full("quire-sync/tmp/000000000001.abc").unwrap_err();
        assert_eq!(foreign.reason, "outside quire-sync/v1/");
    }

    #[test]
    fn ids_are_random_hex() {
        let (a, b) = (TargetId::random().unwrap(), TargetId::random().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.to_string().len(), 32);
        assert_eq!(a.to_string().parse::<TargetId>(), Ok(a));
        assert_eq!(format!("{a:?}"), format!("TargetId({a})"));
        assert!("0123".parse::<DeviceId>().is_err());
    }
}
