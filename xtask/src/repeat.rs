//! `--repeat N` of `cargo xtask test` and `cargo xtask browser`: a suite run N times, and every test that failed in
//! any run named with how often. A flaky test shows here before it fails a submission at random; CI itself never
//! retries (a retry hides a race).

/// Runs `suite` `times` times (at least once), each run adding the names of its failed tests; after the last run,
/// prints each name with the number of runs it failed in and fails when there was any.
pub(crate) fn runs(
    times: u32,
    failed: &mut Vec<String>,
    mut suite: impl FnMut(&mut Vec<String>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let times = times.max(1);
    let mut tally: Vec<(String, u32)> = Vec::new();
    let mut failed_runs = 0;
    for run in 1..=times {
        if times > 1 {
            eprintln!("\n==> run {run} of {times}");
        }
        let mut this_run = Vec::new();
        let result = suite(&mut this_run);
        if result.is_err() || !this_run.is_empty() {
            failed_runs += 1;
            if this_run.is_empty() {
                this_run.push(format!("(run {run} failed without naming a test)"));
            }
        }
        for name in this_run {
            match tally.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => tally.push((name, 1)),
            }
        }
    }
    eprintln!("\n{times} run(s): {failed_runs} with a failure");
    for (name, count) in &tally {
        eprintln!("  failed in {count} of {times}: {name}");
    }
    failed.extend(tally.into_iter().map(|(name, _)| name));
    anyhow::ensure!(failed_runs == 0, "{failed_runs} of {times} run(s) failed");
    Ok(())
}

/// Reads `--repeat N` (N ≥ 1) from a command's arguments; 1 without it.
pub(crate) fn parse(args: &[&str]) -> anyhow::Result<u32> {
    match args {
        [] => Ok(1),
        ["--repeat", n] => match n.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => anyhow::bail!("--repeat takes a number of runs, 1 or more; got {n:?}"),
        },
        other => anyhow::bail!("expected --repeat N, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_each_test_that_failed_in_any_run() {
        let mut run = 0;
        let mut failed = Vec::new();
        let result = super::runs(3, &mut failed, |names| {
            run += 1;
            if run != 2 {
                names.push("flaky".into());
            }
            if run == 3 {
                names.push("broken once".into());
            }
            Ok(())
        });
        assert!(result.is_err());
        assert_eq!(failed, ["flaky", "broken once"]);
        let mut failed = Vec::new();
        assert!(super::runs(2, &mut failed, |_| Ok(())).is_ok());
        assert!(failed.is_empty());
        assert!(super::runs(1, &mut failed, |_| anyhow::bail!("build failed")).is_err());
        assert_eq!(failed, ["(run 1 failed without naming a test)"]);
    }

    #[test]
    fn reads_the_repeat_count() {
        assert_eq!(super::parse(&[]).unwrap(), 1);
        assert_eq!(super::parse(&["--repeat", "10"]).unwrap(), 10);
        assert!(super::parse(&["--repeat", "0"]).is_err());
        assert!(super::parse(&["--repeat"]).is_err());
        assert!(super::parse(&["--again"]).is_err());
    }
}
