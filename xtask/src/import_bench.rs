//! `cargo xtask bench import [--notes N]`: N generated Markdown files (default 10,000) in nested folders, with
//! front matter, tags, wikilinks, relative links between files and an attachment every tenth note, imported into a
//! fresh workspace file with `quire_import::import`. Reports notes per second next to the floor of any importer,
//! walking and reading the same files, measured in the same run, and the process's peak memory growth.

use std::path::Path;
use std::time::{Duration, Instant};

use quire_core::Workspace;

pub(crate) fn run(options: &crate::measure::Options) -> anyhow::Result<()> {
    let notes = if options.notes == 100_000 {
        10_000
    } else {
        options.notes
    };
    let dir = tempfile::tempdir()?;
    let source = dir.path().join("vault");
    generate(&source, notes)?;
    println!(
        "import bench: {notes} Markdown files, {} attachments, in {}",
        notes / 10,
        source.display()
    );

    let mut reads = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let bytes = read_all(&source)?;
        reads.push(started.elapsed());
        std::hint::black_box(bytes);
    }
    let read = median(&mut reads);

    let mut imports = Vec::new();
    let before = peak_rss_kib();
    for round in 0..ROUNDS {
        let ws = Workspace::open(dir.path().join(format!("bench-{round}.quire")))?;
        let started = Instant::now();
        let report = quire_import::import(&ws, &source, &quire_import::ImportOptions::default(), &|_, _| {})?;
        imports.push(started.elapsed());
        anyhow::ensure!(
            report.imported as usize == notes && report.failed == 0,
            "the bench import lost files: {} imported, {} failed",
            report.imported,
            report.failed
        );
    }
    let peak = peak_rss_kib().saturating_sub(before);
    let import = median(&mut imports);

    let ws = Workspace::open(dir.path().join("bench-0.quire"))?;
    let started = Instant::now();
    let again = quire_import::import(&ws, &source, &quire_import::ImportOptions::default(), &|_, _| {})?;
    let reimport = started.elapsed();
    anyhow::ensure!(again.unchanged as usize == notes, "a re-import changed notes");

    println!("| step (median of {ROUNDS}) | time | notes/s | x reading the files |");
    println!("|---|---|---|---|");
    let row = |name: &str, t: Duration| {
        println!(
            "| {name} | {:.0} ms | {:.0} | {:.1}x |",
            t.as_secs_f64() * 1000.0,
            notes as f64 / t.as_secs_f64(),
            t.as_secs_f64() / read.as_secs_f64()
        );
    };
    row("walk and read every file (the floor)", read);
    row("import into a fresh workspace", import);
    row("import again, nothing changed", reimport);
    println!("peak memory growth during the imports: {} MiB", peak / 1024);
    Ok(())
}

/// Imports timed (each into a fresh file): the machines are shared, and one import can take half again as long
/// as the next.
const ROUNDS: usize = 5;

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// `VmHWM` of this process, in KiB (0 where /proc is missing).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn read_all(dir: &Path) -> anyhow::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            total += read_all(&entry.path())?;
        } else {
            total += std::fs::read(entry.path())?.len() as u64;
        }
    }
    Ok(total)
}

/// Notes in 50 folders of 5 areas; each links to two others by wikilink and one by relative path.
fn generate(root: &Path, notes: usize) -> anyhow::Result<()> {
    let words = [
        "garden", "compost", "meeting", "budget", "travel", "recipe", "project", "review", "draft", "idea", "plan",
        "notes", "river", "bread", "server", "deploy", "invoice", "summer", "winter", "reading",
    ];
    let folder = |i: usize| format!("Area {}/Topic {}", i % 5, i % 50);
    let title = |i: usize| format!("Note {i} {}", words[i % words.len()]);
    for i in 0..notes {
        let dir = root.join(folder(i));
        std::fs::create_dir_all(&dir)?;
        let a = (i * 7 + 3) % notes;
        let b = (i * 13 + 5) % notes;
        let c = (i * 17 + 11) % notes;
        let mut body = format!(
            "---\ntags: [{}, bench]\ncreated: 2024-01-{:02}\nstatus: draft\n---\n# {}\n\n",
            words[i % 7],
            i % 28 + 1,
            title(i)
        );
        for paragraph in 0..4 {
            let sentence: Vec<&str> = (0..30).map(|k| words[(i + k * 3 + paragraph) % words.len()]).collect();
            body.push_str(&sentence.join(" "));
            body.push_str(".\n\n");
        }
        body.push_str(&format!(
            "Related: [[{}]], [[{}]] and [this one](../../{}/{}.md).\n",
            title(a),
            title(b),
            folder(c).replace(' ', "%20"),
            title(c).replace(' ', "%20")
        ));
        if i % 10 == 0 {
            let picture = format!("picture {i}.png");
            std::fs::write(dir.join(&picture), vec![(i % 251) as u8; 2048])?;
            body.push_str(&format!("![[{picture}]]\n"));
        }
        std::fs::write(dir.join(format!("{}.md", title(i))), body)?;
    }
    Ok(())
}
