//! `Result<_, String>` in library code (issue 44): an error a caller cannot tell apart by kind. At most
//! [`MOST_STRING_ERRORS`] are left in the crates' sources (private helpers whose text goes straight to a person or
//! a model), and none in a public signature: a `pub` function or type, or a method of a `pub trait`.

use std::path::Path;

use regex::Regex;

/// How many are allowed in all (there were 61 before issue 44).
pub(crate) const MOST_STRING_ERRORS: usize = 15;

/// One found: where, and whether it is in a public signature.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) place: String,
    pub(crate) public: bool,
}

/// Every `Result<_, String>` outside test modules in `text`.
pub(crate) fn find(shown: &str, text: &str) -> anyhow::Result<Vec<Found>> {
    // The test module, when a file ends with one, is left out.
    let body = text.find("#[cfg(test)]\nmod tests {").map_or(text, |at| &text[..at]);
    let pattern = Regex::new(r"Result<(?:[^<>;{}]|<[^<>;{}]*>|<[^<>;{}]*<[^<>;{}]*>[^<>;{}]*>)*?,\s*String\s*>")?;
    let item = Regex::new(r"\b(fn|type|struct|enum|trait|let|impl)\b")?;
    let lines: Vec<&str> = body.lines().collect();
    let mut found = Vec::new();
    for m in pattern.find_iter(body) {
        let line = body[..m.start()].matches('\n').count();
        let mut at = line;
        while at > 0 && !item.is_match(lines[at]) {
            at -= 1;
        }
        let signature = lines.get(at).map_or("", |l| l.trim_start());
        let mut public = signature.starts_with("pub ") || signature.starts_with("pub async ");
        if !public && lines.get(at).is_some_and(|l| l.starts_with("    ")) && signature.contains("fn ") {
            // A method: public when its trait is.
            let mut up = at;
            while up > 0
                && !(lines[up].starts_with("pub trait")
                    || lines[up].starts_with("trait")
                    || lines[up].starts_with("impl")
                    || lines[up].starts_with("pub(crate) trait"))
            {
                up -= 1;
            }
            public = lines[up].starts_with("pub trait");
        }
        found.push(Found {
            place: format!("{shown}:{}", line + 1),
            public,
        });
    }
    Ok(found)
}

/// The problems: each public one, and the count when it is over [`MOST_STRING_ERRORS`].
pub(crate) fn check(root: &Path, files: &[std::path::PathBuf]) -> anyhow::Result<Vec<String>> {
    let mut all = Vec::new();
    for file in files {
        let shown = file.strip_prefix(root).unwrap_or(file).display().to_string();
        let in_library =
            shown.starts_with("crates/") && shown.contains("/src/") && !shown.starts_with("crates/test-support");
        if !in_library {
            continue;
        }
        all.extend(find(&shown, &std::fs::read_to_string(file)?)?);
    }
    let mut problems: Vec<String> = all
        .iter()
        .filter(|f| f.public)
        .map(|f| {
            format!(
                "{}: a public signature returns `Result<_, String>`: give it an error type",
                f.place
            )
        })
        .collect();
    if all.len() > MOST_STRING_ERRORS {
        problems.push(format!(
            "{} `Result<_, String>` in the crates' sources, more than {MOST_STRING_ERRORS}: give the new ones an error type \
             (they are at {})",
            all.len(),
            all.iter().map(|f| f.place.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn public_signatures_and_trait_methods_are_told_from_private_helpers() {
        let text = "\
pub fn open(x: &str) -> Result<Vec<u8>, String> {
}
fn helper() -> Result<(), String> {
}
pub(crate) fn inner() -> Result<Option<Vec<u8>>, String> {
}
pub trait Store {
    fn get(&self) -> Result<(), String>;
}
pub type Hook = Box<dyn Fn() -> Result<u8, String>>;
fn fine() -> Result<(), Error> {
}
#[cfg(test)]
mod tests {
    fn left_out() -> Result<(), String> {}
}
";
        let found: Vec<(usize, bool)> = find("f.rs", text)
            .unwrap()
            .into_iter()
            .map(|f| (f.place.trim_start_matches("f.rs:").parse().unwrap(), f.public))
            .collect();
        assert_eq!(found, [(1, true), (3, false), (5, false), (8, true), (10, true)]);
    }
}
