//! `cargo xtask bench acp`: what quire's ACP client adds to a message, against the agent's own time. An agent that
//! answers at once (a plain Node script, written here: each prompt gets one message chunk, then its end) is driven
//! two ways in alternating rounds: by quire-agent's `AcpSession` (what `quire chat --agent` and the sidebar run: the
//! reader and writer tasks, the update mapped to events, the permission path idle), and by the least a client can do
//! (write the request line, read lines until its answer). The difference per message is quire's cost; the target is
//! under 5 ms.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use quire_agent::AutoApprove;
use quire_agent::acp::{AcpAgent, AcpSession, McpAttach};
use serde_json::{Value, json};

use crate::measure::{Options, show, stats};

/// The agent: answers `initialize`, `session/new`, and each `session/prompt` with one chunk and its end.
const AGENT: &str = r#"
const rl = require("node:readline").createInterface({ input: process.stdin });
const out = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") out({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: 1, agentCapabilities: {} } });
  else if (m.method === "session/new") out({ jsonrpc: "2.0", id: m.id, result: { sessionId: "s" } });
  else if (m.method === "session/prompt") {
    out({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ok" } } } });
    out({ jsonrpc: "2.0", id: m.id, result: { stopReason: "end_turn" } });
  }
});
"#;

pub(crate) fn run(options: &Options) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("instant-agent.cjs");
    std::fs::write(&script, AGENT)?;
    let messages = options.samples.clamp(100, 5_000);
    let rounds = 9;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let agent = AcpAgent {
        name: "instant".into(),
        command: "node".into(),
        args: vec![script.display().to_string()],
        env: std::env::vars().filter(|(k, _)| k == "PATH").collect(),
        access: quire_agent::acp::AgentAccess::default(),
    };
    let attach = McpAttach {
        name: "quire".into(),
        command: "quire".into(),
        args: Vec::new(),
        env: Vec::new(),
    };
    let mut session = runtime.block_on(AcpSession::start(&agent, &attach, dir.path()))?;
    let mut raw = Raw::start(&script)?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let (mut quire, mut floor) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        let started = Instant::now();
        runtime.block_on(async {
            for _ in 0..messages {
                let mut sink = |event| {
                    std::hint::black_box(event);
                };
                session.prompt("hello", &mut sink, &AutoApprove(false), &cancel).await?;
            }
            anyhow::Ok(())
        })?;
        let ours = started.elapsed();
        let started = Instant::now();
        for _ in 0..messages {
            raw.prompt()?;
        }
        let least = started.elapsed();
        // The first round warms both up.
        if round > 0 {
            quire.push(ours / u32::try_from(messages)?);
            floor.push(least / u32::try_from(messages)?);
        }
    }
    runtime.block_on(session.close());
    let (quire50, quire99) = stats(quire);
    let (floor50, floor99) = stats(floor);
    println!("ACP: {messages} prompts a round to an agent that answers at once (Node), {rounds} rounds each");
    println!("\n{:<40} {:>12} {:>12}", "per message", "p50", "p99");
    println!(
        "{:<40} {:>12} {:>12}",
        "quire's AcpSession",
        show(quire50),
        show(quire99)
    );
    println!(
        "{:<40} {:>12} {:>12}",
        "the least a client does (baseline)",
        show(floor50),
        show(floor99)
    );
    println!(
        "\nquire's cost per message: {} (target under 5 ms); ratio {:.2}x",
        show(quire50.saturating_sub(floor50)),
        quire50.as_secs_f64() / floor50.as_secs_f64()
    );
    Ok(())
}

/// The same agent driven with nothing but its pipes.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Raw {
    fn start(script: &std::path::Path) -> anyhow::Result<Raw> {
        let mut child = Command::new("node")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?);
        let mut raw = Raw {
            child,
            stdin,
            stdout,
            next: 0,
        };
        raw.call("initialize", json!({ "protocolVersion": 1 }))?;
        raw.call("session/new", json!({ "cwd": "/", "mcpServers": [] }))?;
        Ok(raw)
    }

    fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next += 1;
        let id = self.next;
        writeln!(
            self.stdin,
            "{}",
            json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
        )?;
        self.stdin.flush()?;
        let mut line = String::new();
        loop {
            line.clear();
            anyhow::ensure!(self.stdout.read_line(&mut line)? > 0, "the agent closed its output");
            let message: Value = serde_json::from_str(&line)?;
            if message["id"].as_u64() == Some(id) {
                return Ok(message);
            }
        }
    }

    fn prompt(&mut self) -> anyhow::Result<()> {
        self.call(
            "session/prompt",
            json!({ "sessionId": "s", "prompt": [{ "type": "text", "text": "hello" }] }),
        )?;
        Ok(())
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(1));
    }
}
