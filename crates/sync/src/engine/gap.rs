//! A device whose batches stop at a hole: a later batch of it is on the target, the next one to apply is not. Its
//! changes from there on wait (applying past a hole would lose what the missing batch holds), and the wait is said:
//! in the sync's report, in `quire sync status` (with since when) and in the web page's top bar. A folder that syncs
//! files out of order makes short holes; a file lost or withheld by the target makes one that lasts.

use serde::{Deserialize, Serialize};

use super::{Device, SyncError, own_actor, setting};

/// A device's batches waiting for one that is not on the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The device's id.
    pub device: String,
    /// Its name, as its batches give it.
    pub name: String,
    /// The batch that is missing.
    pub missing: u64,
    /// The last of its batches that is there.
    pub later: u64,
    /// When this device first saw the hole (milliseconds).
    pub since: i64,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "batch {} of device {} is not on the target though later ones are (up to {}): its changes from there on \
             wait for it (a folder that is still copying files, or a file the target lost). {}'s next sync puts \
             what it held on the target again, as a snapshot: nothing is lost unless {} never syncs again. If it \
             never will, `quire sync forget {}` ends the wait, and what it wrote from batch {} on is not applied here",
            self.missing, self.name, self.later, self.name, self.name, self.name, self.missing
        )
    }
}

impl Device {
    /// Keeps the holes seen by this sync (each with the time it was first seen), for `status`.
    pub(super) fn record_gaps(&self, seen: Vec<Gap>) -> Result<Vec<Gap>, SyncError> {
        self.ws
            .write(&own_actor(&self.name), |w| -> Result<Vec<Gap>, SyncError> {
                let before = read(&w.sync_configs()?);
                let gaps: Vec<Gap> = seen
                    .into_iter()
                    .map(|mut gap| {
                        if let Some(old) = before
                            .iter()
                            .find(|o| o.device == gap.device && o.missing == gap.missing)
                        {
                            gap.since = old.since;
                        }
                        gap
                    })
                    .collect();
                if gaps == before {
                    return Ok(gaps);
                }
                let bytes = serde_json::to_vec(&gaps).map_err(|_| SyncError::Settings("the holes seen"))?;
                w.set_sync_config(setting::GAPS, &bytes)?;
                Ok(gaps)
            })
    }
}

/// The holes the last sync saw, from the settings.
pub(super) fn read(configs: &std::collections::BTreeMap<String, Vec<u8>>) -> Vec<Gap> {
    configs
        .get(setting::GAPS)
        .and_then(|bytes| serde_json::from_slice(bytes).ok())
        .unwrap_or_default()
}
