//! Compaction: the last step of a sync. Batches pile up on the target (every edit, every acknowledgement); a
//! snapshot holds the same documents whole, and lets each device remove its own batches once
//!
//! - a whole snapshot on the target holds them (a device that joins later, or one forgotten and back, starts from
//!   it), and
//! - every device still syncing (not forgotten here) has applied them, as its own files say.
//!
//! Each device removes only its own files: its batches (never its newest: another copy of the workspace file syncing
//! as the same device finds its number taken; when that one could go too, an empty batch takes its place first), its
//! snapshots that another whole one holds everything of, and the parts of a snapshot it stopped writing. A device writes a
//! snapshot when [`SNAPSHOT_AFTER`] batch files on the target are held by no snapshot, and only with nothing of its
//! own unsent, so that the snapshot is exactly the batches it covers.
//!
//! A device that only reads says what it has applied in an empty batch after a sync that applied changes, so that
//! the others can remove theirs.

use quire_core::replica::{ATTACHMENT_DOC, TREE_DOC};

use super::fold::{acks, chunks, next_seq};
use super::snapshots::{Manifest, Survey};
use super::{Device, SyncError, SyncReport, load_doc, own_actor, setting};
use crate::batch::{Batch, Entry};
use crate::file::seal_file;
use crate::layout::{DeviceId, MAX_PART, SyncPath};
use crate::snapshot::{Cover, Part, Whole};

/// Batch files on the target that no whole snapshot holds, above which a device makes one.
pub const SNAPSHOT_AFTER: usize = 256;

impl Device {
    /// An empty batch saying what this device has applied, sent now.
    pub(super) async fn send_acks(&self, report: &mut SyncReport) -> Result<(), SyncError> {
        self.ws.write(&own_actor(&self.name), |w| -> Result<(), SyncError> {
            let seq = next_seq(w)?;
            let batch = Batch {
                name: self.name.clone(),
                acks: acks(w)?,
                entries: Vec::new(),
            };
            let path = SyncPath::Batch(self.me, seq);
            w.push_sync_outbox(
                seq,
                &seal_file(&self.file_key, self.target.id(), &path, &batch.to_stored())?,
            )?;
            w.set_sync_config(setting::NEXT_SEQ, &(seq + 1).to_be_bytes())?;
            w.set_sync_config(setting::UNACKED, &[0])?;
            Ok(())
        })?;
        self.upload(report).await
    }

    /// Makes a snapshot if the target needs one (or `force`), then removes this device's files that nobody needs.
    pub(super) async fn compact_target(
        &self,
        survey: &mut Survey,
        report: &mut SyncReport,
        force: bool,
    ) -> Result<(), SyncError> {
        let mut manifests = self.manifests(survey, report).await?.to_vec();
        let held = |manifests: &[Manifest], d: &DeviceId| manifests.iter().map(|m| m.covers(d)).max().unwrap_or(0);
        let unheld: usize = survey
            .batches
            .iter()
            .map(|(d, found)| found.iter().filter(|&&s| s > held(&manifests, d)).count())
            .sum();
        // A batch of this device's gone from the target though later ones are there (a file the target lost): the
        // others wait for it, so a snapshot that holds it goes up now (they take what it held from there).
        let own = &survey.batches.get(&self.me).cloned().unwrap_or_default();
        let lost = own
            .windows(2)
            .find(|pair| pair[1] > pair[0] + 1)
            .map(|pair| pair[0] + 1)
            .filter(|&missing| held(&manifests, &self.me) < missing);
        if (force || unheld >= SNAPSHOT_AFTER || lost.is_some())
            && let Some(made) = self.make_snapshot(&manifests).await?
        {
            report.made_snapshot = true;
            manifests.push(made);
        }

        // Two whole snapshots neither of which holds the other (devices that compacted at once): the one of this
        // device goes when it sorts lower and every batch it holds beyond the other is still on the target (a device
        // that joins applies those after the other snapshot), so that one snapshot stays, not two.
        let dropped: Vec<u64> = manifests
            .iter()
            .filter(|mine| mine.maker == self.me)
            .filter(|mine| {
                manifests.iter().any(|other| {
                    other.maker != self.me
                        && !other.holds(mine)
                        && !mine.holds(other)
                        && (mine.n, mine.maker) < (other.n, other.maker)
                        && mine.covers.iter().all(|c| {
                            let from = other.covers(&c.device);
                            c.seq <= from
                                || survey
                                    .batches
                                    .get(&c.device)
                                    .is_some_and(|found| (from + 1..=c.seq).all(|s| found.binary_search(&s).is_ok()))
                        })
                })
            })
            .map(|mine| mine.n)
            .collect();
        manifests.retain(|m| !(m.maker == self.me && dropped.contains(&m.n)));

        // This device's batches that a whole snapshot holds and every device still syncing has applied.
        let own = self.target.list_batches(&self.me).await?.found;
        let devices = self.ws.read(&own_actor(&self.name), |r| r.sync_devices())?;
        let applied_everywhere = devices
            .iter()
            .filter(|d| d.forgotten.is_none())
            .map(|d| d.acked)
            .min()
            .unwrap_or(u64::MAX);
        let limit = held(&manifests, &self.me).min(applied_everywhere);
        let mut removable: Vec<u64> = own.iter().copied().filter(|&seq| seq <= limit).collect();
        if own.last().is_some_and(|&newest| newest <= limit) {
            // Its newest batch stays on the target, so that another copy of this workspace file syncing as this same
            // device finds its number taken: when every batch could go, an empty one takes the newest's place.
            self.send_acks(report).await?;
        } else if removable.len() == own.len() {
            removable.pop();
        }
        for seq in removable {
            self.target.delete(&self.me, &SyncPath::Batch(self.me, seq)).await?;
            report.removed += 1;
        }

        // Its snapshots that another whole one holds everything of, and parts of its own never finished.
        let listing = self.target.list_snapshots(&self.me).await?.found;
        let newest_whole = manifests
            .iter()
            .filter(|m| m.maker == self.me)
            .map(|m| m.n)
            .max()
            .unwrap_or(0);
        for (n, part) in listing {
            let whole = manifests.iter().find(|m| m.maker == self.me && m.n == n);
            let superseded = dropped.contains(&n)
                || match whole {
                    // Of two that hold the same, the one made later (or by the greater device) stays.
                    Some(mine) => manifests.iter().any(|other| {
                        (other.maker, other.n) != (mine.maker, mine.n)
                            && other.holds(mine)
                            && (!mine.holds(other) || (other.n, other.maker) > (mine.n, mine.maker))
                    }),
                    // A snapshot this device stopped writing (killed before its manifest): never to be finished.
                    None => n < newest_whole || self.abandoned(n)?,
                };
            if superseded {
                self.target
                    .delete(&self.me, &SyncPath::Snapshot(self.me, n, part))
                    .await?;
                report.removed += 1;
            }
        }
        Ok(())
    }

    /// Writes a snapshot of every document here, parts first and the manifest last. `None` if something changed
    /// here is not sent yet (the next sync makes it), or a whole snapshot on the target holds as much already.
    async fn make_snapshot(&self, manifests: &[Manifest]) -> Result<Option<Manifest>, SyncError> {
        let Some((covers, docs)) = self.whole_state()? else {
            return Ok(None);
        };
        let would_hold = |m: &Manifest| covers.iter().all(|c| m.covers(&c.device) >= c.seq);
        if manifests.iter().any(would_hold) {
            return Ok(None);
        }
        let started = super::now_millis();
        let n = self.ws.write(&own_actor(&self.name), |w| -> Result<u64, SyncError> {
            let n = match w.sync_config(setting::NEXT_SNAPSHOT)? {
                Some(bytes) => u64::from_be_bytes(
                    bytes
                        .try_into()
                        .map_err(|_| SyncError::Settings(setting::NEXT_SNAPSHOT))?,
                ),
                None => 1,
            };
            w.set_sync_config(setting::NEXT_SNAPSHOT, &(n + 1).to_be_bytes())?;
            let mut writing = n.to_be_bytes().to_vec();
            writing.extend_from_slice(&started.to_be_bytes());
            w.set_sync_config(setting::WRITING, &writing)?;
            Ok(n)
        })?;
        let parts = split_whole(docs);
        let count = u32::try_from(parts.len())
            .ok()
            .filter(|&c| c <= MAX_PART)
            .ok_or_else(|| SyncError::Invalid("the workspace is too large for one snapshot".into()))?;
        for (part, docs) in (1..).zip(parts) {
            self.put_part(n, part, count, &covers, docs).await?;
        }
        self.put_part(n, 0, count, &covers, Vec::new()).await?;
        let manifest = Manifest {
            maker: self.me,
            n,
            name: self.name.clone(),
            parts: count,
            covers,
        };
        self.cache_manifest(&manifest);
        Ok(Some(manifest))
    }

    /// Whether this device's snapshot `n`, not whole, is not being written: another number is being written, or its
    /// writing started over an hour ago (a process killed while it wrote; another one writing it now would have
    /// started just before).
    fn abandoned(&self, n: u64) -> Result<bool, SyncError> {
        let writing = self
            .ws
            .read(&own_actor(&self.name), |r| r.sync_config(setting::WRITING))?;
        let Some(writing) = writing.and_then(|v| <[u8; 16]>::try_from(v.as_slice()).ok()) else {
            return Ok(true);
        };
        let (number, started) = writing.split_at(8);
        let number = u64::from_be_bytes(number.try_into().unwrap_or_default());
        let started = i64::from_be_bytes(started.try_into().unwrap_or_default());
        Ok(number != n || super::now_millis() - started > 3_600_000)
    }

    async fn put_part(
        &self,
        n: u64,
        part: u32,
        parts: u32,
        covers: &[Cover],
        docs: Vec<Whole>,
    ) -> Result<(), SyncError> {
        let contents = Part {
            name: self.name.clone(),
            part,
            parts,
            covers: covers.to_vec(),
            docs,
        };
        let path = SyncPath::Snapshot(self.me, n, part);
        let sealed = seal_file(&self.file_key, self.target.id(), &path, &contents.to_stored())?;
        self.target.put_new(&path, sealed).await?;
        Ok(())
    }

    /// Every document here whole, and what it holds of each device; `None` while something changed here is not in
    /// a batch on the target.
    #[expect(clippy::type_complexity, reason = "read once, split by the caller")]
    fn whole_state(&self) -> Result<Option<(Vec<Cover>, Vec<Whole>)>, SyncError> {
        self.ws.read(
            &own_actor(&self.name),
            |r| -> Result<Option<(Vec<Cover>, Vec<Whole>)>, SyncError> {
                if !r.sync_dirty()?.is_empty() || r.sync_outbox_count()? > 0 {
                    return Ok(None);
                }
                let last_own = next_seq(r)?.saturating_sub(1);
                let mut covers = vec![Cover {
                    device: self.me,
                    seq: last_own,
                    name: self.name.clone(),
                    forgotten: false,
                }];
                for device in r.sync_devices()?.into_iter().filter(|d| d.applied > 0) {
                    if let Ok(id) = device.id.parse::<DeviceId>() {
                        covers.push(Cover {
                            device: id,
                            seq: device.applied,
                            name: device.name,
                            forgotten: device.forgotten.is_some(),
                        });
                    }
                }
                let mut docs = Vec::new();
                for id in r.sync_doc_ids()? {
                    let Some(stored) = load_doc(r, &id)? else { continue };
                    if stored.doc.is_empty() {
                        // Emptied when its note was sealed, and not folded since: nothing to carry.
                        continue;
                    }
                    let generation = stored.generation.max(0) as u64;
                    let whole = if let Some(attachment) = id.strip_prefix(ATTACHMENT_DOC) {
                        let bytes = match r.synced_attachment(attachment)? {
                            Some(row) => super::attachment::encode(&row)?,
                            None => Vec::new(),
                        };
                        let origin = <[u8; 16]>::try_from(stored.doc.as_slice())
                            .map(DeviceId::from_bytes)
                            .unwrap_or(self.me);
                        Whole {
                            entry: Entry {
                                doc: id,
                                generation,
                                bytes,
                            },
                            origin,
                        }
                    } else {
                        Whole {
                            entry: Entry {
                                doc: id,
                                generation,
                                bytes: stored.doc,
                            },
                            origin: self.me,
                        }
                    };
                    docs.push(whole);
                }
                Ok(Some((covers, docs)))
            },
        )
    }
}

/// Documents in parts of about 4 MiB (`BATCH_BYTES`): notes, then attachments (after their notes), the notebook tree in
/// every part (so each part's notes find their notebooks, and removed notebooks go once their notes have left).
fn split_whole(mut docs: Vec<Whole>) -> Vec<Vec<Whole>> {
    let tree = docs
        .iter()
        .position(|w| w.entry.doc == TREE_DOC)
        .map(|i| docs.remove(i));
    docs.sort_by_key(|w| w.entry.doc.starts_with(ATTACHMENT_DOC));
    let mut out = chunks(docs, |w| w.entry.bytes.len() + w.entry.doc.len());
    if out.is_empty() && tree.is_some() {
        out.push(Vec::new());
    }
    if let Some(tree) = tree {
        for part in &mut out {
            part.insert(0, tree.clone());
        }
    }
    out
}
