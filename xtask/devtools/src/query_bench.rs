//! `cargo xtask bench query` (issue 47): queries in Dataview's language on a workspace of 100,000 notes with
//! 300,000 tasks and typed labels, each against the same selection written directly in SQL on the same file (the
//! floor no engine goes under), and what keeping tasks and fields current adds to a note save.

use std::time::{Duration, Instant};

use quire_core::query::QueryOptions;
use quire_core::{Actor, AttributeKind, NewNote, NewNotebook, NoteUpdate, Workspace};
use rusqlite::{Connection, params};

use crate::measure::{Options, show, time};
use crate::textgen::TextGen;

/// The same selection written in SQL: its row count.
type Floor<'a> = Box<dyn Fn() -> anyhow::Result<usize> + 'a>;

/// The ceiling for a query's p95.
const P95_TARGET: Duration = Duration::from_millis(30);

/// The body of note `i`: a paragraph, an inline field, and three tasks (95% done, due in the past three years; the
/// open ones due from two weeks ago to a year ahead, a third undated).
fn body(i: usize, text: &mut TextGen, today: jiff::civil::Date) -> String {
    let mut body = text.words(60);
    body.push_str(&format!(
        "\n\nstatus:: {}\n",
        ["open", "waiting", "done", "someday"][i % 4]
    ));
    for k in 0..3 {
        let n = i * 3 + k;
        let done = !n.is_multiple_of(20);
        let due = if done {
            Some(today - jiff::Span::new().days(((n * 7919) % 1_100) as i64))
        } else if n.is_multiple_of(3) {
            None
        } else {
            Some(today + jiff::Span::new().days(((n * 13) % 380) as i64 - 14))
        };
        let mut line = format!("- [{}] {}", if done { "x" } else { " " }, text.words(6));
        if let Some(due) = due {
            line.push_str(&format!(" 📅 {due}"));
        }
        if done {
            line.push_str(" ✅ 2026-01-01");
        }
        body.push_str(&line);
        body.push('\n');
    }
    body
}

fn fill(ws: &Workspace, notes: usize, today: jiff::civil::Date) -> anyhow::Result<Vec<String>> {
    let mut text = TextGen::new(47);
    let notebooks = ws.write(&Actor::User, |w| {
        (0..20)
            .map(|i| {
                w.create_notebook(NewNotebook {
                    title: format!("Area {i}"),
                    ..Default::default()
                })
                .map(|n| n.id)
            })
            .collect::<Result<Vec<_>, _>>()
    })?;
    let mut ids = Vec::with_capacity(notes);
    for chunk in (0..notes).collect::<Vec<_>>().chunks(5_000) {
        let made = ws.write(&Actor::User, |w| {
            w.defer_search_index();
            let mut made = Vec::with_capacity(chunk.len());
            for &i in chunk {
                let id = w
                    .create_note(NewNote {
                        title: format!("Note {i}"),
                        body: body(i, &mut text, today),
                        notebook_id: Some(notebooks[i % notebooks.len()].clone()),
                        ..Default::default()
                    })?
                    .summary
                    .id;
                // One note in twenty is a book, with typed labels as front matter gives them.
                if i % 20 == 0 {
                    w.set_attribute(&id, AttributeKind::Label, "type", "book")?;
                    w.set_json_label(&id, "rating", &((i / 20) % 5 + 1).to_string())?;
                    w.set_attribute(&id, AttributeKind::Label, "author", &format!("Author {}", i % 300))?;
                }
                made.push(id);
            }
            Ok::<_, quire_core::Error>(made)
        })?;
        ids.extend(made);
    }
    Ok(ids)
}

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("query.quire");
    let ws = Workspace::open(&path)?;
    let today = jiff::Zoned::now().date();
    let started = Instant::now();
    let ids = fill(&ws, options.notes, today)?;
    let tasks: i64 = Connection::open(&path)?.query_row("SELECT count(*) FROM note_tasks", [], |r| r.get(0))?;
    println!(
        "{} notes, {tasks} tasks, {} books with typed labels, made in {:.1?}",
        ids.len(),
        ids.len().div_ceil(20),
        started.elapsed()
    );
    let raw = Connection::open(&path)?;
    let week = (today + jiff::Span::new().days(7)).to_string();
    let samples = options.samples.min(200);
    let queries: [(&str, &str, Floor<'_>); 3] = [
        (
            "TABLE over labels",
            "TABLE author, rating WHERE type = \"book\" AND rating = 5",
            Box::new(|| {
                let mut stmt = raw.prepare_cached(
                    "SELECT n.id, n.title, a.value, r.value FROM notes n \
                     JOIN attributes t ON t.note_id = n.id AND t.kind = 'label' AND t.name = 'type' AND t.value = 'book' \
                     JOIN attributes r ON r.note_id = n.id AND r.kind = 'label' AND r.name = 'rating' AND r.value = '5' \
                     LEFT JOIN attributes a ON a.note_id = n.id AND a.kind = 'label' AND a.name = 'author' \
                     WHERE n.deleted IS NULL ORDER BY n.title",
                )?;
                let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
                Ok(rows.count())
            }),
        ),
        (
            "TASK due within a week",
            "TASK WHERE !completed AND due <= date(today) + dur(7 days)",
            Box::new(|| {
                let mut stmt = raw.prepare_cached(
                    "SELECT t.note_id, t.line, t.text, t.due, n.title FROM note_tasks t INDEXED BY note_tasks_open \
                     JOIN notes n INDEXED BY notes_meta ON n.id = t.note_id \
                     WHERE t.done = 0 AND ifnull(t.due, '') <= ?1 AND n.deleted IS NULL ORDER BY n.title, t.line",
                )?;
                let rows = stmt.query_map(params![week], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
                Ok(rows.count())
            }),
        ),
        (
            "TASK due within a week, dated",
            "TASK WHERE !completed AND due AND due <= date(today) + dur(7 days)",
            Box::new(|| {
                let mut stmt = raw.prepare_cached(
                    "SELECT t.note_id, t.line, t.text, t.due, n.title FROM note_tasks t INDEXED BY note_tasks_open \
                     JOIN notes n INDEXED BY notes_meta ON n.id = t.note_id \
                     WHERE t.done = 0 AND ifnull(t.due, '') > '' AND ifnull(t.due, '') <= ?1 AND n.deleted IS NULL \
                     ORDER BY n.title, t.line",
                )?;
                let rows = stmt.query_map(params![week], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
                Ok(rows.count())
            }),
        ),
    ];
    println!(
        "\n{:<32} {:>7} {:>10} {:>10} {:>12} {:>12} {:>7}",
        "query (quire vs the same SQL)", "rows", "median", "p95", "SQL median", "SQL p95", "ratio"
    );
    let mut over = Vec::new();
    for (name, q, floor) in &queries {
        let mut engine = Vec::with_capacity(samples);
        let mut sql = Vec::with_capacity(samples);
        let mut rows = 0;
        for _ in 0..samples {
            engine.push(time(|| {
                ws.read(&Actor::User, |r| r.query_text(q, &QueryOptions::default()))
                    .map(|res| rows = res.rows.len())
            })?);
            let mut floor_rows = 0;
            sql.push(time(|| floor().map(|n| floor_rows = n))?);
            anyhow::ensure!(
                floor_rows == rows,
                "{name}: the engine gave {rows} rows, SQL {floor_rows}"
            );
        }
        let (median, p95) = quantiles(engine);
        let (sql_median, sql_p95) = quantiles(sql);
        println!(
            "{name:<32} {rows:>7} {:>10} {:>10} {:>12} {:>12} {:>6.1}x",
            show(median),
            show(p95),
            show(sql_median),
            show(sql_p95),
            median.as_secs_f64() / sql_median.as_secs_f64()
        );
        if p95 > P95_TARGET {
            over.push(format!("{name}: p95 {} (target {})", show(p95), show(P95_TARGET)));
        }
    }

    // A save, and the part of it that keeps tasks, fields and hashtags current.
    let mut saves = Vec::new();
    let mut derives = Vec::new();
    let mut text = TextGen::new(3);
    for k in 0..samples {
        let id = &ids[(k * 7919) % ids.len()];
        let new_body = body(k * 31 + 1, &mut text, today);
        saves.push(time(|| {
            ws.write(&Actor::User, |w| {
                w.update_note(
                    id,
                    NoteUpdate {
                        body: Some(new_body.clone()),
                        ..Default::default()
                    },
                )
            })
        })?);
        derives.push(time(|| ws.write(&Actor::User, |w| w.rederive_structure(id)))?);
    }
    let (save, _) = quantiles(saves);
    let (derive, _) = quantiles(derives);
    let empty = quantiles(
        (0..samples)
            .map(|_| time(|| ws.write(&Actor::User, |_| Ok::<_, quire_core::Error>(()))))
            .collect::<anyhow::Result<Vec<_>>>()?,
    )
    .0;
    let part = derive.saturating_sub(empty);
    let added = part.as_secs_f64() / save.saturating_sub(part).as_secs_f64();
    // The derivation timed is the common save's: prose changed, tasks and fields as they were (read and compared,
    // nothing written). A save that changes them writes their rows: the saves above are those.
    println!(
        "\nnote save (3 tasks changed, an inline field): median {}; deriving tasks, fields and hashtags when a save \
         leaves them as they were: {} (a write of its own {}, an empty write {}): adds {:.1}% to a save (target \
         under 10%)",
        show(save),
        show(part),
        show(derive),
        show(empty),
        added * 100.0
    );
    if added > 0.10 {
        over.push(format!("deriving adds {:.1}% to a save", added * 100.0));
    }
    if !over.is_empty() {
        anyhow::bail!("bench query: over target: {}", over.join("; "));
    }
    println!("every target met");
    Ok(())
}

/// The median and the 95th percentile.
fn quantiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}
