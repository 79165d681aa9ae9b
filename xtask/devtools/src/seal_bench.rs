//! Sealed notes, the part of `cargo xtask bench core` that issue 32 asks for: opening a sealed note after unlock
//! against an unsealed one, sealing 10,000 notes, and how long unlocking takes with the parameters tuned here.

use std::time::{Duration, Instant};

use quire_core::seal::KdfParams;
use quire_core::{Actor, NewNotebook, Workspace};

use crate::measure::time;
use crate::textgen::TextGen;

const PASSPHRASE: &str = "bench passphrase";

/// Sealing is measured on this many notes (the figure), whatever `--notes` says.
const SEALED: usize = 10_000;

/// A row of the table `bench core` prints: what, quire's samples, the baseline's samples.
type Row = (String, Vec<Duration>, Vec<Duration>);

pub(crate) fn run(samples: usize) -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sealed.quire");
    let ws = Workspace::open(&path)?;
    let mut text = TextGen::new(7);
    let (vault, plain, today) = ws.write(&Actor::User, |w| {
        let mut notebook = |title: &str| {
            w.create_notebook(NewNotebook {
                title: title.into(),
                parent_id: None,
                icon: None,
            })
            .map(|n| n.id)
        };
        Ok::<_, quire_core::Error>((notebook("Vault")?, notebook("Plain")?, notebook("Today")?))
    })?;
    let fill = |notebook: &str, text: &mut TextGen| -> anyhow::Result<Vec<String>> {
        Ok(ws.write(&Actor::User, |w| {
            w.defer_search_index();
            (0..SEALED)
                .map(|_| {
                    let mut note = text.note(&[notebook.to_owned()]);
                    note.notebook_id = Some(notebook.to_owned());
                    w.create_note(note).map(|n| n.summary.id)
                })
                .collect::<Result<Vec<_>, _>>()
        })?)
    };
    let sealed_ids = fill(&vault, &mut text)?;
    let plain_ids = fill(&plain, &mut text)?;
    let today_ids = fill(&today, &mut text)?;

    // Today's protection (no passphrase: nothing is encrypted), the figure sealing is set beside.
    let started = Instant::now();
    ws.write(&Actor::User, |w| w.set_notebook_protected(&today, true))?;
    let protecting = started.elapsed();
    println!(
        "\nprotecting a notebook of {SEALED} notes without a passphrase (as before sealing): {protecting:.2?}, {:.0} notes/s",
        SEALED as f64 / protecting.as_secs_f64()
    );

    let started = Instant::now();
    let params = KdfParams::tuned(Duration::from_millis(500));
    let tuning = started.elapsed();
    let started = Instant::now();
    let (_, _, report) = ws.init_lock(PASSPHRASE, &params)?;
    let init = started.elapsed();
    println!(
        "Argon2id tuned to {} MiB x {} passes in {tuning:.1?}; `lock init` sealing the {} protected notes: {init:.2?}, \
         {:.0} notes/s (Argon2id included)",
        params.memory_kib / 1024,
        params.passes,
        report.notes,
        report.notes as f64 / init.as_secs_f64()
    );

    // Sealing: protecting the notebook seals its 10,000 notes in one write.
    let started = Instant::now();
    ws.write(&Actor::User, |w| w.set_notebook_protected(&vault, true))?;
    let sealing = started.elapsed();
    println!(
        "sealing {SEALED} notes (protecting their notebook): {sealing:.2?}, {:.0} notes/s",
        SEALED as f64 / sealing.as_secs_f64()
    );

    let mut unlock = Vec::new();
    for _ in 0..5 {
        unlock.push(time(|| ws.unlock(PASSPHRASE).map(drop))?);
    }
    unlock.sort();
    println!("unlock (Argon2id with the stored parameters): median {:.0?}", unlock[2]);

    let key = ws.unlock(PASSPHRASE)?;
    let mut rows = Vec::new();
    // The first open of a sealed note recovers its note key: sealed by a writer holding the key (`lock init`, or
    // while unlocked), a symmetric unwrap; sealed without it (protecting while locked, an import), one X25519
    // operation. Later opens find the key cached.
    for (label, sealed_ids) in [
        ("open a sealed note, first time, sealed with the key", &today_ids),
        ("open a sealed note, first time, sealed without it", &sealed_ids),
        ("open a sealed note again (its key cached)", &sealed_ids),
    ] {
        let mut opened = Vec::new();
        let mut baseline = Vec::new();
        for i in 0..samples.min(SEALED) {
            let sealed = &sealed_ids[(i * 7919) % SEALED];
            let unsealed = &plain_ids[(i * 7919) % SEALED];
            opened.push(time(|| ws.read_unlocked(&key, |r| r.note(sealed)).map(drop))?);
            baseline.push(time(|| ws.read_unlocked(&key, |r| r.note(unsealed)).map(drop))?);
        }
        rows.push((format!("{label} (against: unsealed)"), opened, baseline));
    }
    Ok(rows)
}
