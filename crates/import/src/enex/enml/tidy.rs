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

/// The checkbox marks as Markdown: each starts a task list item (after a list bullet or not), so a run of
/// checkboxes on one line becomes one item each, and text before the first stays a line of its own; in a table row
/// a mark becomes `[x]` / `[ ]` in the text.
pub(super) fn checkboxes(markdown: &str) -> String {
    if !markdown.contains([CHECKED, UNCHECKED]) {
        return markdown.to_owned();
    }
    let is_mark = |c: char| c == CHECKED || c == UNCHECKED;
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        let content = bare.trim_start();
        if !content.contains(is_mark) || content.starts_with('|') {
            out.push_str(&line.replace(CHECKED, "[x] ").replace(UNCHECKED, "[ ] "));
            continue;
        }
        let indent = &bare[..bare.len() - content.len()];
        let after_bullet = content
            .strip_prefix("- ")
            .or_else(|| content.strip_prefix("* "))
            .unwrap_or(content);
        let before = after_bullet[..after_bullet.find(is_mark).unwrap_or(0)].trim_end_matches(['\\', ' ', '\t']);
        if !before.trim().is_empty() {
            out.push_str(indent);
            if after_bullet.len() != content.len() {
                out.push_str("- ");
            }
            out.push_str(before.trim_end());
            out.push('\n');
        }
        let mut rest = &after_bullet[after_bullet.find(is_mark).unwrap_or(0)..];
        while let Some(mark) = rest.chars().next().filter(|&c| is_mark(c)) {
            rest = &rest[mark.len_utf8()..];
            let end = rest.find(is_mark).unwrap_or(rest.len());
            let text = rest[..end].trim().trim_end_matches('\\').trim_end();
            let done = if mark == CHECKED { "x" } else { " " };
            out.push_str(format!("{indent}- [{done}] {text}").trim_end());
            out.push('\n');
            rest = &rest[end..];
        }
    }
    if !markdown.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}
