//! The read ledger: what every actor other than the user (the sidebar's assistant, an MCP client, a plugin, and
//! what connects through them: an ACP agent, an automation) read of which note or attachment, which part, when,
//! and how often.
//!
//! A read transaction of such an actor records what core returns to it ([`crate::Reader::note`], [`crate::Reader::note_view`],
//! search snippets, attachments, revisions), so no consumer can forget it; a tool that returns less than it read
//! says which part with [`crate::Reader::read_part`]. When the transaction ends, its reads join the ledger's batch, where
//! reads of the same thing by the same actor are counted on one row; a thread of the ledger writes the batch a
//! fifth of a second after it opened, in one transaction, off the reader's path (a `read_note` call then costs
//! the batch a hash-map entry, not a write). The batch is written too when the last handle of the workspace is
//! dropped and before the ledger is listed; a process killed loses at most its last fifth of a second of entries.
//!
//! The ledger never holds a note's text: a note's id, its title, and which part (whole, a range of characters, a
//! search snippet, an attachment). An AI actor never reads a protected note's content (core refuses it), so a
//! sealed note's entries, if any, are its title only. Rows older than the retention are removed (90 days unless
//! [`crate::Workspace::set_ledger_retention`] says otherwise; 0 keeps nothing and records nothing).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::params;

use crate::entity::{Actor, Timestamp};
use crate::error::Result;

mod list;

/// How long the ledger's batch stays open before it is written.
const BATCH: Duration = Duration::from_millis(200);

/// How often rows past the retention are removed (at most).
const PRUNE_EVERY_MS: i64 = 60 * 60 * 1000;

/// The most rows a batch that cannot be written keeps waiting.
const MOST_WAITING: usize = 100_000;

/// The retention unless configured, in days.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

/// One read a transaction returned: of a note, or of one of its attachments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Read {
    pub(crate) note_id: String,
    pub(crate) attachment_id: Option<String>,
    pub(crate) title: String,
    pub(crate) part: String,
}

/// Who the ledger names for an actor: its kind, its name, its chat; `None` for the user and for the actors that
/// read for nobody (an import, sync).
fn who(actor: &Actor) -> Option<(&'static str, String, Option<String>)> {
    match actor {
        // The note a chat is about is read before its turn knows its chat: no chat then.
        Actor::Agent { chat, .. } => Some((
            "assistant",
            "quire assistant".to_owned(),
            (!chat.is_empty()).then(|| chat.clone()),
        )),
        Actor::Mcp { client } => Some(("mcp", client.clone(), None)),
        Actor::Plugin { id } => Some(("plugin", id.clone(), None)),
        Actor::User | Actor::Import { .. } | Actor::Sync { .. } => None,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    actor: &'static str,
    client: String,
    chat: Option<String>,
    read: Read,
}

#[derive(Debug)]
struct Counted {
    first_at: i64,
    last_at: i64,
    reads: u32,
}

#[derive(Debug, Default)]
struct Batch {
    order: Vec<Key>,
    counts: HashMap<Key, Counted>,
}

impl Batch {
    /// Counts `reads` of `key` into the batch: a new row, or more reads on the row it has.
    fn count(&mut self, key: Key, reads: &Counted) {
        match self.counts.get_mut(&key) {
            Some(counted) => {
                counted.first_at = counted.first_at.min(reads.first_at);
                counted.last_at = counted.last_at.max(reads.last_at);
                counted.reads = counted.reads.saturating_add(reads.reads);
            }
            None => {
                self.order.push(key.clone());
                self.counts.insert(
                    key,
                    Counted {
                        first_at: reads.first_at,
                        last_at: reads.last_at,
                        reads: reads.reads,
                    },
                );
            }
        }
    }
}

/// The ledger of one workspace file, shared by the clones of its handle.
#[derive(Debug)]
pub(crate) struct Ledger {
    pool: r2d2::Pool<SqliteConnectionManager>,
    batch: Mutex<Batch>,
    /// Whether a thread will write the batch (one at a time).
    writing: AtomicBool,
    retention_days: AtomicU32,
    last_prune: AtomicI64,
}

impl Ledger {
    pub(crate) fn new(pool: r2d2::Pool<SqliteConnectionManager>) -> Arc<Ledger> {
        Arc::new(Ledger {
            pool,
            batch: Mutex::default(),
            writing: AtomicBool::new(false),
            retention_days: AtomicU32::new(DEFAULT_RETENTION_DAYS),
            last_prune: AtomicI64::new(0),
        })
    }

    /// Whether reads of `actor` are recorded.
    pub(crate) fn records(&self, actor: &Actor) -> bool {
        self.retention_days.load(Ordering::Relaxed) > 0 && who(actor).is_some()
    }

    /// Adds what one transaction of `actor` read to the batch, and has it written soon.
    pub(crate) fn add(self: &Arc<Self>, actor: &Actor, reads: Vec<Read>) {
        let Some((kind, client, chat)) = who(actor) else { return };
        if reads.is_empty() {
            return;
        }
        let now = Timestamp::now().as_millis();
        {
            let mut batch = self.batch.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for read in reads {
                let key = Key {
                    actor: kind,
                    client: client.clone(),
                    chat: chat.clone(),
                    read,
                };
                batch.count(
                    key,
                    &Counted {
                        first_at: now,
                        last_at: now,
                        reads: 1,
                    },
                );
            }
        }
        if !self.writing.swap(true, Ordering::AcqRel) {
            let ledger: Weak<Ledger> = Arc::downgrade(self);
            let spawned = std::thread::Builder::new().name("quire-ledger".into()).spawn(move || {
                std::thread::sleep(BATCH);
                if let Some(ledger) = ledger.upgrade() {
                    ledger.writing.store(false, Ordering::Release);
                    // A batch that could not be written waits for the next (see `flush`).
                    let _ = ledger.flush();
                }
            });
            if spawned.is_err() {
                // No thread: written now, on the reader's.
                self.writing.store(false, Ordering::Release);
                let _ = self.flush();
            }
        }
    }

    /// Writes the batch, and removes the rows past the retention (at most once an hour). A batch that cannot be
    /// written (the file busy past its timeout, the disk full) is kept for the next write, up to a bound.
    pub(crate) fn flush(&self) -> Result<()> {
        let batch = std::mem::take(&mut *self.batch.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        let written = self.write(&batch);
        if written.is_err() {
            let mut now = self.batch.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if now.order.len() + batch.order.len() <= MOST_WAITING {
                // The failed batch first, then what came meanwhile.
                let later = std::mem::replace(&mut *now, batch);
                for key in later.order {
                    if let Some(counted) = later.counts.get(&key) {
                        now.count(key, counted);
                    }
                }
            }
        }
        written
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let now = Timestamp::now().as_millis();
        let days = self.retention_days.load(Ordering::Relaxed);
        let prune = now - self.last_prune.load(Ordering::Relaxed) >= PRUNE_EVERY_MS;
        if batch.order.is_empty() && !prune {
            return Ok(());
        }
        let mut conn = self.pool.get()?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO read_ledger (first_at, last_at, reads, actor, client, chat, note_id, attachment_id, \
                 title, part) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for key in &batch.order {
                let Some(counted) = batch.counts.get(key) else { continue };
                insert.execute(params![
                    counted.first_at,
                    counted.last_at,
                    counted.reads,
                    key.actor,
                    key.client,
                    key.chat,
                    key.read.note_id,
                    key.read.attachment_id,
                    key.read.title,
                    key.read.part,
                ])?;
            }
        }
        if prune {
            let cutoff = now - i64::from(days.max(1)) * 24 * 60 * 60 * 1000;
            tx.execute("DELETE FROM read_ledger WHERE last_at < ?1", [cutoff])?;
            self.last_prune.store(now, Ordering::Relaxed);
        }
        tx.commit()?;
        Ok(())
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        // The last handle is gone: nobody is left to tell of a failure.
        let _ = self.flush();
    }
}

/// One row of the ledger: what one actor read of one note (or attachment), when, and how often within a moment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LedgerEntry {
    /// Its place in the ledger (later rows have larger ones).
    pub seq: i64,
    /// When it was first read (milliseconds since the epoch).
    pub first_at: i64,
    /// When it was last read, within the same moment.
    pub last_at: i64,
    /// How many times.
    pub reads: u32,
    /// Which kind of actor: `assistant` (the sidebar), `mcp` (an MCP client, or what connects through one), `plugin`.
    pub actor: String,
    /// The client's name (an MCP client's as it introduced itself, its token's, a plugin's id).
    pub client: String,
    /// The chat, for the assistant.
    pub chat: Option<String>,
    /// The note.
    pub note_id: String,
    /// The attachment, when an attachment of the note was read.
    pub attachment_id: Option<String>,
    /// The note's title when it was read.
    pub title: String,
    /// Which part: `whole note`, `characters 2000-4000`, `search snippet`, `attachment text`, `revisions`, ...
    pub part: String,
}

/// Which rows [`crate::Workspace::ledger`] lists.
#[derive(Debug, Clone, Default)]
pub struct LedgerFilter {
    /// Of this note only.
    pub note_id: Option<String>,
    /// Of this client only: its name as the ledger has it, in any case, or that name without what follows it in
    /// parentheses (`tester` for `tester (ACP agent)`).
    pub client: Option<String>,
    /// Read at this time or later (milliseconds since the epoch).
    pub since: Option<i64>,
    /// The most rows (the latest); 0: 1,000.
    pub limit: usize,
}

/// A client as the ledger knows it: what it read, and when last.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LedgerClient {
    /// Which kind of actor (see [`LedgerEntry::actor`]).
    pub actor: String,
    /// Its name.
    pub client: String,
    /// How many different notes it read.
    pub notes: u64,
    /// How many reads in all.
    pub reads: u64,
    /// When it last read (milliseconds since the epoch).
    pub last_at: i64,
}

/// The part a whole note's read records.
pub(crate) const WHOLE: &str = "whole note";
