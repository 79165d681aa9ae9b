//! `cargo xtask bench`: benchmarks that print medians, p99s and ratios against a baseline measured in the same run.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quire_core::{Actor, NewNote, NoteUpdate, Page, SearchOptions, Workspace};
use rusqlite::{Connection, params};

use crate::measure::{Options, show, time};
use crate::textgen::{TextGen, fill};

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    if let ["engines", rest @ ..] = args {
        // Its own workspace (tantivy is measured, not shipped), built into quire's target folder.
        let root = crate::project_root();
        let status = crate::cargo()
            .args(["run", "--release", "--quiet", "--manifest-path"])
            .arg(root.join("xtask/engines/Cargo.toml"))
            .arg("--target-dir")
            .arg(root.join("target"))
            .arg("--")
            .args(rest)
            .status()
            .context("cannot start the search engines bench")?;
        if !status.success() {
            bail!("benchmark failed");
        }
        return Ok(());
    }
    if cfg!(debug_assertions) {
        // Numbers from a debug build mean nothing: run this same command from a release build.
        let status = crate::cargo()
            .args([
                "run",
                "--release",
                "--locked",
                "--quiet",
                "--package",
                "quire-devtools",
                "--",
                "bench",
            ])
            .args(args)
            .status()
            .context("cannot start the release build of quire-devtools")?;
        if !status.success() {
            bail!("benchmark failed");
        }
        return Ok(());
    }
    match args {
        ["core", rest @ ..] => core(&Options::parse(rest)?),
        ["tools", rest @ ..] => tools(&Options::parse(rest)?),
        ["vectors", rest @ ..] => {
            let options = Options::parse(rest)?;
            let mut text = TextGen::new(13);
            crate::semantic_bench::vectors(options.notes, options.db.as_deref(), move |n| {
                (0..n)
                    .map(|_| text.note(&[quire_core::ROOT_NOTEBOOK_ID.to_owned()]))
                    .collect()
            })
        }
        ["semantic", rest @ ..] => {
            let options = Options::parse(rest)?;
            let filler = if rest.is_empty() { 300 } else { options.notes };
            let mut text = TextGen::new(11);
            crate::semantic_bench::run(filler, move |n| {
                (0..n)
                    .map(|_| text.note(&[quire_core::ROOT_NOTEBOOK_ID.to_owned()]))
                    .collect()
            })
        }
        ["mcp", rest @ ..] => crate::loop_bench::mcp(&Options::parse(rest)?),
        ["acp", rest @ ..] => crate::acp_bench::run(&Options::with_notes(rest, 0)?),
        ["automations", rest @ ..] => crate::automation_bench::run(&Options::with_notes(rest, 0)?),
        ["ledger", rest @ ..] => crate::ledger_bench::run(&Options::with_notes(rest, 2_000)?),
        ["plugins", rest @ ..] => crate::plugin_bench::run(&Options::parse(rest)?),
        ["query", rest @ ..] => crate::query_bench::run(&Options::parse(rest)?),
        ["agent", rest @ ..] => crate::loop_bench::agent(&Options::parse(rest)?),
        ["web", rest @ ..] => crate::web_bench::run(&Options::parse(rest)?),
        ["phone", rest @ ..] => phone(&Options::with_notes(rest, 2_000)?),
        ["sync", rest @ ..] => crate::sync_bench::run(&Options::with_notes(rest, 10_000)?),
        ["capture", rest @ ..] => crate::capture_bench::run(&Options::with_notes(rest, 10_000)?),
        ["import", "enex", rest @ ..] => crate::import_bench::enex(&Options::with_notes(rest, 5_000)?),
        ["import", "apps", rest @ ..] => crate::apps_bench::run(&Options::with_notes(rest, 10_000)?),
        ["import", rest @ ..] => crate::import_bench::run(&Options::with_notes(rest, 10_000)?),
        ["fallback", rest @ ..] => {
            let notes = if rest.contains(&"--notes") { None } else { Some(50_000) };
            crate::fallback_bench::run(&Options::parse(rest)?, notes)
        }
        _ => {
            bail!(
                "usage: cargo xtask bench prompt|core|tools|engines|mcp|ledger|acp|automations|agent|web|phone|sync|import [enex|apps]|fallback|semantic|vectors|plugins|query [--notes N] [--samples N]"
            )
        }
    }
}

/// The web app on an emulated phone in Chromium (`crates/web/ui/bench/phone.mjs`, which says what it measures),
/// against the release binary.
fn phone(options: &Options) -> anyhow::Result<()> {
    let quire = crate::release_quire()?;
    let ui = crate::project_root().join("crates/web/ui");
    let status = std::process::Command::new("node")
        .arg("bench/phone.mjs")
        .current_dir(&ui)
        .env("QUIRE_BIN", quire)
        .env("QUIRE_BENCH_NOTES", options.notes.to_string())
        // A page load is a sample: seven unless told (the default of 1,000 is for calls in a loop).
        .env("QUIRE_BENCH_SAMPLES", if options.samples == 1_000 { 7 } else { options.samples }.to_string())
        .status()
        .context("cannot start node (the phone bench runs in Chromium through playwright-core: `cargo xtask web` installs it)")?;
    if !status.success() {
        bail!("the phone bench failed");
    }
    Ok(())
}

/// quire-core against the same operations written directly with rusqlite, on one file workspace.
fn core(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = options.db.clone().unwrap_or_else(|| dir.path().join("bench.quire"));
    let reuse = path.exists();
    let ws = Workspace::open(&path)?;
    let count = |ws: &Workspace| -> anyhow::Result<u64> {
        Ok(ws
            .read(&Actor::User, |r| r.all_notes(Page { offset: 0, limit: 1 }))?
            .total)
    };
    // A reused file already holds the notes (and ids) this seed gives: every run on it draws new ones, from the same
    // vocabulary (so the common words of the searches below are the file's).
    let mut text = TextGen::new(42);
    text.reseed(42 + count(&ws)?);

    let started = Instant::now();
    let notebooks = if reuse {
        ws.read(&Actor::User, |r| r.notebook_tree())?
            .iter()
            .filter(|nb| nb.title.starts_with("Notebook "))
            .map(|nb| nb.id.clone())
            .collect()
    } else {
        fill(&ws, &mut text, 20, options.notes)?
    };
    anyhow::ensure!(
        !notebooks.is_empty(),
        "{} was not made by this bench (no \"Notebook N\" notebooks)",
        path.display()
    );
    let load = started.elapsed();
    let notes = count(&ws)?;
    let size = std::fs::metadata(&path)?.len();
    if reuse {
        println!("quire-core bench: {notes} notes in {} (reused)", path.display());
    } else {
        println!(
            "quire-core bench: {notes} notes generated in {load:.1?} ({:.0} notes/s)",
            notes as f64 / load.as_secs_f64(),
        );
    }
    println!(
        "file {} MiB, {} samples per row (fewer for the slow rows)",
        size / (1024 * 1024),
        options.samples
    );

    let raw = Connection::open(&path)?;
    raw.pragma_update(None, "journal_mode", "WAL")?;
    raw.pragma_update(None, "synchronous", "NORMAL")?;
    raw.busy_timeout(Duration::from_secs(30))?;
    let ids: Vec<String> = {
        let mut stmt = raw.prepare("SELECT id FROM notes")?;
        stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };

    let mut rows = Vec::new();

    // Insert: one note per write transaction.
    let mut quire = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..options.samples {
        let note = text.note(&notebooks);
        let copy = note.clone();
        quire.push(time(|| ws.write(&Actor::User, |w| w.create_note(note)).map(drop))?);
        direct.push(time(|| raw_insert(&raw, &copy, &mut text))?);
    }
    rows.push(("insert note (one transaction each)".to_owned(), quire, direct));

    // Read by id.
    let mut quire = Vec::new();
    let mut direct = Vec::new();
    for i in 0..options.samples {
        let id = &ids[text.below(ids.len())];
        let other = &ids[(i * 7919) % ids.len()];
        quire.push(time(|| ws.read(&Actor::User, |r| r.note(id)).map(drop))?);
        direct.push(time(|| raw_read(&raw, other))?);
    }
    rows.push(("read note by id".to_owned(), quire, direct));

    // A page of 100 from a large notebook (a twentieth of the notes), by title: the first, and one in the middle.
    let notebook = &notebooks[0];
    let in_notebook: i64 = raw.query_row(
        "SELECT count(*) FROM notes WHERE notebook_id = ?1 AND deleted IS NULL",
        [notebook],
        |r| r.get(0),
    )?;
    for (label, offset) in [
        ("list_notes, first 100", 0),
        ("list_notes, 100 in the middle", in_notebook as u64 / 2),
    ] {
        let page = Page { offset, limit: 100 };
        let mut quire = Vec::new();
        let mut direct = Vec::new();
        for _ in 0..options.samples.min(200) {
            quire.push(time(|| {
                ws.read(&Actor::User, |r| r.notes_in_notebook(notebook, page)).map(drop)
            })?);
            direct.push(time(|| raw_list(&raw, notebook, offset))?);
        }
        rows.push((format!("{label} of {in_notebook}"), quire, direct));
    }

    // Search: a mix of mid-frequency words, pairs, prefixes and phrases; then words that most notes contain. The
    // word index beside the file is built first (a search would otherwise build it), and its cost reported.
    let started = Instant::now();
    let indexed = ws.rebuild_search_index()?;
    let mut index_dir = path.as_os_str().to_owned();
    index_dir.push(".search");
    let index_bytes: u64 = std::fs::read_dir(&index_dir)?
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!(
        "word index: {indexed} notes built in {:.1?}, {} MiB beside the file",
        started.elapsed(),
        index_bytes / (1024 * 1024)
    );
    let notes = count(&ws)?;
    for (label, rank, samples) in [
        ("search (typical: mixed queries)", None, options.samples),
        ("search (the most common word)", Some(0), options.samples.min(50)),
        ("search (the 10th most common word)", Some(9), options.samples.min(50)),
    ] {
        let mut quire = Vec::new();
        let mut direct = Vec::new();
        let mut matched = 0;
        for _ in 0..samples {
            let terms = match rank {
                Some(rank) => vec![text.word_at(rank)],
                None => text.query_terms(),
            };
            let (query, fts) = query_pair(&terms, if rank.is_some() { 0 } else { text.below(4) });
            quire.push(time(|| {
                ws.read(&Actor::User, |r| r.search(&query, SearchOptions::default()))
                    .map(|page| matched = page.total)
            })?);
            direct.push(time(|| raw_search(&raw, &fts))?);
        }
        let label = match rank {
            Some(_) => format!("{label}, in {:.0}% of notes", matched as f64 * 100.0 / notes as f64),
            None => label.to_owned(),
        };
        rows.push((label, quire, direct));
    }

    // A search right after a write: the index takes the change in (and commits) first. Against the same search
    // without a write before it.
    let mut quire = Vec::new();
    let mut direct = Vec::new();
    for i in 0..options.samples.min(50) {
        let id = &ids[text.below(ids.len())];
        let body = text.words(40);
        ws.write(&Actor::User, |w| {
            w.update_note(
                id,
                NoteUpdate {
                    body: Some(body),
                    ..Default::default()
                },
            )
            .map(drop)
        })?;
        let (query, _) = query_pair(&text.query_terms(), i % 4);
        quire.push(time(|| {
            ws.read(&Actor::User, |r| r.search(&query, SearchOptions::default()))
                .map(drop)
        })?);
        direct.push(time(|| {
            ws.read(&Actor::User, |r| r.search(&query, SearchOptions::default()))
                .map(drop)
        })?);
    }
    rows.push((
        "search right after a write (against: the same search again)".to_owned(),
        quire,
        direct,
    ));

    rows.extend(crate::seal_bench::run(options.samples)?);
    print_rows(rows);
    println!("\npeak memory (VmHWM) {}", peak_memory());
    Ok(())
}

/// This process's peak resident memory, from `/proc/self/status` (Linux).
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l[6..].trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn raw_list(conn: &Connection, notebook: &str, offset: u64) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, title, updated FROM notes WHERE notebook_id = ?1 AND deleted IS NULL \
         ORDER BY title COLLATE NOCASE, id LIMIT 100 OFFSET ?2",
    )?;
    let rows: Vec<(String, String, i64)> = stmt
        .query_map(params![notebook, offset as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let total: i64 = conn
        .prepare_cached("SELECT count(*) FROM notes WHERE notebook_id = ?1 AND deleted IS NULL")?
        .query_row([notebook], |r| r.get(0))?;
    std::hint::black_box((rows, total));
    Ok(())
}

/// Tool dispatch (parse arguments, transaction, handler, serialise the output) against the same read written
/// directly with rusqlite and serde_json, on one file workspace.
fn tools(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.quire");
    let ws = Workspace::open(&path)?;
    let mut text = TextGen::new(7);
    let notes = options.notes.min(20_000);
    fill(&ws, &mut text, 10, notes)?;
    let raw = Connection::open(&path)?;
    let ids: Vec<String> = {
        let mut stmt = raw.prepare("SELECT id FROM notes")?;
        stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    let registry = quire_tools::ToolRegistry::builtin();
    let actor = quire_tools::ToolActor::mcp("bench");
    let mut rows = Vec::new();

    let (mut quire, mut direct) = (Vec::new(), Vec::new());
    for i in 0..options.samples {
        let id = &ids[(i * 7_919) % ids.len()];
        quire.push(time(|| {
            let out = registry.call(&ws, &actor, "read_note", serde_json::json!({ "note_id": id }))?;
            anyhow::ensure!(!out.is_error, "read_note failed: {}", out.value);
            std::hint::black_box(serde_json::to_string(&out.value)?);
            Ok(())
        })?);
        direct.push(time(|| raw_read_json(&raw, id))?);
    }
    rows.push(("read_note via the registry", quire, direct));

    let (mut quire, mut direct) = (Vec::new(), Vec::new());
    for _ in 0..options.samples {
        let terms = text.query_terms();
        let (query, fts) = query_pair(&terms, 0);
        quire.push(time(|| {
            let out = registry.call(&ws, &actor, "search_notes", serde_json::json!({ "query": query }))?;
            anyhow::ensure!(!out.is_error, "search_notes failed: {}", out.value);
            std::hint::black_box(serde_json::to_string(&out.value)?);
            Ok(())
        })?);
        direct.push(time(|| raw_search(&raw, &fts))?);
    }
    rows.push(("search_notes via the registry", quire, direct));
    println!("quire-tools bench: {notes} notes, {} samples per row", options.samples);
    print_rows(rows);
    Ok(())
}

/// A note read and turned into JSON by hand: the floor the registry's `read_note` is measured against.
fn raw_read_json(conn: &Connection, id: &str) -> anyhow::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT n.id, n.notebook_id, n.title, n.body, n.is_todo, n.created, n.updated, \
         (SELECT group_concat(t.name, char(31)) FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
         WHERE nt.note_id = n.id) FROM notes n WHERE n.id = ?1",
    )?;
    let value = stmt.query_row([id], |r| {
        Ok(serde_json::json!({
            "note_id": r.get::<_, String>(0)?, "notebook_id": r.get::<_, String>(1)?, "title": r.get::<_, String>(2)?,
            "body": r.get::<_, String>(3)?, "is_todo": r.get::<_, bool>(4)?, "created": r.get::<_, i64>(5)?,
            "updated": r.get::<_, i64>(6)?, "tags": r.get::<_, Option<String>>(7)?,
        }))
    })?;
    std::hint::black_box(serde_json::to_string(&value)?);
    Ok(())
}

fn print_rows<L: std::fmt::Display>(rows: Vec<(L, Vec<Duration>, Vec<Duration>)>) {
    println!(
        "\n{:<52} {:>12} {:>12} {:>12} {:>12} {:>8}",
        "operation", "quire p50", "quire p95", "rusqlite p50", "rusqlite p95", "ratio"
    );
    let p95 = |mut samples: Vec<Duration>| {
        samples.sort();
        (
            samples[(samples.len() - 1) / 2],
            samples[((samples.len() - 1) as f64 * 0.95).round() as usize],
        )
    };
    for (label, quire, direct) in rows {
        let (qm, q95) = p95(quire);
        let (dm, d95) = p95(direct);
        println!(
            "{label:<52} {:>12} {:>12} {:>12} {:>12} {:>7.2}x",
            show(qm),
            show(q95),
            show(dm),
            show(d95),
            qm.as_secs_f64() / dm.as_secs_f64().max(1e-12)
        );
    }
}

/// The query in quire's language and the same query as the escaped FTS5 expression quire builds.
fn query_pair(terms: &[String], shape: usize) -> (String, String) {
    match (shape, terms) {
        (1, [first, ..]) => (
            format!("{}*", &first[..first.len().min(4)]),
            format!("\"{}\"*", &first[..first.len().min(4)]),
        ),
        (2, [a, b, ..]) => (format!("\"{a} {b}\""), format!("\"{a} {b}\"")),
        _ => (
            terms.join(" "),
            terms
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(" AND "),
        ),
    }
}

fn raw_insert(conn: &Connection, note: &NewNote, text: &mut TextGen) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    let id = format!("{:032x}", text.next() as u128 * 0x1_0000_0001);
    let now = quire_core::Timestamp::now().as_millis();
    tx.prepare_cached(
        "INSERT INTO notes (id, notebook_id, title, body, is_todo, todo_completed, is_protected, created, updated, deleted) \
         VALUES (?1, ?2, ?3, ?4, 0, NULL, 0, ?5, ?5, NULL)",
    )?
    .execute(params![id, note.notebook_id.as_deref().unwrap_or("_root"), note.title, note.body, now])?;
    let seq = tx.last_insert_rowid();
    tx.prepare_cached("INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, ?3, ?4, '')")?
        .execute(params![seq, note.title, note.body, note.tags.join(" ")])?;
    tx.commit()
}

fn raw_read(conn: &Connection, id: &str) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT n.id, n.notebook_id, n.title, n.body, n.is_todo, n.todo_completed, n.is_protected, n.created, n.updated, \
         n.deleted, (SELECT group_concat(t.name, char(31)) FROM note_tags nt JOIN tags t ON t.id = nt.tag_id \
         WHERE nt.note_id = n.id) FROM notes n WHERE n.id = ?1",
    )?;
    let row: (String, String, String, String) =
        stmt.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    std::hint::black_box(row);
    Ok(())
}

fn raw_search(conn: &Connection, fts: &str) -> rusqlite::Result<()> {
    let total: i64 = conn
        .prepare_cached("SELECT count(*) FROM notes_fts JOIN notes n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH ?1 AND n.deleted IS NULL")?
        .query_row([fts], |r| r.get(0))?;
    let mut stmt = conn.prepare_cached(
        "SELECT n.id, n.title, snippet(notes_fts, -1, '<mark>', '</mark>', '…', 16), bm25(notes_fts, 10.0, 1.0, 4.0, 0.5) \
         FROM notes_fts JOIN notes n ON n.seq = notes_fts.rowid WHERE notes_fts MATCH ?1 AND n.deleted IS NULL \
         ORDER BY bm25(notes_fts, 10.0, 1.0, 4.0, 0.5) LIMIT 20",
    )?;
    let hits: Vec<(String, String, String, f64)> = stmt
        .query_map([fts], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    std::hint::black_box((total, hits));
    Ok(())
}
