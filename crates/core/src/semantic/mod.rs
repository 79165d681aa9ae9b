//! Semantic search: notes cut into chunks, embedded by an [`Embedder`], stored as vectors in the workspace file,
//! kept up to date by following the change log, and searched by cosine similarity (optionally fused with FTS).

mod chunk;
mod hashed;
mod slot;
mod store;

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{NoteSummary, Timestamp};
use crate::read::{NOTE_COLUMNS, Page, PageOf, Reader, summary_from_row};
use crate::search::SearchOptions;
use crate::workspace::Workspace;

pub use chunk::{Chunk, chunk_note, chunk_note_for};
pub use hashed::HashedNgramEmbedder;
pub(crate) use slot::EmbedderSlot;
pub(crate) use store::VectorCache;

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
    /// How many tokens the model makes of one word; notes are chunked so that each chunk fits
    /// [`Embedder::max_tokens`]. The default estimate suits WordPiece and BPE vocabularies of English: a token per
    /// six letters, and one per punctuation mark.
    fn count_tokens(&self, word: &str) -> usize {
        let letters = word.chars().filter(|c| c.is_alphanumeric()).count();
        let marks = word.chars().count() - letters;
        letters.div_ceil(6).max(1) + marks
    }
    /// The longest input, in tokens, that the model embeds without cutting it. Chunks never exceed 256 tokens in any
    /// case.
    fn max_tokens(&self) -> usize {
        256
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
    /// Cosine similarity of that chunk; in hybrid mode the fused rank score, 1.0 for first place in both rankings.
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
        let embedder = self.embedder()?;
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
            let generation = store::next_generation(w.conn, &id)?;
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
        let embedder = self.embedder.get()?;
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
        let skip = match &query.target {
            SemanticTarget::LikeNote(like) => Some(like.as_str()),
            SemanticTarget::Text(_) => None,
        };
        let snapshot = self.vectors.current(self.conn, &id)?;
        let matches = snapshot.best_per_note(&vector, floor, skip);
        let mut ranked: Vec<Candidate> = matches
            .into_iter()
            .map(|m| Candidate {
                note_id: snapshot.note_id(m.note).to_owned(),
                score: f64::from(m.score),
                chunk_id: Some(m.chunk_id),
                snippet: None,
            })
            .collect();
        drop(snapshot);
        let fused = query.hybrid && matches!(query.target, SemanticTarget::Text(_));
        if fused && let SemanticTarget::Text(text) = &query.target {
            ranked = self.fuse_with_fts(text, ranked)?;
        }
        // Check every candidate against the note as it is now, and apply the filters; only the page's notes are
        // read whole.
        let allowed_notebooks: Option<std::collections::HashSet<String>> = match &query.notebook_id {
            Some(nb) => Some(self.notebook_subtree(nb)?.into_iter().collect()),
            None => None,
        };
        let protected = self.protected_notebooks()?;
        let tag = query.tag.as_deref().map(str::trim);
        let limit = query.limit.clamp(1, Page::MAX_LIMIT);
        let mut page: Vec<Candidate> = Vec::new();
        let mut total = 0u64;
        let mut state_stmt = self
            .conn
            .prepare_cached("SELECT deleted IS NULL AND NOT is_protected, notebook_id FROM notes WHERE id = ?1")?;
        let mut tag_stmt = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
             WHERE nt.note_id = ?1 AND lower(t.name) = lower(?2))",
        )?;
        for candidate in ranked {
            let Some((live, notebook)) = state_stmt
                .query_row([&candidate.note_id], |r| {
                    Ok((r.get::<_, bool>(0)?, r.get::<_, String>(1)?))
                })
                .optional()?
            else {
                continue;
            };
            if !live
                || protected.contains(&notebook)
                || allowed_notebooks.as_ref().is_some_and(|nbs| !nbs.contains(&notebook))
            {
                continue;
            }
            if let Some(tag) = tag
                && !tag_stmt.query_row(params![candidate.note_id, tag], |r| r.get::<_, bool>(0))?
            {
                continue;
            }
            total += 1;
            if (page.len() as u64) < limit {
                page.push(candidate);
            }
        }
        let mut note_stmt = self
            .conn
            .prepare_cached(&format!("SELECT {NOTE_COLUMNS} FROM notes n WHERE n.id = ?1"))?;
        let mut chunk_stmt = self
            .conn
            .prepare_cached("SELECT text, vector FROM semantic_chunks WHERE id = ?1")?;
        let mut hits = Vec::with_capacity(page.len());
        for candidate in page {
            let note = note_stmt.query_row([&candidate.note_id], |r| summary_from_row(r, &protected))?;
            let mut score = candidate.score;
            let mut snippet = candidate.snippet.unwrap_or_default();
            if let Some(chunk) = candidate.chunk_id
                && let Some((text, bytes)) = chunk_stmt
                    .query_row([chunk], |r| Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?)))
                    .optional()?
            {
                snippet = text;
                if !fused {
                    // The scan ranked by 8-bit codes; the score shown is the exact cosine of the stored vector.
                    score = f64::from(dot_bytes(&vector, &bytes));
                }
            }
            if snippet.chars().count() > 300 {
                snippet = snippet.chars().take(300).collect::<String>() + "…";
            }
            hits.push(SemanticHit { note, snippet, score });
        }
        if !fused {
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.note.id.cmp(&b.note.id)));
        }
        for hit in &mut hits {
            // Rounded only now, after ordering: neighbouring fused scores can be closer than 0.001.
            hit.score = (hit.score * 1000.0).round() / 1000.0;
        }
        Ok(PageOf::new(hits, total, Page { offset: 0, limit }))
    }

    /// Reciprocal rank fusion of the vector ranking with the full-text ranking of the notes that contain every
    /// content word of the query: each list adds `weight / (K + rank)`. Text matches missing from the vector list
    /// join with the search snippet. Scores are then scaled so that first place in both lists is 1.0.
    fn fuse_with_fts(&self, text: &str, vector_ranked: Vec<Candidate>) -> Result<Vec<Candidate>> {
        let words = content_words(text);
        let mut fused: HashMap<String, Candidate> = HashMap::new();
        for (rank, mut candidate) in vector_ranked.into_iter().enumerate() {
            candidate.score = VECTOR_WEIGHT / (RRF_K + rank as f64 + 1.0);
            fused.insert(candidate.note_id.clone(), candidate);
        }
        if !words.is_empty() {
            // Every content word must match (the query language's default AND). With any word (`any:1`), notes that
            // share one common word with a paraphrase outranked its real target: on `cargo xtask bench semantic`,
            // paraphrase MRR fell from 0.80 (vectors alone) to 0.55; with all words it is 0.80 and keyword
            // queries rise from 0.95 to 1.00.
            let query = words.join(" ");
            let options = SearchOptions {
                page: Page { offset: 0, limit: 100 },
                include_trashed: false,
            };
            // The words are alphanumeric, so the query language reads them as plain terms; should it still refuse
            // the query, the text half adds nothing.
            if let Ok(page) = self.search(&query, options) {
                for (rank, hit) in page.items.into_iter().enumerate() {
                    let entry = fused.entry(hit.note.id.clone()).or_insert_with(|| Candidate {
                        note_id: hit.note.id,
                        score: 0.0,
                        chunk_id: None,
                        snippet: Some(hit.snippet.replace("<mark>", "").replace("</mark>", "")),
                    });
                    entry.score += TEXT_WEIGHT / (RRF_K + rank as f64 + 1.0);
                }
            }
        }
        let best = (VECTOR_WEIGHT + TEXT_WEIGHT) / (RRF_K + 1.0);
        let mut fused: Vec<Candidate> = fused
            .into_values()
            .map(|c| Candidate {
                score: c.score / best,
                ..c
            })
            .collect();
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.note_id.cmp(&b.note_id)));
        Ok(fused)
    }
}

/// A note on its way to a hit: its best chunk (from the vectors) or a full-text snippet.
struct Candidate {
    note_id: String,
    score: f64,
    chunk_id: Option<i64>,
    snippet: Option<String>,
}

/// Reciprocal rank fusion's damping constant (the usual 60).
const RRF_K: f64 = 60.0;
/// How much each ranking counts in hybrid mode.
const VECTOR_WEIGHT: f64 = 1.0;
const TEXT_WEIGHT: f64 = 1.0;

/// The words of a query that say what it is about: letters and digits only, lower-cased, longer than two
/// characters, common English function words left out. Hybrid search looks for notes holding all of them.
///
/// ```
/// assert_eq!(quire_core::content_words("How do I renew the passport?"), ["renew", "passport"]);
/// ```
pub fn content_words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| w.chars().count() > 2 && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Words too common to say anything in a hybrid query's full-text half.
const STOPWORDS: &[&str] = &[
    "about", "after", "all", "and", "any", "are", "before", "but", "can", "for", "from", "had", "has", "have", "her",
    "his", "how", "into", "its", "not", "our", "out", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "was", "were", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
];

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
    /// Starts a background indexer that looks for changes every `interval`, embeds what changed, and keeps the
    /// in-memory copy of the vectors up to date.
    pub fn spawn_indexer(&self, interval: std::time::Duration) -> Indexer {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ws = self.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("quire-indexer".into())
            .spawn(move || {
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    let worked = ws.index_pending(BATCH * 4).unwrap_or(0);
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
