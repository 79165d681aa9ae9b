//! `cargo xtask bench ledger`: what the read ledger costs a `read_note` call. The release `quire mcp` on one
//! workspace twice, with the ledger (the default) and without it (`[ledger] retention_days = 0` in its
//! configuration), each sent the same pipelined `read_note` calls in alternating rounds: over distinct notes (each
//! note once a round: a row of the ledger per call) and over one note (its reads counted on one row). The ratio of
//! the medians, and the median of each round's ratio, are the ledger's cost; the target is under 1.05x.

use std::process::Command;
use std::time::Duration;

use quire_core::{Actor, NewNote, Workspace};
use serde_json::{Value, json};

use crate::loop_bench::Server;
use crate::measure::{Options, stats};
use crate::textgen::TextGen;

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let binary = crate::release_quire()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.quire");
    let ws = Workspace::open(&path)?;
    let notes = options.notes.clamp(100, 20_000);
    let mut text = TextGen::new(7);
    let ids: Vec<String> = ws.write(&Actor::User, |w| {
        (0..notes)
            .map(|i| {
                let body: String = text.words(400).chars().take(2_000).collect();
                Ok(w.create_note(NewNote::new(format!("Note {i}"), body))?.summary.id)
            })
            .collect::<quire_core::Result<Vec<_>>>()
    })?;
    while ws.index_pending(1_000)? > 0 {}
    drop(ws);
    let server = |ledger: bool| -> anyhow::Result<Server> {
        let config = dir.path().join(if ledger { "on" } else { "off" });
        std::fs::create_dir_all(config.join("quire"))?;
        if !ledger {
            std::fs::write(config.join("quire/config.toml"), "[ledger]\nretention_days = 0\n")?;
        }
        let mut command = Command::new(&binary);
        command
            .arg("mcp")
            .env("QUIRE_WORKSPACE", &path)
            .env("XDG_CONFIG_HOME", &config)
            .env("XDG_DATA_HOME", dir.path())
            .env("HOME", dir.path())
            .env_remove("QUIRE_EMBED_MODEL")
            .env_remove("QUIRE_LOG");
        let mut server = Server::start(command)?;
        server.initialize()?;
        Ok(server)
    };
    let (mut on, mut off) = (server(true)?, server(false)?);
    let read = |id: &str| {
        (
            "tools/call",
            json!({ "name": "read_note", "arguments": { "note_id": id } }),
        )
    };
    let distinct: Vec<(&str, Value)> = ids.iter().map(|id| read(id)).collect();
    let same: Vec<(&str, Value)> = (0..notes).map(|_| read(&ids[0])).collect();
    // A round of each first, unmeasured: caches, pages and the ledger's first batch.
    for server in [&mut on, &mut off] {
        server.pipelined(&distinct)?;
    }
    let rounds = options.samples.clamp(5, 41);
    let (mut distinct_on, mut distinct_off, mut same_on, mut same_off) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        // Which goes first alternates, so that neither always follows the other's ledger write.
        let order: [(&mut Server, bool); 2] = if round % 2 == 0 {
            [(&mut on, true), (&mut off, false)]
        } else {
            [(&mut off, false), (&mut on, true)]
        };
        for (server, ledger) in order {
            let (d, s) = (server.pipelined(&distinct)?, server.pipelined(&same)?);
            if ledger {
                distinct_on.push(d);
                same_on.push(s);
            } else {
                distinct_off.push(d);
                same_off.push(s);
            }
        }
    }
    on.stop()?;
    off.stop()?;
    let rate = |d: Duration| notes as f64 / d.as_secs_f64();
    println!("read_note through quire mcp (release), pipelined, {notes} calls a round, {rounds} rounds each");
    println!(
        "\n{:<34} {:>13} {:>20} {:>17} {:>15}",
        "calls", "with ledger", "without (baseline)", "ratio of medians", "median ratio"
    );
    for (name, with, without) in [
        ("distinct notes (a row per call)", distinct_on, distinct_off),
        ("one note (its reads on one row)", same_on, same_off),
    ] {
        // Each round's two series ran one after the other: their ratio is the least touched by the machine's
        // swings, and the median of those ratios is the figure to hold against the target.
        let mut ratios: Vec<f64> = with
            .iter()
            .zip(&without)
            .map(|(w, o)| w.as_secs_f64() / o.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let median_ratio = ratios[ratios.len() / 2];
        let (with, _) = stats(with);
        let (without, _) = stats(without);
        println!(
            "{:<34} {:>11.0}/s {:>18.0}/s {:>16.3}x {:>14.3}x",
            name,
            rate(with),
            rate(without),
            with.as_secs_f64() / without.as_secs_f64(),
            median_ratio
        );
    }
    let written = Workspace::open(&path)?.ledger(&quire_core::ledger::LedgerFilter {
        limit: usize::MAX,
        ..Default::default()
    })?;
    println!("\nledger rows written by the server with it: {}", written.len());
    Ok(())
}
