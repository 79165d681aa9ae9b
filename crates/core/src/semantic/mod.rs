//! Semantic search: notes cut into chunks, embedded by an [`Embedder`], stored as vectors in the workspace file,
//! kept up to date by following the change log, and searched by cosine similarity (optionally fused with FTS).

mod chunk;
mod hashed;

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{NoteSummary, Timestamp};
use crate::read::{NOTE_COLUMNS, Page, PageOf, Reader, summary_from_row};
use crate::search::SearchOptions;
use crate::workspace::Workspace;

pub use chunk::{Chunk, chunk_note};
pub use hashed::HashedNgramEmbedder;

/// Turns texts into vectors. Implementations live where their runtime lives: quire-core has the file-free
/// [`HashedNgramEmbedder`]; quire-agent has a local sentence model and an HTTP client.
///
/// `embed` is synchronous and may be slow: quire-core only ever calls it outside a transaction.
pub trait Embedder: Send + Sync {
    /// A stable name of the embedder and its model (`hashed-ngrams-v1`, `minilm-l6-v2`, ...). Vectors are stored
    /// under it; a different id means a different vector space, and the notes are embedded again.
    fn id(&self) -> String;
    /// The length of every vector.
    fn dimensions(&self) -> usize;
    /// One vector per text, in order. Vectors need not be normalised.
    fn embed(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, String>;
    /// The cosine similarity a match needs at each relevance preset. The defaults suit sentence-embedding models
    /// such as all-MiniLM-L6-v2, where a paraphrase scores about 0.3 to 0.6 and an unrelated text under 0.2.
    fn floor(&self, relevance: Relevance) -> f32 {
        match relevance {
            Relevance::Strict => 0.45,
            Relevance::Normal => 0.28,
            Relevance::Loose => 0.15,
        }
    }
    /// One line for `quire index status`: what this embedder is and, for a fallback, how to get a better one.
    fn describe(&self) -> String {
        self.id()
    }
}

/// How close a semantic match must be. Presets rather than raw thresholds: every embedder maps them to its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relevance {
    /// Only close matches.
    Strict,
    /// The default.
    #[default]
    Normal,
    /// Loosely related notes too.
    Loose,
}

/// What to look for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SemanticTarget {
    /// Notes about this text.
    Text(String),
    /// Notes like this note.
    LikeNote(String),
}

/// A semantic search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticQuery {
    /// Text or a note to match.
    pub target: SemanticTarget,
    /// Only notes in this notebook or below it.
    pub notebook_id: Option<String>,
    /// Only notes with this tag (ignoring case).
    pub tag: Option<String>,
    /// How close a match must be.
    pub relevance: Relevance,
    /// Fuse the vector ranking with full-text search ranks (reciprocal rank fusion).
    pub hybrid: bool,
    /// How many notes to return.
    pub limit: u64,
}

/// One note found by meaning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticHit {
    /// The note.
    pub note: NoteSummary,
    /// The best-matching chunk of it.
    pub snippet: String,
    /// Cosine similarity of that chunk (or the fused score in hybrid mode); higher is better.
    pub score: f64,
}

/// How far the index is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexStatus {
    /// The active embedder.
    pub embedder: String,
    /// Its description.
    pub description: String,
    /// Notes that have chunks in the index.
    pub indexed_notes: u64,
    /// Chunks in the index.
    pub chunks: u64,
    /// Notes changed since the index last caught up (an estimate: changes not yet followed).
    pub pending_changes: u64,
}

/// A note to embed: its `updated` time when read, and its chunks.
type Embeddable = (Timestamp, Vec<Chunk>);

/// Notes embedded per batch while catching up.
const BATCH: usize = 32;

impl Workspace {
    /// Follows the change log and (re)embeds the notes that changed, in batches of 32 until about `max_notes`
    /// are done (call again for more: each call moves the watermark forward). Embedding runs
    /// outside any transaction; each batch is written in one short write. Returns how many notes were processed.
    pub fn index_pending(&self, max_notes: usize) -> Result<usize> {
        let embedder = self.embedder();
        let id = embedder.id();
        // Notes with changes after the watermark, ordered by their latest change. Processing a prefix of this list
        // and moving the watermark to the latest change of the last note processed never loses a change: a note
        // left for later still has a change after the new watermark.
        let pending: Vec<(String, i64)> = self.read(&crate::Actor::User, |r| {
            let last: i64 = r
                .conn
                .query_row(
                    "SELECT last_change_seq FROM semantic_state WHERE embedder = ?1",
                    [&id],
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
        })?;
        let mut done = 0;
        for batch in pending.chunks(BATCH) {
            if done >= max_notes {
                break;
            }
            let ids: Vec<String> = batch.iter().map(|(note, _)| note.clone()).collect();
            self.index_notes(embedder.as_ref(), &ids)?;
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
        let id = self.embedder().id();
        self.write(&crate::Actor::User, |w| {
            w.conn
                .execute("DELETE FROM semantic_chunks WHERE embedder = ?1", [&id])?;
            w.conn
                .execute("DELETE FROM semantic_state WHERE embedder = ?1", [&id])?;
            Ok(())
        })
    }

    /// Where the index stands for the active embedder.
    pub fn index_status(&self) -> Result<IndexStatus> {
        let embedder = self.embedder();
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
                        Some((Timestamp(updated), chunk_note(&title, &body)))
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
            let mut vectors = vectors.into_iter();
            for (note_id, chunks) in &notes {
                w.conn.execute(
                    "DELETE FROM semantic_chunks WHERE embedder = ?1 AND note_id = ?2",
                    params![id, note_id],
                )?;
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
                let unchanged = still == Some(updated.as_millis());
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

impl Reader<'_> {
    /// Finds notes by meaning with the workspace's embedder. Chunks of notes that were deleted, trashed or
    /// protected since they were indexed are never returned: every hit is checked against the note as it is now.
    pub fn semantic_search(&self, query: &SemanticQuery) -> Result<PageOf<SemanticHit>> {
        let embedder = self.embedder.clone();
        let id = embedder.id();
        let vector = match &query.target {
            SemanticTarget::Text(text) => {
                if text.trim().is_empty() {
                    return Err(Error::invalid("The query is empty; say what to look for."));
                }
                let mut vectors = embedder
                    .embed(std::slice::from_ref(text))
                    .map_err(|e| Error::invalid(format!("The embedder {id} failed: {e}")))?;
                normalised(vectors.pop().unwrap_or_default())
            }
            SemanticTarget::LikeNote(note_id) => {
                self.note(note_id)?;
                let mut stmt = self
                    .conn
                    .prepare_cached("SELECT vector FROM semantic_chunks WHERE embedder = ?1 AND note_id = ?2")?;
                let vectors: Vec<Vec<f32>> = stmt
                    .query_map(params![id, note_id], |r| r.get::<_, Vec<u8>>(0))?
                    .map(|b| b.map(|b| from_blob(&b)))
                    .collect::<rusqlite::Result<_>>()?;
                if vectors.is_empty() {
                    return Err(Error::invalid(
                        "That note is not in the semantic index yet; try again in a moment.",
                    ));
                }
                let mut mean = vec![0.0f32; vectors[0].len()];
                for v in &vectors {
                    for (m, x) in mean.iter_mut().zip(v) {
                        *m += x;
                    }
                }
                normalised(mean)
            }
        };
        let floor = embedder.floor(query.relevance);
        // Best chunk per note. The scan reads only ids and vectors, scoring each vector straight from the row's
        // bytes; the text of the winning chunks is fetched afterwards.
        let mut best: HashMap<String, (f32, i64)> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, note_id, vector FROM semantic_chunks WHERE embedder = ?1")?;
        let mut rows = stmt.query([&id])?;
        while let Some(row) = rows.next()? {
            let score = dot_bytes(&vector, row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?);
            if score < floor {
                continue;
            }
            let note_id = row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            if matches!(&query.target, SemanticTarget::LikeNote(like) if like == note_id) {
                continue;
            }
            let chunk: i64 = row.get(0)?;
            match best.get_mut(note_id) {
                Some(entry) if score > entry.0 => *entry = (score, chunk),
                Some(_) => {}
                None => {
                    best.insert(note_id.to_owned(), (score, chunk));
                }
            }
        }
        drop(rows);
        let mut text_stmt = self
            .conn
            .prepare_cached("SELECT text FROM semantic_chunks WHERE id = ?1")?;
        let mut candidates: Vec<(String, f32, i64)> = best.into_iter().map(|(n, (s, c))| (n, s, c)).collect();
        candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let best: Vec<(String, (f32, String))> = candidates
            .into_iter()
            .map(|(note, score, chunk)| {
                let text: String = text_stmt.query_row([chunk], |r| r.get(0)).unwrap_or_default();
                (note, (score, text))
            })
            .collect();
        let mut ranked: Vec<(String, f64, String)> =
            best.into_iter().map(|(id, (s, t))| (id, f64::from(s), t)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if query.hybrid
            && let SemanticTarget::Text(text) = &query.target
        {
            ranked = self.fuse_with_fts(text, ranked)?;
        }
        // Check every candidate against the note as it is now, and apply the filters.
        let allowed_notebooks = match &query.notebook_id {
            Some(nb) => Some(self.notebook_subtree(nb)?),
            None => None,
        };
        let protected = self.protected_notebooks()?;
        let limit = query.limit.clamp(1, Page::MAX_LIMIT);
        let mut hits = Vec::new();
        let mut total = 0u64;
        let mut note_stmt = self
            .conn
            .prepare_cached(&format!("SELECT {NOTE_COLUMNS} FROM notes n WHERE n.id = ?1"))?;
        for (note_id, score, snippet) in ranked {
            let Some(note) = note_stmt
                .query_row([&note_id], |r| summary_from_row(r, &protected))
                .optional()?
            else {
                continue;
            };
            if note.deleted.is_some() || note.is_protected {
                continue;
            }
            if allowed_notebooks
                .as_ref()
                .is_some_and(|nbs| !nbs.contains(&note.notebook_id))
            {
                continue;
            }
            if query
                .tag
                .as_ref()
                .is_some_and(|tag| !note.tags.iter().any(|t| t.eq_ignore_ascii_case(tag.trim())))
            {
                continue;
            }
            total += 1;
            if hits.len() as u64 >= limit {
                continue;
            }
            let snippet = if snippet.chars().count() > 300 {
                snippet.chars().take(300).collect::<String>() + "…"
            } else {
                snippet
            };
            hits.push(SemanticHit {
                note,
                snippet,
                score: (score * 1000.0).round() / 1000.0,
            });
        }
        Ok(PageOf::new(hits, total, Page { offset: 0, limit }))
    }

    /// Reciprocal rank fusion of the vector ranking with full-text ranks (k = 60); text matches missing from the
    /// vector list join with their first chunk as snippet.
    fn fuse_with_fts(
        &self,
        text: &str,
        vector_ranked: Vec<(String, f64, String)>,
    ) -> Result<Vec<(String, f64, String)>> {
        const K: f64 = 60.0;
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| w.chars().filter(|c| c.is_alphanumeric()).collect::<String>())
            .filter(|w| w.len() > 2)
            .collect();
        let mut scores: HashMap<String, (f64, String)> = HashMap::new();
        for (rank, (id, _, snippet)) in vector_ranked.into_iter().enumerate() {
            scores.insert(id, (1.0 / (K + rank as f64 + 1.0), snippet));
        }
        if !words.is_empty() {
            let query = format!("any:1 {}", words.join(" "));
            let options = SearchOptions {
                page: Page { offset: 0, limit: 100 },
                include_trashed: false,
            };
            if let Ok(page) = self.search(&query, options) {
                for (rank, hit) in page.items.into_iter().enumerate() {
                    let entry = scores
                        .entry(hit.note.id)
                        .or_insert((0.0, hit.snippet.replace("<mark>", "").replace("</mark>", "")));
                    entry.0 += 1.0 / (K + rank as f64 + 1.0);
                }
            }
        }
        let mut fused: Vec<(String, f64, String)> = scores.into_iter().map(|(id, (s, t))| (id, s, t)).collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(fused)
    }
}

fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

/// The dot product of a vector with one stored as little-endian f32 bytes, without decoding it into a vector.
fn dot_bytes(a: &[f32], bytes: &[u8]) -> f32 {
    a.iter()
        .zip(bytes.chunks_exact(4))
        .map(|(x, b)| x * f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .sum()
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
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
    /// Starts a background indexer that looks for changes every `interval` and embeds what changed.
    pub fn spawn_indexer(&self, interval: std::time::Duration) -> Indexer {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ws = self.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("quire-indexer".into())
            .spawn(move || {
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    let worked = ws.index_pending(BATCH * 4).unwrap_or(0);
                    if worked == 0 {
                        std::thread::park_timeout(interval);
                    }
                }
            })
            .ok();
        Indexer { stop, thread }
    }
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

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}
