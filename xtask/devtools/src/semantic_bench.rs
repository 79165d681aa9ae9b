//! `cargo xtask bench semantic`: recall@5 and MRR of full-text search, each embedder and hybrid fusion on a
//! labelled set (xtask/devtools/data/semantic_eval.json plus generated filler notes), with query latency and indexing speed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use quire_core::{Actor, Error, NewNote, Relevance, SearchOptions, SemanticQuery, SemanticTarget, Workspace};
use serde::Deserialize;

#[derive(Deserialize)]
struct EvalSet {
    notes: Vec<EvalNote>,
    queries: Vec<EvalQuery>,
}

#[derive(Deserialize)]
struct EvalNote {
    id: String,
    title: String,
    body: String,
}

#[derive(Deserialize)]
struct EvalQuery {
    text: String,
    relevant: Vec<String>,
    kind: String,
}

pub(crate) fn run(filler: usize, mut notes_for: impl FnMut(usize) -> Vec<NewNote>) -> anyhow::Result<()> {
    let set: EvalSet = serde_json::from_str(include_str!("../data/semantic_eval.json"))?;
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("semantic.quire"))?;
    let labels: HashMap<String, String> = ws.write(&Actor::User, |w| {
        let mut labels = HashMap::new();
        for note in &set.notes {
            let created = w.create_note(NewNote::new(note.title.clone(), note.body.clone()))?;
            labels.insert(created.summary.id, note.id.clone());
        }
        for note in notes_for(filler) {
            w.create_note(note)?;
        }
        Ok::<_, Error>(labels)
    })?;
    let total_notes = set.notes.len() + filler;
    println!(
        "semantic bench: {} labelled notes + {filler} filler notes, {} queries",
        set.notes.len(),
        set.queries.len()
    );

    let mut rows: Vec<(String, Scores)> = Vec::new();
    rows.push((
        "full-text (any word, bm25)".into(),
        evaluate(&set, &labels, |q| fts(&ws, q))?,
    ));

    let hashed = ws.clone();
    let speed = index_speed(&hashed, total_notes)?;
    let mut scores = evaluate(&set, &labels, |q| semantic(&hashed, q, false))?;
    scores.indexing = Some(speed);
    scores.labelled = Some(embed_speed(hashed.embedder()?.as_ref(), &set)?);
    rows.push(("hashed n-grams (fallback)".into(), scores));

    let model_dir = std::env::var_os("QUIRE_TEST_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::project_root().join("target/models/all-MiniLM-L6-v2"));
    match quire_embed::LocalEmbedder::load(&model_dir) {
        Ok(model) => {
            let local = ws.clone().with_embedder(Arc::new(model));
            let speed = index_speed(&local, total_notes)?;
            let mut scores = evaluate(&set, &labels, |q| semantic(&local, q, false))?;
            scores.indexing = Some(speed);
            scores.labelled = Some(embed_speed(local.embedder()?.as_ref(), &set)?);
            rows.push((format!("{} (local model)", local.embedder()?.id()), scores));
            rows.push((
                "hybrid: local model + full-text".into(),
                evaluate(&set, &labels, |q| semantic(&local, q, true))?,
            ));
        }
        Err(e) => println!("(no local model: {e}; run `cargo xtask model`)"),
    }

    println!(
        "\n{:<40} {:>12} {:>12} {:>12} {:>12} {:>10} {:>14} {:>14}",
        "method",
        "paraphr. R@5",
        "paraphr. MRR",
        "keyword R@5",
        "keyword MRR",
        "query p50",
        "index notes/s",
        "labelled/s"
    );
    let rate = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into());
    for (name, s) in rows {
        println!(
            "{name:<40} {:>12.3} {:>12.3} {:>12.3} {:>12.3} {:>10} {:>14} {:>14}",
            s.paraphrase.0,
            s.paraphrase.1,
            s.keyword.0,
            s.keyword.1,
            format!("{:.2} ms", s.latency.as_secs_f64() * 1e3),
            rate(s.indexing),
            rate(s.labelled)
        );
    }
    println!(
        "\nindex notes/s: catching up on every note, fillers included (about 256 tokens of made-up words per chunk); \
         labelled/s: embedding the chunks of the {} labelled notes only, which are the size of real short notes.",
        set.notes.len()
    );
    Ok(())
}

struct Scores {
    paraphrase: (f64, f64),
    keyword: (f64, f64),
    latency: Duration,
    indexing: Option<f64>,
    labelled: Option<f64>,
}

/// Labelled notes embedded per second (their chunks in one call, as the indexer batches them).
fn embed_speed(embedder: &dyn quire_core::Embedder, set: &EvalSet) -> anyhow::Result<f64> {
    let texts: Vec<String> = set
        .notes
        .iter()
        .flat_map(|n| quire_core::chunk_note(&n.title, &n.body).into_iter().map(|c| c.text))
        .collect();
    let started = Instant::now();
    embedder.embed(&texts).map_err(anyhow::Error::msg)?;
    Ok(set.notes.len() as f64 / started.elapsed().as_secs_f64())
}

fn index_speed(ws: &Workspace, notes: usize) -> anyhow::Result<f64> {
    let started = Instant::now();
    while ws.index_pending(256)? > 0 {}
    Ok(notes as f64 / started.elapsed().as_secs_f64())
}

/// Recall@5 and mean reciprocal rank (over the top 10) per query kind, and the median query time.
fn evaluate(
    set: &EvalSet,
    labels: &HashMap<String, String>,
    search: impl Fn(&str) -> anyhow::Result<Vec<String>>,
) -> anyhow::Result<Scores> {
    let mut by_kind: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
    let mut times = Vec::new();
    for query in &set.queries {
        let started = Instant::now();
        let ids = search(&query.text)?;
        times.push(started.elapsed());
        let position = ids
            .iter()
            .position(|id| labels.get(id).is_some_and(|l| query.relevant.contains(l)));
        let recall = if position.is_some_and(|p| p < 5) { 1.0 } else { 0.0 };
        let reciprocal = position.filter(|p| *p < 10).map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
        by_kind
            .entry(query.kind.as_str())
            .or_default()
            .push((recall, reciprocal));
    }
    times.sort();
    let mean = |kind: &str| {
        let v = by_kind.get(kind).cloned().unwrap_or_default();
        let n = v.len().max(1) as f64;
        (
            v.iter().map(|x| x.0).sum::<f64>() / n,
            v.iter().map(|x| x.1).sum::<f64>() / n,
        )
    };
    Ok(Scores {
        paraphrase: mean("paraphrase"),
        keyword: mean("keyword"),
        latency: times[times.len() / 2],
        indexing: None,
        labelled: None,
    })
}

fn fts(ws: &Workspace, text: &str) -> anyhow::Result<Vec<String>> {
    // The words a user would type, as hybrid search takes them; here any of them may match.
    let words = quire_core::content_words(text);
    let query = format!("any:1 {}", words.join(" "));
    let options = SearchOptions {
        page: quire_core::Page::first(10),
        include_trashed: false,
    };
    let page = ws
        .read(&Actor::User, |r| r.search(&query, options))
        .context("full-text search")?;
    Ok(page.items.into_iter().map(|h| h.note.id).collect())
}

fn semantic(ws: &Workspace, text: &str, hybrid: bool) -> anyhow::Result<Vec<String>> {
    let query = SemanticQuery {
        target: SemanticTarget::Text(text.to_owned()),
        notebook_id: None,
        tag: None,
        relevance: Relevance::Loose,
        hybrid,
        limit: 10,
    };
    let page = ws.read(&Actor::User, |r| r.semantic_search(&query))?;
    Ok(page.items.into_iter().map(|h| h.note.id).collect())
}

/// Random unit vectors, deterministic: the index and search costs without a model's.
struct RandomEmbedder;

impl quire_core::Embedder for RandomEmbedder {
    fn id(&self) -> String {
        "random-384".into()
    }
    fn dimensions(&self) -> usize {
        384
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, quire_core::EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut state = t.bytes().fold(0x9e37_79b9_7f4a_7c15u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                });
                (0..384)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % 2000) as f32 / 1000.0 - 1.0
                    })
                    .collect()
            })
            .collect())
    }
}

/// The vector store at scale: `n` notes (about two chunks each) with random 384-dimension vectors, searched the way
/// quire does it (an 8-bit copy in memory, kept up to date by generation) next to the alternatives measured in the
/// same run on the same vectors: a plain scan of the f32 BLOBs in the table (quire's first store), an f32 copy in
/// memory, and the sqlite-vec extension's `vec0` table (brute-force KNN, k = 100).
pub(crate) fn vectors(
    n: usize,
    db: Option<&std::path::Path>,
    mut notes_for: impl FnMut(usize) -> Vec<NewNote>,
) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = db.map_or_else(|| dir.path().join("vectors.quire"), std::path::Path::to_path_buf);
    let fill = if path.exists() {
        println!("reusing {} (not filled again; --notes is ignored)", path.display());
        0
    } else {
        n
    };
    let ws = Workspace::open(&path)?.with_embedder(Arc::new(RandomEmbedder));
    for start in (0..fill).step_by(5_000) {
        let notes = notes_for(5_000.min(fill - start));
        ws.write(&Actor::User, |w| {
            for note in notes {
                w.create_note(note)?;
            }
            Ok::<_, Error>(())
        })?;
    }
    let started = Instant::now();
    let mut indexed_now = 0;
    loop {
        let done = ws.index_pending(1_000)?;
        if done == 0 {
            break;
        }
        indexed_now += done;
    }
    let indexing = started.elapsed();
    let status = ws.index_status()?;
    let size = std::fs::metadata(&path)?.len();
    let indexed = if indexed_now == 0 {
        "already indexed".to_owned()
    } else {
        format!(
            "{indexed_now} notes indexed in {indexing:.1?} ({:.0} notes/s)",
            indexed_now as f64 / indexing.as_secs_f64()
        )
    };
    println!(
        "vector store: {} chunks of 384 f32 for {} notes (random vectors); {indexed}; file {} MiB",
        status.chunks,
        status.indexed_notes,
        size / (1024 * 1024)
    );
    let texts: Vec<String> = (0..21).map(|i| format!("query number {i}")).collect();
    let queries: Vec<Vec<f32>> = quire_core::Embedder::embed(&RandomEmbedder, &texts)
        .map_err(anyhow::Error::msg)?
        .into_iter()
        .map(unit)
        .collect();
    let search_at = |text: &str, relevance: Relevance| {
        let query = SemanticQuery {
            target: SemanticTarget::Text(text.to_owned()),
            notebook_id: None,
            tag: None,
            relevance,
            hybrid: false,
            limit: 10,
        };
        ws.read(&Actor::User, |r| r.semantic_search(&query))
    };
    // Loose: random vectors pass its floor (0.15) about once in 600 chunks, so every search checks some notes.
    let search = |text: &str| search_at(text, Relevance::Loose);
    let mut rows: Vec<(String, Vec<Duration>, String)> = Vec::new();

    let cold = timed(|| search(&texts[0]))?;
    let warm = texts
        .iter()
        .map(|t| timed(|| search(t)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let copy_bytes = status.chunks as usize * (384 + 4 + 8 + 4);
    rows.push((
        "quire: 8-bit copy in memory".into(),
        warm,
        format!(
            "first search (loads the copy) {}; copy ~{} MiB",
            ms(cold),
            copy_bytes >> 20
        ),
    ));
    // Strict: no random vector passes its floor (0.45), so this is the scan of the copy alone.
    let strict = texts
        .iter()
        .map(|t| timed(|| search_at(t, Relevance::Strict)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rows.push((
        "quire: the scan alone (strict: no match)".into(),
        strict,
        "no note to check".into(),
    ));
    // One note changes and is re-indexed between searches: the copy drops and loads only what changed.
    let ids: Vec<String> = ws
        .read(&Actor::User, |r| r.all_notes(quire_core::Page::first(21)))?
        .items
        .into_iter()
        .map(|n| n.id)
        .collect();
    let mut after_change = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        ws.write(&Actor::User, |w| {
            w.update_note(
                id,
                quire_core::NoteUpdate {
                    body: Some(format!("changed body {i}")),
                    ..Default::default()
                },
            )
        })?;
        while ws.index_pending(1_000)? > 0 {}
        after_change.push(timed(|| search(&texts[i % texts.len()]))?);
    }
    rows.push((
        "quire: search after one note changed".into(),
        after_change,
        "refresh: dropped-note log + new rows".into(),
    ));

    let conn = rusqlite::Connection::open(&path)?;
    let plain = queries
        .iter()
        .map(|q| timed(|| plain_scan(&conn, q)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rows.push((
        "plain scan of the f32 BLOBs in the table".into(),
        plain,
        "no copy in memory".into(),
    ));

    let started = Instant::now();
    let (f32_ids, f32_vectors) = load_f32(&conn)?;
    let load = started.elapsed();
    let in_memory = queries
        .iter()
        .map(|q| timed(|| Ok::<_, anyhow::Error>(scan_f32(&f32_ids, &f32_vectors, q))))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rows.push((
        "f32 copy in memory".into(),
        in_memory,
        format!(
            "load {}; copy ~{} MiB",
            ms(load),
            (f32_vectors.len() * 4 + f32_ids.len() * 8) >> 20
        ),
    ));
    drop((f32_ids, f32_vectors));

    let (vec_times, vec_note) = sqlite_vec(&conn, &dir.path().join("vec0.db"), &queries)?;
    rows.push(("sqlite-vec 0.1.6 vec0 float[384], k=100".into(), vec_times, vec_note));

    println!("\n{:<44} {:>10} {:>10}  notes", "store", "p50", "max");
    for (name, times, note) in rows {
        let mut times = times;
        times.sort();
        println!(
            "{name:<44} {:>10} {:>10}  {note}",
            ms(times[times.len() / 2]),
            ms(times[times.len() - 1])
        );
    }
    Ok(())
}

fn timed<T, E: Into<anyhow::Error>>(f: impl FnOnce() -> Result<T, E>) -> anyhow::Result<Duration> {
    let started = Instant::now();
    std::hint::black_box(f().map_err(Into::into)?);
    Ok(started.elapsed())
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn unit(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    v.into_iter().map(|x| x / norm).collect()
}

/// quire's first store: every row's BLOB read and scored in the query, best chunk per note kept.
fn plain_scan(conn: &rusqlite::Connection, query: &[f32]) -> anyhow::Result<usize> {
    let mut stmt = conn.prepare_cached("SELECT id, note_id, vector FROM semantic_chunks WHERE embedder = ?1")?;
    let mut rows = stmt.query(["random-384"])?;
    let mut best: HashMap<String, f32> = HashMap::new();
    while let Some(row) = rows.next()? {
        let bytes = row.get_ref(2)?.as_blob()?;
        let score: f32 = query
            .iter()
            .zip(bytes.chunks_exact(4))
            .map(|(x, b)| x * f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .sum();
        if score >= 0.15 {
            let note = row.get_ref(1)?.as_str()?;
            let entry = best.entry(note.to_owned()).or_insert(score);
            *entry = entry.max(score);
        }
    }
    Ok(best.len())
}

fn load_f32(conn: &rusqlite::Connection) -> anyhow::Result<(Vec<i64>, Vec<f32>)> {
    let mut stmt = conn.prepare("SELECT id, vector FROM semantic_chunks WHERE embedder = ?1 ORDER BY id")?;
    let mut rows = stmt.query(["random-384"])?;
    let (mut ids, mut vectors) = (Vec::new(), Vec::new());
    while let Some(row) = rows.next()? {
        ids.push(row.get(0)?);
        vectors.extend(
            row.get_ref(1)?
                .as_blob()?
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    Ok((ids, vectors))
}

fn scan_f32(ids: &[i64], vectors: &[f32], query: &[f32]) -> usize {
    vectors
        .chunks_exact(query.len())
        .zip(ids)
        .filter(|(v, _)| v.iter().zip(query).map(|(a, b)| a * b).sum::<f32>() >= 0.15)
        .count()
}

/// The same vectors in a sqlite-vec `vec0` table (in a file of its own), queried for the 100 nearest chunks.
fn sqlite_vec(
    conn: &rusqlite::Connection,
    path: &std::path::Path,
    queries: &[Vec<f32>],
) -> anyhow::Result<(Vec<Duration>, String)> {
    register_sqlite_vec();
    let mut vec = rusqlite::Connection::open(path)?;
    vec.execute_batch("CREATE VIRTUAL TABLE chunks USING vec0(embedding float[384] distance_metric=cosine)")?;
    let started = Instant::now();
    let tx = vec.transaction()?;
    {
        let mut insert = tx.prepare("INSERT INTO chunks (rowid, embedding) VALUES (?1, ?2)")?;
        let mut stmt = conn.prepare("SELECT id, vector FROM semantic_chunks WHERE embedder = ?1")?;
        let mut rows = stmt.query(["random-384"])?;
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            insert.execute(rusqlite::params![id, row.get_ref(1)?.as_blob()?])?;
        }
    }
    tx.commit()?;
    let load = started.elapsed();
    let mut knn = vec.prepare("SELECT rowid, distance FROM chunks WHERE embedding MATCH ?1 AND k = 100")?;
    let mut times = Vec::new();
    for query in queries {
        let bytes: Vec<u8> = query.iter().flat_map(|x| x.to_le_bytes()).collect();
        times.push(timed(|| {
            knn.query_map([bytes], |r| r.get::<_, f64>(1))?
                .collect::<rusqlite::Result<Vec<f64>>>()
        })?);
    }
    let size = std::fs::metadata(path)?.len();
    Ok((times, format!("insert {}; own file {} MiB", ms(load), size >> 20)))
}

/// Makes every connection opened afterwards load sqlite-vec (statically linked by the `sqlite-vec` crate).
#[allow(
    unsafe_code,
    reason = "SQLite's C API registers extensions; this is sqlite-vec's documented way"
)]
fn register_sqlite_vec() {
    type Init = unsafe extern "C" fn(
        *mut rusqlite::ffi::sqlite3,
        *mut *mut std::ffi::c_char,
        *const rusqlite::ffi::sqlite3_api_routines,
    ) -> std::ffi::c_int;
    // SAFETY: sqlite3_vec_init has the signature of an extension entry point; sqlite-vec declares it without
    // arguments only because its bindings are minimal. Registering it twice is harmless (SQLite ignores duplicates).
    unsafe {
        let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
        rusqlite::ffi::sqlite3_auto_extension(Some(init));
    }
}

#[cfg(test)]
mod tests {
    use super::EvalSet;

    /// Words that say nothing about a topic; everything else in a paraphrase must be absent from its target.
    const FUNCTION_WORDS: &[&str] = &[
        "a", "an", "the", "of", "to", "in", "on", "for", "at", "by", "and", "or", "with", "my", "me", "i", "is", "it",
        "be", "do", "what", "how", "when", "where", "who", "from", "into", "about", "after", "before", "over", "under",
        "near", "our", "your", "their", "his", "her", "its", "this", "that", "these", "those", "can", "cannot", "not",
        "no", "more", "less", "some", "any", "every", "each", "all", "one", "two", "three", "four", "five", "six",
        "seven", "eight", "nine", "ten", "first", "second", "new", "old", "up", "out", "off", "than", "then", "so",
        "too", "very", "just", "also", "only", "don't",
    ];

    fn words(text: &str) -> Vec<String> {
        text.to_lowercase()
            .split(|c: char| !c.is_alphanumeric() && c != '\'')
            .filter(|w| w.len() > 1 && !FUNCTION_WORDS.contains(w))
            .map(str::to_owned)
            .collect()
    }

    fn stem(word: &str) -> &str {
        ["ing", "es", "s", "ed"]
            .iter()
            .find_map(|suffix| word.strip_suffix(suffix).filter(|s| s.len() >= 3))
            .unwrap_or(word)
    }

    fn related(a: &str, b: &str) -> bool {
        let prefix = |w: &str| w.chars().take(5).collect::<String>();
        stem(a) == stem(b) || (a.chars().count() >= 5 && b.chars().count() >= 5 && prefix(a) == prefix(b))
    }

    #[test]
    fn paraphrases_share_no_word_with_their_targets_and_keywords_do() {
        let set: EvalSet = serde_json::from_str(include_str!("../data/semantic_eval.json")).unwrap();
        assert!(set.notes.len() >= 200, "{} labelled notes", set.notes.len());
        let notes: std::collections::HashMap<&str, String> = set
            .notes
            .iter()
            .map(|n| (n.id.as_str(), format!("{} {}", n.title, n.body)))
            .collect();
        assert_eq!(notes.len(), set.notes.len(), "note ids are unique");
        let mut paraphrases = 0;
        for query in &set.queries {
            for target in &query.relevant {
                let text = notes
                    .get(target.as_str())
                    .unwrap_or_else(|| panic!("unknown note {target}"));
                let target_words = words(text);
                let query_words = words(&query.text);
                match query.kind.as_str() {
                    "paraphrase" => {
                        paraphrases += 1;
                        for q in &query_words {
                            let shared = target_words.iter().find(|t| related(q, t));
                            assert!(shared.is_none(), "{:?} shares {q:?} with {target}", query.text);
                        }
                    }
                    "keyword" => {
                        for q in &query_words {
                            assert!(target_words.iter().any(|t| stem(t) == stem(q)), "{:?}: {q}", query.text);
                        }
                    }
                    other => panic!("unknown kind {other}"),
                }
            }
        }
        assert!(paraphrases >= 100, "{paraphrases} paraphrase queries");
    }
}
