//! quire-devtools: the parts of `cargo xtask` that link quire's crates. `cargo xtask codegen` and `bench` run it with
//! `cargo run --package quire-devtools`; CI runs its unit tests (generated files current, tool names in prose, the
//! prompt budget) with the rest of the suite.
#![expect(clippy::print_stdout, reason = "reporting to the terminal is what devtools is for")]

mod acp_bench;
mod apps_bench;
mod automation_bench;
mod bench;
mod capture_bench;
mod codegen;
mod fallback_bench;
mod import_bench;
mod ledger_bench;
mod loop_bench;
mod measure;
mod plugin_bench;
mod prompt_bench;
mod query_bench;
mod seal_bench;
mod semantic_bench;
mod sync_bench;
mod textgen;
mod tool_names;
mod web_bench;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::bail;

const USAGE: &str = "\
usage: quire-devtools <command> (through `cargo xtask`, which says what each does)

commands:
  codegen [--check]   docs/tools.md and the UI's generated.ts from the code
  tool-names          every tool named in prose exists
  prompt-budget       the agent's first request is within its token budget, and its snapshot is current
  bench ...           the benchmarks (`cargo xtask help` lists them)
";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = project_root();
    match args.as_slice() {
        ["codegen"] => codegen::run(&root, false),
        ["codegen", "--check"] => codegen::run(&root, true),
        ["tool-names"] => report(tool_names::check(&root)),
        ["prompt-budget"] => prompt_bench::check(&root),
        // Token counts are the same in any build: no release build needed.
        ["bench", "prompt"] => prompt_bench::run(&root),
        ["bench", rest @ ..] => bench::run(rest),
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

/// The workspace root: two folders above this crate's (`xtask/devtools`).
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `cargo` as the running cargo names itself, with the working directory at the project root.
pub(crate) fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(project_root());
    command
}

/// The release `quire` binary, built (or brought up to date) first: what the benchmarks that run it measure.
pub(crate) fn release_quire() -> anyhow::Result<PathBuf> {
    let status = cargo()
        .args(["build", "--release", "--locked", "--quiet", "--package", "quire"])
        .status()?;
    if !status.success() {
        anyhow::bail!("cannot build the quire binary");
    }
    Ok(project_root().join("target/release/quire"))
}

/// The local embedding model's folder, which xtask fetched (`cargo xtask model`) and names in `QUIRE_TEST_MODEL_DIR`.
pub(crate) fn model_dir() -> anyhow::Result<PathBuf> {
    match std::env::var_os("QUIRE_TEST_MODEL_DIR") {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => bail!("QUIRE_TEST_MODEL_DIR is not set: run this through `cargo xtask bench`, which fetches the model"),
    }
}

#[cfg(test)]
mod tests {
    /// docs/tools.md and the UI's generated.ts are what the code generates (`cargo xtask codegen` writes them).
    #[test]
    fn generated_files_are_current() {
        super::codegen::run(&super::project_root(), true).unwrap();
    }

    /// The first request of a chat turn is within its token budget in every context, and
    /// xtask/snapshots/prompt-tokens.txt is current (`cargo xtask bench prompt` writes it).
    #[test]
    fn the_first_request_is_within_its_budget() {
        super::prompt_bench::check(&super::project_root()).unwrap();
    }
}
