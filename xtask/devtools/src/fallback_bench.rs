//! `cargo xtask bench fallback`: a word in every note, searched before the word index exists (FTS5 answers), on
//! long notes that repeat it: the ranked page against the ranking alone and against the one-statement query.

use std::time::Duration;

use quire_core::{Actor, Error, NewNote, SearchOptions, Workspace};
use rusqlite::Connection;

use crate::measure::{Options, show, stats, time};

/// The text of every note: one word 400 times, as in the probe that found searches of a minute.
fn body() -> String {
    "bomb word ".repeat(400)
}

/// `default_notes` stands when `--notes` was not given.
pub(crate) fn run(options: &Options, default_notes: Option<usize>) -> anyhow::Result<()> {
    let notes = default_notes.unwrap_or(options.notes);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("fallback.quire");
    let ws = Workspace::open(&path)?;
    // As a CLI command does: no background build of the word index, so FTS5 answers every search.
    ws.set_search_index_builds_in_background(false);
    ws.set_search_index_background_above(0);
    let text = body();
    for start in (0..notes).step_by(1_000) {
        ws.write(&Actor::User, |w| {
            for i in start..(start + 1_000).min(notes) {
                w.create_note(NewNote::new(format!("Note {i}"), text.clone()))?;
            }
            Ok::<_, Error>(())
        })?;
    }
    eprintln!("{notes} notes of {} bytes each", text.len());
    let samples = options.samples.clamp(3, 20);
    let mut quire = Vec::new();
    let mut floor = Vec::new();
    let raw = Connection::open(&path)?;
    for _ in 0..samples {
        quire.push(time(|| {
            let page = ws.read(&Actor::User, |r| r.search("bomb", SearchOptions::default()))?;
            anyhow::ensure!(
                page.total == notes as u64 && !page.items.is_empty(),
                "every note is found"
            );
            anyhow::ensure!(ws.search_index_answers() == 0, "FTS5 answered");
            Ok(())
        })?);
        floor.push(time(|| rank_only(&raw))?);
    }
    // The shape searches had before: one statement, every match's snippet and tags computed before the sort. Slow
    // (tens of seconds at 50,000 notes), so measured once.
    let before = time(|| one_statement(&raw))?;
    let (quire, quire_p99) = stats(quire);
    let (floor, _) = stats(floor);
    println!("a word in all {notes} notes, before the word index exists ({samples} samples):");
    println!(
        "  quire search, first page       p50 {:>10}  p99 {:>10}",
        show(quire),
        show(quire_p99)
    );
    println!(
        "  ranking alone (rusqlite)       p50 {:>10}  quire / ranking {:.2}x",
        show(floor),
        ratio(quire, floor)
    );
    println!(
        "  one statement, as before       1 run {:>9}  before / quire {:.1}x",
        show(before),
        ratio(before, quire)
    );
    Ok(())
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

const BM25: &str = "bm25(notes_fts, 10.0, 1.0, 4.0, 0.5)";

fn rank_only(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT n.seq FROM notes_fts JOIN notes n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH '\"bomb\"' \
         AND n.deleted IS NULL ORDER BY {BM25}, n.updated DESC LIMIT 50"
    ))?;
    let seqs: Vec<i64> = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
    std::hint::black_box(seqs);
    Ok(())
}

fn one_statement(conn: &Connection) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT n.id, n.title, (SELECT group_concat(t.name) FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
         WHERE nt.note_id = n.id), snippet(notes_fts, -1, '<mark>', '</mark>', '…', 16), -{BM25} \
         FROM notes_fts JOIN notes n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH '\"bomb\"' \
         AND n.deleted IS NULL ORDER BY {BM25}, n.updated DESC LIMIT 50"
    ))?;
    let rows: Vec<String> = stmt.query_map([], |r| r.get(1))?.collect::<rusqlite::Result<_>>()?;
    std::hint::black_box(rows);
    Ok(())
}
