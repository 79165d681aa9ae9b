//! Searching by meaning: the scan of the in-memory copy, relevance presets, filters and hybrid fusion with FTS.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::{SemanticHit, SemanticQuery, SemanticTarget, content_words, dot_bytes, from_blob, normalised};
use crate::error::{Error, Result};
use crate::read::{Page, PageOf, Reader, note_columns, summary_from_row};
use crate::search::SearchOptions;

/// How many candidates one statement checks against the notes table.
const CHECK_BLOCK: usize = 500;

/// The longest query that is also looked up as a note's title.
const TITLE_QUERY_BYTES: usize = 200;

impl Reader<'_> {
    /// Puts the notes titled (or aliased) exactly as the query first, whatever their score: a person who types a
    /// note's title means that note. The built-in embedder, which compares letter groups, ranked "Launch plan"
    /// fourth for "launch plan" among notes that use both words. Visibility and filters are checked later, as for
    /// every candidate.
    fn put_titled_first(&self, text: &str, ranked: &mut Vec<Candidate>) -> Result<()> {
        let text = text.trim();
        if text.is_empty() || text.len() > TITLE_QUERY_BYTES || text.contains('\n') {
            return Ok(());
        }
        let titled = crate::links::candidates(self.conn, text)?;
        let top = ranked.first().map_or(1.0, |c| c.score);
        for id in titled.into_iter().rev() {
            let mut candidate = match ranked.iter().position(|c| c.note_id == id) {
                Some(at) => ranked.remove(at),
                None => Candidate {
                    note_id: id,
                    score: top,
                    chunk_id: None,
                    snippet: None,
                    titled: true,
                },
            };
            candidate.score = candidate.score.max(top);
            candidate.titled = true;
            ranked.insert(0, candidate);
        }
        Ok(())
    }

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
                self.note_unrecorded(note_id)?;
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
                titled: false,
            })
            .collect();
        drop(snapshot);
        let fused = query.hybrid && matches!(query.target, SemanticTarget::Text(_));
        if fused && let SemanticTarget::Text(text) = &query.target {
            ranked = self.fuse_with_fts(text, ranked)?;
        }
        if let SemanticTarget::Text(text) = &query.target {
            self.put_titled_first(text, &mut ranked)?;
        }
        // Check every candidate against the note as it is now, and apply the filters; only the page's notes are
        // read whole.
        let allowed_notebooks: Option<std::collections::HashSet<String>> = match &query.notebook_id {
            Some(nb) => Some(self.notebook_subtree(nb)?.into_iter().collect()),
            None => None,
        };
        let protection = self.protection()?;
        let tag = query.tag.as_deref().map(str::trim);
        let limit = query.limit.clamp(1, Page::MAX_LIMIT);
        let mut page: Vec<Candidate> = Vec::new();
        let mut total = 0u64;
        // The notes are looked up a block at a time, in rank order: one statement per block instead of one per
        // candidate (at a million chunks a loose search has thousands of candidates), and in the index of live,
        // unprotected notes only, which the page cache keeps (see migration 009); a candidate missing from it is
        // trashed, deleted or protected. SQLite's planner prefers the unique index on `id`, which leads to the
        // note's row: hence `INDEXED BY`.
        let mut state_stmt = self.conn.prepare_cached(
            "SELECT j.key, n.notebook_id FROM json_each(?1) j \
             JOIN notes n INDEXED BY notes_visible ON n.id = j.value \
             WHERE n.deleted IS NULL AND n.is_protected = 0",
        )?;
        let mut tag_stmt = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
             WHERE nt.note_id = ?1 AND lower(t.name) = lower(?2))",
        )?;
        let mut ranked = ranked.into_iter();
        loop {
            let block: Vec<Candidate> = ranked.by_ref().take(CHECK_BLOCK).collect();
            if block.is_empty() {
                break;
            }
            let ids = serde_json::Value::from(block.iter().map(|c| c.note_id.as_str()).collect::<Vec<_>>());
            let mut visible: Vec<Option<String>> = vec![None; block.len()];
            let rows =
                state_stmt.query_map([ids.to_string()], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (at, notebook) = row?;
                if let Some(slot) = usize::try_from(at).ok().and_then(|at| visible.get_mut(at)) {
                    *slot = Some(notebook);
                }
            }
            for (candidate, notebook) in block.into_iter().zip(visible) {
                let Some(notebook) = notebook else {
                    continue;
                };
                if protection.notebook_is_protected(&notebook)
                    || !self.in_scope(&notebook)?
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
        }
        let mut note_stmt =
            self.conn
                .prepare_cached(concat!("SELECT ", note_columns!(), " FROM notes n WHERE n.id = ?1"))?;
        let mut chunk_stmt = self
            .conn
            .prepare_cached("SELECT text, vector FROM semantic_chunks WHERE id = ?1")?;
        let mut hits = Vec::with_capacity(page.len());
        for candidate in page {
            let note = note_stmt.query_row([&candidate.note_id], |r| summary_from_row(r, &protection))?;
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
            hits.push((candidate.titled, SemanticHit { note, snippet, score }));
        }
        if !fused {
            hits.sort_by(|(a_titled, a), (b_titled, b)| {
                b_titled
                    .cmp(a_titled)
                    .then_with(|| b.score.total_cmp(&a.score))
                    .then_with(|| a.note.id.cmp(&b.note.id))
            });
        }
        let mut hits: Vec<SemanticHit> = hits.into_iter().map(|(_, hit)| hit).collect();
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
                        titled: false,
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
    /// Titled (or aliased) exactly as the query: ranked first whatever its score.
    titled: bool,
}

/// Reciprocal rank fusion's damping constant (the usual 60).
const RRF_K: f64 = 60.0;
/// How much each ranking counts in hybrid mode.
const VECTOR_WEIGHT: f64 = 1.0;
const TEXT_WEIGHT: f64 = 1.0;
