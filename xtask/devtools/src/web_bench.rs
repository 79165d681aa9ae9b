//! `cargo xtask bench web`: the web app at scale. The release `quire serve` on a workspace of N notes (default
//! 100,000, all in one notebook so its note list is that long): time from start to the first page, and the API round
//! trips the UI makes (open a note, search from the box, a page of the note list at the start and deep in it), each
//! next to the same call in-process, p50 and p95.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use quire_core::{Actor, Workspace};
use quire_tools::ToolRegistry;
use serde_json::{Value, json};

use crate::measure::{Options, show, time};
use crate::textgen::{TextGen, fill};

/// A running `quire serve`, stopped with Ctrl+C (SIGINT) when dropped.
struct Serve {
    child: std::process::Child,
    /// The address it printed, with the key.
    url: String,
}

impl Serve {
    fn start(mut command: Command) -> anyhow::Result<Serve> {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .context("cannot start quire serve")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .with_context(|| format!("quire serve printed no address: {line}"))?
            .to_owned();
        Ok(Serve { child, url })
    }

    fn base(&self) -> &str {
        self.url.split("/?").next().unwrap_or(&self.url)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn p50_p95(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.95))
}

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let binary = crate::release_quire()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.quire");
    let ws = Workspace::open(&path)?;
    let mut text = TextGen::new(17);
    let notebooks = fill(&ws, &mut text, 1, options.notes)?;
    while ws.index_pending(1_000)? > 0 {}
    let notebook = notebooks[0].clone();
    let ids: Vec<String> = ws
        .read(&Actor::User, |r| r.all_notes(quire_core::Page::first(500)))?
        .items
        .into_iter()
        .map(|n| n.id)
        .collect();
    let serve = || {
        let mut command = Command::new(&binary);
        command
            .args(["serve", "--addr", "127.0.0.1:0"])
            .env("QUIRE_WORKSPACE", &path)
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .env("HOME", dir.path())
            .env_remove("QUIRE_MODEL")
            .env_remove("QUIRE_EMBED_MODEL")
            .env_remove("QUIRE_LOG");
        command
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let http = quire_embed::http::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;

    // Start to first page: spawn, the printed address, the session, the page (the baseline: `quire --version`).
    let (mut first_page, mut version) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        version.push(time(|| {
            let out = Command::new(&binary).arg("--version").output()?;
            anyhow::ensure!(out.status.success(), "quire --version failed");
            Ok(())
        })?);
        let started = Instant::now();
        let server = Serve::start(serve())?;
        runtime.block_on(async {
            let opened = http.get(&server.url).send().await?;
            let cookie = opened
                .headers()
                .get("set-cookie")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
                .context("no session cookie")?
                .to_owned();
            let page = http
                .get(format!("{}/", server.base()))
                .header("cookie", cookie)
                .send()
                .await?;
            anyhow::ensure!(page.status() == 200, "the page answered {}", page.status());
            page.bytes().await?;
            Ok::<_, anyhow::Error>(())
        })?;
        first_page.push(started.elapsed());
    }

    let server = Serve::start(serve())?;
    let (cookie, secret) = runtime.block_on(async {
        let opened = http.get(&server.url).send().await?;
        let header = |name: &str| {
            opened
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let cookie = header("set-cookie")
            .and_then(|v| v.split(';').next().map(str::to_owned))
            .context("no session cookie")?;
        // The API also wants the session's secret, which the redirect carries in its fragment.
        let secret = header("location")
            .and_then(|v| v.strip_prefix("/#session=").map(str::to_owned))
            .context("no session secret")?;
        Ok::<_, anyhow::Error>((cookie, secret))
    })?;
    let registry = ToolRegistry::builtin();
    let samples = options.samples.clamp(50, 2_000);
    let mut rows = Vec::new();
    let mut measure =
        |label: &str, tool: &'static str, args: &dyn Fn(usize) -> Value, url: &dyn Fn(usize) -> String| {
            let (mut api, mut direct) = (Vec::new(), Vec::new());
            for i in 0..samples {
                let arguments = args(i);
                direct.push(time(|| {
                    let out = registry.read_as_user(&ws, tool, arguments)?;
                    anyhow::ensure!(out.error_message().is_none(), "{tool} failed: {}", out.value);
                    std::hint::black_box(serde_json::to_string(&out.value)?);
                    Ok(())
                })?);
                let address = format!("{}{}", server.base(), url(i));
                api.push(time(|| {
                    runtime.block_on(async {
                        let answer = http
                            .get(&address)
                            .header("cookie", &cookie)
                            .header("x-quire-session", &secret)
                            .send()
                            .await?;
                        anyhow::ensure!(answer.status() == 200, "{address} answered {}", answer.status());
                        std::hint::black_box(answer.bytes().await?);
                        Ok(())
                    })
                })?);
            }
            rows.push((label.to_owned(), api, direct));
            Ok::<_, anyhow::Error>(())
        };
    let id = |i: usize| ids[(i * 7_919) % ids.len()].clone();
    measure(
        "open a note (GET /api/notes/ID)",
        "read_note",
        &|i| json!({ "note_id": id(i), "max_chars": 100_000 }),
        &|i| format!("/api/notes/{}", id(i)),
    )?;
    let queries: Vec<String> = (0..samples).map(|_| text.query_terms().join(" ")).collect();
    measure(
        "search from the box (GET /api/search)",
        "search_notes",
        &|i| json!({ "query": queries[i] }),
        &|i| format!("/api/search?query={}", queries[i].replace(' ', "+")),
    )?;
    measure(
        "note list, first page of 100, by date",
        "list_notes",
        &|_| json!({ "notebook_id": notebook, "limit": 100, "sort": "updated" }),
        &|_| format!("/api/notes?notebook_id={notebook}&limit=100&sort=updated"),
    )?;
    measure(
        "note list, first page of 100, by title",
        "list_notes",
        &|_| json!({ "notebook_id": notebook, "limit": 100, "sort": "title" }),
        &|_| format!("/api/notes?notebook_id={notebook}&limit=100&sort=title"),
    )?;
    let deep = options.notes.saturating_sub(100) / 2;
    measure(
        "note list, a page in the middle",
        "list_notes",
        &|_| json!({ "notebook_id": notebook, "limit": 100, "offset": deep, "sort": "updated" }),
        &|_| format!("/api/notes?notebook_id={notebook}&limit=100&offset={deep}&sort=updated"),
    )?;
    drop(server);

    let (page50, page95) = p50_p95(first_page);
    let (version50, _) = p50_p95(version);
    println!(
        "quire serve: {} notes in one notebook, release binary, {samples} sequential requests per row",
        options.notes
    );
    println!(
        "\n{:<42} {:>10} {:>10} {:>24} {:>8}",
        "operation", "p50", "p95", "baseline p50 (p95)", "ratio"
    );
    println!(
        "{:<42} {:>10} {:>10} {:>24} {:>7.2}x",
        "start to the first page",
        show(page50),
        show(page95),
        format!("{} (--version)", show(version50)),
        page50.as_secs_f64() / version50.as_secs_f64()
    );
    for (label, api, direct) in rows {
        let (a50, a95) = p50_p95(api);
        let (d50, d95) = p50_p95(direct);
        println!(
            "{label:<42} {:>10} {:>10} {:>24} {:>7.2}x",
            show(a50),
            show(a95),
            format!("{} ({}) in-process", show(d50), show(d95)),
            a50.as_secs_f64() / d50.as_secs_f64().max(1e-12)
        );
    }
    Ok(())
}
