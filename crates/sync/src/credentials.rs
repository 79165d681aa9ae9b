//! Credentials of remote targets typed in the web app's Settings, kept where `quire sync` finds them too: a file in
//! quire's configuration directory (`sync-credentials.json`) that only the user can read, beside the config.toml
//! that holds model API keys the same way. The environment still comes first (`QUIRE_WEBDAV_PASSWORD`,
//! `AWS_ACCESS_KEY_ID`, ...), so scripts and containers work as before; the file is read only for what the
//! environment does not give. Nothing of it is in the workspace file, a sync target, a URL or a log.
//!
//! The binary says once where the file is ([`keep_in`]), as it sets the request timeout: a process-wide setting,
//! like the environment it stands in for. A process that never says (a library embedding quire-sync) reads the
//! environment alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use crate::address::Address;

/// What a remote target needs besides its address: a WebDAV password, or S3's keys (and where S3 is, for a provider
/// other than AWS). Empty fields are not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// A WebDAV target's password (its user is in the address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webdav_password: Option<String>,
    /// An S3 target's access key id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_access_key_id: Option<String>,
    /// An S3 target's secret access key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_secret_access_key: Option<String>,
    /// An S3 target's region (`us-east-1` when none is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_region: Option<String>,
    /// An S3 provider's address other than AWS's (R2, MinIO, Garage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_endpoint: Option<String>,
}

impl Credentials {
    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        *self == Credentials::default()
    }

    /// The same, with blank fields left out and the rest trimmed.
    pub fn cleaned(mut self) -> Credentials {
        for field in [
            &mut self.webdav_password,
            &mut self.s3_access_key_id,
            &mut self.s3_secret_access_key,
            &mut self.s3_region,
            &mut self.s3_endpoint,
        ] {
            if let Some(value) = field.take() {
                let trimmed = value.trim();
                if !trimmed.is_empty() {
                    *field = Some(trimmed.to_owned());
                }
                let mut value = value;
                value.zeroize();
            }
        }
        self
    }
}

/// The file, as kept: credentials by the target's address as shown (no secret is part of it).
#[derive(Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    targets: BTreeMap<String, Credentials>,
}

static FILE: OnceLock<PathBuf> = OnceLock::new();
static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Where this process keeps and finds credentials (the first call wins; later ones are ignored).
pub fn keep_in(path: PathBuf) {
    let _ = FILE.set(path);
}

/// The file this process keeps credentials in, if it said.
pub fn file() -> Option<&'static Path> {
    FILE.get().map(PathBuf::as_path)
}

/// Why credentials could not be kept or forgotten.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The process did not say where credentials are kept ([`keep_in`]).
    #[error("this process keeps no credentials (no configuration directory)")]
    NoFile,
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file holds something else.
    #[error("{}: not credentials quire wrote ({source}); move it away to start over", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What the reader said.
        source: serde_json::Error,
    },
}

/// The credentials kept for `address` (none for a folder, or when nothing is kept).
pub fn stored(address: &Address) -> Option<Credentials> {
    if matches!(address, Address::Folder(_)) {
        return None;
    }
    read(file()?).ok()?.targets.remove(&address.shown())
}

/// Keeps `credentials` for `address`, replacing what was kept for it; empty credentials forget it. Returns what was
/// kept before, to put back if the target then refuses them.
pub fn save(address: &Address, credentials: Credentials) -> Result<Option<Credentials>, CredentialsError> {
    let path = file().ok_or(CredentialsError::NoFile)?;
    // One read-change-write at a time in this process (two pages setting up at once, a set-up and a leave).
    let _one = WRITING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut kept = match read(path) {
        Ok(kept) => kept,
        Err(CredentialsError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Stored::default(),
        Err(e) => return Err(e),
    };
    let credentials = credentials.cleaned();
    let before = if credentials.is_empty() {
        kept.targets.remove(&address.shown())
    } else {
        kept.targets.insert(address.shown(), credentials)
    };
    write(path, &kept)?;
    Ok(before)
}

/// Forgets what was kept for `address` (when this device stops syncing there).
pub fn forget(address: &Address) -> Result<(), CredentialsError> {
    if file().is_none() || stored(address).is_none() {
        return Ok(());
    }
    save(address, Credentials::default()).map(drop)
}

fn read(path: &Path) -> Result<Stored, CredentialsError> {
    let mut text = std::fs::read_to_string(path).map_err(|source| CredentialsError::Io {
        path: path.to_owned(),
        source,
    })?;
    let stored = serde_json::from_str(&text).map_err(|source| CredentialsError::Damaged {
        path: path.to_owned(),
        source,
    });
    text.zeroize();
    stored
}

/// Writes the file whole, readable and writable by the user alone, in one rename.
fn write(path: &Path, stored: &Stored) -> Result<(), CredentialsError> {
    let io = |source| CredentialsError::Io {
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(stored).map_err(|e| io(std::io::Error::other(e)))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    // Unique to this write (another process may write at the same moment; the last rename wins, whole).
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temporary = dir.join(format!(".sync-credentials.{}.{n}.tmp", std::process::id()));
    let written = write_private(&temporary, text.as_bytes()).and_then(|()| std::fs::rename(&temporary, path));
    text.zeroize();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written.map_err(io)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_by_address_private_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quire").join("sync-credentials.json");
        // Each test program is one process: this is the only test that sets the file.
        keep_in(path.clone());
        let dav = Address::parse("webdav+http://me@127.0.0.1:9/notes").unwrap();
        let s3 = Address::parse("s3://bucket/quire").unwrap();
        assert_eq!(stored(&dav), None);
        // What Settings sends for a target whose fields were left blank: nothing given.
        let blank = Credentials {
            webdav_password: Some(String::new()),
            s3_region: Some(" ".into()),
            ..Credentials::default()
        };
        assert!(blank.cleaned().is_empty());
        let given = Credentials {
            webdav_password: Some(" s3cret ".into()),
            s3_region: Some("  ".into()),
            ..Credentials::default()
        };
        assert_eq!(save(&dav, given).unwrap(), None);
        let keys = Credentials {
            s3_access_key_id: Some("AKIA".into()),
            s3_secret_access_key: Some("shh".into()),
            ..Credentials::default()
        };
        save(&s3, keys.clone()).unwrap();
        let kept = stored(&dav).unwrap();
        assert_eq!(kept.webdav_password.as_deref(), Some("s3cret"), "trimmed");
        assert_eq!(kept.s3_region, None, "a blank field is not kept");
        assert_eq!(stored(&s3), Some(keys));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        forget(&dav).unwrap();
        assert_eq!(stored(&dav), None);
        assert!(stored(&s3).is_some(), "the other target's are kept");
        assert_eq!(stored(&Address::parse("/some/folder").unwrap()), None);
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(
            save(&dav, Credentials::default()),
            Err(CredentialsError::Damaged { .. })
        ));
    }
}
