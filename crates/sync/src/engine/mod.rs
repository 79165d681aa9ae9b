//! The sync engine: one device of a workspace, syncing through one target.
//!
//! A sync is three steps, each safe to stop at any point (a killed process resumes without loss or duplication):
//!
//! 1. **Fold** (one write transaction): every document marked changed ([`Reader::sync_dirty`]) takes its rows'
//!    state as operations; what no batch holds yet becomes the next batch, sealed and kept in the outbox with its
//!    number. The marks are cleared in the same transaction.
//! 2. **Upload**: each batch of the outbox is written to `d/ME/b/SEQ` (create-only, whole or not at all) and then
//!    dropped from the outbox. A batch found there already was uploaded by a run that stopped before dropping it.
//! 3. **Apply**: every other device's batches after the last one applied here are read, checked, and applied in
//!    order, each in one write transaction as [`Actor::Sync`] with the note documents it changes, its rows and the
//!    device's counter. A batch waits until every batch it acknowledges is applied here (so operations arrive in
//!    causal order and loro never keeps any in memory only); a damaged, foreign or missing file stops that
//!    device's batches there and is reported.
//!
//! [`Reader::sync_dirty`]: quire_core::Reader::sync_dirty

mod apply;
mod attachment;
mod compact;
mod fold;
mod gap;
mod map;
mod offline;
mod scrub;
mod setup;
mod snapshots;

pub use compact::SNAPSHOT_AFTER;
pub use gap::Gap;

use quire_core::replica::{SyncDevice, SyncDoc};
use quire_core::{Actor, Workspace};

use crate::address::Address;
use crate::doc::DocError;
use crate::key::{FileKey, SyncKey};
use crate::layout::{DeviceId, SyncPath, TargetId};
use crate::target::{Target, TargetError};

/// The settings sync keeps in the workspace (`sync_config`).
mod setting {
    pub(super) const DEVICE: &str = "device";
    pub(super) const PEER: &str = "peer";
    pub(super) const NAME: &str = "name";
    pub(super) const TARGET: &str = "target";
    pub(super) const TARGET_ID: &str = "target_id";
    pub(super) const KEY: &str = "key";
    pub(super) const NEXT_SEQ: &str = "next_seq";
    pub(super) const NEXT_SNAPSHOT: &str = "next_snapshot";
    /// The snapshot being written and when its writing started (two big-endian 8-byte numbers).
    pub(super) const WRITING: &str = "writing_snapshot";
    /// Set when changes from other devices were applied and no batch made here since says so.
    pub(super) const UNACKED: &str = "unacked";
    pub(super) const LAST_SYNC: &str = "last_sync";
    pub(super) const LAST_ERROR: &str = "last_error";
    /// When the last failed sync failed (milliseconds, big-endian).
    pub(super) const LAST_ERROR_AT: &str = "last_error_at";
    /// The holes in other devices' batches the last sync saw (JSON).
    pub(super) const GAPS: &str = "gaps";
    /// The outbox's batches rewritten since the outbox was last empty (JSON): their earlier bytes may be on the
    /// target already, which counts as uploaded.
    pub(super) const REWRITTEN: &str = "rewritten";
}

/// The most operations one batch carries (bytes); more make several batches.
const BATCH_BYTES: usize = 4 << 20;

/// What went wrong. Nothing half-done stays: every step is a transaction or a create-only file.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The workspace.
    #[error(transparent)]
    Core(#[from] quire_core::Error),
    /// The target.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The operating system gave no random bytes: nothing was written.
    #[error(transparent)]
    NoRandomness(#[from] crate::layout::NoRandomness),
    /// A merge document.
    #[error("a sync document: {0}")]
    Doc(#[from] DocError),
    /// Sync is not set up in this workspace.
    #[error("This workspace does not sync: set it up with `quire sync init TARGET` or `quire sync join TARGET`.")]
    NotSetUp,
    /// Sync is set up already.
    #[error("This workspace syncs with {0} already (`quire sync status`); `quire sync leave` stops that first.")]
    AlreadySetUp(String),
    /// The settings are damaged.
    #[error("The sync settings in this workspace are damaged ({0}); `quire sync leave` and join again.")]
    Settings(&'static str),
    /// The folder holds another target than the one this workspace syncs with.
    #[error("{root} holds another sync target (id {found}) than the one this workspace syncs with (id {expected})")]
    OtherTarget {
        /// The folder.
        root: String,
        /// The id it holds.
        found: TargetId,
        /// The id this workspace knows.
        expected: TargetId,
    },
    /// The target's files do not open with this workspace's key.
    #[error("{0}")]
    WrongKey(String),
    /// Something asked of sync that cannot be done; the message says why.
    #[error("{0}")]
    Invalid(String),
    /// The target as typed is not an address quire reads.
    #[error(transparent)]
    Address(#[from] crate::address::BadAddress),
    /// A folder target could not be made, or its place not told.
    #[error("cannot make the folder {path}: {source}")]
    Folder {
        /// The folder.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No device on the target left its key: nothing to join.
    #[error("{0} holds no device's key: it is empty or damaged, so there is nothing to join")]
    NothingToJoin(String),
}

/// What one sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Batches this device wrote to the target.
    pub sent_batches: usize,
    /// Documents (notes, and the notebook tree) in them.
    pub sent_docs: usize,
    /// Other devices' batches applied here.
    pub applied_batches: usize,
    /// Notes they changed here.
    pub applied_notes: usize,
    /// Files refused (damaged, or a batch that could not be applied), with the reason; they stop their device's later
    /// batches until a sync gets past them.
    pub refused: Vec<String>,
    /// Files on the target that are not sync's (a conflict copy a file-sync tool made, a stray file), never read.
    pub ignored: Vec<String>,
    /// Batches that wait for others not on the target yet.
    pub waiting: usize,
    /// Other devices' snapshots applied here (their early batches were removed).
    pub applied_snapshots: usize,
    /// Whether this device wrote a snapshot.
    pub made_snapshot: bool,
    /// This device's files it removed from the target (batches every device has applied, superseded snapshots).
    pub removed: usize,
    /// Devices whose batches wait for one that is not on the target though later ones are.
    pub gaps: Vec<Gap>,
    /// Places in notes where another device changed the same lines as this one, found now: both versions are in
    /// the note, and each waits for the person's choice (`quire sync conflicts`).
    pub conflicts: usize,
    /// Notes sealed on another device without edits made here (or received here): those edits wait beside each,
    /// sealed, and are merged in when the person opens its conflicts with the passphrase (`quire sync conflicts`).
    pub kept_aside: usize,
}

/// Where a workspace stands with sync, read without touching the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// This device's id.
    pub device: DeviceId,
    /// Its name.
    pub name: String,
    /// The target (a folder).
    pub target: String,
    /// When the last sync ended (milliseconds), if one did.
    pub last_sync: Option<i64>,
    /// Why the last sync failed, if it did.
    pub last_error: Option<String>,
    /// When it failed (milliseconds).
    pub last_error_at: Option<i64>,
    /// Documents changed here and not folded into a batch yet.
    pub changed: usize,
    /// Batches made here and not uploaded yet.
    pub unsent: usize,
    /// The other devices seen.
    pub devices: Vec<SyncDevice>,
    /// How many merge documents, and their bytes.
    pub docs: (u64, u64),
    /// Devices whose batches the last sync found waiting for a missing one, since when.
    pub gaps: Vec<Gap>,
    /// Conflicts waiting for the person's choice.
    pub conflicts: usize,
}

/// One device of a workspace, with its target open.
pub struct Device {
    /// Manifests already read from the target (a file there is never rewritten): each is read once per process.
    manifests: std::sync::Mutex<std::collections::BTreeMap<(DeviceId, u64), snapshots::Manifest>>,
    /// Conflicts recorded since the last report took them (applying a document has no report at hand).
    conflicts_found: std::sync::atomic::AtomicUsize,
    /// Edits kept beside sealed notes since the last report.
    asides_found: std::sync::atomic::AtomicUsize,
    ws: Workspace,
    target: Target,
    file_key: FileKey,
    me: DeviceId,
    peer: u64,
    name: String,
}

impl Device {
    /// Makes `root` a new target for this workspace and syncs everything to it. `key` comes from the unlocked
    /// workspace key; `lock` is the lock's wrapped key, stored on the target for devices that join.
    pub async fn init(
        ws: Workspace,
        address: &Address,
        key: SyncKey,
        lock: &[u8],
        name: &str,
    ) -> Result<Device, SyncError> {
        refuse_if_set_up(&ws)?;
        let target = Target::init_at(address).await?;
        Self::start(ws, target, key, lock, name).await
    }

    /// The locks a device that joins the target may open with the passphrase: each device's key file there (a
    /// passphrase changed on one device changes its file only, so the joining device tries them in turn).
    pub async fn locks_to_join(address: &Address) -> Result<Vec<Vec<u8>>, SyncError> {
        let target = Target::open_at(address).await?;
        let keys = target
            .scan()
            .await?
            .files
            .into_iter()
            .filter(|f| matches!(f, SyncPath::Key(_)));
        let mut locks = Vec::new();
        for path in keys {
            match target.get(&path).await {
                Ok(bytes) if !locks.contains(&bytes) => locks.push(bytes),
                Ok(_) | Err(TargetError::Missing(_)) => continue,
                Err(other) => return Err(other.into()),
            }
        }
        if locks.is_empty() {
            return Err(SyncError::NothingToJoin(target.root().to_owned()));
        }
        Ok(locks)
    }

    /// Keeps this device's key file on the target the lock it has now (after `quire lock passwd`, the new passphrase
    /// is the one that opens it). Deleting and writing again is safe: only this device writes the file, and a device
    /// that joins meanwhile tries the other devices' files.
    async fn publish_lock(&self) -> Result<(), SyncError> {
        let material = match self.ws.lock_material() {
            Ok(material) => material,
            Err(quire_core::Error::NoLock) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let path = SyncPath::Key(self.me);
        match self.target.get(&path).await {
            Ok(bytes) if bytes == material => return Ok(()),
            Ok(_) => self.target.delete(&self.me, &path).await?,
            Err(TargetError::Missing(_)) => {}
            Err(other) => return Err(other.into()),
        }
        self.target.put_new(&path, material).await?;
        Ok(())
    }

    /// Joins the target at `root` as a new device: its notes merge with this workspace's (usually empty), which
    /// must have joined the lock already so that `key` is the target's. Refused, changing nothing, if the target's
    /// files do not open with `key`.
    pub async fn join(
        ws: Workspace,
        address: &Address,
        key: SyncKey,
        lock: &[u8],
        name: &str,
    ) -> Result<Device, SyncError> {
        refuse_if_set_up(&ws)?;
        let target = Target::open_at(address).await?;
        // One file that opens proves the key (every device makes an empty first batch when it starts, and a
        // snapshot's manifest stands in once its batches are removed); a damaged or foreign folder beside them does
        // not stop a join, but files of which none opens do.
        let file_key = key.file_key();
        let mut checked = 0;
        let mut opened = false;
        for device in target.list_devices().await?.found {
            // Its first batch left, or else a snapshot's manifest (compaction may have removed every batch).
            let path = match target.list_batches(&device).await?.found.first() {
                Some(&seq) => SyncPath::Batch(device, seq),
                None => match target
                    .list_snapshots(&device)
                    .await?
                    .found
                    .iter()
                    .find(|(_, part)| *part == 0)
                {
                    Some(&(n, _)) => SyncPath::Snapshot(device, n, 0),
                    None => continue,
                },
            };
            let bytes = match target.get(&path).await {
                Ok(bytes) => bytes,
                // Removed since the listing (compaction): it proves nothing either way.
                Err(TargetError::Missing(_)) => continue,
                Err(_) => {
                    checked += 1;
                    continue;
                }
            };
            checked += 1;
            if crate::file::open_file(&file_key, target.id(), &path, &bytes).is_ok() {
                opened = true;
                break;
            }
        }
        if checked > 0 && !opened {
            return Err(SyncError::WrongKey(format!(
                "{} was made by another workspace: its files do not open with this one's key",
                target.root()
            )));
        }
        Self::start(ws, target, key, lock, name).await
    }

    async fn start(ws: Workspace, target: Target, key: SyncKey, lock: &[u8], name: &str) -> Result<Device, SyncError> {
        let me = DeviceId::random()?;
        let peer = random_peer()?;
        target.put_new(&SyncPath::Key(me), lock.to_vec()).await?;
        let root = target.root().to_owned();
        let target_id = *target.id();
        let key_bytes = zeroize::Zeroizing::new(*key.bytes());
        // Every device's first batch is empty and made now: a device that joins later always finds a batch to check
        // its key against, even when nothing was synced yet.
        let first = SyncPath::Batch(me, 1);
        let empty = crate::batch::Batch {
            name: name.to_owned(),
            ..Default::default()
        };
        let sealed = crate::file::seal_file(&key.file_key(), &target_id, &first, &empty.to_stored())?;
        ws.write(&own_actor(name), |w| {
            // Nothing of an earlier setup stays but the merge documents, and those count as sent nowhere: what they
            // hold goes to this target in the first fold.
            w.forget_sync()?;
            w.reset_sync_exports()?;
            Device::send_attachments_again(w).map_err(|e| quire_core::Error::Invalid(e.to_string()))?;
            w.push_sync_outbox(1, &sealed)?;
            w.set_sync_config(setting::PEER, &peer.to_be_bytes())?;
            w.set_sync_config(setting::NAME, name.as_bytes())?;
            w.set_sync_config(setting::TARGET, root.as_bytes())?;
            w.set_sync_config(setting::TARGET_ID, target_id.as_bytes())?;
            w.set_sync_config(setting::KEY, key_bytes.as_slice())?;
            w.set_sync_config(setting::NEXT_SEQ, &2u64.to_be_bytes())?;
            // Last: the triggers mark changes from now on, and everything already here is marked.
            w.set_sync_config(setting::DEVICE, me.as_bytes())?;
            w.mark_all_sync_dirty()
        })?;
        Ok(Device {
            manifests: Default::default(),
            conflicts_found: Default::default(),
            asides_found: Default::default(),
            ws,
            file_key: key.file_key(),
            target,
            me,
            peer,
            name: name.to_owned(),
        })
    }

    /// This workspace's device, its target opened; `None` if it does not sync.
    pub async fn open(ws: Workspace) -> Result<Option<Device>, SyncError> {
        let Some(settings) = Settings::read(&ws)? else {
            return Ok(None);
        };
        let address = Address::parse(&settings.target).map_err(TargetError::from)?;
        let target = Target::open_at(&address).await?;
        if *target.id() != settings.target_id {
            return Err(SyncError::OtherTarget {
                root: settings.target,
                found: *target.id(),
                expected: settings.target_id,
            });
        }
        Ok(Some(Device {
            manifests: Default::default(),
            conflicts_found: Default::default(),
            asides_found: Default::default(),
            ws,
            file_key: SyncKey::from_bytes(settings.key).file_key(),
            target,
            me: settings.device,
            peer: settings.peer,
            name: settings.name,
        }))
    }

    /// Syncs now: folds and uploads what changed here, applies what other devices uploaded. The outcome (when, or
    /// why not) is recorded for [`Device::status`].
    pub async fn sync(&self) -> Result<SyncReport, SyncError> {
        self.sync_recorded(false).await
    }

    /// Syncs now, then writes a snapshot whatever the number of batches, and removes this device's files that
    /// nobody needs any more (`quire sync compact`).
    pub async fn compact(&self) -> Result<SyncReport, SyncError> {
        self.sync_recorded(true).await
    }

    async fn sync_recorded(&self, compact: bool) -> Result<SyncReport, SyncError> {
        let outcome = match Device::scrub_outbox(&self.ws) {
            Ok(_) => self.sync_steps(compact).await,
            Err(error) => Err(error),
        };
        let error = match &outcome {
            Ok(report) if report.refused.is_empty() => String::new(),
            Ok(report) => report.refused.join("\n"),
            Err(error) => error.to_string(),
        };
        let now = now_millis();
        self.ws.write(&own_actor(&self.name), |w| {
            if outcome.is_ok() {
                w.set_sync_config(setting::LAST_SYNC, &now.to_be_bytes())?;
            }
            if !error.is_empty() {
                w.set_sync_config(setting::LAST_ERROR_AT, &now.to_be_bytes())?;
            }
            w.set_sync_config(setting::LAST_ERROR, error.as_bytes())
        })?;
        outcome
    }

    /// Records a sync that failed before it could start (the target could not be opened: offline, say), for
    /// `quire sync status`; nothing when the workspace does not sync.
    pub fn record_failure(ws: &Workspace, error: &SyncError) -> Result<(), SyncError> {
        let Some(settings) = Settings::read(ws)? else {
            return Ok(());
        };
        let now = now_millis();
        ws.write(&own_actor(&settings.name), |w| {
            w.set_sync_config(setting::LAST_ERROR_AT, &now.to_be_bytes())?;
            w.set_sync_config(setting::LAST_ERROR, error.to_string().as_bytes())
        })?;
        Ok(())
    }

    async fn sync_steps(&self, compact: bool) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        self.target.check().await?;
        self.publish_lock().await?;
        self.fold(&mut report)?;
        self.upload(&mut report).await?;
        let mut survey = self.apply_others(&mut report).await?;
        // What applying left different from the merge (a note sealed here from a newer text than the device that
        // sealed it had, a title the guards trimmed) goes out now, not at the next sync.
        if report.applied_notes > 0 && !self.ws.read(&own_actor(&self.name), |r| r.sync_dirty())?.is_empty() {
            self.fold(&mut report)?;
            self.upload(&mut report).await?;
        }
        let unacked = self
            .ws
            .read(&own_actor(&self.name), |r| r.sync_config(setting::UNACKED))?;
        if unacked.is_some_and(|v| v == [1]) {
            self.send_acks(&mut report).await?;
        }
        self.compact_target(&mut survey, &mut report, compact).await?;
        Ok(report)
    }

    /// Step 1 alone: folds what changed here into batches in the outbox (nothing leaves the device).
    pub fn fold_changes(&self) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        self.fold(&mut report)?;
        Ok(report)
    }

    /// Step 2 alone: uploads the outbox.
    pub async fn send(&self) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        self.target.check().await?;
        self.upload(&mut report).await?;
        Ok(report)
    }

    /// Step 3 alone: applies what other devices uploaded, merged with what changed here and was not folded yet.
    pub async fn receive(&self) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        self.apply_others(&mut report).await?;
        Ok(report)
    }

    /// Stops waiting for a device's batches (a lost or retired device), by its id or the start of it. Its batches
    /// already applied stay applied. Returns the device forgotten.
    pub fn forget(ws: &Workspace, device: &str) -> Result<SyncDevice, SyncError> {
        let settings = Settings::read(ws)?.ok_or(SyncError::NotSetUp)?;
        let devices = ws.read(&own_actor(&settings.name), |r| r.sync_devices())?;
        let matching: Vec<&SyncDevice> = devices
            .iter()
            .filter(|d| d.id.starts_with(device) || d.name == device)
            .collect();
        let found = match matching.as_slice() {
            [one] => (*one).clone(),
            [] => {
                return Err(SyncError::Invalid(format!(
                    "No device {device} has synced here (`quire sync status` lists them)."
                )));
            }
            _ => {
                return Err(SyncError::Invalid(format!(
                    "{device} names several devices: give more of the id (`quire sync status` lists them)."
                )));
            }
        };
        let forgotten = SyncDevice {
            forgotten: Some(now_millis()),
            ..found
        };
        ws.write(&own_actor(&settings.name), |w| w.put_sync_device(&forgotten))?;
        Ok(forgotten)
    }

    /// Stops syncing this workspace: its sync settings are removed; notes and merge documents stay (joining again
    /// merges from them). The target keeps this device's files (other devices already have what they hold).
    pub fn leave(ws: &Workspace) -> Result<(), SyncError> {
        let settings = Settings::read(ws)?.ok_or(SyncError::NotSetUp)?;
        ws.write(&own_actor(&settings.name), |w| w.forget_sync())?;
        // A password or keys Settings kept for the target go with it (the environment's are not quire's to forget).
        let parsed = Address::parse(&settings.target).map_err(|e| e.to_string());
        if let Err(e) = parsed.and_then(|a| crate::credentials::forget(&a).map_err(|e| e.to_string())) {
            tracing::warn!("the credentials kept for {} were not forgotten: {e}", settings.target);
        }
        Ok(())
    }

    /// Where the workspace stands with sync, or `None` if it does not sync.
    pub fn status(ws: &Workspace) -> Result<Option<Status>, SyncError> {
        let Some(settings) = Settings::read(ws)? else {
            return Ok(None);
        };
        let actor = own_actor(&settings.name);
        let (changed, unsent, devices, docs, configs) = ws.read(&actor, |r| {
            Ok::<_, quire_core::Error>((
                r.sync_dirty()?.len(),
                r.sync_outbox_count()?,
                r.sync_devices()?,
                r.sync_docs_size()?,
                r.sync_configs()?,
            ))
        })?;
        let last_sync = configs
            .get(setting::LAST_SYNC)
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map(i64::from_be_bytes);
        let last_error = configs
            .get(setting::LAST_ERROR)
            .and_then(|v| String::from_utf8(v.clone()).ok())
            .filter(|e| !e.is_empty());
        let last_error_at = configs
            .get(setting::LAST_ERROR_AT)
            .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
            .map(i64::from_be_bytes)
            .filter(|_| last_error.is_some());
        let gaps = gap::read(&configs);
        let conflicts = crate::conflicts::open(ws, &actor, None)
            .map_err(|e| SyncError::Invalid(e.to_string()))?
            .len();
        Ok(Some(Status {
            gaps,
            conflicts,
            device: settings.device,
            name: settings.name,
            target: settings.target,
            last_sync,
            last_error,
            last_error_at,
            changed,
            unsent,
            devices,
            docs,
        }))
    }

    /// This device's id.
    pub fn id(&self) -> DeviceId {
        self.me
    }

    /// The target's folder or address, as stored and shown.
    pub fn target_root(&self) -> &str {
        self.target.root()
    }
}

/// The settings of a device, as stored.
struct Settings {
    device: DeviceId,
    peer: u64,
    name: String,
    target: String,
    target_id: TargetId,
    key: [u8; 32],
}

impl Settings {
    fn read(ws: &Workspace) -> Result<Option<Settings>, SyncError> {
        let configs = ws.read(&own_actor(""), |r| r.sync_configs())?;
        let Some(device) = configs.get(setting::DEVICE) else {
            return Ok(None);
        };
        let get = |name: &'static str| configs.get(name).ok_or(SyncError::Settings(name));
        let fixed = |name: &'static str| get(name).cloned();
        let device: [u8; 16] = device
            .as_slice()
            .try_into()
            .map_err(|_| SyncError::Settings("device"))?;
        let peer: [u8; 8] = fixed(setting::PEER)?
            .try_into()
            .map_err(|_| SyncError::Settings(setting::PEER))?;
        let target_id: [u8; 16] = fixed(setting::TARGET_ID)?
            .try_into()
            .map_err(|_| SyncError::Settings(setting::TARGET_ID))?;
        let key: [u8; 32] = fixed(setting::KEY)?
            .try_into()
            .map_err(|_| SyncError::Settings(setting::KEY))?;
        let text = |name: &'static str| -> Result<String, SyncError> {
            String::from_utf8(get(name)?.clone()).map_err(|_| SyncError::Settings(name))
        };
        Ok(Some(Settings {
            device: DeviceId::from_bytes(device),
            peer: u64::from_be_bytes(peer),
            name: text(setting::NAME)?,
            target: text(setting::TARGET)?,
            target_id: TargetId::from_bytes(target_id),
            key,
        }))
    }
}

fn refuse_if_set_up(ws: &Workspace) -> Result<(), SyncError> {
    match Settings::read(ws)? {
        Some(settings) => Err(SyncError::AlreadySetUp(settings.target)),
        None => Ok(()),
    }
}

/// A stored merge document, its bytes unpacked.
fn load_doc(r: &quire_core::Reader<'_>, id: &str) -> Result<Option<SyncDoc>, SyncError> {
    let Some(mut stored) = r.sync_doc(id)? else {
        return Ok(None);
    };
    // Emptied by core when the note was sealed (its history held the plain text): the next fold starts it again.
    if stored.doc.is_empty() {
        return Ok(Some(stored));
    }
    stored.doc = crate::pack::unpack(&stored.doc).ok_or(SyncError::Settings("a stored sync document"))?;
    Ok(Some(stored))
}

/// Stores a merge document, its bytes packed.
fn store_doc(w: &mut quire_core::Writer<'_>, id: &str, doc: &SyncDoc) -> Result<(), SyncError> {
    let packed = SyncDoc {
        doc: crate::pack::pack(&doc.doc),
        ..doc.clone()
    };
    w.save_sync_doc(id, &packed)?;
    Ok(())
}

/// The actor of this device's own bookkeeping (it writes no notes).
fn own_actor(name: &str) -> Actor {
    Actor::Sync {
        device: format!("{name} (this device)"),
    }
}

/// The actor that writes another device's changes: its name and the start of its id.
fn device_actor(name: &str, device: &DeviceId) -> Actor {
    let id = device.to_string();
    Actor::Sync {
        device: format!("{name} ({})", &id[..8.min(id.len())]),
    }
}

/// A random loro peer id for a new device (below 2^63: loro reserves the largest).
fn random_peer() -> Result<u64, crate::layout::NoRandomness> {
    let mut bytes = [0u8; 8];
    crate::layout::random_bytes(&mut bytes)?;
    Ok(u64::from_be_bytes(bytes) >> 1)
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
