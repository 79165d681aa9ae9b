//! Tidy checks: every Rust file opens with a `//!` line, no banned test attributes, layering comments in manifests,
//! no source file over [`MAX_LINES`] lines (a longer one has become a catch-all: split it by responsibility), and no
//! cycle between the modules of a crate (`cycles.rs`), no `Result<_, String>` in a public signature and few elsewhere
//! (`string_errors.rs`), one integration-test program per crate (`test_programs.rs`), the binary under [`MOST_APP_LINES`]
//! lines, and ARCHITECTURE.md under [`MAP_BYTES`]. That every tool named in prose exists is checked by
//! quire-devtools (`tool-names`), which links the registry.

use std::path::{Path, PathBuf};

/// Returns one line per problem found under `root`.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    // Built from pieces so that this file does not trip its own check.
    let banned = [
        format!("#[{}]", "ignore"),
        format!("#[{}", "should_panic"),
        format!("#[{}(", "ignore"),
    ];
    for file in rust_files(root)? {
        let text = std::fs::read_to_string(&file)?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if !first.starts_with("//!") {
            problems.push(format!(
                "{shown}: must start with a `//!` comment saying what the file holds"
            ));
        }
        for (n, line) in text.lines().enumerate() {
            if banned.iter().any(|b| line.contains(b.as_str())) {
                problems.push(format!(
                    "{shown}:{}: no ignored or should-panic tests: assert the behaviour instead",
                    n + 1
                ));
            }
        }
    }
    problems.extend(crate::string_errors::check(root, &rust_files(root)?)?);
    problems.extend(map_size(root)?);
    problems.extend(app_size(root)?);
    problems.extend(long_files(root)?);
    problems.extend(browser_reads(root)?);
    problems.extend(crate::cycles::check(root)?);
    problems.extend(crate::test_programs::check(root)?);
    for manifest in manifests(root)? {
        let text = std::fs::read_to_string(&manifest)?;
        if text.contains("[dependencies]") && !text.contains("# Layering:") {
            let shown = manifest.strip_prefix(root).unwrap_or(&manifest).display().to_string();
            problems.push(format!(
                "{shown}: put a `# Layering:` comment above [dependencies] (see ARCHITECTURE.md)"
            ));
        }
    }
    Ok(problems)
}

/// The most lines `crates/app/src` may hold: the binary is the command line (parsing, prompting, wording), and
/// what is not goes to quire-host or the library that owns it (issue 44; docs/decisions/app.md, "The binary is the
/// command line"). It was 6,305 lines before, about 4,550 after; 4,700 and the wording of `quire sync conflicts` and
/// `resolve` (issue 46) made the cap 4,800; `quire query` and `quire tasks` (issue 47, their engine in core) 4,950;
/// `quire device` and `quire serve --listen` (issue 48: their parsing and wording; pairing, TLS and the devices' file
/// are quire-host's and quire-web's) 5,150; `quire ledger`, `quire agent` and `quire chat --agent` (issue 49: their
/// arguments, wording and the interactive agent chat; the ledger is core's, the agents' entries, sessions and signals
/// quire-host's, ACP quire-agent's) 5,450; `quire automation` (issue 49: its seven commands' arguments and wording;
/// the entries, schedules, runs and scheduler are quire-host's, the run log core's) 5,700; sealed notes' conflicts in
/// `quire sync conflicts` and `resolve` (issue 46: asking the passphrase when a listed conflict is sealed, and their
/// wording; sealing them is core's, merging and choosing quire-sync's) 5,800; `quire note attach`/`detach`, `quire
/// capture` and `quire attachments read` (issue 50: their arguments, progress and wording; reading files is
/// quire-capture's, attaching and the inbox quire-host's) 5,980.
const MOST_APP_LINES: usize = 5_980;

/// `crates/app/src` over [`MOST_APP_LINES`].
fn app_size(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    walk(&root.join("crates/app/src"), &mut files)?;
    let mut lines = 0;
    for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        lines += std::fs::read_to_string(file)?.lines().count();
    }
    Ok(if lines > MOST_APP_LINES {
        vec![format!(
            "crates/app/src: {lines} lines, more than {MOST_APP_LINES}: the binary is the command line; put what is not \
             parsing, asking or printing in quire-host or the crate that owns it"
        )]
    } else {
        Vec::new()
    })
}

/// The most bytes ARCHITECTURE.md may hold: it is a map, and the detail goes to docs/ (issue 44: it grew to 65 KB).
const MAP_BYTES: u64 = 40_000;

/// ARCHITECTURE.md over [`MAP_BYTES`].
fn map_size(root: &Path) -> anyhow::Result<Vec<String>> {
    let size = std::fs::metadata(root.join("ARCHITECTURE.md"))?.len();
    Ok(if size > MAP_BYTES {
        vec![format!(
            "ARCHITECTURE.md: {size} bytes, more than {MAP_BYTES}: it is the map; move detail into docs/ (internals, \
             sync, sealing, dependencies) and link to it"
        )]
    } else {
        Vec::new()
    })
}

/// Reads of page state in the browser tests that do not wait: a value read once right after an action is whatever
/// the page had then, and a test that asserts on it fails at random (CI failed that way). Each pattern is an
/// `await` followed directly by a read (`await x.locator(..).innerText()`, `await editorText(page)`) inside an
/// assertion or put in a variable; a read inside `eventually(() => ...)` or an `expect...` helper, which polls until
/// the check holds, has no `await` of its own and does not match.
const BARE_READS: &[&str] = &[
    // A read awaited inside an assertion.
    r"assert(?:\.\w+)?\(\s*!?\(*\s*await\s+[\w$]+(?:\s*\.\s*[\w$]+\s*\([^;]*?\))*\s*\.\s*(?:getAttribute|textContent|innerText|innerHTML|inputValue|isVisible|isHidden|isChecked|isEnabled|isDisabled|isEditable|count|allInnerTexts|allTextContents|boundingBox|evaluate|evaluateAll|content|title|url|cookies|\$\$?eval)\s*\(",
    // The page helpers compared at once.
    r"assert(?:\.\w+)?\(\s*\(?\s*await\s+(?:editorText|serverNote)\s*\(",
    // The page's address inside an assertion.
    r"assert(?:\.\w+)?\(\s*[\w$]+\.url\(\)",
    // A locator's read put in a variable (to be asserted later).
    r"=\s*\(?\s*await\s+[\w$]+(?:\s*\.\s*[\w$]+\s*\([^;]*?\))*\s*\.\s*(?:getAttribute|textContent|innerText|innerHTML|inputValue|isVisible|isHidden|isChecked|isEnabled|isDisabled|isEditable|count|allInnerTexts|allTextContents|boundingBox)\s*\(",
    // A locator chain's evaluate put in a variable.
    r"=\s*\(?\s*await\s+[\w$]+(?:\s*\.\s*[\w$]+\s*\([^;]*?\))+\s*\.\s*(?:evaluate|evaluateAll)\s*\(",
];

/// A fixed sleep in a browser test (`support.mjs`, which paces the mock model and polls in `eventually`, may): a
/// test that needs time waits for the condition it needs, which a slow machine reaches later.
const SLEEP: &str = r"\bwaitForTimeout\s*\(|\bsetTimeout\s*\(";

/// The browser tests' bare reads ([`BARE_READS`]) and fixed sleeps ([`SLEEP`]), one problem each, with the file and
/// line.
fn browser_reads(root: &Path) -> anyhow::Result<Vec<String>> {
    let patterns = BARE_READS
        .iter()
        .map(|p| regex::Regex::new(p))
        .collect::<Result<Vec<_>, _>>()?;
    let dir = root.join("crates/web/ui/tests");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "mjs"))
            .collect(),
        Err(_) => return Ok(Vec::new()),
    };
    files.sort();
    let sleep = regex::Regex::new(SLEEP)?;
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let line_of = |at: usize| text[..at].matches('\n').count() + 1;
        if shown.ends_with(".test.mjs") {
            for found in sleep.find_iter(&text) {
                problems.push(format!(
                    "{shown}:{}: a fixed sleep (`{}`): wait for the condition the test needs instead",
                    line_of(found.start()),
                    found.as_str()
                ));
            }
        }
        for pattern in &patterns {
            for found in pattern.find_iter(&text) {
                let line = line_of(found.start());
                problems.push(format!(
                    "{shown}:{line}: reads the page once (`{}`): wait for the condition instead (`eventually`, the \
                     `expect...` helpers of support.mjs, `locator.waitFor` or `page.waitForFunction`)",
                    found.as_str().split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
        }
    }
    Ok(problems)
}

/// The most lines a hand-written source file may have (Rust, TypeScript, the browser tests' JavaScript).
pub(crate) const MAX_LINES: usize = 700;

/// Source files longer than [`MAX_LINES`]; generated files (`generated.ts`, the built bundle) are left out.
fn long_files(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    let generated = |f: &Path| {
        f.file_name().is_some_and(|n| n == "generated.ts") || f.components().any(|c| c.as_os_str() == "assets")
    };
    let mut problems = Vec::new();
    for file in files {
        let source = file.extension().is_some_and(|e| e == "rs" || e == "ts" || e == "mjs");
        if !source || generated(&file) {
            continue;
        }
        let lines = std::fs::read_to_string(&file)?.lines().count();
        if lines > MAX_LINES {
            let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
            problems.push(format!(
                "{shown}: {lines} lines, more than {MAX_LINES}: split it by responsibility, one module per concern"
            ));
        }
    }
    Ok(problems)
}

fn rust_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "rs"));
    files.sort();
    Ok(files)
}

fn manifests(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for top in ["crates", "xtask", "tests"] {
        walk(&root.join(top), &mut files)?;
    }
    files.retain(|f| f.file_name().is_some_and(|n| n == "Cargo.toml"));
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') && name != "node_modules" {
                walk(&path, out)?;
            }
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tidy() {
        let problems = super::check(&crate::project_root()).unwrap();
        assert!(problems.is_empty(), "tidy problems:\n{}", problems.join("\n"));
    }

    #[test]
    fn a_browser_test_that_reads_the_page_without_waiting_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let tests = dir.path().join("crates/web/ui/tests");
        std::fs::create_dir_all(&tests).unwrap();
        std::fs::write(
            tests.join("bare.test.mjs"),
            "await page.click(\"#save\");\n\
             assert.match(await page.locator(\"#semantic-label\").getAttribute(\"title\"), /fallback/);\n\
             assert.equal(\n  await page.locator(\"#notes .note-item\").count(),\n  50,\n);\n\
             assert.equal(await editorText(page), \"x\");\n\
             const shown = await page.locator(\"#list-title\").innerText();\n\
             await page.waitForTimeout(1600);\n",
        )
        .unwrap();
        std::fs::write(
            tests.join("waits.test.mjs"),
            "await expectAttribute(page.locator(\"#semantic-label\"), \"title\", /fallback/);\n\
             await eventually(() => page.locator(\"#notes .note-item\").count(), (n) => assert.equal(n, 50));\n\
             await eventually(() => editorText(page), (t) => assert.equal(t, \"x\"));\n\
             const hub = await startHub();\n",
        )
        .unwrap();
        std::fs::write(
            tests.join("support.mjs"),
            "await new Promise((r) => setTimeout(r, interval));\n",
        )
        .unwrap();
        let problems = super::browser_reads(dir.path()).unwrap();
        let lines: Vec<&str> = problems.iter().map(|p| p.split(": ").next().unwrap()).collect();
        assert_eq!(
            lines,
            [
                "crates/web/ui/tests/bare.test.mjs:9",
                "crates/web/ui/tests/bare.test.mjs:2",
                "crates/web/ui/tests/bare.test.mjs:3",
                "crates/web/ui/tests/bare.test.mjs:7",
                "crates/web/ui/tests/bare.test.mjs:8",
            ],
            "{problems:#?}"
        );
    }

    #[test]
    fn a_source_file_over_the_limit_is_named_and_generated_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let ui = dir.path().join("crates/web/ui/src");
        std::fs::create_dir_all(&ui).unwrap();
        std::fs::create_dir_all(dir.path().join("crates/web/assets")).unwrap();
        let long = "x\n".repeat(super::MAX_LINES + 1);
        std::fs::write(ui.join("main.ts"), &long).unwrap();
        std::fs::write(ui.join("short.ts"), "x\n".repeat(super::MAX_LINES)).unwrap();
        std::fs::write(ui.join("generated.ts"), &long).unwrap();
        std::fs::write(dir.path().join("crates/web/assets/app.js"), &long).unwrap();
        std::fs::write(dir.path().join("crates/web/ui/notes.md"), &long).unwrap();
        let problems = super::long_files(dir.path()).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("crates/web/ui/src/main.ts: 701 lines"),
            "{problems:?}"
        );
    }
}
