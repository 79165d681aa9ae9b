//! `cargo xtask bench semantic`: recall@5 and MRR of full-text search, each embedder and hybrid fusion on a
//! labelled set (xtask/data/semantic_eval.json plus generated filler notes), with query latency and indexing speed.

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

const STOPWORDS: &[&str] = &[
    "the", "for", "how", "and", "with", "from", "into", "about", "before", "another",
];

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
    rows.push(("hashed n-grams (fallback)".into(), scores));

    let model_dir = std::env::var_os("QUIRE_TEST_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::project_root().join("target/models/all-MiniLM-L6-v2"));
    match quire_agent::LocalEmbedder::load(&model_dir) {
        Ok(model) => {
            let local = ws.clone().with_embedder(Arc::new(model));
            let speed = index_speed(&local, total_notes)?;
            let mut scores = evaluate(&set, &labels, |q| semantic(&local, q, false))?;
            scores.indexing = Some(speed);
            rows.push((format!("{} (local model)", local.embedder().id()), scores));
            rows.push((
                "hybrid: local model + full-text".into(),
                evaluate(&set, &labels, |q| semantic(&local, q, true))?,
            ));
        }
        Err(e) => println!("(no local model: {e}; run `cargo xtask model`)"),
    }

    println!(
        "\n{:<36} {:>14} {:>12} {:>14} {:>12} {:>12} {:>14}",
        "method", "paraphr. R@5", "paraphr. MRR", "keyword R@5", "keyword MRR", "query p50", "index notes/s"
    );
    for (name, s) in rows {
        println!(
            "{name:<36} {:>14.3} {:>12.3} {:>14.3} {:>12.3} {:>12} {:>14}",
            s.paraphrase.0,
            s.paraphrase.1,
            s.keyword.0,
            s.keyword.1,
            format!("{:.2} ms", s.latency.as_secs_f64() * 1e3),
            s.indexing.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into())
        );
    }
    Ok(())
}

struct Scores {
    paraphrase: (f64, f64),
    keyword: (f64, f64),
    latency: Duration,
    indexing: Option<f64>,
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
        let ranked: Vec<&str> = ids.iter().filter_map(|id| labels.get(id).map(String::as_str)).collect();
        let position = ids
            .iter()
            .position(|id| labels.get(id).is_some_and(|l| query.relevant.contains(l)));
        let recall = if position.is_some_and(|p| p < 5) { 1.0 } else { 0.0 };
        let reciprocal = position.filter(|p| *p < 10).map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
        let _ = ranked;
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
    })
}

fn fts(ws: &Workspace, text: &str) -> anyhow::Result<Vec<String>> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| w.len() > 2 && !STOPWORDS.contains(&w.as_str()))
        .collect();
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
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
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

/// The vector store at scale: `n` notes (about one chunk each) with random 384-dimension vectors, then the
/// median and p99 of a semantic search, which scans every vector of the embedder.
pub(crate) fn vectors(n: usize, mut notes_for: impl FnMut(usize) -> Vec<NewNote>) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("vectors.quire"))?.with_embedder(Arc::new(RandomEmbedder));
    for start in (0..n).step_by(5_000) {
        let notes = notes_for(5_000.min(n - start));
        ws.write(&Actor::User, |w| {
            for note in notes {
                w.create_note(note)?;
            }
            Ok::<_, Error>(())
        })?;
    }
    let started = Instant::now();
    while ws.index_pending(1_000)? > 0 {}
    let indexing = started.elapsed();
    let status = ws.index_status()?;
    let mut times = Vec::new();
    for i in 0..21 {
        let query = SemanticQuery {
            target: SemanticTarget::Text(format!("query number {i}")),
            notebook_id: None,
            tag: None,
            relevance: Relevance::Loose,
            hybrid: false,
            limit: 10,
        };
        let started = Instant::now();
        ws.read(&Actor::User, |r| r.semantic_search(&query))?;
        times.push(started.elapsed());
    }
    times.sort();
    let size = std::fs::metadata(dir.path().join("vectors.quire"))?.len();
    println!(
        "vector store: {} chunks of 384 f32 for {} notes; indexed in {:.1?} ({:.0} notes/s, random vectors); \
         search p50 {:.1} ms, max {:.1} ms; file {} MiB",
        status.chunks,
        status.indexed_notes,
        indexing,
        n as f64 / indexing.as_secs_f64(),
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
        size / (1024 * 1024)
    );
    Ok(())
}
