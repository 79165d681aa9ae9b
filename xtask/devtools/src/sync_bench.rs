//! `cargo xtask bench sync`: the figures issue 33 asks for, each beside a plain copy of the same bytes measured in
//! the same run: the first push and a join of `--notes` notes (10,000 by default, about 2 KB of text each) through a
//! folder target; one edited note from save on device A to visible on device B (quire's own time: A's sync, then
//! B's, with no polling interval); and the size of the sync state (the local merge documents and the target) against
//! the text it holds. Issue 46 adds the baseline of a join: quire's own import of the same notes (the plain copy's
//! Markdown files), measured in the same run, and the join's peak memory.

use std::path::Path;
use std::time::{Duration, Instant};

use quire_core::{Actor, NewNote, NoteUpdate, Workspace};
use quire_sync::{Address, Device, SyncKey};

use crate::measure::{Options, show as fmt_duration};
use crate::textgen::TextGen;

/// About 2 KB of text per note, as the "10,000 notes, about 20 MB".
const BODY_BYTES: usize = 2_000;

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let notes = options.notes;
    let samples = options.samples.clamp(10, 200);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let dir = tempfile::tempdir()?;
    let target = dir.path().join("target");
    std::fs::create_dir(&target)?;
    let wa = Workspace::open(dir.path().join("a.quire"))?;
    let wb = Workspace::open(dir.path().join("b.quire"))?;

    let mut text = TextGen::new(33);
    let mut texts: Vec<(String, String)> = Vec::with_capacity(notes);
    // Each note's tags, for the import's copy: the same notes, tags included (the join writes them too).
    let mut tags: Vec<Vec<String>> = Vec::with_capacity(notes);
    let started = Instant::now();
    for start in (0..notes).step_by(1_000) {
        let batch: Vec<NewNote> = (start..(start + 1_000).min(notes))
            .map(|_| {
                let mut note = text.note(&[quire_core::ROOT_NOTEBOOK_ID.to_owned()]);
                while note.body.len() < BODY_BYTES {
                    note.body.push_str("\n\n");
                    note.body.push_str(&text.words(40));
                }
                note
            })
            .collect();
        texts.extend(batch.iter().map(|n| (n.title.clone(), n.body.clone())));
        tags.extend(batch.iter().map(|n| n.tags.clone()));
        wa.write(&Actor::User, |w| {
            w.defer_search_index();
            for note in batch {
                w.create_note(note)?;
            }
            Ok::<_, quire_core::Error>(())
        })?;
    }
    let text_bytes: usize = texts.iter().map(|(t, b)| t.len() + b.len()).sum();
    println!(
        "sync bench: {notes} notes, {:.1} MB of text, made in {:.1?}",
        text_bytes as f64 / 1e6,
        started.elapsed()
    );

    // The plain copy: every note's text as a file of its own in a folder, then read back.
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy)?;
    let started = Instant::now();
    // With its title and tags in front matter, so that the import below makes the same notes the join does.
    for (i, ((title, body), tags)) in texts.iter().zip(&tags).enumerate() {
        let front = format!("---\ntitle: \"{title}\"\ntags: [{}]\n---\n", tags.join(", "));
        std::fs::write(copy.join(format!("{i}.md")), format!("{front}{body}"))?;
    }
    sync_dir(&copy)?;
    let copy_write = started.elapsed();
    let started = Instant::now();
    let mut read = 0;
    for i in 0..texts.len() {
        read += std::fs::read(copy.join(format!("{i}.md")))?.len();
    }
    let copy_read = started.elapsed();
    anyhow::ensure!(read > 0, "the copy read nothing");

    // The baseline of a join: the same notes imported from the copy's Markdown files into an empty workspace.
    let imported_ws = Workspace::open(dir.path().join("imported.quire"))?;
    let started = Instant::now();
    let imported = quire_import::import(&imported_ws, &copy, &quire_import::ImportOptions::default(), &|_, _| {})?;
    let import = started.elapsed();
    anyhow::ensure!(
        imported.imported as usize == notes,
        "imported {} of {notes}",
        imported.imported
    );
    drop(imported_ws);

    let key = || SyncKey::from_bytes([5; 32]);
    let address = Address::Folder(target.clone());
    let started = Instant::now();
    let a = runtime.block_on(Device::init(wa.clone(), &address, key(), b"lock", "a"))?;
    let pushed = runtime.block_on(a.sync())?;
    let push = started.elapsed();
    anyhow::ensure!(pushed.sent_docs == notes, "pushed {} of {notes}", pushed.sent_docs);

    let rss_before = resident_kib("VmRSS");
    reset_peak();
    let started = Instant::now();
    let b = runtime.block_on(Device::join(wb.clone(), &address, key(), b"lock", "b"))?;
    let joined = runtime.block_on(b.receive())?;
    runtime.block_on(b.sync())?;
    let join = started.elapsed();
    let join_memory = resident_kib("VmHWM").saturating_sub(rss_before);
    anyhow::ensure!(
        joined.applied_notes == notes,
        "joined {} of {notes}",
        joined.applied_notes
    );

    // One edit, from save on A to readable on B.
    let ids: Vec<String> = wa.read(&Actor::Sync { device: "bench".into() }, |r| r.all_note_ids())?;
    let mut edit_times = Vec::with_capacity(samples);
    let mut copy_times = Vec::with_capacity(samples);
    for i in 0..samples {
        let id = &ids[(i * 7919) % ids.len()];
        let body = format!("{}\nedit {i}\n", texts[(i * 7919) % texts.len()].1);
        let started = Instant::now();
        wa.write(&Actor::User, |w| {
            w.update_note(
                id,
                NoteUpdate {
                    body: Some(body.clone()),
                    ..NoteUpdate::default()
                },
            )
        })?;
        runtime.block_on(a.sync())?;
        runtime.block_on(b.sync())?;
        let seen = wb.read(&Actor::User, |r| r.note(id))?.body;
        edit_times.push(started.elapsed());
        anyhow::ensure!(seen == body, "the edit did not arrive");

        let started = Instant::now();
        let path = copy.join(format!("edit-{i}.md"));
        std::fs::write(&path, &body)?;
        sync_dir(&copy)?;
        let back = std::fs::read(&path)?;
        copy_times.push(started.elapsed());
        anyhow::ensure!(back.len() == body.len());
    }

    let (docs, doc_bytes) = wa.read(&Actor::Sync { device: "bench".into() }, |r| r.sync_docs_size())?;
    let target_before = files_size(&target)?;
    let files_before = count_files(&target)?;

    // Compaction: A writes a snapshot and removes its batches once B has said it applied them; then a device that
    // joins starts from the snapshot.
    let started = Instant::now();
    runtime.block_on(a.compact())?;
    let compact = started.elapsed();
    runtime.block_on(b.sync())?;
    runtime.block_on(b.compact())?;
    runtime.block_on(a.sync())?;
    let target_bytes: u64 = files_size(&target)?;
    let files_after = count_files(&target)?;
    let state = doc_bytes + target_bytes;
    let wc = quire_core::Workspace::open(dir.path().join("c.quire"))?;
    let started = Instant::now();
    let c = runtime.block_on(Device::join(wc.clone(), &address, key(), b"lock", "c"))?;
    let from_snapshot = runtime.block_on(c.sync())?;
    let join_snapshot = started.elapsed();
    anyhow::ensure!(
        from_snapshot.applied_snapshots >= 1,
        "the third device did not start from a snapshot: {from_snapshot:?}"
    );

    println!("\n{:<52} {:>12} {:>12} {:>8}", "", "quire", "plain copy", "ratio");
    let row = |what: &str, quire: Duration, copy: Duration| {
        println!(
            "{what:<52} {:>12} {:>12} {:>7.1}x",
            fmt_duration(quire),
            fmt_duration(copy),
            quire.as_secs_f64() / copy.as_secs_f64().max(1e-9)
        );
    };
    row(&format!("first push of {notes} notes (init + sync)"), push, copy_write);
    row(&format!("join: {notes} notes into an empty workspace"), join, copy_read);
    row(
        &format!("import of the same {notes} notes (Markdown files)"),
        import,
        copy_read,
    );
    row("join after compaction (from the snapshot)", join_snapshot, copy_read);
    row(
        "one edit, save on A to visible on B (median)",
        median(&mut edit_times),
        median(&mut copy_times),
    );
    println!(
        "\njoin: {:.0} notes/s, {:.2}x the import of the same notes, peak memory {} MiB above the process before it; \
         push: {:.0} notes/s; one edit p90 {}",
        notes as f64 / join.as_secs_f64(),
        join.as_secs_f64() / import.as_secs_f64(),
        join_memory / 1024,
        notes as f64 / push.as_secs_f64(),
        fmt_duration(percentile(&mut edit_times, 0.9))
    );
    println!(
        "compaction: {} to write the snapshot; target {:.1} MB in {files_before} files before, {:.1} MB in \
         {files_after} after",
        fmt_duration(compact),
        target_before as f64 / 1e6,
        target_bytes as f64 / 1e6,
    );
    println!(
        "sync state after compaction: {docs} documents {:.1} MB + target {:.1} MB = {:.1} MB for {:.1} MB of text: \
         {:.2}x",
        doc_bytes as f64 / 1e6,
        target_bytes as f64 / 1e6,
        state as f64 / 1e6,
        text_bytes as f64 / 1e6,
        state as f64 / text_bytes as f64
    );
    Ok(())
}

/// A figure of this process's memory from `/proc/self/status`, in KiB (0 where /proc is missing).
fn resident_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// Starts this process's peak resident memory (`VmHWM`) again from what it holds now (Linux: `clear_refs` 5).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn median(times: &mut [Duration]) -> Duration {
    percentile(times, 0.5)
}

fn percentile(times: &mut [Duration], at: f64) -> Duration {
    times.sort_unstable();
    times[((times.len() - 1) as f64 * at).round() as usize]
}

/// Flushes a folder's entries to disk, as the target's writes are (so the copy pays what sync pays).
fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

fn files_size(dir: &Path) -> anyhow::Result<u64> {
    files_below(dir)?
        .iter()
        .try_fold(0, |total, f| Ok(total + std::fs::metadata(f)?.len()))
}

fn count_files(dir: &Path) -> anyhow::Result<usize> {
    Ok(files_below(dir)?.len())
}

fn files_below(dir: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            if entry.file_type()?.is_dir() {
                stack.push(entry.path());
            } else {
                found.push(entry.path());
            }
        }
    }
    Ok(found)
}
