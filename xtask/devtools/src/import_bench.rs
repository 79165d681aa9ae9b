//! `cargo xtask bench import [--notes N]`: N generated Markdown files (default 10,000) in nested folders, with
//! front matter, tags, wikilinks, relative links between files and an attachment every tenth note, imported into a
//! fresh workspace file with `quire_import::import`. Reports notes per second next to the floor of any importer,
//! walking and reading the same files, measured in the same run, and the process's peak memory growth.
//!
//! `cargo xtask bench import enex [--notes N]`: one generated Evernote export of N notes (default 5,000) as Evernote
//! 10 writes them (styled paragraphs, nested lists written beside their items, a checklist, a code block, a table, a
//! task group with its tasks, a link to another note of the export, and a 200 KiB picture every tenth note: about
//! 160 MB at the default), imported the same way. Reports notes and megabytes per second next to reading the file
//! alone, and the peak memory of an import.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use md5::Digest as _;
use quire_core::Workspace;

use crate::textgen::TextGen;

pub(crate) fn run(options: &crate::measure::Options) -> anyhow::Result<()> {
    let notes = options.notes;
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
pub(crate) fn peak_rss_kib() -> u64 {
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

/// The ENEX case (see the module's documentation).
pub(crate) fn enex(options: &crate::measure::Options) -> anyhow::Result<()> {
    let notes = options.notes;
    let dir = tempfile::tempdir()?;
    let source = dir.path().join("Generated notebook.enex");
    let resources = generate_enex(&source, notes)?;
    let bytes = std::fs::metadata(&source)?.len();
    let megabytes = bytes as f64 / 1e6;
    println!(
        "import bench (ENEX): {notes} notes, {resources} pictures of {} KiB, {megabytes:.1} MB in {}",
        RESOURCE_BYTES / 1024,
        source.display()
    );

    let mut reads = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let read = read_through(&source)?;
        reads.push(started.elapsed());
        std::hint::black_box(read);
    }
    let read = median(&mut reads);

    let mut imports = Vec::new();
    let mut peaks = Vec::new();
    let resident = resident_kib();
    for round in 0..ROUNDS {
        let ws = Workspace::open(dir.path().join(format!("bench-{round}.quire")))?;
        let reset = reset_peak();
        let started = Instant::now();
        let report = quire_import::import(&ws, &source, &quire_import::ImportOptions::default(), &|_, _| {})?;
        imports.push(started.elapsed());
        peaks.push(if reset { peak_rss_kib() } else { 0 });
        anyhow::ensure!(
            report.imported as usize == notes && report.failed == 0,
            "the bench import lost notes: {} imported, {} failed{}",
            report.imported,
            report.failed,
            report
                .items
                .iter()
                .find(|i| i.outcome == quire_import::Outcome::Failed)
                .map_or(String::new(), |i| format!(
                    " (first: {}: {})",
                    i.path,
                    i.notes.join("; ")
                ))
        );
    }
    let import = median(&mut imports);
    peaks.sort_unstable();

    let ws = Workspace::open(dir.path().join("bench-0.quire"))?;
    let started = Instant::now();
    let again = quire_import::import(&ws, &source, &quire_import::ImportOptions::default(), &|_, _| {})?;
    let reimport = started.elapsed();
    anyhow::ensure!(again.unchanged as usize == notes, "a re-import changed notes");

    println!("| step (median of {ROUNDS}) | time | notes/s | MB/s | x reading the file |");
    println!("|---|---|---|---|---|");
    let row = |name: &str, t: Duration| {
        println!(
            "| {name} | {:.0} ms | {:.0} | {:.1} | {:.1}x |",
            t.as_secs_f64() * 1000.0,
            notes as f64 / t.as_secs_f64(),
            megabytes / t.as_secs_f64(),
            t.as_secs_f64() / read.as_secs_f64()
        );
    };
    row("read the file (the floor)", read);
    row("import into a fresh workspace", import);
    row("import again, nothing changed", reimport);
    match peaks.get(peaks.len() / 2) {
        Some(&peak) if peak > 0 => println!(
            "peak memory of an import (VmHWM, median of {ROUNDS}): {} MiB ({} MiB resident before it)",
            peak / 1024,
            resident / 1024
        ),
        _ => println!(
            "peak memory: /proc/self/clear_refs cannot be written here; the process's peak was {} MiB",
            peak_rss_kib() / 1024
        ),
    }
    Ok(())
}

/// The size of each generated picture.
const RESOURCE_BYTES: usize = 200 * 1024;

/// Resets this process's `VmHWM` to its current resident size; false where Linux does not allow it.
pub(crate) fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `VmRSS` of this process, in KiB.
pub(crate) fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Reads the file through in 1 MiB pieces: the least any importer does.
fn read_through(path: &Path) -> anyhow::Result<u64> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        std::hint::black_box(&buf[..n]);
    }
}

/// Writes an ENEX file of `notes` notes as Evernote 10 exports them; returns how many pictures it holds. Written as
/// it is made, a note at a time.
fn generate_enex(path: &Path, notes: usize) -> anyhow::Result<usize> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut text = TextGen::new(23);
    let titles: Vec<String> = (0..notes).map(|i| format!("Note {i} {}", text.words(2))).collect();
    writeln!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE en-export SYSTEM \
         \"http://xml.evernote.com/pub/evernote-export4.dtd\">\n<en-export export-date=\"20250110T090000Z\" \
         application=\"Evernote\" version=\"10.120.3\">"
    )?;
    let mut pictures = 0;
    for (i, title) in titles.iter().enumerate() {
        let picture = (i % 10 == 0).then(|| {
            let mut bytes = Vec::with_capacity(RESOURCE_BYTES);
            while bytes.len() < RESOURCE_BYTES {
                bytes.extend_from_slice(&text.next().to_le_bytes());
            }
            let hash: String = md5::Md5::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            (bytes, hash)
        });
        let day = i % 28 + 1;
        writeln!(out, "  <note>\n    <title>{title}</title>")?;
        writeln!(
            out,
            "    <created>202401{day:02}T{:02}{:02}00Z</created>",
            i / 60 % 24,
            i % 60
        )?;
        writeln!(out, "    <updated>202402{day:02}T090000Z</updated>")?;
        writeln!(out, "    <tag>{}</tag>\n    <tag>bench</tag>", text.words(1))?;
        writeln!(out, "    <note-attributes>\n      <author>Ana</author>")?;
        if i % 7 == 0 {
            writeln!(
                out,
                "      <latitude>38.69{i}</latitude>\n      <longitude>-9.21{i}</longitude>"
            )?;
        }
        if i % 13 == 0 {
            writeln!(out, "      <reminder-time>202403{day:02}T080000Z</reminder-time>")?;
        }
        writeln!(out, "    </note-attributes>")?;
        let link = &titles[(i * 7 + 3) % notes];
        let media = picture.as_ref().map_or(String::new(), |(_, hash)| {
            format!("<div><en-media hash=\"{hash}\" type=\"image/png\" /></div>")
        });
        writeln!(
            out,
            "    <content>\n      <![CDATA[<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n\
             <!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\"><en-note>{}{media}</en-note>]]>\n    \
             </content>",
            enml(&mut text, title, link, i)
        )?;
        if let Some((bytes, _)) = &picture {
            pictures += 1;
            writeln!(out, "    <resource>\n      <data encoding=\"base64\">")?;
            for line in bytes.chunks(57) {
                writeln!(out, "{}", base64::engine::general_purpose::STANDARD.encode(line))?;
            }
            writeln!(
                out,
                "      </data>\n      <mime>image/png</mime>\n      <resource-attributes>\n        \
                 <file-name>photo {i}.png</file-name>\n      </resource-attributes>\n    </resource>"
            )?;
        }
        for (t, weight) in ["C", "G", "M"].iter().enumerate() {
            writeln!(
                out,
                "    <task>\n      <title>{}</title>\n      <created>20240301T100000Z</created>\n      \
                 <updated>20240301T100000Z</updated>\n      <taskStatus>{}</taskStatus>\n      \
                 <inNote>true</inNote>\n      <taskFlag>false</taskFlag>\n      <sortWeight>{weight}</sortWeight>\n      \
                 <noteLevelID>{i:08x}-0000-4000-8000-{t:012x}</noteLevelID>\n      \
                 <taskGroupNoteLevelID>{i:08x}-1111-4000-8000-000000000000</taskGroupNoteLevelID>\n      \
                 <dueDate>202403{day:02}T225959Z</dueDate>\n      <dueDateUIOption>date_only</dueDateUIOption>\n      \
                 <timeZone>Europe/Berlin</timeZone>\n    </task>",
                text.words(3),
                if t == 0 { "completed" } else { "open" }
            )?;
        }
        writeln!(out, "  </note>")?;
    }
    writeln!(out, "</en-export>")?;
    out.flush()?;
    Ok(pictures)
}

/// One note's ENML: styled paragraphs, a list nested the way Evernote writes it, a checklist, a code block, a table,
/// a task group's placeholder and a link to another note of the export.
fn enml(text: &mut TextGen, title: &str, link: &str, i: usize) -> String {
    let mut out = format!("<h2>{title}</h2>");
    out.push_str(&format!(
        "<div>{} <b>{}</b> {} <span style=\"--en-highlight:yellow;background-color: #ffef9e;\">{}</span> {}.</div>\
         <div>{} <i>{}</i> <span style=\"font-family: Georgia; font-size: 14px;\">{}</span>.</div><div><br /></div>",
        text.words(25),
        text.words(2),
        text.words(10),
        text.words(2),
        text.words(10),
        text.words(30),
        text.words(2),
        text.words(15)
    ));
    out.push_str(&format!(
        "<ul><li><div>{}</div></li><ul><li><div>{}</div></li><li><div>{}</div></li></ul><li><div>{}</div></li></ul>\
         <ol><li><div>{}</div></li><li><div>{}</div></li></ol>",
        text.words(3),
        text.words(3),
        text.words(3),
        text.words(3),
        text.words(4),
        text.words(4)
    ));
    out.push_str(&format!(
        "<ul style=\"--en-todo:true;\"><li style=\"--en-checked:true;\"><div>{}</div></li>\
         <li style=\"--en-checked:false;\"><div>{}</div></li></ul>",
        text.words(3),
        text.words(3)
    ));
    let (f, v) = (text.words(1), text.words(1));
    out.push_str(&format!(
        "<div style=\"box-sizing: border-box; font-family: Monaco, Menlo, monospace; -en-codeblock:true;\">\
         <div>fn {f}() {{</div><div>&nbsp;&nbsp;&nbsp;&nbsp;let {v}_x = {v} * 2;</div><div><br /></div>\
         <div>&nbsp;&nbsp;&nbsp;&nbsp;println!(\"{{}}\", {v}_x);</div><div>}}</div></div>"
    ));
    out.push_str("<table><tbody>");
    for _ in 0..3 {
        out.push_str(&format!(
            "<tr><td><div>{}</div></td><td><div>{}</div></td><td><div>{}</div></td></tr>",
            text.words(1),
            text.words(2),
            text.words(1)
        ));
    }
    out.push_str("</tbody></table>");
    let guid = format!("{i:08x}-2222-4000-8000-000000000000");
    out.push_str(&format!(
        "<div style=\"--en-task-group:true; --en-id:{i:08x}-1111-4000-8000-000000000000;color:#868686\">\
         <div style=\"font-weight:600\">Content not supported</div><div>This block is a placeholder for Tasks, \
         which has been officially released on the newest version of Evernote and is no longer supported on this \
         version.</div></div><div>See <a href=\"evernote:///view/1/s1/{guid}/{guid}/\">{link}</a>.</div>"
    ));
    out
}
