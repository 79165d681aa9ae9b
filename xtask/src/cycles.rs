//! The module-cycle check of `cargo xtask tidy`: inside a crate, the modules (files) that name each other through
//! `crate::` paths must not form a cycle. A cycle means two modules each hold part of the other's rule; what they share
//! belongs in a lower module, the wiring in a higher one. Tests (`#[cfg(test)] mod tests`) are left out, and so are
//! a module's own parent and children (`mod x;`, `super::`), which nest rather than depend.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One line per group of modules that depend on each other in a cycle, in every crate under `root`.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut sources = Vec::new();
    for parent in ["crates"] {
        let dir = root.join(parent);
        if !dir.exists() {
            continue;
        }
        for entry in std::fs::read_dir(dir)? {
            sources.push(entry?.path().join("src"));
        }
    }
    sources.push(root.join("xtask/src"));
    sources.sort();
    let mut problems = Vec::new();
    for src in sources.iter().filter(|s| s.is_dir()) {
        let shown = src.strip_prefix(root).unwrap_or(src).display().to_string();
        for group in cycles_in(&modules_of(src)?) {
            problems.push(format!(
                "{shown}: the modules {} depend on each other in a cycle: move what they share into a lower module",
                group.join(", ")
            ));
        }
    }
    Ok(problems)
}

/// Every module of a crate's `src` by its path (`read::notebooks`; the crate root is ``), with its text.
fn modules_of(src: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut files = Vec::new();
    collect(src, &mut files)?;
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file).with_extension("");
        let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts
            .last()
            .is_some_and(|last| ["mod", "lib", "main"].contains(&last.as_str()))
        {
            parts.pop();
        }
        modules.insert(parts.join("::"), std::fs::read_to_string(&file)?);
    }
    Ok(modules)
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The modules each module names through `crate::` paths, tests and comments left out.
fn graph(modules: &BTreeMap<String, String>) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (name, text) in modules {
        let edges = graph.entry(name.as_str()).or_default();
        if name.is_empty() {
            // The crate root declares every module; it depends on none of them in the sense that matters here.
            continue;
        }
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for path in crate_paths(code) {
                if let Some(target) = longest_module(modules, &path)
                    && target != name
                    && !target.is_empty()
                {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// The paths named after `crate::` in one line of code, with `crate::a::{b, c::d}` expanded to each item.
fn crate_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let path = path.trim_end_matches(':').to_owned();
        let after = &rest[path.len()..].trim_start_matches(':');
        if let Some(group) = after.strip_prefix('{') {
            // The group up to its matching brace, split at the commas of its own level; a nested group's prefix is
            // the module it names.
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
            items.push(item);
            for item in items {
                let item: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let item = item.trim_end_matches(':');
                if !item.is_empty() {
                    paths.push(if path.is_empty() {
                        item.to_owned()
                    } else {
                        format!("{path}::{item}")
                    });
                }
            }
        }
        if !path.is_empty() {
            paths.push(path);
        }
    }
    paths
}

/// The longest prefix of `path` that is a module of the crate.
fn longest_module<'m>(modules: &'m BTreeMap<String, String>, path: &str) -> Option<&'m str> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().find_map(|n| {
        modules
            .get_key_value(parts[..n].join("::").as_str())
            .map(|(k, _)| k.as_str())
    })
}

/// The groups of more than one module that reach each other (strongly connected components), each sorted.
fn cycles_in(modules: &BTreeMap<String, String>) -> Vec<Vec<String>> {
    let graph = graph(modules);
    let names: Vec<&str> = graph.keys().copied().collect();
    let reaches = |from: &str| -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(next) = stack.pop() {
            for &to in graph.get(next).into_iter().flatten() {
                if seen.insert(to) {
                    stack.push(to);
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&str, BTreeSet<&str>> = names.iter().map(|n| (*n, reaches(n))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for name in &names {
        let group: Vec<String> = names
            .iter()
            .filter(|other| *other == name || (reach[name].contains(*other) && reach[*other].contains(name)))
            .map(|n| (*n).to_owned())
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    fn crate_of(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
            .collect()
    }

    #[test]
    fn modules_that_name_each_other_are_a_cycle_and_tests_comments_and_nesting_are_not() {
        let modules = crate_of(&[
            ("", "mod a; mod b; mod c;"),
            ("a", "use crate::b::Thing;\n// crate::c is only mentioned\n"),
            ("b", "fn f() { crate::a::g(); }"),
            (
                "c",
                "use crate::{a, d::e};\n#[cfg(test)]\nmod tests { use crate::c2::X; }",
            ),
            ("c2", "use crate::c::Y;"),
            ("d", ""),
            ("d::e", "use super::*;"),
        ]);
        assert_eq!(super::cycles_in(&modules), vec![vec!["a".to_owned(), "b".to_owned()]]);
    }

    #[test]
    fn a_use_group_names_each_of_its_modules() {
        assert_eq!(
            super::crate_paths("use crate::{read::Reader, write::{Writer}, Error};"),
            ["read::Reader", "write", "Error"].map(str::to_owned)
        );
        assert_eq!(
            super::crate_paths("x(crate::links::key_of(t))"),
            ["links::key_of"].map(str::to_owned)
        );
    }
}
