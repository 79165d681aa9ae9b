//! quire's sync across devices, the part that touches a storage target: the keys that seal its files, the format of
//! a sealed file, the layout of files on a target and the target itself (a local folder for now, through opendal).
//!
//! The target is dumb: it stores opaque encrypted files and runs no quire code. Every file is sealed with a key
//! derived from the [`SyncKey`] the workspace hands over and bound to the target and its path ([`seal_file`]); a
//! device only adds files (create-only, whole or not at all) and deletes only its own; a file that is not the
//! layout's is reported, never read ([`SyncPath::parse`]).
//!
//! [`doc`] is the merge model: loro documents for notes and the notebook tree, pure data.
//!
//! This crate never holds the workspace's unlocked key: the workspace derives the sync key and hands over only that.

mod address;
pub mod background;
mod batch;
pub mod conflicts;
pub mod credentials;
pub mod doc;
mod engine;
mod file;
mod guard;
mod key;
mod layout;
mod pack;
mod remote;
mod said;
mod snapshot;
mod status;
pub use status::batches;
mod target;

pub use address::{Address, BadAddress};
pub use batch::{Batch, Entry};
pub use engine::{Device, Gap, SNAPSHOT_AFTER, Status, SyncError, SyncReport};
pub use file::{FileError, MAGIC, open_file, seal_file};
pub use key::{FileKey, SyncKey};
pub use layout::{DeviceId, Foreign, MAX_PART, MAX_SEQ, NoRandomness, NotALayoutName, SyncPath, TargetId};
pub use remote::{DEFAULT_TIMEOUT, RETRIES, set_request_timeout};
pub use target::{Listing, Scan, Target, TargetError};
