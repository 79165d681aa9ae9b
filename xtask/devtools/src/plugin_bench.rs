//! `cargo xtask bench plugins`: what a plugin's tool costs through `quire mcp` (issue 53). The tests' probe plugin
//! (Python, the official MCP SDK) is called directly over stdio by a client, and through the release `quire mcp` it is
//! configured in, by the same client: one call at a time, the two in alternating rounds so that the machine's swings
//! fall on both alike. Printed: each median per call, and the difference against the target of 2 ms.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use crate::loop_bench::Server;
use crate::measure::{Options, show, stats};

/// The most a call through quire may add.
const TARGET: Duration = Duration::from_millis(2);

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let runtimes = PathBuf::from(
        std::env::var("QUIRE_PLUGIN_RUNTIMES")
            .context("QUIRE_PLUGIN_RUNTIMES is not set: run `cargo xtask bench plugins`")?,
    );
    let python = runtimes.join("bin/python");
    let probe = crate::project_root().join("tests/plugins/probe_plugin.py");
    let binary = crate::release_quire()?;
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("quire");
    std::fs::create_dir_all(&config)?;
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[[plugins]]\nname = \"probe\"\ncommand = {:?}\nargs = [{:?}]\n",
            python.display().to_string(),
            probe.display().to_string()
        ),
    )?;
    let mut quire = Command::new(&binary);
    quire
        .arg("mcp")
        .env("QUIRE_WORKSPACE", dir.path().join("bench.quire"))
        .env("XDG_CONFIG_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("HOME", dir.path())
        .env_remove("QUIRE_EMBED_MODEL")
        .env_remove("QUIRE_LOG");
    let mut through = Server::start(quire)?;
    through.initialize()?;
    let mut direct_command = Command::new(&python);
    direct_command.arg(&probe);
    let mut direct = Server::start(direct_command)?;
    direct.initialize()?;

    let call = |server: &mut Server, name: &str| -> anyhow::Result<Duration> {
        let started = Instant::now();
        let answer: Value = server.request(
            "tools/call",
            json!({"name": name, "arguments": {"text": "quiet please"}}),
        )?;
        let took = started.elapsed();
        anyhow::ensure!(
            answer["result"]["content"][0]["text"] == json!("QUIET PLEASE"),
            "{name} answered {answer}"
        );
        Ok(took)
    };
    // The first calls start what starts lazily on both sides.
    for _ in 0..50 {
        call(&mut direct, "shout")?;
        call(&mut through, "probe__shout")?;
    }
    let rounds = 20;
    let per_round = options.samples.clamp(20, 200);
    let (mut direct_times, mut through_times) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for _ in 0..per_round {
            direct_times.push(call(&mut direct, "shout")?);
        }
        for _ in 0..per_round {
            through_times.push(call(&mut through, "probe__shout")?);
        }
    }
    let (direct_median, direct_p99) = stats(direct_times);
    let (through_median, through_p99) = stats(through_times);
    println!(
        "plugin tool, {} calls each, one at a time (median, p99):",
        rounds * per_round
    );
    println!(
        "  probe's shout called directly       {:>10}  {:>10}",
        show(direct_median),
        show(direct_p99)
    );
    println!(
        "  probe__shout through quire mcp       {:>10}  {:>10}",
        show(through_median),
        show(through_p99)
    );
    let added = through_median.saturating_sub(direct_median);
    let verdict = if added < TARGET { "within" } else { "OVER" };
    println!(
        "  added by quire: {} ({:.2}x), {verdict} the target of {}",
        show(added),
        through_median.as_secs_f64() / direct_median.as_secs_f64().max(1e-9),
        show(TARGET)
    );
    through.stop()?;
    direct.stop()?;
    Ok(())
}
