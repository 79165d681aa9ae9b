//! The ledger as its readers see it: what a read transaction records ([`crate::Reader::read_part`]), and the listing,
//! the clients and the retention on the workspace's handle.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rusqlite::params;

use super::{LedgerClient, LedgerEntry, LedgerFilter, Read, WHOLE};
use crate::entity::{Actor, NoteSummary};
use crate::error::Result;
use crate::read::Reader;
use crate::workspace::Workspace;

impl Workspace {
    /// Sets how long the ledger keeps its rows, in days (for every handle of this file in this process); 0 records
    /// nothing and removes what was kept at the next write.
    pub fn set_ledger_retention(&self, days: u32) {
        self.ledger.retention_days.store(days, Ordering::Relaxed);
        // The next batch applies the new retention at once.
        self.ledger.last_prune.store(0, Ordering::Relaxed);
        if days == 0 {
            let _ = self.flush_ledger();
        }
    }

    /// Writes the reads waiting in the ledger's batch now.
    pub fn flush_ledger(&self) -> Result<()> {
        if self.ledger.retention_days.load(Ordering::Relaxed) == 0 {
            let conn = self.pool.get()?;
            conn.execute("DELETE FROM read_ledger", [])?;
            self.ledger
                .batch
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .order
                .clear();
            return Ok(());
        }
        self.ledger.flush()
    }

    /// The ledger's rows that `filter` selects, the latest first. A handle limited to some notebooks sees the rows
    /// of the notes it reaches only.
    pub fn ledger(&self, filter: &LedgerFilter) -> Result<Vec<LedgerEntry>> {
        self.flush_ledger()?;
        let limit = if filter.limit == 0 { 1_000 } else { filter.limit };
        let rows = self.read(&Actor::User, |r| {
            let mut statement = r.conn.prepare_cached(
                "SELECT seq, first_at, last_at, reads, actor, client, chat, note_id, attachment_id, title, part \
                 FROM read_ledger WHERE (?1 IS NULL OR note_id = ?1) AND (?2 IS NULL OR lower(client) = lower(?2) \
                 OR substr(lower(client), 1, length(?2) + 2) = lower(?2) || ' (') \
                 AND (?3 IS NULL OR last_at >= ?3) ORDER BY seq DESC",
            )?;
            let mut rows = statement.query(params![filter.note_id, filter.client, filter.since])?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let entry = LedgerEntry {
                    seq: row.get(0)?,
                    first_at: row.get(1)?,
                    last_at: row.get(2)?,
                    reads: row.get(3)?,
                    actor: row.get(4)?,
                    client: row.get(5)?,
                    chat: row.get(6)?,
                    note_id: row.get(7)?,
                    attachment_id: row.get(8)?,
                    title: row.get(9)?,
                    part: row.get(10)?,
                };
                if self.scope.is_some() && r.note_summary(&entry.note_id).is_err() {
                    continue;
                }
                out.push(entry);
                if out.len() >= limit {
                    break;
                }
            }
            Ok::<_, crate::Error>(out)
        })?;
        Ok(rows)
    }

    /// The clients the ledger names, the one that read last first.
    pub fn ledger_clients(&self) -> Result<Vec<LedgerClient>> {
        let entries = self.ledger(&LedgerFilter {
            limit: usize::MAX,
            ..LedgerFilter::default()
        })?;
        // By (kind, name): the notes read, the reads, the last time.
        let mut by: HashMap<(String, String), (std::collections::HashSet<String>, u64, i64)> = HashMap::new();
        for entry in entries {
            let client = by.entry((entry.actor, entry.client)).or_default();
            client.0.insert(entry.note_id);
            client.1 += u64::from(entry.reads);
            client.2 = client.2.max(entry.last_at);
        }
        let mut clients: Vec<LedgerClient> = by
            .into_iter()
            .map(|((actor, client), (notes, reads, last_at))| LedgerClient {
                actor,
                client,
                notes: notes.len() as u64,
                reads,
                last_at,
            })
            .collect();
        // The latest first; equal times in a fixed order.
        clients.sort_by(|a, b| {
            b.last_at
                .cmp(&a.last_at)
                .then_with(|| (&a.actor, &a.client).cmp(&(&b.actor, &b.client)))
        });
        Ok(clients)
    }
}

impl Reader<'_> {
    /// Records that this transaction returned `part` of `note` (for an actor the ledger records).
    pub(crate) fn record_read(&self, note: &NoteSummary, attachment_id: Option<&str>, part: &str) {
        if let Some(reads) = &self.ledger {
            let read = Read {
                note_id: note.id.clone(),
                attachment_id: attachment_id.map(str::to_owned),
                title: note.title.clone(),
                part: if note.is_protected {
                    "title only".to_owned()
                } else {
                    part.to_owned()
                },
            };
            let mut reads = reads.borrow_mut();
            if !reads.contains(&read) {
                reads.push(read);
            }
        }
    }

    /// Says that of the note `note_id`, read whole in this transaction, only `part` was returned (a tool that
    /// returns a range of it): the ledger records that part.
    pub fn read_part(&self, note_id: &str, part: &str) {
        if let Some(reads) = &self.ledger {
            for read in reads.borrow_mut().iter_mut() {
                if read.note_id == note_id && read.attachment_id.is_none() && read.part == WHOLE {
                    part.clone_into(&mut read.part);
                }
            }
        }
    }
}
