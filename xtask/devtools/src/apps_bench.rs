//! `cargo xtask bench import apps [--notes N]` (issue 51): an export of N notes (default 10,000) generated for each
//! other app quire imports (Notion with a database, Google Keep, Simplenote, Standard Notes, Logseq, Roam, Bear,
//! a folder of HTML), each imported into a fresh workspace file. Reports notes per second (the target: at least
//! 1,000 for each) and the peak memory of each import over what the process held before it (the target: bounded by
//! the largest note, not the export: the same at 10,000 notes as at 40,000).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use quire_core::Workspace;
use serde_json::json;

use crate::textgen::TextGen;

/// The floor for every importer.
const TARGET: f64 = 1_000.0;

/// The variable that makes a run of this bench import one format only: the parent generates each export and each is
/// imported by a process of its own, so that its peak memory is the import's, not what generating it or earlier
/// imports left allocated.
const ONLY: &str = "QUIRE_BENCH_APP";
/// With [`ONLY`]: the export the parent generated.
const SOURCE: &str = "QUIRE_BENCH_SOURCE";

pub(crate) fn run(options: &crate::measure::Options) -> anyhow::Result<()> {
    let notes = options.notes;
    let formats: [(&str, Generate); 8] = [
        ("notion", notion),
        ("keep", keep),
        ("simplenote", simplenote),
        ("standard-notes", standard_notes),
        ("logseq", logseq),
        ("roam", roam),
        ("bear", bear),
        ("html", html),
    ];
    if let (Ok(only), Ok(path)) = (std::env::var(ONLY), std::env::var(SOURCE)) {
        return one(&only, Path::new(&path), notes);
    }
    println!("import bench, other apps: {notes} notes each, each imported by a process of its own\n");
    println!("| format | generated | import | notes/s | peak memory of the import |");
    println!("|---|---|---|---|---|");
    let dir = tempfile::tempdir()?;
    let mut text = Text {
        words: TextGen::new(51),
        repeat: 1,
    };
    let mut under = Vec::new();
    let mut peaks = std::collections::HashMap::new();
    for (name, generate) in formats {
        match generated(dir.path(), name, generate, notes, &mut text)? {
            Some(peak) => {
                peaks.insert(name, peak);
            }
            None => under.push(name.to_owned()),
        }
    }
    // The same number of notes, each ten times longer: the peak follows the largest note, not the export (one
    // file read as it streams, and a folder read a window at a time).
    text.repeat = LONGER;
    let mut grew = Vec::new();
    for (name, generate) in formats
        .into_iter()
        .filter(|(n, _)| ["simplenote", "notion"].contains(n))
    {
        match generated(dir.path(), name, generate, notes, &mut text)? {
            Some(0) => {}
            Some(peak) => {
                let before = peaks.get(name).copied().unwrap_or(0).max(1);
                let more = peak.saturating_sub(before) / 1024;
                println!(
                    "|   {name}, each note {LONGER}x longer: peak {:.2}x the shorter notes', {more} MiB more | | | | |",
                    peak as f64 / before as f64
                );
                if more > MOST_MORE_MIB {
                    grew.push(format!("{name} {more} MiB more"));
                }
            }
            None => under.push(format!("{name} (longer notes)")),
        }
    }
    anyhow::ensure!(
        under.is_empty(),
        "under {TARGET} notes/s or failed: {}",
        under.join(", ")
    );
    anyhow::ensure!(
        grew.is_empty(),
        "memory followed the export's size (over {MOST_MORE_MIB} MiB more with notes {LONGER}x longer): {}",
        grew.join(", ")
    );
    println!(
        "\nevery importer at least {TARGET} notes/s; notes {LONGER}x longer cost at most {MOST_MORE_MIB} MiB more \
         (SQLite's page cache for an import, which shorter notes do not fill)"
    );
    Ok(())
}

/// How many times longer the notes of the second round are.
const LONGER: usize = 10;
/// The most memory an import of notes [`LONGER`] times longer may take over the shorter notes': the page cache
/// of a bulk write (64 MiB, core's `BULK_CACHE_KIB`), which the shorter notes' workspace may not fill. Memory that
/// followed the text would be several times the shorter notes' instead.
const MOST_MORE_MIB: u64 = 64;

/// Generates `name`'s export in `dir` and imports it in a process of its own, printing its row: the import's
/// peak memory in KiB, or `None` when it failed or was under the target.
fn generated(dir: &Path, name: &str, generate: Generate, notes: usize, text: &mut Text) -> anyhow::Result<Option<u64>> {
    let source = dir.join(name);
    std::fs::create_dir_all(&source)?;
    let path = generate(&source, notes, text)?;
    let output = std::process::Command::new(std::env::current_exe()?)
        .args(["bench", "import", "apps", "--notes", &notes.to_string()])
        .env(ONLY, name)
        .env(SOURCE, &path)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    std::fs::remove_dir_all(&source)?;
    let mut peak = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        match line.strip_prefix(PEAK) {
            Some(kib) => peak = kib.trim().parse().ok(),
            None => println!("{line}"),
        }
    }
    // Where the peak cannot be reset (no `/proc/self/clear_refs`), a passing import has no peak to compare: 0.
    Ok(output.status.success().then(|| peak.unwrap_or(0)))
}

/// How a child states its peak, in KiB, for the parent to compare.
const PEAK: &str = "peak KiB: ";

/// The text of the generated notes: the words, and how many times each note's paragraphs are written.
struct Text {
    words: TextGen,
    repeat: usize,
}

impl std::ops::Deref for Text {
    type Target = TextGen;

    fn deref(&self) -> &TextGen {
        &self.words
    }
}

impl std::ops::DerefMut for Text {
    fn deref_mut(&mut self) -> &mut TextGen {
        &mut self.words
    }
}

/// Imports the export of `name` at `path` into a fresh workspace, printing its row; fails under the target.
fn one(name: &str, path: &Path, notes: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let size = du(path);
    let ws = Workspace::open(dir.path().join(format!("{name}.quire")))?;
    let resident = crate::import_bench::resident_kib();
    let reset = crate::import_bench::reset_peak();
    let started = Instant::now();
    let report = quire_import::import(&ws, path, &quire_import::ImportOptions::default(), &|_, _| {})?;
    let took = started.elapsed();
    let peak_kib = crate::import_bench::peak_rss_kib().saturating_sub(resident);
    let peak = if reset {
        format!("{} MiB ({} MiB resident before it)", peak_kib / 1024, resident / 1024)
    } else {
        "(no peak reset here)".to_owned()
    };
    anyhow::ensure!(
        report.format == name && report.imported as usize >= notes && report.failed == 0,
        "{name}: {} imported as {}, {} failed",
        report.imported,
        report.format,
        report.failed
    );
    let rate = report.imported as f64 / took.as_secs_f64();
    println!(
        "| {name} | {:.1} MB | {:.0} ms | {rate:.0} | {peak} |",
        size as f64 / 1e6,
        took.as_secs_f64() * 1000.0,
    );
    if reset {
        println!("{PEAK}{peak_kib}");
    }
    anyhow::ensure!(rate >= TARGET, "{name}: {rate:.0} notes/s");
    Ok(())
}

type Generate = fn(&Path, usize, &mut Text) -> anyhow::Result<std::path::PathBuf>;

fn hex(i: usize) -> String {
    format!("{:032x}", (i as u128 + 1) * 0x9e37_79b9_7f4a_7c15)
}

fn paragraphs(text: &mut Text) -> String {
    (0..text.repeat)
        .map(|_| format!("{}.\n\n{}.\n", text.words(60), text.words(40)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn notion(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    let top = root.join("Export-5b0c1f3e-8d2a-4c6b-9e71-2f4a6d8c0b13");
    let db = format!("Tasks {}", hex(n + 1));
    std::fs::create_dir_all(top.join(&db))?;
    let rows = n / 10;
    let mut csv = String::from("\u{feff}Name,Status,Due,Estimate\n");
    for i in 0..n {
        let title = format!("Page {i}");
        let other = format!("Page%20{}%20{}.md", (i * 7 + 1) % n, hex((i * 7 + 1) % n));
        let mut body = format!("# {title}\n\n");
        let (dir, link) = if i < rows {
            writeln!(csv, "{title},In progress,\"March {}, 2024\",{}", i % 28 + 1, i % 8)?;
            body.push_str(&format!(
                "Status: In progress\nDue: March {}, 2024\nEstimate: {}\n\n",
                i % 28 + 1,
                i % 8
            ));
            (top.join(&db), format!("../{other}"))
        } else {
            (top.clone(), other)
        };
        body.push_str(&paragraphs(text));
        body.push_str(&format!("\nSee [the other page]({link}).\n"));
        std::fs::write(dir.join(format!("{title} {}.md", hex(i))), body)?;
    }
    std::fs::write(top.join(format!("{db}.csv")), csv)?;
    Ok(root.to_path_buf())
}

fn keep(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    let dir = root.join("Takeout/Keep");
    std::fs::create_dir_all(&dir)?;
    for i in 0..n {
        let mut note = json!({
            "color": if i % 5 == 0 { "GREEN" } else { "DEFAULT" },
            "isTrashed": false, "isPinned": i % 9 == 0, "isArchived": false,
            "title": format!("Keep {i}"),
            "userEditedTimestampUsec": 1_690_866_308_447_000_i64 + i as i64,
            "createdTimestampUsec": 1_690_372_692_755_000_i64 + i as i64,
            "labels": [{ "name": format!("label {}", i % 20) }],
        });
        if i % 3 == 0 {
            note["listContent"] =
                json!([{ "text": text.words(5), "isChecked": false }, { "text": text.words(4), "isChecked": true }]);
        } else {
            note["textContent"] = json!(paragraphs(text));
        }
        std::fs::write(dir.join(format!("Keep {i}.json")), note.to_string())?;
    }
    Ok(root.to_path_buf())
}

fn simplenote(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    let notes: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "id": format!("{i:08}-aaaa-4bbb-8ccc-dddddddddddd"),
                "content": format!("Simple {i}\r\n\r\n{}", paragraphs(text).replace('\n', "\r\n")),
                "creationDate": "2023-03-01T08:15:30.000Z", "lastModified": "2024-01-31T19:02:11.512Z",
                "tags": [format!("tag{}", i % 30)],
            })
        })
        .collect();
    std::fs::write(
        root.join("notes.json"),
        json!({ "activeNotes": notes, "trashedNotes": [] }).to_string(),
    )?;
    Ok(root.to_path_buf())
}

fn standard_notes(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    let mut items: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "uuid": format!("{i:08}-1111-4222-8333-444444444444"), "content_type": "Note",
                "content": { "title": format!("Standard {i}"), "text": paragraphs(text), "references": [] },
                "created_at_timestamp": 1_613_647_492_636_000_i64, "updated_at_timestamp": 1_613_845_217_571_000_i64,
            })
        })
        .collect();
    for t in 0..50 {
        let refs: Vec<_> = (t..n)
            .step_by(50)
            .map(|i| json!({ "uuid": format!("{i:08}-1111-4222-8333-444444444444"), "content_type": "Note" }))
            .collect();
        items.push(json!({ "uuid": format!("tag-{t}"), "content_type": "Tag", "content": { "title": format!("tag{t}"), "references": refs } }));
    }
    let path = root.join("Standard Notes Backup and Import File.txt");
    std::fs::write(&path, json!({ "version": "004", "items": items }).to_string())?;
    Ok(path)
}

fn logseq(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    for dir in ["pages", "journals", "logseq"] {
        std::fs::create_dir_all(root.join(dir))?;
    }
    std::fs::write(root.join("logseq/config.edn"), "{:meta/version 1}")?;
    for i in 0..n {
        let body = format!(
            "- {} [[Topic {}]]\n  id:: {i:08}-0000-4000-8000-000000000000\n\t- {}\n- TODO {}\n  SCHEDULED: <2024-02-{:02} Wed>\n- see (({:08}-0000-4000-8000-000000000000))\n",
            text.words(30),
            (i + 1) % n,
            text.words(30),
            text.words(6),
            i % 28 + 1,
            (i * 7 + 1) % n
        );
        let path = if i % 2 == 0 {
            root.join(format!("pages/Topic {i}.md"))
        } else {
            // One day each: 28 days a month, 12 months a year, from 1900.
            let k = i / 2;
            root.join(format!(
                "journals/{:04}_{:02}_{:02}.md",
                1900 + k / 336,
                k / 28 % 12 + 1,
                k % 28 + 1
            ))
        };
        std::fs::write(path, format!("tags:: t{}\n\n{body}", i % 10))?;
    }
    Ok(root.to_path_buf())
}

fn roam(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    let pages: Vec<_> = (0..n)
        .map(|i| {
            json!({
                "title": format!("Roam {i}"), "create-time": 1_614_356_902_401_i64,
                "children": [
                    { "string": text.words(30), "uid": format!("u{i:08}"), "children": [{ "string": format!("{{{{[[TODO]]}}}} {}", text.words(5)), "uid": format!("v{i:08}") }] },
                    { "string": format!("see ((u{:08})) and [[Roam {}]]", (i * 7 + 1) % n, (i + 1) % n), "uid": format!("w{i:08}") },
                ],
            })
        })
        .collect();
    let path = root.join("graph.json");
    std::fs::write(&path, serde_json::Value::Array(pages).to_string())?;
    Ok(path)
}

fn bear(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    for i in 0..n {
        let bundle = root.join(format!("Bear {i}.textbundle"));
        std::fs::create_dir_all(&bundle)?;
        std::fs::write(
            bundle.join("text.markdown"),
            format!("# Bear {i}\n\n{} #work/t{} #two words#\n", paragraphs(text), i % 10),
        )?;
        let info = json!({ "net.shinyfrog.bear": { "creationDate": "2024-06-07T10:08:13Z", "modificationDate": "2024-06-14T05:56:56Z", "pinned": 0, "trashed": 0 } });
        std::fs::write(bundle.join("info.json"), info.to_string())?;
    }
    Ok(root.to_path_buf())
}

fn html(root: &Path, n: usize, text: &mut Text) -> anyhow::Result<std::path::PathBuf> {
    for i in 0..n {
        let dir = root.join(format!("section {}", i % 20));
        std::fs::create_dir_all(&dir)?;
        let page = format!(
            "<html><head><title>Page {i}</title></head><body><h1>Page {i}</h1><p>{}</p><p><b>{}</b> <a href=\"../section {}/page {}.html\">next</a></p></body></html>",
            text.words(60),
            text.words(20),
            (i + 1) % n % 20,
            (i + 1) % n
        );
        std::fs::write(dir.join(format!("page {i}.html")), page)?;
    }
    Ok(root.to_path_buf())
}

fn du(path: &Path) -> u64 {
    if path.is_file() {
        return std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    }
    std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| du(&e.path()))
        .sum()
}
