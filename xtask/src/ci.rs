//! `cargo xtask ci`: every check CI runs, in order, stopping at the first failure, with the time each step took.
//!
//! One build serves every step that runs quire's code (`build.rs`). What only downloads (`install.rs`) is installed on
//! a thread of its own while that build runs, since the build uses both cores and the downloads almost none.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::build::{Instrumented, binary, has_nextest, plain, scratch_profiles};
use crate::install::Installed;
use crate::process::{Counts, counted, status};
use crate::project_root;

/// The steps' names and times, printed at the end (and when a step fails).
#[derive(Default)]
struct Steps(Vec<(String, Duration)>);

impl Steps {
    fn run(&mut self, name: &str, f: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
        eprintln!("\n==> {name}");
        let started = Instant::now();
        let result = f().with_context(|| format!("xtask ci: step '{name}' failed"));
        self.0.push((name.to_owned(), started.elapsed()));
        eprintln!(
            "==> {name}: {} ({:.1?})",
            if result.is_ok() { "ok" } else { "FAILED" },
            started.elapsed()
        );
        if result.is_err() {
            self.print();
        }
        result
    }

    fn print(&self) {
        eprintln!("\nstep times:");
        for (name, time) in &self.0 {
            eprintln!("  {name:<28} {:>7.1}s", time.as_secs_f64());
        }
        let total: Duration = self.0.iter().map(|(_, t)| *t).sum();
        eprintln!("  {:<28} {:>7.1}s", "all steps", total.as_secs_f64());
        eprintln!("{}", disk(&project_root()));
    }
}

/// The free space on the disk that holds the project, and what its target folder takes: a CI run once failed with
/// the disk full ("No space left on device" from the linker), and this line says at once whether that is why.
fn disk(root: &Path) -> String {
    let read = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    // `df -Pk .`: a header, then "device blocks used available capacity mount" in KiB.
    let free =
        read("df", &["-Pk", "."]).and_then(|out| out.lines().nth(1)?.split_whitespace().nth(3)?.parse::<u64>().ok());
    let target = read("du", &["-sk", "target"]).and_then(|out| out.split_whitespace().next()?.parse::<u64>().ok());
    let gib = |kib: Option<u64>| kib.map_or("?".to_owned(), |k| format!("{:.1} GiB", k as f64 / 1_048_576.0));
    format!("disk: {} free; target/ holds {}", gib(free), gib(target))
}

/// `cargo xtask ci [--timings]`; `timings` adds the slowest tests of the suite to the step times.
pub(crate) fn run(timings: bool) -> anyhow::Result<()> {
    let root = project_root();
    let started = Instant::now();
    let mut counts = Counts::default();
    let mut steps = Steps::default();
    steps.run("fmt", || status(plain().args(["fmt", "--all", "--", "--check"])))?;
    steps.run("tidy", || crate::report(crate::tidy::check(&root)))?;
    steps.run("layering", || crate::report(crate::layering::check(&root)))?;
    let fetch_root = root.clone();
    let installing = std::thread::spawn(move || {
        let started = Instant::now();
        let installed = Installed::fetch(&fetch_root, true);
        eprintln!(
            "(downloads and installs done in {:.1?}, beside the build)",
            started.elapsed()
        );
        installed
    });
    let nextest = has_nextest();
    if !nextest {
        eprintln!("(cargo-nextest is not installed; using cargo test)");
    }
    let mut build = None;
    let built = steps.run("build (instrumented, once)", || {
        let instrumented = Instrumented::new(&root)?;
        instrumented.build(nextest)?;
        build = Some(instrumented);
        Ok(())
    });
    // Joined whatever the build did: an install left running would outlive xtask and race the next run.
    let mut installed = None;
    let fetched = steps.run("downloads (the rest of)", || {
        let joined = installing.join();
        installed = Some(joined.map_err(|_| anyhow::anyhow!("the installing thread panicked"))??);
        Ok(())
    });
    built?;
    fetched?;
    let build = build.context("no build")?;
    let installed = installed.context("nothing installed")?;
    steps.run("web --check", || crate::web::run(true))?;
    steps.run("clippy", || {
        status(plain().args([
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
    let mut slowest = Vec::new();
    steps.run("tests", || {
        tests(
            &root,
            &build,
            &installed,
            nextest,
            &mut counts,
            &mut Vec::new(),
            &mut slowest,
        )
    })?;
    steps.run("examples", || examples(&root))?;
    steps.run("conformance", || {
        let tools = installed
            .browser
            .as_ref()
            .context("the conformance suite was not installed")?;
        crate::conformance::run_with(&root, tools)
    })?;
    steps.run("browser", || {
        crate::browser::run_once(&root, &build, &installed, &mut counts, &mut Vec::new())
    })?;
    // After the browser tests: what the real `quire serve` ran in Chromium counts too.
    steps.run("coverage", || crate::coverage::check(&root, &build))?;
    steps.run("rustdoc", || {
        status(plain().env("RUSTDOCFLAGS", "-D warnings").args([
            "doc",
            "--workspace",
            "--all-features",
            "--no-deps",
            "--locked",
        ]))
    })?;
    steps.print();
    if timings {
        eprintln!("\nslowest tests:");
        slowest.sort_by_key(|t| std::cmp::Reverse(t.0));
        for (time, name) in slowest.iter().take(15) {
            eprintln!("  {:>7.1}s  {name}", time.as_secs_f64());
        }
    }
    eprintln!("\nxtask ci: all checks passed in {:.0?}", started.elapsed());
    // The closing line CI reads: the tests that ran, nextest's, the doctests and the browser tests together.
    println!("ci: {} passed, {} failed", counts.passed, counts.failed);
    Ok(())
}

/// `cargo xtask test [--repeat N]`: the build, then the Rust test suite (with the doctests and the snapshot check)
/// `times` times; the counts printed at the end are those of all runs together.
pub(crate) fn test_repeated(times: u32) -> anyhow::Result<()> {
    let root = project_root();
    let installed = Installed::fetch(&root, false)?;
    let nextest = has_nextest();
    let build = Instrumented::new(&root)?;
    build.build(nextest)?;
    let mut counts = Counts::default();
    let mut failed = Vec::new();
    crate::repeat::runs(times, &mut failed, |failed| {
        tests(&root, &build, &installed, nextest, &mut counts, failed, &mut Vec::new())
    })?;
    println!(
        "tests ({times} run(s) together): {} passed, {} failed",
        counts.passed, counts.failed
    );
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

/// Runs every `crates/*/examples/*.rs` of the build (with [`EXAMPLE_INPUT`] on stdin): DESIGN promises each library
/// crate a working example.
fn examples(root: &Path) -> anyhow::Result<()> {
    let mut found = Vec::new();
    for krate in std::fs::read_dir(root.join("crates"))? {
        let Ok(entries) = std::fs::read_dir(krate?.path().join("examples")) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if let Some(example) = path.file_stem().filter(|_| path.extension().is_some_and(|e| e == "rs")) {
                found.push(example.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    for example in &found {
        eprintln!("  {example}");
        // Examples that serve MCP over stdio get a client's opening and a tools/list; the others ignore stdin.
        let program = binary(root, &format!("examples/{example}"));
        let mut child = Command::new(&program)
            .current_dir(root)
            .env("LLVM_PROFILE_FILE", scratch_profiles(root))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", program.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            let _ = stdin.write_all(EXAMPLE_INPUT.as_bytes());
        }
        let output = child.wait_with_output()?;
        if !output.status.success() {
            bail!(
                "example {example} failed:\n{}{}",
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

/// The test suite over the instrumented build with insta in check mode (a mismatching, new or unreferenced snapshot
/// fails), then the doctests.
fn tests(
    root: &Path,
    build: &Instrumented,
    installed: &Installed,
    nextest: bool,
    counts: &mut Counts,
    failed: &mut Vec<String>,
    slowest: &mut Vec<(Duration, String)>,
) -> anyhow::Result<()> {
    let references = std::env::temp_dir().join(format!("quire-insta-references-{}", std::process::id()));
    let _ = std::fs::remove_file(&references);
    let insta = |c: &mut Command| {
        c.env("INSTA_UPDATE", "no")
            .env("INSTA_FORCE_PASS", "0")
            .env("INSTA_SNAPSHOT_REFERENCES_FILE", &references);
        installed.apply(c);
    };
    crate::coverage::forget_profiles(root)?;
    let mut run = build.test_command(root, nextest);
    insta(&mut run);
    crate::process::counted_with(&mut run, counts, failed, slowest)?;
    // Neither nextest nor stable cargo-llvm-cov runs doctests. They link the instrumented libraries, so rustdoc
    // instruments them too; their profiles are not counted.
    let mut doc = build.cargo();
    doc.args(["test", "--workspace", "--all-features", "--locked", "--doc"])
        .env("RUSTDOCFLAGS", "-C instrument-coverage")
        .env("LLVM_PROFILE_FILE", scratch_profiles(root));
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
