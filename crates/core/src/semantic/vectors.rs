//! The in-memory copy of the vectors that a semantic search scans.
//!
//! The vectors live in the workspace file (`semantic_chunks`); scanning them there reads every row's BLOB per
//! query (over 600 ms at 180,000 chunks). Each [`Workspace`](crate::Workspace) therefore keeps one copy per
//! embedder in memory, quantised to 8 bits per dimension (a quarter of the f32 size), and scans that. Why: "The
//! vector store" in docs/decisions/search.md; the figures (`cargo xtask bench vectors`): "Search by meaning" in
//! docs/performance.md.
//!
//! The copy is checked against the file on every search: every write to `semantic_chunks` bumps
//! `semantic_state.generation` in the same transaction, so an unchanged generation means an unchanged index, in this
//! process or any other. On a new generation the copy forgets the chunks of the notes that `semantic_dropped` lists
//! for the generations it missed, and loads the chunks above its highest id (ids only grow: `AUTOINCREMENT`). A copy
//! older than `semantic_state.horizon` (after a rebuild, or 1,000 generations behind) reloads everything.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// One process's copy of the vectors of one embedder. Shared by the clones of a workspace.
#[derive(Default)]
pub(crate) struct VectorCache {
    snapshot: RwLock<Option<Arc<Snapshot>>>,
}

/// How many generations `semantic_dropped` remembers.
const DROPPED_KEPT: i64 = 1_000;

/// A note index that marks a forgotten chunk.
const GONE: u32 = u32::MAX;

/// The vectors of one embedder at one generation.
#[derive(Clone, Default)]
pub(crate) struct Snapshot {
    embedder: String,
    generation: i64,
    dims: usize,
    /// Chunk ids, ascending.
    ids: Vec<i64>,
    /// For each chunk, its note (an index into `note_ids`), or [`GONE`].
    notes: Vec<u32>,
    /// How many chunks are [`GONE`]; the copy is compacted when they are a quarter of it.
    gone: usize,
    note_ids: Vec<String>,
    note_index: HashMap<String, u32>,
    /// `dims` codes per chunk: the unit vector divided by its scale, rounded.
    codes: Vec<i8>,
    /// For each chunk, the value of one code step.
    scales: Vec<f32>,
}

/// The best chunk of one note.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoteMatch {
    pub(crate) note: u32,
    pub(crate) chunk_id: i64,
    /// The cosine similarity from the 8-bit codes (within about 0.005 of the exact one).
    pub(crate) score: f32,
}

/// Bumps the embedder's generation for a write to its chunks and returns it. Also forgets the dropped-note log
/// older than [`DROPPED_KEPT`] generations, moving the horizon past it.
pub(crate) fn next_generation(conn: &Connection, embedder: &str) -> Result<i64> {
    let generation: i64 = conn.query_row(
        "INSERT INTO semantic_state (embedder, last_change_seq, generation) VALUES (?1, 0, 1) \
         ON CONFLICT (embedder) DO UPDATE SET generation = generation + 1 RETURNING generation",
        [embedder],
        |r| r.get(0),
    )?;
    let horizon = generation - DROPPED_KEPT;
    if horizon > 0 {
        conn.execute(
            "DELETE FROM semantic_dropped WHERE embedder = ?1 AND generation <= ?2",
            params![embedder, horizon],
        )?;
        conn.execute(
            "UPDATE semantic_state SET horizon = max(horizon, ?2) WHERE embedder = ?1",
            params![embedder, horizon],
        )?;
    }
    Ok(generation)
}

impl VectorCache {
    /// The vectors of `embedder` as `conn` sees them now, bringing the copy up to date first if the index changed.
    pub(crate) fn current(&self, conn: &Connection, embedder: &str) -> Result<Arc<Snapshot>> {
        let (generation, horizon): (i64, i64) = conn
            .prepare_cached("SELECT generation, horizon FROM semantic_state WHERE embedder = ?1")?
            .query_row([embedder], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, 0));
        // A copy newer than this reader's transaction (another thread caught it up a moment ago) is used as it is:
        // every hit is checked against the notes as this transaction sees them anyway.
        let usable = |s: &Snapshot| s.embedder == embedder && s.generation >= generation;
        if let Some(snapshot) = self.read_lock().as_ref()
            && usable(snapshot)
        {
            return Ok(snapshot.clone());
        }
        let mut slot = self.snapshot.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(snapshot) = slot.as_ref()
            && usable(snapshot)
        {
            return Ok(snapshot.clone());
        }
        if slot
            .as_ref()
            .is_some_and(|s| s.embedder != embedder || s.generation < horizon)
        {
            *slot = None;
        }
        let snapshot = slot.get_or_insert_with(|| {
            Arc::new(Snapshot {
                embedder: embedder.to_owned(),
                ..Snapshot::default()
            })
        });
        if snapshot.generation < generation {
            // In place when no search holds the old snapshot; on a copy otherwise, so running searches keep theirs.
            if let Err(e) = Arc::make_mut(snapshot).catch_up(conn, generation) {
                *slot = None;
                return Err(e);
            }
        }
        Ok(snapshot.clone())
    }

    fn read_lock(&self) -> std::sync::RwLockReadGuard<'_, Option<Arc<Snapshot>>> {
        self.snapshot.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Snapshot {
    fn catch_up(&mut self, conn: &Connection, generation: i64) -> Result<()> {
        let max_id = self.ids.last().copied().unwrap_or(0);
        if !self.ids.is_empty() {
            let mut stmt = conn.prepare_cached(
                "SELECT DISTINCT note_id FROM semantic_dropped WHERE embedder = ?1 AND generation > ?2",
            )?;
            let dropped: std::collections::HashSet<u32> = stmt
                .query_map(params![self.embedder, self.generation], |r| r.get::<_, String>(0))?
                .filter_map(|id| id.map(|id| self.note_index.get(&id).copied()).transpose())
                .collect::<rusqlite::Result<_>>()?;
            if !dropped.is_empty() {
                // One flag per note, not a hash lookup per chunk: at a million chunks the lookups took 15 ms of
                // every search after a write.
                let mut is_dropped = vec![false; self.note_ids.len()];
                for note in dropped {
                    if let Some(flag) = is_dropped.get_mut(note as usize) {
                        *flag = true;
                    }
                }
                for (note, scale) in self.notes.iter_mut().zip(&mut self.scales) {
                    if is_dropped.get(*note as usize).copied().unwrap_or(false) {
                        *note = GONE;
                        *scale = 0.0;
                        self.gone += 1;
                    }
                }
            }
            if self.gone * 4 > self.ids.len() {
                self.compact();
            }
        }
        // `+embedder` keeps SQLite from walking the whole (embedder, note_id) index: the new rows are a rowid range.
        let mut stmt = conn.prepare_cached(
            "SELECT id, note_id, vector FROM semantic_chunks WHERE id > ?2 AND +embedder = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query(params![self.embedder, max_id])?;
        while let Some(row) = rows.next()? {
            let bytes = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
            let dims = bytes.len() / 4;
            if self.ids.is_empty() {
                self.dims = dims;
            }
            if dims != self.dims || dims == 0 {
                // Written by a misbehaving embedder; such a chunk can never match a query anyway.
                continue;
            }
            let note_id = row.get_ref(1)?.as_str().map_err(rusqlite::Error::from)?;
            let note = self.intern(note_id);
            self.ids.push(row.get(0)?);
            self.notes.push(note);
            let (codes, scale) = quantise_bytes(bytes);
            self.codes.extend_from_slice(&codes);
            self.scales.push(scale);
        }
        self.generation = generation;
        Ok(())
    }

    fn intern(&mut self, note_id: &str) -> u32 {
        if let Some(index) = self.note_index.get(note_id) {
            return *index;
        }
        let index = u32::try_from(self.note_ids.len()).unwrap_or(GONE - 1);
        self.note_ids.push(note_id.to_owned());
        self.note_index.insert(note_id.to_owned(), index);
        index
    }

    /// Removes the forgotten chunks from the arrays.
    fn compact(&mut self) {
        let dims = self.dims;
        let mut kept = 0;
        for position in 0..self.ids.len() {
            if self.notes[position] == GONE {
                continue;
            }
            self.ids[kept] = self.ids[position];
            self.notes[kept] = self.notes[position];
            self.scales[kept] = self.scales[position];
            self.codes
                .copy_within(position * dims..(position + 1) * dims, kept * dims);
            kept += 1;
        }
        self.ids.truncate(kept);
        self.notes.truncate(kept);
        self.scales.truncate(kept);
        self.codes.truncate(kept * dims);
        self.gone = 0;
    }

    /// The note id behind a [`NoteMatch::note`].
    pub(crate) fn note_id(&self, note: u32) -> &str {
        &self.note_ids[note as usize]
    }

    /// The best chunk of every note scoring at least `floor` against the unit vector `query`, best first, ties by
    /// note id. Notes in `skip` are left out.
    ///
    /// A large copy is scanned by one thread per core, each over its own stretch of chunks (at a million chunks
    /// the scan is most of a search's time, and it is bound by arithmetic, not memory); the chunks above the floor
    /// are then kept best per note in chunk order, as a single scan would.
    pub(crate) fn best_per_note(&self, query: &[f32], floor: f32, skip: Option<&str>) -> Vec<NoteMatch> {
        let threads = if self.ids.len() >= PARALLEL_FROM { cores() } else { 1 };
        self.best_per_note_with(query, floor, skip, threads)
    }

    /// [`Snapshot::best_per_note`] over `threads` stretches. A thread the system refuses scans its stretch on
    /// the calling thread instead.
    fn best_per_note_with(&self, query: &[f32], floor: f32, skip: Option<&str>, threads: usize) -> Vec<NoteMatch> {
        if query.len() != self.dims || self.ids.is_empty() {
            return Vec::new();
        }
        let skip = skip.and_then(|id| self.note_index.get(id)).copied();
        let (q, q_scale) = quantise(query);
        let scan = |from: usize, to: usize| -> Vec<(usize, f32)> {
            let mut above = Vec::new();
            let codes = self.codes[from * self.dims..to * self.dims].chunks_exact(self.dims);
            for (position, codes) in (from..to).zip(codes) {
                let note = self.notes[position];
                if note == GONE || Some(note) == skip {
                    continue;
                }
                let score = dot_i8(&q, codes) as f32 * q_scale * self.scales[position];
                if score >= floor {
                    above.push((position, score));
                }
            }
            above
        };
        let len = self.ids.len();
        let above: Vec<(usize, f32)> = if threads <= 1 {
            scan(0, len)
        } else {
            let per = len.div_ceil(threads);
            std::thread::scope(|s| {
                let scan = &scan;
                let stretches: Vec<(usize, usize)> = (0..threads)
                    .map(|t| ((t * per).min(len), ((t + 1) * per).min(len)))
                    .collect();
                let workers: Vec<_> = stretches
                    .iter()
                    .map(|&(from, to)| std::thread::Builder::new().spawn_scoped(s, move || scan(from, to)).ok())
                    .collect();
                workers
                    .into_iter()
                    .zip(stretches)
                    .flat_map(|(worker, (from, to))| match worker {
                        Some(worker) => worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                        None => scan(from, to),
                    })
                    .collect()
            })
        };
        // The best chunk per note, in chunk order (the first of equal scores stays): a map when few chunks passed
        // the floor, a slot per note when many did (a loose search with a real model can pass a good part).
        let keep = |best: &mut Option<NoteMatch>, position: usize, score: f32| {
            if best.is_none_or(|m| score > m.score) {
                *best = Some(NoteMatch {
                    note: self.notes[position],
                    chunk_id: self.ids[position],
                    score,
                });
            }
        };
        let best: Vec<NoteMatch> = if above.len() < self.note_ids.len() / 16 {
            let mut best: HashMap<u32, Option<NoteMatch>> = HashMap::with_capacity(above.len());
            for (position, score) in above {
                keep(best.entry(self.notes[position]).or_default(), position, score);
            }
            best.into_values().flatten().collect()
        } else {
            let mut best: Vec<Option<NoteMatch>> = vec![None; self.note_ids.len()];
            for (position, score) in above {
                keep(&mut best[self.notes[position] as usize], position, score);
            }
            best.into_iter().flatten().collect()
        };
        let mut found = best;
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| self.note_id(a.note).cmp(self.note_id(b.note)))
        });
        found
    }
}

/// Copies smaller than this are scanned on the calling thread: below it, starting threads costs about what
/// they save.
const PARALLEL_FROM: usize = 50_000;

/// The cores this process may use (asked once: the answer reads the cgroup's limits).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Symmetric 8-bit quantisation: codes in -127..=127 and the value of one step.
fn quantise(v: &[f32]) -> (Vec<i8>, f32) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return (vec![0; v.len()], 0.0);
    }
    let scale = max / 127.0;
    let codes = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (codes, scale)
}

fn quantise_bytes(bytes: &[u8]) -> (Vec<i8>, f32) {
    let v: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    quantise(&v)
}

/// Integer dot product, written so that the compiler vectorises it without any target feature beyond the
/// x86-64 baseline: 32 lanes of 32-bit products. Measured on 1,000,000 vectors of 384 codes (release, these
/// machines): 27 ms, where 16 lanes of 16-bit products took 49 ms and a plain fold 58 ms.
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; 32];
    let (a_blocks, b_blocks) = (a.chunks_exact(32), b.chunks_exact(32));
    let rest: i32 = a_blocks
        .remainder()
        .iter()
        .zip(b_blocks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_blocks.zip(b_blocks) {
        for k in 0..32 {
            lanes[k] += i32::from(x[k]) * i32::from(y[k]);
        }
    }
    lanes.iter().sum::<i32>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_dot_products_stay_close_to_the_exact_ones() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut unit = || {
            let v: Vec<f32> = (0..384)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        for _ in 0..200 {
            let (a, b) = (unit(), unit());
            let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            let ((qa, sa), (qb, sb)) = (quantise(&a), quantise(&b));
            let approx = dot_i8(&qa, &qb) as f32 * sa * sb;
            assert!((exact - approx).abs() < 0.005, "{exact} vs {approx}");
        }
        let a = unit();
        let (qa, sa) = quantise(&a);
        assert!((dot_i8(&qa, &qa) as f32 * sa * sa - 1.0).abs() < 0.005);
    }

    #[test]
    fn the_dropped_log_keeps_a_thousand_generations_and_moves_the_horizon() {
        let ws = crate::Workspace::open_in_memory().unwrap();
        let state = |ws: &crate::Workspace| {
            ws.read(&crate::Actor::User, |r| {
                Ok::<_, crate::Error>(r.conn.query_row(
                    "SELECT generation, horizon, (SELECT count(*) FROM semantic_dropped) FROM semantic_state",
                    [],
                    |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?)),
                )?)
            })
            .unwrap()
        };
        ws.write(&crate::Actor::User, |w| {
            for _ in 0..DROPPED_KEPT {
                let generation = next_generation(w.conn, "e")?;
                w.conn
                    .execute("INSERT INTO semantic_dropped VALUES ('e', ?1, 'note')", [generation])?;
            }
            Ok::<_, crate::Error>(())
        })
        .unwrap();
        assert_eq!(state(&ws), (DROPPED_KEPT, 0, DROPPED_KEPT));
        ws.write(&crate::Actor::User, |w| next_generation(w.conn, "e")).unwrap();
        assert_eq!(state(&ws), (DROPPED_KEPT + 1, 1, DROPPED_KEPT - 1));
    }

    #[test]
    fn the_integer_kernel_matches_a_plain_sum_at_every_length() {
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 384, 385] {
            let a: Vec<i8> = (0..len)
                .map(|i| ((i * 37) % 255) as u8 as i8)
                .map(|x| x.max(-127))
                .collect();
            let b: Vec<i8> = (0..len)
                .map(|i| ((i * 91 + 5) % 255) as u8 as i8)
                .map(|x| x.max(-127))
                .collect();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum();
            assert_eq!(dot_i8(&a, &b), plain, "length {len}");
        }
    }

    #[test]
    fn a_scan_split_across_threads_finds_what_one_pass_finds() {
        // Above PARALLEL_FROM chunks, with gone chunks, a skipped note, equal scores and notes whose chunks fall
        // into different threads' stretches.
        let (dims, chunks, notes) = (8, PARALLEL_FROM + 1_234, 7_001u32);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut snapshot = Snapshot {
            dims,
            note_ids: (0..notes).map(|n| format!("note{n:05}")).collect(),
            ..Snapshot::default()
        };
        snapshot.note_index = (0..notes).map(|n| (format!("note{n:05}"), n)).collect();
        for position in 0..chunks {
            snapshot.ids.push(position as i64 + 1);
            let note = if position % 97 == 0 {
                GONE
            } else {
                (next() % u64::from(notes)) as u32
            };
            snapshot.notes.push(note);
            // Few distinct codes, so that many chunks tie.
            snapshot.codes.extend((0..dims).map(|_| (next() % 5) as i8 - 2));
            snapshot.scales.push(0.25);
        }
        let query: Vec<f32> = (0..dims).map(|d| if d % 2 == 0 { 0.5 } else { -0.5 }).collect();
        let (q, q_scale) = quantise(&query);
        let skip = "note00042";
        let mut best: Vec<Option<NoteMatch>> = vec![None; notes as usize];
        for (position, codes) in snapshot.codes.chunks_exact(dims).enumerate() {
            let note = snapshot.notes[position];
            if note == GONE || note == 42 {
                continue;
            }
            let score = dot_i8(&q, codes) as f32 * q_scale * snapshot.scales[position];
            let slot = &mut best[note as usize];
            if score >= 0.3 && slot.is_none_or(|m| score > m.score) {
                *slot = Some(NoteMatch {
                    note,
                    chunk_id: snapshot.ids[position],
                    score,
                });
            }
        }
        let mut expected: Vec<NoteMatch> = best.into_iter().flatten().collect();
        expected.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.note.cmp(&b.note)));
        let key = |m: &NoteMatch| (m.note, m.chunk_id, m.score.to_bits());
        let expected: Vec<_> = expected.iter().map(key).collect();
        assert!(
            expected.len() > 1_000,
            "the floor keeps a good part: {}",
            expected.len()
        );
        for threads in [1, 2, 3, 7] {
            let found = snapshot.best_per_note_with(&query, 0.3, Some(skip), threads);
            assert_eq!(found.iter().map(key).collect::<Vec<_>>(), expected, "{threads} threads");
        }
        // A high floor passes few chunks (kept in a map), a low one most (a slot per note).
        for floor in [0.9, -1.0] {
            let one = snapshot.best_per_note_with(&query, floor, None, 1);
            let split = snapshot.best_per_note_with(&query, floor, None, 3);
            assert_eq!(
                one.iter().map(key).collect::<Vec<_>>(),
                split.iter().map(key).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_zero_vector_scores_zero() {
        let (q, s) = quantise(&[0.0; 8]);
        assert_eq!(q, vec![0; 8]);
        assert_eq!(s, 0.0);
    }
}
