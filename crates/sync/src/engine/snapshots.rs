//! Reading snapshots: which are whole on the target (manifest and every part there), and applying one when a
//! device's next batch was removed by compaction.
//!
//! Applying a snapshot is always safe: every document in it is whole (all operations of its generation), so merging
//! it into what is here only adds what was missing; an older one changes nothing. It is applied a part per
//! transaction (each holds the notebook tree, so removed notebooks go once the notes that left them have), then the
//! counters of the devices it covers move up to it. A run stopped between parts applies it again.

use std::collections::{BTreeMap, BTreeSet};

use quire_core::replica::SyncDevice;

use super::{Device, SyncError, SyncReport, device_actor, now_millis, own_actor, setting};
use crate::batch::Entry;
use crate::file::open_file;
use crate::layout::{DeviceId, SyncPath};
use crate::snapshot::{Cover, Part};
use crate::target::TargetError;

/// A whole snapshot on the target, as its manifest tells it.
#[derive(Debug, Clone)]
pub(super) struct Manifest {
    pub(super) maker: DeviceId,
    pub(super) n: u64,
    pub(super) name: String,
    pub(super) parts: u32,
    pub(super) covers: Vec<Cover>,
}

impl Manifest {
    /// The last batch of `device` it holds (0: none).
    pub(super) fn covers(&self, device: &DeviceId) -> u64 {
        self.covers.iter().find(|c| c.device == *device).map_or(0, |c| c.seq)
    }

    /// Whether it holds everything `other` holds.
    pub(super) fn holds(&self, other: &Manifest) -> bool {
        other.covers.iter().all(|c| self.covers(&c.device) >= c.seq)
    }
}

/// What one sync saw on the target: each device's batches, and (read when first needed) the whole snapshots.
#[derive(Debug, Default)]
pub(super) struct Survey {
    pub(super) batches: BTreeMap<DeviceId, Vec<u64>>,
    pub(super) snapshots: Option<Vec<Manifest>>,
}

impl Device {
    /// The whole snapshots on the target (every device's), their manifests read once per sync. A manifest that does
    /// not open is reported; a snapshot still being written (no manifest yet, or a part not listed) is left alone.
    pub(super) async fn manifests<'s>(
        &self,
        survey: &'s mut Survey,
        report: &mut SyncReport,
    ) -> Result<&'s [Manifest], SyncError> {
        if survey.snapshots.is_none() {
            let mut found = Vec::new();
            for maker in survey.batches.keys().copied().collect::<Vec<_>>() {
                let listing = self.target.list_snapshots(&maker).await?;
                report.ignored.extend(listing.foreign.iter().map(|f| f.to_string()));
                let mut by_number: BTreeMap<u64, BTreeSet<u32>> = BTreeMap::new();
                for (n, part) in listing.found {
                    by_number.entry(n).or_default().insert(part);
                }
                for (n, parts) in by_number.into_iter().filter(|(_, p)| p.contains(&0)) {
                    let cached = self.cached_manifest(maker, n);
                    if let Some(manifest) = cached {
                        if (1..=manifest.parts).all(|p| parts.contains(&p)) {
                            found.push(manifest);
                        }
                        continue;
                    }
                    let path = SyncPath::Snapshot(maker, n, 0);
                    let bytes = match self.target.get(&path).await {
                        Ok(bytes) => bytes,
                        Err(TargetError::Missing(_)) => continue,
                        Err(other) => return Err(other.into()),
                    };
                    let manifest = open_file(&self.file_key, self.target.id(), &path, &bytes)
                        .map_err(|e| e.to_string())
                        .and_then(|plain| {
                            Part::from_stored(&plain)
                                .filter(|p| p.part == 0 && p.docs.is_empty())
                                .ok_or_else(|| "not a snapshot's manifest quire reads".to_owned())
                        });
                    match manifest {
                        Ok(m) => {
                            let manifest = Manifest {
                                maker,
                                n,
                                name: m.name,
                                parts: m.parts,
                                covers: m.covers,
                            };
                            self.cache_manifest(&manifest);
                            if (1..=manifest.parts).all(|p| parts.contains(&p)) {
                                found.push(manifest);
                            }
                        }
                        Err(reason) => report.refused.push(format!("{}: {reason}", path.full())),
                    }
                }
            }
            survey.snapshots = Some(found);
        }
        Ok(survey.snapshots.as_deref().unwrap_or_default())
    }

    fn cached_manifest(&self, maker: DeviceId, n: u64) -> Option<Manifest> {
        self.manifests.lock().ok()?.get(&(maker, n)).cloned()
    }

    pub(super) fn cache_manifest(&self, manifest: &Manifest) {
        if let Ok(mut cache) = self.manifests.lock() {
            cache.insert((manifest.maker, manifest.n), manifest.clone());
        }
    }

    /// For each device whose next batch is gone from the target while later ones are there (removed by its
    /// compaction), applies the whole snapshot that holds most of it, until none is missing or no snapshot helps (a
    /// batch still on its way: it waits).
    pub(super) async fn catch_up(
        &self,
        survey: &mut Survey,
        known: &mut BTreeMap<String, SyncDevice>,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        let mut tried: BTreeSet<(DeviceId, u64)> = BTreeSet::new();
        loop {
            let manifests = self.manifests(survey, report).await?.to_vec();
            let applied = |d: &DeviceId| known.get(&d.to_string()).map_or(0, |r| r.applied);
            // Every device a batch or a snapshot speaks of (one whose files were all removed lives on in snapshots).
            let devices: BTreeSet<DeviceId> = survey
                .batches
                .keys()
                .copied()
                .chain(manifests.iter().flat_map(|m| m.covers.iter().map(|c| c.device)))
                .filter(|d| *d != self.me)
                .collect();
            let missing: Vec<(DeviceId, u64)> = devices
                .into_iter()
                .filter(|d| {
                    let found = survey.batches.get(d).map_or(&[][..], Vec::as_slice);
                    let next = applied(d) + 1;
                    !found.contains(&next)
                        && (found.iter().any(|&s| s > next) || manifests.iter().any(|m| m.covers(d) >= next))
                })
                .map(|d| (d, applied(&d)))
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            let best = missing
                .iter()
                .filter_map(|(device, applied)| {
                    manifests
                        .iter()
                        .filter(|m| m.maker != self.me && !tried.contains(&(m.maker, m.n)))
                        .filter(|m| m.covers(device) > *applied)
                        .max_by_key(|m| m.covers(device))
                })
                .next()
                .cloned();
            let Some(best) = best else {
                return Ok(());
            };
            tried.insert((best.maker, best.n));
            self.apply_snapshot(&best, known, report).await?;
        }
    }

    /// One whole snapshot, a part per transaction, then the counters of what it covers.
    async fn apply_snapshot(
        &self,
        manifest: &Manifest,
        known: &mut BTreeMap<String, SyncDevice>,
        report: &mut SyncReport,
    ) -> Result<(), SyncError> {
        for part in 1..=manifest.parts {
            let path = SyncPath::Snapshot(manifest.maker, manifest.n, part);
            let bytes = match self.target.get(&path).await {
                Ok(bytes) => bytes,
                // Removed since the listing (a newer snapshot holds more): the next sync uses that one.
                Err(TargetError::Missing(_)) => return Ok(()),
                Err(other) => return Err(other.into()),
            };
            let opened = open_file(&self.file_key, self.target.id(), &path, &bytes)
                .map_err(|e| e.to_string())
                .and_then(|plain| {
                    Part::from_stored(&plain)
                        .filter(|p| p.part == part && p.parts == manifest.parts && p.covers == manifest.covers)
                        .ok_or_else(|| "not a part of this snapshot quire reads".to_owned())
                });
            let contents = match opened {
                Ok(contents) => contents,
                Err(reason) => {
                    report.refused.push(format!("{}: {reason}", path.full()));
                    return Ok(());
                }
            };
            drop(bytes);
            let docs: Vec<(&Entry, DeviceId)> = contents.docs.iter().map(|w| (&w.entry, w.origin)).collect();
            let notes = self
                .ws
                .write(&device_actor(&manifest.name, &manifest.maker), |w| {
                    self.apply_entries(w, &docs)
                })
                .map_err(|error| SyncError::Invalid(format!("{}: could not be applied: {error}", path.full())));
            match notes {
                Ok(notes) => report.applied_notes += notes,
                Err(error) => {
                    report.refused.push(error.to_string());
                    return Ok(());
                }
            }
        }
        let mine = manifest.covers(&self.me);
        let records: Vec<SyncDevice> = manifest
            .covers
            .iter()
            .filter(|c| c.device != self.me)
            .filter_map(|cover| {
                let prior = known.get(&cover.device.to_string());
                let applied = prior.map_or(0, |p| p.applied);
                let acked = prior.map_or(0, |p| p.acked);
                let acked = if cover.device == manifest.maker {
                    acked.max(mine)
                } else {
                    acked
                };
                if applied >= cover.seq && prior.is_some_and(|p| p.acked == acked) {
                    return None;
                }
                Some(SyncDevice {
                    id: cover.device.to_string(),
                    name: match prior {
                        Some(p) if p.applied >= cover.seq => p.name.clone(),
                        _ => cover.name.clone(),
                    },
                    applied: applied.max(cover.seq),
                    acked,
                    seen: now_millis(),
                    // A device the maker had forgotten, never seen here: forgotten here too.
                    forgotten: match prior {
                        Some(p) => p.forgotten,
                        None => cover.forgotten.then(now_millis),
                    },
                })
            })
            .collect();
        self.ws.write(&own_actor(&self.name), |w| {
            records.iter().try_for_each(|r| w.put_sync_device(r))?;
            w.set_sync_config(setting::UNACKED, &[1])
        })?;
        for record in records {
            known.insert(record.id.clone(), record);
        }
        report.applied_snapshots += 1;
        Ok(())
    }
}
