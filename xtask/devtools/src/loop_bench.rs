//! `cargo xtask bench mcp` and `cargo xtask bench agent`: DESIGN's targets for the two consumers of the tools.
//!
//! - mcp: the release `quire mcp` binary over stdio, driven as a client would drive it (newline-delimited JSON-RPC
//!   on its pipes): time from spawn to the `initialize` answer next to the time to spawn the same binary for
//!   `--version`; sequential `read_note` round trips per second next to the same call made in-process through
//!   the registry and next to `ping` round trips (in alternating rounds); pipelined `read_note` and `ping`
//!   (every request written at once); pipelined `create_note` next to the same transaction in rusqlite.
//! - agent: `build_tool_list`, and a turn of `run_note_chat` against a model that answers instantly (each step one
//!   `read_note` call), per step, next to the same `read_note` called directly: the difference is the loop's own cost.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quire_agent::{
    AgentDeps, AutoApprove, ChatFuture, ChatModel, ChatRequest, ChatResponse, NoteContext, StopReason, TextSink,
    ToolCall, ToolPolicy, Usage, build_tool_list, run_note_chat,
};
use quire_core::{Actor, Workspace};
use quire_tools::{ToolActor, ToolRegistry};
use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::measure::{Options, show, stats, time};
use crate::textgen::{TextGen, fill};

pub(crate) fn mcp(options: &Options) -> anyhow::Result<()> {
    let binary = crate::release_quire()?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.quire");
    let ws = Workspace::open(&path)?;
    let notes = options.notes.min(20_000);
    fill(&ws, &mut TextGen::new(5), 10, notes)?;
    // Index now, so that the server's background indexer has nothing to do while it is measured.
    while ws.index_pending(1_000)? > 0 {}
    let ids = ws
        .read(&Actor::User, |r| r.all_notes(quire_core::Page::first(100)))?
        .items
        .into_iter()
        .map(|n| n.id)
        .collect::<Vec<_>>();
    let quire = |args: &[&str]| {
        let mut command = Command::new(&binary);
        command
            .args(args)
            .env("QUIRE_WORKSPACE", &path)
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .env("HOME", dir.path())
            .env_remove("QUIRE_EMBED_MODEL")
            .env_remove("QUIRE_LOG");
        command
    };

    // With a local sentence model configured too: the embedder loads on first use (the background indexer), so
    // it must not delay `initialize`.
    let model = crate::model_dir()?;
    let mut spawn = Vec::new();
    let mut initialize = Vec::new();
    let mut initialize_with_model = Vec::new();
    for _ in 0..21 {
        spawn.push(time(|| {
            let out = quire(&["--version"]).output()?;
            anyhow::ensure!(out.status.success(), "quire --version failed");
            Ok(())
        })?);
        let started = Instant::now();
        let mut server = Server::start(quire(&["mcp"]))?;
        server.initialize()?;
        initialize.push(started.elapsed());
        server.stop()?;
        let mut command = quire(&["mcp"]);
        command.env("QUIRE_EMBED_MODEL", &model);
        let started = Instant::now();
        let mut server = Server::start(command)?;
        server.initialize()?;
        initialize_with_model.push(started.elapsed());
        server.stop()?;
    }

    let registry = ToolRegistry::builtin();
    let actor = ToolActor::mcp("bench");
    let calls = options.samples.max(1_000);
    let started = Instant::now();
    for i in 0..calls {
        let out = registry.call(&ws, &actor, "read_note", json!({ "note_id": ids[i % ids.len()] }))?;
        anyhow::ensure!(!out.is_error, "read_note failed: {}", out.value);
        std::hint::black_box(serde_json::to_string(&out.value)?);
    }
    let in_process = started.elapsed();

    let mut server = Server::start(quire(&["mcp"]))?;
    server.initialize()?;
    // One at a time, read_note and ping in alternating rounds, so that the machine's swings fall on both alike;
    // each total is the median round scaled to `calls` calls.
    let rounds = 10;
    let per_round = calls.div_ceil(rounds);
    let (mut read_rounds, mut ping_rounds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let started = Instant::now();
        for i in 0..per_round {
            let id = &ids[(round * per_round + i) % ids.len()];
            let answer = server.request(
                "tools/call",
                json!({ "name": "read_note", "arguments": { "note_id": id } }),
            )?;
            anyhow::ensure!(
                answer["result"]["isError"] != json!(true),
                "read_note failed over stdio: {answer}"
            );
        }
        read_rounds.push(started.elapsed());
        let started = Instant::now();
        for _ in 0..per_round {
            server.request("ping", json!({}))?;
        }
        ping_rounds.push(started.elapsed());
    }
    let median_total = |rounds: Vec<Duration>| {
        Duration::from_secs_f64(stats(rounds).0.as_secs_f64() * calls as f64 / per_round as f64)
    };
    let over_stdio = median_total(read_rounds);
    let ping = median_total(ping_rounds);

    // Pipelined: every request written at once. read_note of a 2,000-character note, then ping, then create_note
    // of a 200-word note (each a write transaction), next to the same transaction written directly with rusqlite.
    let body: String = TextGen::new(3).words(400).chars().take(2_000).collect();
    let long_id = ws
        .write(&Actor::User, |w| {
            w.create_note(quire_core::NewNote::new("Pipelined", body))
        })?
        .summary
        .id;
    let reads: Vec<(&str, Value)> = (0..calls)
        .map(|_| {
            (
                "tools/call",
                json!({ "name": "read_note", "arguments": { "note_id": long_id } }),
            )
        })
        .collect();
    let pings: Vec<(&str, Value)> = (0..calls).map(|_| ("ping", json!({}))).collect();
    let mut piped_reads = Vec::new();
    let mut piped_pings = Vec::new();
    for _ in 0..5 {
        piped_reads.push(server.pipelined(&reads)?);
        piped_pings.push(server.pipelined(&pings)?);
    }
    // Five rounds, each a pipelined series and then the same number written directly: the medians are compared.
    let writes_n = (calls / 5).max(200);
    let mut text = TextGen::new(17);
    let (mut piped_creates, mut raw_creates) = (Vec::new(), Vec::new());
    for round in 0..5 {
        let creates: Vec<(&str, Value)> = (0..writes_n)
            .map(|i| {
                let arguments = json!({ "title": format!("Piped {round}.{i}"), "body": text.words(200) });
                ("tools/call", json!({ "name": "create_note", "arguments": arguments }))
            })
            .collect();
        piped_creates.push(server.pipelined(&creates)?);
        raw_creates.push(raw_create_series(&path, writes_n, &mut text)?);
    }
    server.stop()?;
    let (piped_creates, _) = stats(piped_creates);
    let (raw_creates, _) = stats(raw_creates);

    let (spawn50, _) = stats(spawn);
    let (init50, init99) = stats(initialize);
    let (model50, model99) = stats(initialize_with_model);
    let rate = |d: Duration| calls as f64 / d.as_secs_f64();
    println!("quire mcp over stdio: {notes} notes, release binary, {calls} sequential read_note calls");
    println!(
        "\n{:<44} {:>12} {:>12} {:>22} {:>8}",
        "operation", "p50", "p99", "baseline p50", "ratio"
    );
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>7.2}x",
        "spawn to the initialize answer",
        show(init50),
        show(init99),
        format!("{} (--version)", show(spawn50)),
        init50.as_secs_f64() / spawn50.as_secs_f64()
    );
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>7.2}x",
        "  the same with a local model configured",
        show(model50),
        show(model99),
        format!("{} (no model)", show(init50)),
        model50.as_secs_f64() / init50.as_secs_f64()
    );
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>7.2}x",
        "read_note round trip (calls/s)",
        format!("{:.0}/s", rate(over_stdio)),
        "-",
        format!("{:.0}/s (in-process)", rate(in_process)),
        over_stdio.as_secs_f64() / in_process.as_secs_f64()
    );
    let (reads50, _) = stats(piped_reads);
    let (pings50, _) = stats(piped_pings);
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>7.2}x",
        "pipelined read_note, 2,000 chars (calls/s)",
        format!("{:.0}/s", rate(reads50)),
        "-",
        format!("{:.0}/s (ping)", rate(pings50)),
        reads50.as_secs_f64() / pings50.as_secs_f64()
    );
    let per = |d: Duration, n: usize| n as f64 / d.as_secs_f64();
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>7.2}x",
        "pipelined create_note, 200 words (calls/s)",
        format!("{:.0}/s", per(piped_creates, writes_n)),
        "-",
        format!("{:.0}/s (rusqlite)", per(raw_creates, writes_n)),
        piped_creates.as_secs_f64() / raw_creates.as_secs_f64()
    );
    println!(
        "{:<44} {:>12} {:>12} {:>22} {:>8}",
        "ping round trip (calls/s): read_note/ping",
        format!("{:.0}/s", rate(ping)),
        "-",
        format!("{:.0}/s (read_note)", rate(over_stdio)),
        format!("{:.2}x", over_stdio.as_secs_f64() / ping.as_secs_f64())
    );
    Ok(())
}

/// A `quire mcp` child process spoken to over its pipes.
pub(crate) struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next_id: u64,
    line: String,
}

impl Server {
    pub(crate) fn start(mut command: Command) -> anyhow::Result<Server> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start quire mcp")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        Ok(Server {
            child,
            stdin,
            stdout,
            next_id: 0,
            line: String::new(),
        })
    }

    pub(crate) fn initialize(&mut self) -> anyhow::Result<()> {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "quire-bench", "version": "0" }
            }),
        )?;
        anyhow::ensure!(answer.get("result").is_some(), "initialize failed: {answer}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let mut text = serde_json::to_string(message)?;
        text.push('\n');
        self.stdin.write_all(text.as_bytes())?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Writes every request at once (from a second thread, as a busy client does) while reading the answers;
    /// returns the time from the first write to the last answer. Fails on any error answer.
    pub(crate) fn pipelined(&mut self, requests: &[(&str, Value)]) -> anyhow::Result<Duration> {
        let first = self.next_id + 1;
        let mut text = String::new();
        for (method, params) in requests {
            self.next_id += 1;
            text.push_str(&serde_json::to_string(
                &json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params }),
            )?);
            text.push('\n');
        }
        let last = self.next_id;
        let stdin = &mut self.stdin;
        let stdout = &mut self.stdout;
        let line = &mut self.line;
        let started = Instant::now();
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> std::io::Result<()> {
                stdin.write_all(text.as_bytes())?;
                stdin.flush()
            });
            let mut answered = 0;
            while answered < requests.len() {
                line.clear();
                if stdout.read_line(line)? == 0 {
                    bail!("quire mcp closed its output");
                }
                let message: Value = serde_json::from_str(line)?;
                let Some(id) = message["id"].as_u64() else { continue };
                anyhow::ensure!((first..=last).contains(&id), "an answer to no request: {message}");
                anyhow::ensure!(
                    message.get("error").is_none() && message["result"]["isError"] != json!(true),
                    "a call failed: {message}"
                );
                answered += 1;
            }
            writer
                .join()
                .map_err(|_| anyhow::anyhow!("the writer thread panicked"))??;
            Ok(started.elapsed())
        })
    }

    /// Sends a request and reads lines until its answer (notifications in between are skipped).
    pub(crate) fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("quire mcp closed its output");
            }
            let message: Value = serde_json::from_str(&self.line)?;
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    pub(crate) fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin);
        self.child.wait()?;
        Ok(())
    }
}

/// A model that answers at once: `read_note` on the next note for `steps` steps, then a sentence.
struct InstantModel {
    steps: usize,
    ids: Vec<String>,
    calls: AtomicUsize,
}

impl ChatModel for InstantModel {
    fn chat<'a>(&'a self, _request: &'a ChatRequest, _on_text: TextSink<'a>) -> ChatFuture<'a> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let response = if n % (self.steps + 1) < self.steps {
            ChatResponse {
                text: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("call_{n}"),
                    name: "read_note".into(),
                    arguments: json!({ "note_id": self.ids[n % self.ids.len()] }).to_string(),
                }],
                stop: StopReason::ToolUse,
                usage: Usage::default(),
            }
        } else {
            ChatResponse {
                text: "Done.".into(),
                tool_calls: Vec::new(),
                stop: StopReason::EndTurn,
                usage: Usage::default(),
            }
        };
        Box::pin(async move { Ok(response) })
    }

    fn name(&self) -> String {
        "instant".into()
    }
}

pub(crate) fn agent(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let ws = Workspace::open(dir.path().join("bench.quire"))?;
    let notes = options.notes.min(10_000);
    fill(&ws, &mut TextGen::new(9), 10, notes)?;
    let ids: Vec<String> = ws
        .read(&Actor::User, |r| r.all_notes(quire_core::Page::first(100)))?
        .items
        .into_iter()
        .map(|n| n.id)
        .collect();
    let focused = ws.read(&Actor::User, |r| r.note(&ids[0]))?;
    let context = NoteContext::focused(&focused.summary.id, &focused.summary.title, &focused.body);
    let registry = ToolRegistry::builtin();
    let policy = ToolPolicy::default();

    let mut lists = Vec::new();
    for _ in 0..options.samples {
        let started = Instant::now();
        std::hint::black_box(build_tool_list(&context, &registry, &policy));
        lists.push(started.elapsed());
    }

    const STEPS: usize = 7;
    let model = InstantModel {
        steps: STEPS,
        ids: ids.clone(),
        calls: AtomicUsize::new(0),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let approver = AutoApprove(false);
    let turns = (options.samples / 10).max(50);
    let mut per_step = Vec::new();
    let mut direct = Vec::new();
    let actor = ToolActor::agent("bench", 1);
    for turn in 0..turns {
        let deps = AgentDeps {
            model: &model,
            client: None,
            registry: &registry,
            workspace: &ws,
            chat_id: "bench".into(),
            turn: u32::try_from(turn).unwrap_or(u32::MAX),
            policy: policy.clone(),
            approver: &approver,
            asker: None,
            events: None,
            cancel: tokio_util::sync::CancellationToken::new(),
            interrupt: tokio_util::sync::CancellationToken::new(),
            max_tokens: 1_000,
            max_turn_tokens: None,
        };
        let started = Instant::now();
        let outcome = runtime
            .block_on(run_note_chat(&context, &[], "Read a few notes.", &deps))
            .map_err(|e| anyhow::anyhow!("the turn failed: {e}"))?;
        let elapsed = started.elapsed();
        anyhow::ensure!(outcome.reply == "Done.", "unexpected reply {:?}", outcome.reply);
        per_step.push(elapsed / (STEPS as u32 + 1));
        let started = Instant::now();
        for i in 0..STEPS {
            let out = registry.call(
                &ws,
                &actor,
                "read_note",
                json!({ "note_id": ids[(turn + i) % ids.len()] }),
            )?;
            std::hint::black_box(out);
        }
        direct.push(started.elapsed() / (STEPS as u32 + 1));
    }
    let (list50, list99) = stats(lists);
    let (step50, step99) = stats(per_step);
    let (direct50, _) = stats(direct);
    println!(
        "quire-agent bench: {notes} notes, 21 tools offered, turns of {STEPS} tool steps + 1 answer, instant model"
    );
    println!(
        "\n{:<44} {:>12} {:>12} {:>26}",
        "operation", "p50", "p99", "loop's own cost p50"
    );
    println!(
        "{:<44} {:>12} {:>12} {:>26}",
        "build_tool_list",
        show(list50),
        show(list99),
        "-"
    );
    println!(
        "{:<44} {:>12} {:>12} {:>26}",
        "one step of run_note_chat (read_note)",
        show(step50),
        show(step99),
        format!("{} (minus the tool)", show(step50.saturating_sub(direct50)))
    );
    Ok(())
}

/// `n` notes of 200 words created one transaction each, written directly with rusqlite as quire-core writes a
/// created note: a change set, the row, its full-text entry and the word index's log row, the change log row and a
/// revision. Returns the time.
fn raw_create_series(path: &std::path::Path, n: usize, text: &mut TextGen) -> anyhow::Result<Duration> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let notes: Vec<(String, String)> = (0..n).map(|i| (format!("Raw {i}"), text.words(200))).collect();
    let started = Instant::now();
    for (title, body) in &notes {
        let tx = conn.unchecked_transaction()?;
        let id = format!("{:032x}", text.next() as u128 * 0x1_0000_0001);
        let set = format!("{:032x}", text.next() as u128 * 0x1_0000_0003);
        let now = quire_core::Timestamp::now().as_millis();
        tx.prepare_cached(
            "INSERT INTO change_sets (id, actor, actor_key, created) VALUES (?1, 'mcp:bench', NULL, ?2)",
        )?
        .execute(params![set, now])?;
        tx.prepare_cached(
            "INSERT INTO notes (id, notebook_id, title, body, is_todo, todo_completed, is_protected, created, updated, \
             deleted) VALUES (?1, '_root', ?2, ?3, 0, NULL, 0, ?4, ?4, NULL)",
        )?
        .execute(params![id, title, body, now])?;
        let seq = tx.last_insert_rowid();
        tx.prepare_cached("INSERT INTO notes_fts (rowid, title, body, tags, attachments) VALUES (?1, ?2, ?3, '', '')")?
            .execute(params![seq, title, body])?;
        tx.prepare_cached("INSERT INTO search_log (note_seq) VALUES (?1)")?
            .execute(params![seq])?;
        tx.prepare_cached(
            "INSERT INTO changes (change_set_id, entity, entity_id, operation, actor, before, after_hash, at) \
             VALUES (?1, 'note', ?2, 'create', 'mcp:bench', NULL, ?3, ?4)",
        )?
        .execute(params![set, id, format!("{:016x}", text.next()), now])?;
        tx.prepare_cached(
            "INSERT INTO revisions (note_id, title, body, actor, change_set_id, created) VALUES (?1, ?2, ?3, \
             'mcp:bench', ?4, ?5)",
        )?
        .execute(params![id, title, body, set, now])?;
        tx.commit()?;
    }
    Ok(started.elapsed())
}
