//! A storage target through opendal: a local folder (which Syncthing, Dropbox or a USB disk then carry), a WebDAV
//! folder or an S3 bucket ([`Address`]).
//! Files are written create-only and whole (an upload killed half-way leaves its bytes in `quire-sync/tmp/`, never a
//! partial file under its final name); listings sort by number and report every file that is not sync's own.
//!
//! Nothing global: each `Target` builds its own operator (no registry of services, no default transport).

use std::path::{Path, PathBuf};

use opendal::services::Fs;
use opendal::{EntryMode, ErrorKind, Operator};

use crate::address::{Address, BadAddress};
use crate::guard::{link_on_the_way, read_at_most};
use crate::layout::{BASE, DeviceId, Foreign, SyncPath, TEMP, TargetId};
use crate::remote::{Unopened, remote_operator};
use crate::said::said;

/// The `format` the `target` file holds. A target of a later format is refused, never written.
const FORMAT: u64 = 1;
/// The most bytes of the `target` file or a key file (they hold a few hundred).
const MARKER_LIMIT: u64 = 64 << 10;

/// What went wrong with a target. Every message names the target or the file.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The operating system gave no random bytes for the target's id: nothing was written.
    #[error(transparent)]
    NoRandomness(#[from] crate::layout::NoRandomness),
    /// An address that is not one of a target.
    #[error("{0}")]
    BadAddress(String),
    /// The folder does not exist.
    #[error("the folder {0} does not exist")]
    NoFolder(PathBuf),
    /// The path is there but it is not a folder.
    #[error("{0} is not a folder")]
    NotAFolder(PathBuf),
    /// opendal takes paths as text.
    #[error("{0} is not valid UTF-8: choose a folder whose path is")]
    PathNotText(PathBuf),
    /// A folder without `quire-sync/v1/target`.
    #[error(
        "{0} is not a quire sync target: it has no quire-sync/v1/target file (check the path, or make it a target \
         with `quire sync init`)"
    )]
    NotATarget(String),
    /// `init` on a folder that is already a target.
    #[error("{root} is already a quire sync target (id {id}): join it instead of making a new one")]
    AlreadyATarget {
        /// The folder.
        root: String,
        /// The id of the target it holds.
        id: TargetId,
    },
    /// The `target` file cannot be read.
    #[error("{root}: quire-sync/v1/target is damaged: {reason}")]
    DamagedTarget {
        /// The folder.
        root: String,
        /// What is wrong.
        reason: String,
    },
    /// The target was made by a later version of quire.
    #[error("{root} holds a quire sync target of format {format}; this quire reads format {FORMAT}: update quire")]
    NewerFormat {
        /// The folder.
        root: String,
        /// The format it holds.
        format: u64,
    },
    /// A create-only write found the file already there (files on a target are never overwritten).
    #[error("{0} is already on the target: files on a target are written once and never overwritten")]
    Exists(SyncPath),
    /// A read found no such file.
    #[error("{0} is not on the target")]
    Missing(SyncPath),
    /// A file larger than any quire writes.
    #[error("{path} holds at least {size} bytes, more than any file quire writes: refused, the rest left unread")]
    TooLarge {
        /// The file.
        path: SyncPath,
        /// Its size, or as much of it as was read before the read stopped.
        size: u64,
    },
    /// A symbolic link inside a folder target's `quire-sync/` (a peer of a shared folder can make one).
    #[error(
        "{0} is a symbolic link: quire follows none inside a target, whose writes and deletes it could lead outside \
         the folder; replace it with the folder or file itself"
    )]
    Link(PathBuf),
    /// A sequence number that no file name can hold.
    #[error("{0}: sequence numbers run from 1 to 999999999999")]
    SeqOutOfRange(SyncPath),
    /// Only `init` writes the `target` file.
    #[error("the target file is written by init only")]
    TargetFileIsInitOnly,
    /// A device deletes only its own files.
    #[error("{path} is not a file of device {own}: a device deletes only its own files")]
    NotOwn {
        /// The file.
        path: SyncPath,
        /// The device that asked.
        own: DeviceId,
    },
    /// The folder could not be looked at (a permission, a disk).
    #[error("could not look at {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The storage itself failed (a disk, a permission, a network).
    #[error("could not {doing} on the target: {}", said(error))]
    Storage {
        /// What was being done.
        doing: String,
        /// opendal's error: said in words above, and not a `source` of this error, whose text (the client's context,
        /// a server's HTML page) a command line would print after it (found in use).
        error: opendal::Error,
    },
}

/// A file of the layout as a message names it: the target's own file in words ("could not look for target on the
/// target" read as a stutter, found in use), any other by its path.
fn named(path: &SyncPath) -> String {
    match path {
        SyncPath::Target => "its quire-sync/v1/target file".to_owned(),
        other => other.to_string(),
    }
}

fn storage(doing: impl Into<String>) -> impl FnOnce(opendal::Error) -> TargetError {
    let doing = doing.into();
    move |error| TargetError::Storage { doing, error }
}

/// What a listing found: sync's own entries, sorted, and everything else under the listed folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing<T> {
    /// The entries of the layout, sorted.
    pub found: Vec<T>,
    /// Files and folders that are not the layout's: reported, never read.
    pub foreign: Vec<Foreign>,
}

/// Everything under `quire-sync/` on a target, classified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// The layout's files, sorted.
    pub files: Vec<SyncPath>,
    /// Uploads that never finished (in `quire-sync/tmp/`): harmless, never read.
    pub unfinished: Vec<String>,
    /// Files that are not the layout's, with the reason.
    pub foreign: Vec<Foreign>,
}

/// A target opened or made: its operator and its id.
#[derive(Debug, Clone)]
pub struct Target {
    op: Operator,
    id: TargetId,
    /// The folder or address, for messages.
    root: String,
    /// A WebDAV or S3 target (no `quire-sync/tmp/` of its own; written after a look for the file).
    remote: bool,
}

/// The folder as text, checked to be a folder.
async fn folder(root: &Path) -> Result<String, TargetError> {
    let text = root.to_str().ok_or_else(|| TargetError::PathNotText(root.to_owned()))?;
    match tokio::fs::metadata(root).await {
        Ok(meta) if meta.is_dir() => Ok(text.to_owned()),
        Ok(_) => Err(TargetError::NotAFolder(root.to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(TargetError::NoFolder(root.to_owned())),
        Err(source) => Err(TargetError::Folder {
            path: root.to_owned(),
            source,
        }),
    }
}

/// The folder's operator; with `uploads`, writes go through `quire-sync/tmp/` and are renamed into place.
fn fs_operator(root: &str, uploads: bool) -> Result<Operator, TargetError> {
    let mut builder = Fs::default().root(root);
    if uploads {
        let temp = Path::new(root).join(TEMP);
        let temp = temp.to_str().ok_or_else(|| TargetError::PathNotText(temp.clone()))?;
        builder = builder.atomic_write_dir(temp);
    }
    Operator::new(builder).map_err(storage(format!("open the folder {root}")))
}

/// A remote operator not made, as the target's error (`doing`: reaching the address as shown).
fn unopened(address: &Address) -> impl FnOnce(Unopened) -> TargetError {
    let shown = address.shown();
    move |unopened| match unopened {
        Unopened::Storage(error) => TargetError::Storage {
            doing: format!("reach {shown}"),
            error,
        },
        Unopened::Address(message) => TargetError::BadAddress(message),
    }
}

impl From<BadAddress> for TargetError {
    fn from(bad: BadAddress) -> TargetError {
        TargetError::BadAddress(bad.0)
    }
}

impl Target {
    /// Makes the folder `root` a new target with a random id (the folder is created if its parent exists).
    /// A folder that already is a target is refused with its id: open it instead.
    pub async fn init(root: &Path) -> Result<Target, TargetError> {
        let text = match folder(root).await {
            Err(TargetError::NoFolder(_)) => {
                if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
                    folder(parent).await?;
                }
                root.to_str()
                    .ok_or_else(|| TargetError::PathNotText(root.to_owned()))?
                    .to_owned()
            }
            other => other?,
        };
        let target = Target {
            op: fs_operator(&text, true)?,
            id: TargetId::random()?,
            root: text,
            remote: false,
        };
        target.write_marker().await
    }

    /// Opens the target in the folder `root`: reads its `target` file; a folder that is not one is refused and left
    /// unchanged.
    pub async fn open(root: &Path) -> Result<Target, TargetError> {
        let text = folder(root).await?;
        // Read with an operator that creates nothing, so a wrong folder is left as it was.
        let id = Target::read_marker(&fs_operator(&text, false)?, &text).await?;
        Ok(Target {
            op: fs_operator(&text, true)?,
            id,
            root: text,
            remote: false,
        })
    }

    /// Writes the `target` file of a new target; a place that holds one already is refused with its id.
    async fn write_marker(self) -> Result<Target, TargetError> {
        let marker = serde_json::json!({ "format": FORMAT, "target": self.id.to_string() });
        let mut bytes = marker.to_string().into_bytes();
        bytes.push(b'\n');
        match self.write_new(&SyncPath::Target, bytes).await {
            Ok(()) => Ok(self),
            Err(TargetError::Exists(_)) => {
                let existing = Target::read_marker(&self.op, &self.root).await?;
                Err(TargetError::AlreadyATarget {
                    root: self.root,
                    id: existing,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// [`Target::init`] at any address: a folder, WebDAV or S3.
    pub async fn init_at(address: &Address) -> Result<Target, TargetError> {
        let Some(op) = remote_operator(address).map_err(unopened(address))? else {
            return match address {
                Address::Folder(path) => Target::init(path).await,
                _ => Err(TargetError::BadAddress(address.shown())),
            };
        };
        let target = Target {
            op,
            id: TargetId::random()?,
            root: address.shown(),
            remote: true,
        };
        target.write_marker().await
    }

    /// [`Target::open`] at any address: a folder, WebDAV or S3.
    pub async fn open_at(address: &Address) -> Result<Target, TargetError> {
        let Some(op) = remote_operator(address).map_err(unopened(address))? else {
            return match address {
                Address::Folder(path) => Target::open(path).await,
                _ => Err(TargetError::BadAddress(address.shown())),
            };
        };
        let root = address.shown();
        let id = Target::read_marker(&op, &root).await?;
        Ok(Target {
            op,
            id,
            root,
            remote: true,
        })
    }

    async fn read_marker(op: &Operator, root: &str) -> Result<TargetId, TargetError> {
        let bytes = match read_at_most(op, &SyncPath::Target.full(), MARKER_LIMIT).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(size)) => {
                let (path, size) = (SyncPath::Target, size);
                return Err(TargetError::TooLarge { path, size });
            }
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(TargetError::NotATarget(root.to_owned())),
            Err(e) => return Err(storage(format!("read {}", named(&SyncPath::Target)))(e)),
        };
        let damaged = |reason: String| TargetError::DamagedTarget {
            root: root.to_owned(),
            reason,
        };
        let marker: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| damaged(format!("not JSON ({e})")))?;
        match marker["format"].as_u64() {
            Some(FORMAT) => {}
            Some(format) if format > FORMAT => {
                return Err(TargetError::NewerFormat {
                    root: root.to_owned(),
                    format,
                });
            }
            _ => return Err(damaged("no format 1".to_owned())),
        }
        let id = marker["target"]
            .as_str()
            .ok_or_else(|| damaged("no target id".to_owned()))?;
        id.parse().map_err(|e: crate::NotALayoutName| damaged(e.0))
    }

    /// Whether the folder still holds this target (not a disk unmounted, a folder moved or replaced): sync checks
    /// before it writes anything, so that nothing goes to a folder that is no longer the target.
    pub async fn check(&self) -> Result<(), TargetError> {
        let id = if self.remote {
            Target::read_marker(&self.op, &self.root).await?
        } else {
            let text = folder(Path::new(&self.root)).await?;
            Target::read_marker(&fs_operator(&text, false)?, &text).await?
        };
        if id != self.id {
            return Err(TargetError::DamagedTarget {
                root: self.root.clone(),
                reason: format!("it now holds another target ({id})"),
            });
        }
        Ok(())
    }

    /// The target's id (what every file's check binds).
    pub fn id(&self) -> &TargetId {
        &self.id
    }

    /// The folder, as given.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Writes a new file. It is never an overwrite: a file already at `path` is [`TargetError::Exists`]. The bytes
    /// are written to `quire-sync/tmp/`, flushed to disk and renamed into place, so a write killed half-way leaves
    /// no file under `path`.
    ///
    /// The existence check comes before the rename (opendal's folder service checks, then renames): two writers of
    /// the same path at the same moment could both pass it. The layout gives each path one writer (device D writes
    /// only `keys/D.key` and `d/D/`, and numbers each file once), and only `init` writes `target`.
    pub async fn put_new(&self, path: &SyncPath, bytes: Vec<u8>) -> Result<(), TargetError> {
        if *path == SyncPath::Target {
            return Err(TargetError::TargetFileIsInitOnly);
        }
        self.write_new(path, bytes).await
    }

    async fn write_new(&self, path: &SyncPath, bytes: Vec<u8>) -> Result<(), TargetError> {
        if !path.seq_in_range() {
            return Err(TargetError::SeqOutOfRange(*path));
        }
        if self.remote {
            return self.write_new_remote(path, bytes).await;
        }
        self.no_link(TEMP).await?;
        self.no_link(&path.full()).await?;
        match self.op.write_with(&path.full(), bytes).if_not_exists(true).await {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.kind(), ErrorKind::ConditionNotMatch | ErrorKind::AlreadyExists) => {
                Err(TargetError::Exists(*path))
            }
            Err(e) => Err(storage(format!("write {path}"))(e)),
        }
    }

    /// A remote write: refused if the file is there; on a server that can rename (WebDAV), the bytes go to
    /// `quire-sync/tmp/` first and are moved into place, so a cut connection leaves no partial file under `path`; an
    /// S3 object is stored whole or not at all by the server itself.
    async fn write_new_remote(&self, path: &SyncPath, bytes: Vec<u8>) -> Result<(), TargetError> {
        let full = path.full();
        match self.op.stat(&full).await {
            Ok(_) => return Err(TargetError::Exists(*path)),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(storage(format!("look for {}", named(path)))(e)),
        }
        if self.op.info().capability().rename {
            // One writer per path (the layout's rule): the path's own name under tmp/ is unique enough.
            let temp = format!("{TEMP}{}", path.relative().replace('/', "-"));
            self.op
                .write(&temp, bytes)
                .await
                .map_err(storage(format!("upload {path}")))?;
            self.op
                .rename(&temp, &full)
                .await
                .map_err(storage(format!("move {path} into place")))?;
        } else {
            self.op
                .write(&full, bytes)
                .await
                .map_err(storage(format!("write {path}")))?;
        }
        Ok(())
    }

    /// Reads a whole file. One larger than any quire writes (a batch holds at most one attachment beside 4 MiB of
    /// changes; a key file a few hundred bytes) is refused: anyone who can write to the folder, or a server that
    /// answers for it, could otherwise make every device read gigabytes. The bytes that come are counted, whatever
    /// size the target said the file has.
    pub async fn get(&self, path: &SyncPath) -> Result<Vec<u8>, TargetError> {
        let limit: u64 = match path {
            SyncPath::Key(_) | SyncPath::Target => MARKER_LIMIT,
            SyncPath::Batch(..) | SyncPath::Snapshot(..) => 320 << 20,
        };
        self.no_link(&path.full()).await?;
        match self.op.stat(&path.full()).await {
            Ok(meta) if meta.content_length() > limit => {
                return Err(TargetError::TooLarge {
                    path: *path,
                    size: meta.content_length(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(TargetError::Missing(*path)),
            Err(e) => return Err(storage(format!("look at {path}"))(e)),
        }
        match read_at_most(&self.op, &path.full(), limit).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(size)) => Err(TargetError::TooLarge { path: *path, size }),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(TargetError::Missing(*path)),
            Err(e) => Err(storage(format!("read {path}"))(e)),
        }
    }

    /// On a folder target, refuses a symbolic link on the way to `full` (a path under `quire-sync/`).
    async fn no_link(&self, full: &str) -> Result<(), TargetError> {
        if self.remote {
            return Ok(());
        }
        match link_on_the_way(Path::new(&self.root), full).await {
            Ok(None) => Ok(()),
            Ok(Some(link)) => Err(TargetError::Link(link)),
            Err(source) => Err(TargetError::Folder {
                path: Path::new(&self.root).join(full),
                source,
            }),
        }
    }

    /// Deletes one of the device `own`'s files (compaction); another device's file is refused. A file already gone
    /// is not an error.
    pub async fn delete(&self, own: &DeviceId, path: &SyncPath) -> Result<(), TargetError> {
        if path.device() != Some(*own) {
            return Err(TargetError::NotOwn { path: *path, own: *own });
        }
        self.no_link(&path.full()).await?;
        self.op
            .delete(&path.full())
            .await
            .map_err(storage(format!("delete {path}")))
    }

    /// The entries directly in a folder of the target, without the folder itself.
    async fn entries(&self, dir: &str) -> Result<Vec<(String, bool)>, TargetError> {
        self.no_link(dir).await?;
        let entries = match self.op.list(dir).await {
            Ok(entries) => entries,
            // A folder nobody wrote into yet (on a server, folders exist only with files in them).
            Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(storage(format!("list {dir}"))(e)),
        };
        Ok(entries
            .into_iter()
            .filter(|e| e.path() != dir)
            // Hidden files are the system's or a file-sync tool's (.DS_Store, .stversions, .dropbox): not mentioned.
            .filter(|e| !e.name().starts_with('.'))
            .map(|e| (e.path().to_owned(), e.metadata().mode() == EntryMode::DIR))
            .collect())
    }

    /// The devices that have a folder in `d/`.
    pub async fn list_devices(&self) -> Result<Listing<DeviceId>, TargetError> {
        let dir = format!("{BASE}d/");
        let mut listing = Listing {
            found: Vec::new(),
            foreign: Vec::new(),
        };
        for (path, is_dir) in self.entries(&dir).await? {
            let name = path.strip_prefix(&dir).unwrap_or(&path).trim_end_matches('/');
            match name.parse::<DeviceId>() {
                Ok(device) if is_dir => listing.found.push(device),
                Ok(_) => listing.foreign.push(Foreign {
                    path,
                    reason: "a file where a device's folder belongs".to_owned(),
                }),
                Err(reason) => listing.foreign.push(Foreign { path, reason: reason.0 }),
            }
        }
        listing.found.sort();
        Ok(listing)
    }

    /// The numbers of device `device`'s batches, ascending.
    pub async fn list_batches(&self, device: &DeviceId) -> Result<Listing<u64>, TargetError> {
        let listing = self.list_device_folder(device, "b").await?;
        Ok(Listing {
            found: listing
                .found
                .into_iter()
                .filter_map(|p| match p {
                    SyncPath::Batch(_, seq) => Some(seq),
                    _ => None,
                })
                .collect(),
            foreign: listing.foreign,
        })
    }

    /// Device `device`'s snapshot parts there, as (snapshot number, part), ascending.
    pub async fn list_snapshots(&self, device: &DeviceId) -> Result<Listing<(u64, u32)>, TargetError> {
        let listing = self.list_device_folder(device, "s").await?;
        Ok(Listing {
            found: listing
                .found
                .into_iter()
                .filter_map(|p| match p {
                    SyncPath::Snapshot(_, seq, part) => Some((seq, part)),
                    _ => None,
                })
                .collect(),
            foreign: listing.foreign,
        })
    }

    /// The files of one of a device's folders (`b` or `s`), sorted; anything else there is foreign.
    async fn list_device_folder(&self, device: &DeviceId, kind: &str) -> Result<Listing<SyncPath>, TargetError> {
        let dir = format!("{BASE}d/{device}/{kind}/");
        let mut listing = Listing {
            found: Vec::new(),
            foreign: Vec::new(),
        };
        for (path, is_dir) in self.entries(&dir).await? {
            if is_dir {
                let reason = "a folder where only numbered files belong".to_owned();
                listing.foreign.push(Foreign { path, reason });
                continue;
            }
            match SyncPath::parse_full(&path) {
                Ok(file @ (SyncPath::Batch(d, _) | SyncPath::Snapshot(d, _, _)))
                    if d == *device && (kind == "b") == matches!(file, SyncPath::Batch(..)) =>
                {
                    listing.found.push(file)
                }
                Ok(other) => listing.foreign.push(Foreign {
                    path,
                    reason: format!("read as {other}, outside the folder listed"),
                }),
                Err(foreign) => listing.foreign.push(foreign),
            }
        }
        listing.found.sort_unstable();
        Ok(listing)
    }

    /// Every file under `quire-sync/`, classified: the layout's, unfinished uploads, and foreign files.
    pub async fn scan(&self) -> Result<Scan, TargetError> {
        let dir = "quire-sync/";
        let entries = self
            .op
            .list_with(dir)
            .recursive(true)
            .await
            .map_err(storage(format!("list {dir}")))?;
        let mut scan = Scan::default();
        for entry in entries.into_iter().filter(|e| e.metadata().mode() != EntryMode::DIR) {
            let path = entry.path().to_owned();
            if path.starts_with(TEMP) {
                scan.unfinished.push(path);
                continue;
            }
            match SyncPath::parse_full(&path) {
                Ok(file) => scan.files.push(file),
                Err(foreign) => scan.foreign.push(foreign),
            }
        }
        scan.files.sort();
        scan.unfinished.sort();
        scan.foreign.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(scan)
    }
}

#[cfg(test)]
mod tests {
    use super::Target;
    use crate::layout::{DeviceId, SyncPath};

    /// An upload that stops half-way (the process dies between two writes: nothing closes the writer) leaves its
    /// bytes in the upload folder only; the batch is not there, and its upload can run again.
    #[tokio::test]
    async fn an_upload_stopped_half_way_leaves_no_file_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::init(dir.path()).await.unwrap();
        let device = DeviceId::random().unwrap();
        let path = SyncPath::Batch(device, 1);
        let mut writer = target.op.writer_with(&path.full()).if_not_exists(true).await.unwrap();
        writer.write(vec![7u8; 4096]).await.unwrap();
        drop(writer);

        assert!(!dir.path().join(path.full()).exists());
        assert!(target.list_batches(&device).await.unwrap().found.is_empty());
        assert_eq!(target.scan().await.unwrap().unfinished.len(), 1);
        target.put_new(&path, b"whole".to_vec()).await.unwrap();
        assert_eq!(target.get(&path).await.unwrap(), b"whole");
    }
}
