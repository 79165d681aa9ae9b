//! Integration tests of quire-sync on real folders on disk, one binary with a module per concern.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

mod choices;
mod compact;
mod converge;
mod devices;
mod docs;
mod files;
mod folder;
mod hostile;
mod lines;
mod merge;
mod merge_rules;
mod offline;
mod properties;

use std::path::{Path, PathBuf};

/// Every file under `dir`, at any depth.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
