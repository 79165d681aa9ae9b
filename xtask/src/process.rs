//! Running the programs the checks are made of: a command that must succeed, and a test run whose summary lines are
//! counted.

use std::process::Command;

use anyhow::{Context, bail};

/// Runs a command with its output passed through; a failure to start it or a failing status is an error.
pub(crate) fn status(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}");
    let status = command.status().with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// Tests counted from the runners' own summary lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) passed: u64,
    pub(crate) failed: u64,
}

impl Counts {
    /// Reads nextest's `Summary [..] 41 tests run: 40 passed, 1 failed, 0 skipped` and libtest's
    /// `test result: ok. 2 passed; 0 failed; ...`.
    fn add_line(&mut self, line: &str) {
        let number_before = |text: &str, word: &str| -> Option<u64> {
            let at = text.find(word)?;
            text[..at]
                .trim_end()
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        };
        let line = line.trim();
        // node --test's TAP totals: `# pass 11`, `# fail 0`.
        if let Some(n) = line.strip_prefix("# pass ").and_then(|n| n.parse::<u64>().ok()) {
            self.passed += n;
            return;
        }
        if let Some(n) = line.strip_prefix("# fail ").and_then(|n| n.parse::<u64>().ok()) {
            self.failed += n;
            return;
        }
        let summary = if let Some(rest) = line.strip_prefix("Summary [") {
            rest.split_once("run:").map(|(_, counts)| counts)
        } else {
            line.strip_prefix("test result:")
        };
        if let Some(counts) = summary {
            self.passed += number_before(counts, " passed").unwrap_or(0);
            self.failed += number_before(counts, " failed").unwrap_or(0);
        }
    }
}

/// Runs a command, passing its output through while counting the tests its summary lines report.
pub(crate) fn counted(command: &mut Command, counts: &mut Counts) -> anyhow::Result<()> {
    counted_with(command, counts, &mut Vec::new(), &mut Vec::new())
}

/// One test's outcome line: nextest's `PASS [   1.234s] (3/90) quire-core::it some::test` (and `FAIL`, `TIMEOUT`,
/// `SIGSEGV`, `LEAK-FAIL`, ...), libtest's `test some::test ... FAILED`, node's TAP `not ok 4 - a test`.
#[derive(Debug, PartialEq)]
enum Outcome {
    Passed(std::time::Duration, String),
    Failed(String),
}

fn outcome(line: &str) -> Option<Outcome> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("not ok ") {
        let name = rest.split_once(" - ").map_or(rest, |(_, name)| name);
        return Some(Outcome::Failed(name.trim().to_owned()));
    }
    if let Some(name) = line
        .strip_prefix("test ")
        .and_then(|rest| rest.strip_suffix(" ... FAILED"))
    {
        return Some(Outcome::Failed(name.trim().to_owned()));
    }
    let (status, rest) = line.split_once(" [")?;
    if status.is_empty() || !status.chars().all(|c| c.is_ascii_uppercase() || c == '-') {
        return None;
    }
    let (time, name) = rest.split_once("s] ")?;
    let seconds: f64 = time.trim().parse().ok()?;
    // nextest's progress counter, `(3/90) `, when it prints one.
    let name = match name.strip_prefix('(').and_then(|n| n.split_once(") ")) {
        Some((counter, rest)) if counter.trim().split('/').all(|n| n.trim().parse::<u64>().is_ok()) => rest,
        _ => name,
    };
    let name = name.trim().to_owned();
    match status {
        "PASS" => Some(Outcome::Passed(std::time::Duration::from_secs_f64(seconds), name)),
        "SLOW" | "START" | "RETRY" | "SETUP" | "LEAK" | "TRY" | "DELAY" | "SETUP-PASS" => None,
        _ => Some(Outcome::Failed(name)),
    }
}

/// [`counted`], also collecting the names of the tests that failed and how long each passing test took.
pub(crate) fn counted_with(
    command: &mut Command,
    counts: &mut Counts,
    failed: &mut Vec<String>,
    times: &mut Vec<(std::time::Duration, String)>,
) -> anyhow::Result<()> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let shown = format!("{command:?}");
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {shown}"))?;
    let (sender, lines) = std::sync::mpsc::channel::<String>();
    let mut readers = Vec::new();
    for stream in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ] {
        let sender = sender.clone();
        if let Some(stream) = stream {
            readers.push(std::thread::spawn(move || {
                // Bytes, not `lines()`: a line that is not UTF-8 must not stop the draining (the child would block).
                let mut reader = BufReader::new(stream);
                let mut line = Vec::new();
                while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                    let text = String::from_utf8_lossy(&line);
                    let _ = sender.send(text.trim_end_matches(['\n', '\r']).to_owned());
                    line.clear();
                }
            }));
        }
    }
    drop(sender);
    for line in lines {
        counts.add_line(&line);
        match outcome(&line) {
            Some(Outcome::Passed(time, name)) => times.push((time, name)),
            Some(Outcome::Failed(name)) if !failed.contains(&name) => failed.push(name),
            _ => {}
        }
        // Everything goes to stderr: stdout carries only the final count line.
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    for reader in readers {
        let _ = reader.join();
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Counts, Outcome, outcome};

    #[test]
    fn reads_each_tests_outcome() {
        let secs = std::time::Duration::from_secs_f64;
        assert_eq!(
            outcome("        PASS [   1.250s] (3/90) quire-core::it search::finds_words"),
            Some(Outcome::Passed(secs(1.25), "quire-core::it search::finds_words".into()))
        );
        assert_eq!(
            outcome("        PASS [   0.010s] quire-tests::cli a_test"),
            Some(Outcome::Passed(secs(0.01), "quire-tests::cli a_test".into()))
        );
        assert_eq!(
            outcome("        FAIL [ 180.002s] (7/90) quire-tests::chat slow"),
            Some(Outcome::Failed("quire-tests::chat slow".into()))
        );
        assert_eq!(
            outcome("     TIMEOUT [ 300.000s] quire-tests::chat hangs"),
            Some(Outcome::Failed("quire-tests::chat hangs".into()))
        );
        assert_eq!(
            outcome("   LEAK-FAIL [   1.000s] quire-tests::plugins leaks"),
            Some(Outcome::Failed("quire-tests::plugins leaks".into()))
        );
        assert_eq!(
            outcome("test budget::no_answer ... FAILED"),
            Some(Outcome::Failed("budget::no_answer".into()))
        );
        assert_eq!(
            outcome("    not ok 2 - search shows its total and loads more"),
            Some(Outcome::Failed("search shows its total and loads more".into()))
        );
        for other in [
            "        SLOW [> 60.000s] quire-tests::chat slow",
            "ok 1 - passes",
            "     Summary [   4.143s] 41 tests run: 40 passed, 1 failed, 0 skipped",
            "   Compiling quire-core v0.0.0",
            "[INFO] something [1s] else",
        ] {
            assert_eq!(outcome(other), None, "{other}");
        }
    }

    #[test]
    fn counts_runner_summaries() {
        let mut counts = Counts::default();
        for line in [
            "     Summary [   4.143s] 41 tests run: 40 passed, 1 failed, 0 skipped",
            "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "test result: FAILED. 7 passed; 3 failed; 0 ignored",
            "running 3 tests",
            "test something_passed ... ok",
            "# pass 11",
            "# fail 1",
        ] {
            counts.add_line(line);
        }
        assert_eq!(counts, Counts { passed: 60, failed: 5 });
    }
}
