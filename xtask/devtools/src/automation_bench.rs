//! `cargo xtask bench automations`: how late a scheduled automation starts after its time. quire-host's scheduler
//! (what runs inside `quire serve` and `quire mcp`) is started on a workspace file, with a chat model that answers at
//! once (a local HTTP server speaking the OpenAI-compatible streaming API); each round adds an automation scheduled a
//! second or two ahead to config.toml, as `quire automation add` would, and reads its run's start from the run log.
//! Its lateness (the run log's start minus the slot's time) is set against a bare tokio timer's for the same kind of
//! time on the same runtime. The target: a scheduled run starts within 1 s of its time.
//!
//! The configuration directory comes from the environment (`XDG_CONFIG_HOME`), which a process may not change for
//! itself safely: the bench runs itself again as a child with its own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, ensure};
use quire_host::automations::scheduler::{Scheduler, TICK};

use crate::measure::{Options, show, stats};

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    if std::env::var_os("QUIRE_AUTOMATION_BENCH_CHILD").is_none() {
        let dir = tempfile::tempdir()?;
        let status = std::process::Command::new(std::env::current_exe()?)
            .args(std::env::args_os().skip(1))
            .env("QUIRE_AUTOMATION_BENCH_CHILD", dir.path())
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env_remove("QUIRE_MODEL")
            .env_remove("QUIRE_BASE_URL")
            .status()?;
        ensure!(status.success(), "the bench's child failed");
        return Ok(());
    }
    let dir = std::path::PathBuf::from(std::env::var_os("QUIRE_AUTOMATION_BENCH_CHILD").context("no folder")?);
    let port = instant_model()?;
    let config = dir.join("config/quire");
    std::fs::create_dir_all(&config)?;
    std::fs::write(
        config.join("config.toml"),
        format!("[chat]\nmodel = \"openai-compatible:bench\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"),
    )?;
    let ws = quire_core::Workspace::open(dir.join("bench.quire"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let scheduler = Scheduler::start(&ws, Arc::new(quire_tools::ToolRegistry::builtin()), runtime.handle());
    let rounds = options.samples.clamp(3, 10);
    let (mut late, mut timer) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // The next whole second at least a second ahead: the slot's time.
        let slot = next_second(jiff::Timestamp::now() + Duration::from_millis(1_000))?;
        let local = slot.to_zoned(jiff::tz::TimeZone::system());
        let name = format!("bench-{round}");
        quire_host::automations::add(
            &ws,
            quire_host::automations::AutomationConfig {
                name: name.clone(),
                prompt: "Say ok.".into(),
                schedule: Some(format!("daily {}", local.strftime("%H:%M:%S"))),
                enabled: true,
                ..Default::default()
            },
        )?;
        let started = wait_for_run(&ws, &name)?;
        late.push(Duration::from_millis(
            u64::try_from(started - slot.as_millisecond()).context("the run started before its time")?,
        ));
        // A bare timer for the next whole second, on the same runtime.
        let at = next_second(jiff::Timestamp::now() + Duration::from_millis(200))?;
        let woke = runtime.block_on(async {
            let wait = u64::try_from(at.as_nanosecond() - jiff::Timestamp::now().as_nanosecond())?;
            tokio::time::sleep(Duration::from_nanos(wait)).await;
            anyhow::Ok(jiff::Timestamp::now())
        })?;
        timer.push(Duration::from_nanos(
            u64::try_from(woke.as_nanosecond() - at.as_nanosecond()).unwrap_or(0),
        ));
    }
    drop(scheduler);
    let worst = late.iter().max().copied().unwrap_or_default();
    let (late50, _) = stats(late);
    let (timer50, _) = stats(timer);
    println!(
        "Automations: {rounds} automations scheduled a second or two ahead, each run by a model that answers at once"
    );
    println!("\n{:<46} {:>12} {:>12}", "after its time", "median", "worst");
    println!(
        "{:<46} {:>12} {:>12}",
        "a scheduled run starts (the run log)",
        show(late50),
        show(worst)
    );
    println!("{:<46} {:>12}", "a bare tokio timer wakes (baseline)", show(timer50));
    println!(
        "\nThe scheduler looks every {}; the target is under 1 s: {} (ratio to the timer {:.1}x).",
        show(TICK),
        if worst < Duration::from_secs(1) {
            "met"
        } else {
            "NOT MET"
        },
        late50.as_secs_f64() / timer50.as_secs_f64().max(1e-6)
    );
    Ok(())
}

fn next_second(after: jiff::Timestamp) -> anyhow::Result<jiff::Timestamp> {
    Ok(jiff::Timestamp::from_second(after.as_second() + 1)?)
}

/// When the run of `name` started (milliseconds since the epoch), waiting at most 10 s for it.
fn wait_for_run(ws: &quire_core::Workspace, name: &str) -> anyhow::Result<i64> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(run) = ws.automation_runs(Some(name), 1)?.into_iter().next() {
            return Ok(run.started_at.0);
        }
        ensure!(std::time::Instant::now() < deadline, "{name} did not run within 10 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A chat model on loopback that answers every request at once with "ok", as an OpenAI-compatible API streams.
fn instant_model() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    Ok(port)
}

fn answer(stream: std::net::TcpStream) -> anyhow::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse()?;
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let events = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n\
                  data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n";
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
        events.len()
    )?;
    Ok(())
}
