//! How many integration-test programs the workspace builds. Each `tests/NAME.rs` (or `tests/NAME/main.rs`) is a program
//! of its own that links every dependency of its crate; instrumented for coverage, one of quire-web's was 120 MB, and
//! a fresh CI build with a program per test file ran the machine's disk full (CI failed that way). A crate's tests are
//! one program, `tests/it/main.rs`, with a module per area; the end-to-end crate (`tests/`), whose programs drive the
//! `quire` binary and link little, may have up to [`MOST_END_TO_END`].

use std::path::Path;

/// The end-to-end crate's programs, at most (17 when this check came).
const MOST_END_TO_END: usize = 18;

/// The test programs under `dir` (a `tests/` folder): its `.rs` files and its folders with a `main.rs`.
fn programs(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    if !dir.is_dir() {
        return Ok(found);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let program = if path.is_dir() {
            path.join("main.rs").is_file()
        } else {
            path.extension().is_some_and(|e| e == "rs")
        };
        if program {
            found.push(
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
        }
    }
    found.sort();
    Ok(found)
}

/// One problem per crate with more than one test program, and one when the end-to-end crate has too many.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut crates = Vec::new();
    for top in ["crates", "xtask"] {
        crates.push(root.join(top));
        if !root.join(top).is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(root.join(top))? {
            crates.push(entry?.path());
        }
    }
    for dir in crates {
        let found = programs(&dir.join("tests"))?;
        if found.len() > 1 {
            let shown = dir.strip_prefix(root).unwrap_or(&dir).display();
            problems.push(format!(
                "{shown}/tests: {} test programs ({}): make them modules of one, tests/it/main.rs (each program links \
                 all of the crate's dependencies again; see xtask/src/test_programs.rs)",
                found.len(),
                found.join(", ")
            ));
        }
    }
    let end_to_end = programs(&root.join("tests/tests"))?;
    if end_to_end.len() > MOST_END_TO_END {
        problems.push(format!(
            "tests/tests: {} test programs, more than {MOST_END_TO_END}: add the new tests as modules of one that exists",
            end_to_end.len()
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_folders_with_a_main_are_programs_and_other_folders_are_not() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let tests = dir.path().join("crates/one/tests");
        std::fs::create_dir_all(tests.join("it"))?;
        std::fs::create_dir_all(tests.join("fixtures"))?;
        std::fs::write(tests.join("it/main.rs"), "")?;
        std::fs::write(tests.join("fixtures/a.rs"), "")?;
        assert_eq!(programs(&tests)?, ["it"]);
        assert!(check(dir.path())?.is_empty());
        std::fs::write(tests.join("more.rs"), "")?;
        assert_eq!(programs(&tests)?, ["it", "more.rs"]);
        let problems = check(dir.path())?;
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("crates/one/tests: 2 test programs (it, more.rs)"),
            "{problems:?}"
        );
        Ok(())
    }
}
