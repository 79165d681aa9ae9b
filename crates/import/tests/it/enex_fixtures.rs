//! The Evernote fixture suite: every `fixtures/enex/<name>.enex`, imported into a fresh workspace and written out
//! canonically (support/enex_render.rs), must equal `fixtures/enex/expected/<name>.md`. The fixtures and what each
//! covers are listed in `fixtures/enex/README.md`. `QUIRE_BLESS=1` writes what each import gave to
//! `target/enex-fixtures/<name>.md` (never over the expected files) to compare or copy by hand.

use std::path::{Path, PathBuf};

use crate::support::enex_render::{fixtures, import_and_render, line_diff};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/enex")
}

/// Where `QUIRE_BLESS=1` writes the actual output: the workspace's target folder, never the fixtures.
fn bless_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("enex-fixtures")
}

#[test]
fn every_enex_fixture_imports_as_its_expected_markdown() {
    let dir = fixture_dir();
    let all = fixtures(&dir);
    let bless = std::env::var_os("QUIRE_BLESS").is_some_and(|v| v == "1");
    let mut failing = Vec::new();
    for (name, path) in &all {
        let work = tempfile::tempdir().unwrap();
        let actual = import_and_render(path, work.path());
        if bless {
            std::fs::create_dir_all(bless_dir()).unwrap();
            std::fs::write(bless_dir().join(format!("{name}.md")), &actual).unwrap();
        }
        let expected_path = dir.join("expected").join(format!("{name}.md"));
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            eprintln!("\n## {name}: no expected file ({})\n", expected_path.display());
            failing.push(name.clone());
            continue;
        };
        if actual != expected {
            eprintln!("\n## {name}\n{}", line_diff(&expected, &actual));
            failing.push(name.clone());
        }
    }
    let summary = format!("enex fixtures: {} of {} equal", all.len() - failing.len(), all.len());
    eprintln!("\n{summary}");
    if bless {
        eprintln!("actual output written to {}", bless_dir().display());
    }
    assert!(failing.is_empty(), "{summary}; not equal: {}", failing.join(", "));
    assert!(all.len() >= 15, "the suite lost its fixtures: {}", all.len());
}

#[test]
fn every_expected_file_has_its_fixture() {
    // An expected file whose fixture was renamed or removed would never be compared again.
    let dir = fixture_dir();
    let all = fixtures(&dir);
    for entry in std::fs::read_dir(dir.join("expected")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        assert!(all.contains_key(&stem), "{} has no fixture", path.display());
    }
}

#[test]
fn a_folder_of_enex_files_with_a_readme_is_an_evernote_account() {
    // Found in use: the fixtures' own folder (.enex files and a README.md) was read as a Markdown folder, and every
    // .enex file was "skipped: no note links it".
    let work = tempfile::tempdir().unwrap();
    let account = work.path().join("account");
    std::fs::create_dir(&account).unwrap();
    for name in ["paragraphs.enex", "table.enex"] {
        std::fs::copy(fixture_dir().join(name), account.join(name)).unwrap();
    }
    std::fs::write(account.join("README.md"), "# My Evernote export\n").unwrap();
    let ws = quire_core::Workspace::open(work.path().join("ws.quire")).unwrap();
    let options = quire_import::ImportOptions::default();
    let report = quire_import::import(&ws, &account, &options, &|_, _| {}).unwrap();
    assert_eq!(report.format, "enex", "{report:?}");
    assert!(report.imported >= 2, "{report:?}");
    let readme = report.items.iter().find(|i| i.path == "README.md").unwrap();
    assert_eq!(readme.outcome, quire_import::Outcome::Skipped);
    assert!(readme.notes[0].contains("not an Evernote export"), "{readme:?}");
}
