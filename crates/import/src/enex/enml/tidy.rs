//! The Markdown htmd writes, finished: the checklist marks as task items, and the blank lines Evernote's `<div>`s
//! leave made tidy.

use super::{CHECKED, UNCHECKED};

/// Blank-looking lines made blank, no two blank lines in a row, and no blank line between two items of a list
/// (Evernote's `<div>`s around each line make loose lists and stray line breaks).
pub(super) fn tidy(markdown: &str) -> String {
    let lines: Vec<&str> = markdown
        .lines()
        .map(|l| if l.trim().is_empty() { "" } else { l })
        .collect();
    let item = |line: &str| {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let bullet = text.starts_with("- ")
            || text.starts_with("* ")
            || text
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        bullet.then_some(indent)
    };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            let previous = out.last().copied();
            if previous.is_none_or(str::is_empty) {
                continue;
            }
            let next = lines[i + 1..].iter().find(|l| !l.is_empty());
            if let (Some(a), Some(b)) = (previous.and_then(item), next.and_then(|l| item(l)))
                && a == b
            {
                continue;
            }
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The checkbox marks as Markdown: a line starting with one (after a list bullet or not) becomes a task list
/// item; any other becomes `[x]` / `[ ]` in the text.
pub(super) fn checkboxes(markdown: &str) -> String {
    if !markdown.contains([CHECKED, UNCHECKED]) {
        return markdown.to_owned();
    }
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        let content = line.trim_start();
        let indent = &line[..line.len() - content.len()];
        let after_bullet = content
            .strip_prefix("- ")
            .or_else(|| content.strip_prefix("* "))
            .unwrap_or(content)
            .trim_start_matches('\\');
        let mut done = None;
        if let Some(rest) = after_bullet.strip_prefix(CHECKED) {
            done = Some(("x", rest));
        } else if let Some(rest) = after_bullet.strip_prefix(UNCHECKED) {
            done = Some((" ", rest));
        }
        let line = match done {
            Some((mark, rest)) => format!("{indent}- [{mark}] {}", rest.trim_start()),
            None => line.to_owned(),
        };
        out.push_str(&line.replace(CHECKED, "[x] ").replace(UNCHECKED, "[ ] "));
    }
    out
}

