//! quire's full-text search (SQLite FTS5, bm25 over every match plus the count) against a tantivy index of the same
//! notes, on a workspace file made by `cargo xtask bench core --db PATH`. The tantivy side is timed the way quire would
//! have to run it: the top page and the count from tantivy, then the page's notes read from SQLite (the source of
//! truth: trash and protection checked there) and their snippets from FTS5 for just those rows.
//!
//! The queries come from the file itself: terms by how many notes contain them (the most common, the 10th, and
//! ranks 50 to 2,000 for typical searches), so any workspace can be measured.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quire_core::{Actor, SearchOptions, Workspace};
use rusqlite::{Connection, OpenFlags};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, PhraseQuery, Query, RegexQuery, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::tokenizer::{AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};
use tantivy::{Index, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// FTS5's column weights in quire (title, body, tags, attachment text), given to tantivy as field boosts.
const WEIGHTS: [f32; 4] = [10.0, 1.0, 4.0, 0.5];

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut db = None;
    let mut samples = 200;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().context("a value must follow each flag")?;
        match flag.as_str() {
            "--db" => db = Some(PathBuf::from(value)),
            "--samples" => samples = value.parse()?,
            other => bail!("unknown flag {other}"),
        }
    }
    let db = db.context("usage: quire-engines-bench --db WORKSPACE_FILE [--samples N]")?;
    anyhow::ensure!(
        db.exists(),
        "{} does not exist: make it with `cargo xtask bench core --db PATH`",
        db.display()
    );

    let sqlite = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let ws = Workspace::open(&db)?;

    // The index: what FTS5 indexed, row by row.
    let dir = tempfile::tempdir()?;
    let engine = Engine::build(&sqlite, dir.path())?;
    println!(
        "tantivy index of {} notes built in {:.1?} (1 thread), {} MiB on disk; the SQLite file is {} MiB",
        engine.docs,
        engine.built,
        dir_size(dir.path())? / (1024 * 1024),
        std::fs::metadata(&db)?.len() / (1024 * 1024),
    );

    let terms: Vec<(String, i64)> = {
        sqlite.execute_batch("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, notes_fts, row)")?;
        let mut stmt = sqlite.prepare("SELECT term, doc FROM temp.vocab ORDER BY doc DESC LIMIT 2000")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    anyhow::ensure!(terms.len() >= 2_000, "the workspace has too few distinct words");
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut below = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };

    println!(
        "\n{:<44} {:>11} {:>11} {:>11} {:>11} {:>7} {:>9} {:>11} {:>11}",
        "query", "FTS5 p50", "FTS5 p95", "tantivy p50", "tantivy p95", "ratio", "top-20 ∩", "index p50", "index p95"
    );
    for (label, rank) in [
        ("typical (words, prefix, phrase)", None),
        ("the most common word", Some(0)),
        ("the 10th most common word", Some(9)),
        ("two common words", Some(1)),
    ] {
        let n = if rank.is_some() { samples.min(30) } else { samples };
        let (mut fts, mut tan, mut inner, mut overlap, mut matched) = (Vec::new(), Vec::new(), Vec::new(), 0.0, 0);
        for _ in 0..n {
            let words: Vec<&str> = match rank {
                Some(1) => vec![&terms[1].0, &terms[2].0],
                Some(r) => vec![&terms[r].0],
                None => (0..1 + below(2)).map(|_| terms[50 + below(1_950)].0.as_str()).collect(),
            };
            let shape = match words.len() {
                1 if rank.is_none() && below(2) == 0 => Shape::Prefix,
                2 if rank.is_none() && below(2) == 0 => Shape::Phrase,
                _ => Shape::Words,
            };
            let quire_query = shape.quire(&words);
            let start = Instant::now();
            let page = ws.read(&Actor::User, |r| r.search(&quire_query, SearchOptions::default()))?;
            fts.push(start.elapsed());
            let start = Instant::now();
            let (total, hits, engine_time) = engine.search(&sqlite, &shape, &words)?;
            tan.push(start.elapsed());
            inner.push(engine_time);
            matched = page.total;
            let ids: std::collections::HashSet<&str> = page.items.iter().map(|h| h.note.id.as_str()).collect();
            let common = hits.iter().filter(|h| ids.contains(h.0.as_str())).count();
            overlap += common as f64 / page.items.len().max(1) as f64;
            anyhow::ensure!(
                total.abs_diff(page.total) <= page.total / 100 + 1,
                "counts differ for {quire_query}: tantivy {total}, FTS5 {}",
                page.total
            );
        }
        let label = match rank {
            Some(_) => format!("{label} ({matched} notes)"),
            None => label.to_owned(),
        };
        let (f50, f95) = p50_p95(fts);
        let (t50, t95) = p50_p95(tan);
        let (i50, i95) = p50_p95(inner);
        println!(
            "{label:<44} {:>11} {:>11} {:>11} {:>11} {:>6.1}x {:>8.0}% {:>11} {:>11}",
            show(f50),
            show(f95),
            show(t50),
            show(t95),
            f50.as_secs_f64() / t50.as_secs_f64(),
            overlap * 100.0 / n as f64,
            show(i50),
            show(i95)
        );
    }
    println!(
        "\n(tantivy: its top 20 and count, then the notes and snippets from SQLite; index: the tantivy part alone; \
         ratio: FTS5 p50 over tantivy p50; top-20 ∩: how much of FTS5's first page tantivy's also holds)"
    );
    Ok(())
}

enum Shape {
    Words,
    Prefix,
    Phrase,
}

impl Shape {
    /// The query in quire's language.
    fn quire(&self, words: &[&str]) -> String {
        match self {
            Shape::Words => words.join(" "),
            Shape::Prefix => format!("{}*", prefix(words[0])),
            Shape::Phrase => format!("\"{}\"", words.join(" ")),
        }
    }
}

fn prefix(word: &str) -> &str {
    let end = word.char_indices().nth(4).map_or(word.len(), |(i, _)| i);
    &word[..end]
}

struct Engine {
    index: tantivy::IndexReader,
    fields: [Field; 4],
    seq: Field,
    docs: u64,
    built: Duration,
}

impl Engine {
    fn build(sqlite: &Connection, dir: &std::path::Path) -> anyhow::Result<Engine> {
        let mut schema = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("quire")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let fields = ["title", "body", "tags", "attachments"].map(|name| schema.add_text_field(name, text.clone()));
        let seq = schema.add_u64_field("seq", FAST | STORED);
        let index = Index::create_in_dir(dir, schema.build())?;
        // Close to FTS5's `unicode61 remove_diacritics 2`: split on what is not a letter or digit, fold case and
        // accents.
        index.tokenizers().register(
            "quire",
            TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(100))
                .filter(LowerCaser)
                .filter(AsciiFoldingFilter)
                .build(),
        );
        let started = Instant::now();
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 256 * 1024 * 1024)?;
        let mut stmt = sqlite.prepare(
            "SELECT f.rowid, f.title, f.body, f.tags, f.attachments FROM notes_fts f \
             JOIN notes n ON n.seq = f.rowid WHERE n.deleted IS NULL",
        )?;
        let mut rows = stmt.query([])?;
        let mut docs = 0;
        while let Some(row) = rows.next()? {
            let mut doc = TantivyDocument::default();
            doc.add_u64(seq, row.get::<_, i64>(0)? as u64);
            for (i, field) in fields.iter().enumerate() {
                if let Some(text) = row.get::<_, Option<String>>(i + 1)? {
                    doc.add_text(*field, text);
                }
            }
            writer.add_document(doc)?;
            docs += 1;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        let built = started.elapsed();
        let index = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(Engine {
            index,
            fields,
            seq,
            docs,
            built,
        })
    }

    /// One word (or a phrase, or a prefix) in any field, each field weighted as FTS5 weighs its column.
    fn any_field(&self, make: impl Fn(Field) -> anyhow::Result<Box<dyn Query>>) -> anyhow::Result<Box<dyn Query>> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (field, weight) in self.fields.iter().zip(WEIGHTS) {
            clauses.push((Occur::Should, Box::new(BoostQuery::new(make(*field)?, weight))));
        }
        Ok(Box::new(BooleanQuery::new(clauses)))
    }

    fn query(&self, shape: &Shape, words: &[&str]) -> anyhow::Result<Box<dyn Query>> {
        let term = |field: Field, word: &str| Term::from_field_text(field, word);
        Ok(match shape {
            Shape::Words => {
                let mut all: Vec<(Occur, Box<dyn Query>)> = Vec::new();
                for word in words {
                    all.push((
                        Occur::Must,
                        self.any_field(|f| Ok(Box::new(TermQuery::new(term(f, word), IndexRecordOption::WithFreqs))))?,
                    ));
                }
                if all.len() == 1 {
                    all.remove(0).1
                } else {
                    Box::new(BooleanQuery::new(all))
                }
            }
            Shape::Prefix => self.any_field(|f| {
                Ok(Box::new(RegexQuery::from_pattern(
                    &format!("{}.*", prefix(words[0])),
                    f,
                )?))
            })?,
            Shape::Phrase => {
                self.any_field(|f| Ok(Box::new(PhraseQuery::new(words.iter().map(|w| term(f, w)).collect()))))?
            }
        })
    }

    /// The first page of 20 and the count from tantivy; the notes and snippets from SQLite.
    fn search(
        &self,
        sqlite: &Connection,
        shape: &Shape,
        words: &[&str],
    ) -> anyhow::Result<(u64, Vec<(String, String, String)>, Duration)> {
        let started = Instant::now();
        let searcher = self.index.searcher();
        let query = self.query(shape, words)?;
        // The top 20 alone (a collector that also counts would make tantivy score every match), then the count.
        let top = searcher.search(&query, &TopDocs::with_limit(20).order_by_score())?;
        let total = query.count(&searcher)? as u64;
        let mut seqs = Vec::with_capacity(top.len());
        for (_, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            seqs.push(doc.get_first(self.seq).and_then(|v| v.as_u64()).context("seq")? as i64);
        }
        let engine_time = started.elapsed();
        let list = seqs.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        // The source of truth decides: trashed notes are dropped here (a real implementation would ask for more).
        let mut notes = sqlite.prepare_cached(&format!(
            "SELECT n.seq, n.id, n.title FROM notes n WHERE n.seq IN ({list}) AND n.deleted IS NULL"
        ))?;
        let found: Vec<(i64, String, String)> = notes
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let fts = fts_expression(shape, words);
        let mut snippets = sqlite.prepare_cached(
            "SELECT snippet(notes_fts, -1, '<mark>', '</mark>', '…', 16) FROM notes_fts WHERE notes_fts MATCH ?1 AND rowid = ?2",
        )?;
        let mut hits = Vec::with_capacity(found.len());
        for (seq, id, title) in found {
            let snippet: String = snippets
                .query_row(rusqlite::params![fts, seq], |r| r.get(0))
                .unwrap_or_default();
            hits.push((id, title, snippet));
        }
        Ok((total, hits, engine_time))
    }
}

fn fts_expression(shape: &Shape, words: &[&str]) -> String {
    match shape {
        Shape::Words => words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" AND "),
        Shape::Prefix => format!("\"{}\"*", prefix(words[0])),
        Shape::Phrase => format!("\"{}\"", words.join(" ")),
    }
}

fn dir_size(dir: &std::path::Path) -> anyhow::Result<u64> {
    let mut size = 0;
    for entry in std::fs::read_dir(dir)? {
        size += entry?.metadata()?.len();
    }
    Ok(size)
}

fn p50_p95(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

fn show(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.0} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}
