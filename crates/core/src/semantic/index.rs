//! Keeping the index current: following the change log, embedding outside transactions, the background indexer.

use rusqlite::{OptionalExtension, params};

use super::{Chunk, Embedder, IndexStatus, chunk_note_for, normalised, to_blob, vectors};
use crate::entity::Timestamp;
use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// A note to embed: its `updated` time when read, and its chunks.
type Embeddable = (Timestamp, Vec<Chunk>);

/// Notes embedded per batch while catching up.
const BATCH: usize = 32;

/// How many waiting notes a search by meaning embeds before it runs ([`Workspace::catch_up_for_search`]).
pub const SEARCH_CATCH_UP: usize = 64;

impl Workspace {
    /// The freshness rule of search by meaning, the one every consumer follows (the `semantic_search_notes` tool
    /// applies it before it reads, so the CLI, the web app, MCP clients and the agent all do): when at most
    /// [`SEARCH_CATCH_UP`] notes changed since the index last caught up, embed them first, so that a search right
    /// after an edit (the agent's own included) finds it; a larger backlog is left to the background indexer, so a
    /// search never waits for a whole workspace. Without a configured embedder it does nothing (the search then
    /// says why it cannot run). Returns how many notes it embedded.
    pub fn catch_up_for_search(&self) -> Result<usize> {
        if self.embedder().is_err() {
            return Ok(0);
        }
        self.index_pending_if_few(SEARCH_CATCH_UP)
    }

    /// Follows the change log and (re)embeds the notes that changed, in batches of 32 until about `max_notes`
    /// are done (call again for more: each call moves the watermark forward). Embedding runs
    /// outside any transaction; each batch is written in one short write. Returns how many notes were processed.
    pub fn index_pending(&self, max_notes: usize) -> Result<usize> {
        let embedder = self.embedder()?;
        let pending = self.pending_notes(&embedder.id())?;
        self.index_these(embedder.as_ref(), &pending, max_notes)
    }

    /// [`Workspace::index_pending`] when at most `max_notes` notes wait, and nothing otherwise (the background
    /// indexer works through a backlog): for a search that should see a note changed a moment ago without waiting
    /// for a whole workspace to be embedded. Returns how many notes were processed.
    pub fn index_pending_if_few(&self, max_notes: usize) -> Result<usize> {
        let embedder = self.embedder()?;
        let pending = self.pending_notes(&embedder.id())?;
        if pending.len() > max_notes {
            return Ok(0);
        }
        self.index_these(embedder.as_ref(), &pending, max_notes)
    }

    /// The notes with changes after the embedder's watermark, each with its latest change, ordered by it.
    fn pending_notes(&self, id: &str) -> Result<Vec<(String, i64)>> {
        // Processing a prefix of this list and moving the watermark to the latest change of the last note
        // processed never loses a change: a note left for later still has a change after the new watermark.
        self.read(&crate::Actor::User, |r| {
            let last: i64 = r
                .conn
                .query_row(
                    "SELECT last_change_seq FROM semantic_state WHERE embedder = ?1",
                    [id],
                    |row| row.get(0),
                )
                .optional()?
                .unwrap_or(0);
            let mut stmt = r.conn.prepare(
                "SELECT entity_id, max(seq) AS latest FROM changes WHERE seq > ?1 AND entity = 'note' \
                 GROUP BY entity_id ORDER BY latest",
            )?;
            let rows = stmt.query_map([last], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
            Ok::<_, Error>(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
    }

    /// Embeds a prefix of `pending` (about `max_notes`, in batches) and moves the watermark past it.
    fn index_these(&self, embedder: &dyn Embedder, pending: &[(String, i64)], max_notes: usize) -> Result<usize> {
        let id = embedder.id();
        let mut done = 0;
        for batch in pending.chunks(BATCH) {
            if done >= max_notes {
                break;
            }
            let ids: Vec<String> = batch.iter().map(|(note, _)| note.clone()).collect();
            self.index_notes(embedder, &ids)?;
            done += batch.len();
            let watermark = batch.last().map_or(0, |(_, seq)| *seq);
            self.write(&crate::Actor::User, |w| {
                w.conn.execute(
                    "INSERT INTO semantic_state (embedder, last_change_seq) VALUES (?1, ?2) \
                     ON CONFLICT (embedder) DO UPDATE SET last_change_seq = excluded.last_change_seq",
                    params![id, watermark],
                )?;
                Ok::<_, Error>(())
            })?;
        }
        Ok(done)
    }

    /// Drops every vector of the active embedder, so that the next [`Workspace::index_pending`] starts over.
    pub fn reset_index(&self) -> Result<()> {
        let id = self.embedder()?.id();
        self.write(&crate::Actor::User, |w| {
            w.conn
                .execute("DELETE FROM semantic_chunks WHERE embedder = ?1", [&id])?;
            // The row stays, with a new generation and the horizon moved to it: every in-memory copy reloads.
            w.conn.execute(
                "INSERT INTO semantic_state (embedder, last_change_seq, generation, horizon) VALUES (?1, 0, 1, 1) \
                 ON CONFLICT (embedder) DO UPDATE SET last_change_seq = 0, generation = generation + 1, \
                 horizon = generation + 1",
                [&id],
            )?;
            w.conn
                .execute("DELETE FROM semantic_dropped WHERE embedder = ?1", [&id])?;
            Ok(())
        })
    }

    /// Where the index stands for the active embedder.
    /// Fails with [`Error::EmbedderUnavailable`] when the configured embedder could not be loaded.
    pub fn index_status(&self) -> Result<IndexStatus> {
        let embedder = self.embedder()?;
        let id = embedder.id();
        self.read(&crate::Actor::User, |r| {
            let (notes, chunks): (i64, i64) = r.conn.query_row(
                "SELECT count(DISTINCT note_id), count(*) FROM semantic_chunks WHERE embedder = ?1",
                [&id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )?;
            let last: Option<i64> = r
                .conn
                .query_row(
                    "SELECT last_change_seq FROM semantic_state WHERE embedder = ?1",
                    [&id],
                    |row| row.get(0),
                )
                .optional()?;
            let pending: i64 = r.conn.query_row(
                "SELECT count(DISTINCT entity_id) FROM changes WHERE seq > ?1 AND entity = 'note'",
                [last.unwrap_or(0)],
                |row| row.get(0),
            )?;
            Ok(IndexStatus {
                embedder: id.clone(),
                description: embedder.describe(),
                indexed_notes: u64::try_from(notes).unwrap_or(0),
                chunks: u64::try_from(chunks).unwrap_or(0),
                pending_changes: u64::try_from(pending).unwrap_or(0),
            })
        })
    }

    fn index_notes(&self, embedder: &dyn Embedder, ids: &[String]) -> Result<()> {
        let id = embedder.id();
        // Read what to embed: live, unprotected notes only. Others just lose their chunks.
        let notes: Vec<(String, Option<Embeddable>)> = self.read(&crate::Actor::User, |r| {
            let protected = r.protected_notebooks()?;
            let mut out = Vec::new();
            for note_id in ids {
                let row = r
                    .conn
                    .query_row(
                        "SELECT title, body, is_protected, notebook_id, deleted, updated FROM notes WHERE id = ?1",
                        [note_id],
                        |row| {
                            Ok((
                                row.get::<_, String>(0)?,
                                row.get::<_, String>(1)?,
                                row.get::<_, bool>(2)?,
                                row.get::<_, String>(3)?,
                                row.get::<_, Option<i64>>(4)?,
                                row.get::<_, i64>(5)?,
                            ))
                        },
                    )
                    .optional()?;
                let chunks = match row {
                    Some((title, body, is_protected, notebook, None, updated))
                        if !is_protected && !protected.contains(&notebook) =>
                    {
                        Some((Timestamp(updated), chunk_note_for(embedder, &title, &body)))
                    }
                    _ => None,
                };
                out.push((note_id.clone(), chunks));
            }
            Ok::<_, Error>(out)
        })?;
        let texts: Vec<String> = notes
            .iter()
            .flat_map(|(_, c)| c.iter().flat_map(|(_, chunks)| chunks.iter().map(|c| c.text.clone())))
            .collect();
        let vectors = if texts.is_empty() {
            Vec::new()
        } else {
            embedder
                .embed(&texts)
                .map_err(|e| Error::invalid(format!("The embedder {id} failed: {e}")))?
        };
        if vectors.len() != texts.len() {
            return Err(Error::invalid(format!(
                "The embedder {id} returned {} vectors for {} texts.",
                vectors.len(),
                texts.len()
            )));
        }
        let now = Timestamp::now().as_millis();
        self.write(&crate::Actor::User, |w| {
            let generation = vectors::next_generation(w.conn, &id)?;
            let mut vectors = vectors.into_iter();
            for (note_id, chunks) in &notes {
                let dropped = w.conn.execute(
                    "DELETE FROM semantic_chunks WHERE embedder = ?1 AND note_id = ?2",
                    params![id, note_id],
                )?;
                if dropped > 0 {
                    w.conn.execute(
                        "INSERT INTO semantic_dropped (embedder, generation, note_id) VALUES (?1, ?2, ?3)",
                        params![id, generation, note_id],
                    )?;
                }
                let Some((updated, chunks)) = chunks else { continue };
                // A note changed since it was read is left for the next round (its change is still pending).
                let still: Option<i64> = w
                    .conn
                    .query_row(
                        "SELECT updated FROM notes WHERE id = ?1 AND deleted IS NULL",
                        [note_id],
                        |r| r.get(0),
                    )
                    .optional()?;
                // Nor is one protected (or sealed) since: protecting a notebook changes no note's `updated`, and its
                // text must not come back as chunks after sealing dropped them.
                let unchanged = still == Some(updated.as_millis()) && !w.note_is_protected(note_id)?;
                for (index, chunk) in chunks.iter().enumerate() {
                    let vector = vectors.next().unwrap_or_default();
                    if unchanged {
                        w.conn.execute(
                            "INSERT INTO semantic_chunks (embedder, note_id, chunk_index, text, vector, indexed) \
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            params![id, note_id, index as i64, chunk.text, to_blob(&normalised(vector)), now],
                        )?;
                    }
                }
            }
            Ok::<_, Error>(())
        })
    }
}

/// A background thread that keeps the semantic index caught up with the change log. It stops when dropped.
/// Indexing reads and writes in short transactions of its own, so writers are never blocked for long.
pub struct Indexer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexer").finish_non_exhaustive()
    }
}

impl Workspace {
    /// Starts a background indexer that looks for changes every `interval`, embeds what changed, and keeps the
    /// in-memory copy of the vectors up to date.
    pub fn spawn_indexer(&self, interval: std::time::Duration) -> Indexer {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ws = self.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("quire-indexer".into())
            .spawn(move || {
                let mut full: Option<DiskFull> = None;
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    let waits = full.as_ref().is_some_and(|waiting| !waiting.may_retry(&ws));
                    if waits || short_of_space(&ws) {
                        std::thread::park_timeout(interval);
                        continue;
                    }
                    // One batch per round: stopping waits for the round, so never for more than one batch.
                    let worked = match ws.index_pending(BATCH) {
                        Ok(worked) => {
                            full = None;
                            worked
                        }
                        Err(crate::Error::Database(e)) if e.is_disk_full() => {
                            full = Some(DiskFull::after(&ws, full.as_ref()));
                            0
                        }
                        Err(_) => 0,
                    };
                    // Keep the in-memory copy current here, so that searches do not pay for loading it.
                    if let Ok(embedder) = ws.embedder() {
                        let id = embedder.id();
                        let _ = ws.read(&crate::Actor::User, |r| r.vectors.current(r.conn, &id));
                    }
                    if worked == 0 {
                        std::thread::park_timeout(interval);
                    }
                }
            })
            .ok();
        Indexer { stop, thread }
    }
}

/// The indexer's back-off after the disk was full (besides [`short_of_space`], for a disk filled by others, or whose
/// space the file system reports late). The vectors are derived and can wait; the person's own writes cannot. So
/// after `SQLITE_FULL` the indexer writes nothing until another write has succeeded since (space was
/// freed, and the person's write got it first) and a pause has passed, which doubles while the disk stays full.
struct DiskFull {
    /// The change log's newest entry when the indexer failed.
    seq: i64,
    at: std::time::Instant,
    pause: std::time::Duration,
}

impl DiskFull {
    const FIRST_PAUSE: std::time::Duration = std::time::Duration::from_secs(30);
    const LONGEST_PAUSE: std::time::Duration = std::time::Duration::from_secs(600);

    fn after(ws: &Workspace, before: Option<&DiskFull>) -> DiskFull {
        DiskFull {
            seq: latest_seq(ws).unwrap_or(i64::MAX),
            at: std::time::Instant::now(),
            pause: before.map_or(Self::FIRST_PAUSE, |b| (b.pause * 2).min(Self::LONGEST_PAUSE)),
        }
    }

    fn may_retry(&self, ws: &Workspace) -> bool {
        self.at.elapsed() >= self.pause && latest_seq(ws).is_some_and(|seq| seq > self.seq)
    }
}

/// The room the background indexer leaves free on the workspace's file system for the person's own writes: the
/// vectors are derived, so on a nearly full disk they wait.
const SPACE_LEFT_FOR_WRITES: u64 = 64 << 20;

/// Whether the workspace's file system has less than [`SPACE_LEFT_FOR_WRITES`] available (an in-memory workspace,
/// or a file system that cannot say, never is).
fn short_of_space(ws: &Workspace) -> bool {
    ws.path()
        .and_then(|path| fs4::available_space(path).ok())
        .is_some_and(|available| available < SPACE_LEFT_FOR_WRITES)
}

fn latest_seq(ws: &Workspace) -> Option<i64> {
    ws.read(&crate::Actor::User, |r| r.latest_change_seq()).ok()
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
