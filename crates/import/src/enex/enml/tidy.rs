//! The Markdown htmd writes, finished: the checklist marks as task items, and the blank lines Evernote's `<div>`s
//! leave made tidy.

use super::{CHECKED, UNCHECKED};

/// Where htmd wrote a horizontal rule: replaced by `---` at the end (always after a blank line, so never a heading's
/// underline), so a line of text that looks like a rule
/// (and is escaped) is told apart from a rule.
pub(super) const RULE: char = '\u{F8F2}';

/// Where htmd wrote a line break: two spaces at the end of a line (htmd's own would be trimmed in a list item),
/// `<br>` in a table cell, nothing in code.
pub(super) const BREAK: char = '\u{F8F3}';

/// Blank-looking lines made blank, no two blank lines in a row, no blank line between two items of a list
/// (Evernote's `<div>`s around each line make loose lists and stray line breaks), no trailing space after a quote
/// marker, and text that Markdown would read as syntax escaped (see [`escape_line`]). Lines of fenced code are kept
/// exactly as they are.
pub(super) fn tidy(markdown: &str) -> String {
    let mut lines: Vec<(String, bool)> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.lines() {
        let text = line.trim_start();
        if let Some((c, n)) = fence {
            let closing = text.chars().take_while(|&x| x == c).count();
            if closing >= n && text[closing..].trim().is_empty() {
                fence = None;
            }
            lines.push((line.replace(BREAK, ""), true));
            continue;
        }
        let opening = ['`', '~'].into_iter().find_map(|c| {
            let n = text.chars().take_while(|&x| x == c).count();
            (n >= 3).then_some((c, n))
        });
        if let Some(open) = opening {
            fence = Some(open);
            lines.push((line.replace(BREAK, ""), true));
            continue;
        }
        let line = &if text.starts_with('|') {
            // A table row: a break is `<br>` (a cell is one line), and htmd's `&#124;` for a `|` in a cell the
            // escape tables read.
            line.replace(&format!("{BREAK} "), "<br>")
                .replace(BREAK, "<br>")
                .replace("&#124;", "\\|")
        } else {
            let line = line.trim_end();
            let kept = line.trim_end_matches([BREAK, ' ']);
            if line.trim_end().ends_with(BREAK) && !kept.trim().is_empty() {
                format!("{}  ", kept.replace(BREAK, ""))
            } else {
                line.replace(BREAK, "")
            }
        };
        let line = if line.trim().is_empty() {
            String::new()
        } else if line.trim() == RULE.to_string() {
            "---".to_owned()
        } else if line.trim_start().starts_with('>') && line.chars().all(|c| c == '>' || c.is_whitespace()) {
            line.trim_end().to_owned()
        } else {
            escape_line(line)
        };
        lines.push((line, false));
    }
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
    for (i, (line, code)) in lines.iter().enumerate() {
        if line.is_empty() && !code {
            let previous = out.last().copied();
            if previous.is_none_or(str::is_empty) {
                continue;
            }
            let next = lines[i + 1..]
                .iter()
                .find(|(l, _)| !l.is_empty())
                .map(|(l, _)| l.as_str());
            if let (Some(a), Some(b)) = (previous.and_then(item), next.and_then(item))
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
    // A break at the end of a paragraph breaks nothing.
    let ends: Vec<bool> = (0..out.len())
        .map(|i| {
            out.get(i + 1)
                .is_none_or(|next| next.is_empty() || item(next).is_some())
        })
        .collect();
    let out: Vec<&str> = out
        .iter()
        .zip(ends)
        .map(|(line, last)| {
            if last && line.ends_with("  ") && !line.trim_start().starts_with('|') {
                line.trim_end()
            } else {
                line
            }
        })
        .collect();
    let mut text = align_tables(&out).join("\n");
    text.push('\n');
    text
}

/// Every table's cells padded to its columns' widths again (a cell's text changed after htmd measured it).
fn align_tables(lines: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..]
            .iter()
            .take_while(|l| l.starts_with('|') && l.trim_end().ends_with('|'))
            .count();
        if run < 2 {
            out.push(lines[i].to_owned());
            i += 1;
            continue;
        }
        let rows: Vec<Vec<String>> = lines[i..i + run].iter().map(|l| cells(l)).collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let separator = |cell: &str| !cell.is_empty() && cell.chars().all(|c| matches!(c, '-' | ':'));
        let mut widths = vec![3usize; columns];
        for row in &rows {
            for (c, cell) in row.iter().enumerate() {
                if !separator(cell) {
                    widths[c] = widths[c].max(cell.chars().count());
                }
            }
        }
        for row in &rows {
            let mut line = String::from("|");
            for (c, width) in widths.iter().enumerate() {
                let cell = row.get(c).map_or("", String::as_str);
                if separator(cell) {
                    line.push_str(&format!(" {} |", "-".repeat(*width)));
                } else {
                    line.push_str(&format!(" {cell}{} |", " ".repeat(width - cell.chars().count())));
                }
            }
            out.push(line);
        }
        i += run;
    }
    out
}

/// A table row's cells, trimmed, split at its `|`s that are not escaped.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in inner.chars() {
        if c == '|' && !escaped {
            cells.push(current.trim().to_owned());
            current.clear();
        } else {
            current.push(c);
        }
        escaped = c == '\\' && !escaped;
    }
    cells.push(current.trim().to_owned());
    cells
}

/// A line of text (not code) with what Markdown would misread escaped, where htmd does not: a number and `)`
/// starting it (an ordered list), a line that is all `-`, `*`, `_` or `=` (a rule, or a heading's underline), and
/// `&name;` (an entity) outside code spans.
fn escape_line(line: &str) -> String {
    let text = line.trim_start();
    let indent = &line[..line.len() - text.len()];
    // The markers Markdown reads first: quotes and list bullets.
    let mut at = 0;
    loop {
        let rest = &text[at..];
        if let Some(r) = rest.strip_prefix("> ") {
            at = text.len() - r.len();
        } else if let Some(r) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("* ")) {
            at = text.len() - r.len();
        } else if let Some((n, r)) = rest.split_once(". ")
            && !n.is_empty()
            && n.len() <= 9
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            at = text.len() - r.len();
        } else {
            break;
        }
    }
    let (markers, content) = text.split_at(at);
    let mut content = content.to_owned();
    let digits = content.bytes().take_while(u8::is_ascii_digit).count();
    if (1..=9).contains(&digits) && content[digits..].starts_with(')') {
        content.insert(digits, '\\');
    }
    let bare: String = content.chars().filter(|c| !c.is_whitespace()).collect();
    let rule_like = bare.len() >= 3 && ['-', '*', '_'].iter().any(|&c| bare.chars().all(|x| x == c))
        || !bare.is_empty() && bare.chars().all(|x| x == '=');
    if rule_like && markers.is_empty() {
        content.insert(0, '\\');
    }
    format!("{indent}{markers}{}", needless_escapes(&escape_entities(&content)))
}

/// htmd's escapes that change nothing, taken out outside code spans so the text reads as written: `\_` inside a
/// word (`snake_case` is never emphasis), `\*` between spaces (it cannot open or close emphasis), and `\\` before
/// a letter or digit (a backslash there is a backslash already).
fn needless_escapes(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            in_code = !in_code;
        }
        if c == '\\' && !in_code && i + 1 < chars.len() {
            let before = out.chars().last();
            let (next, after) = (chars[i + 1], chars.get(i + 2).copied());
            let needless = match next {
                '_' => before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric),
                '*' => i > 0 && before.is_some_and(char::is_whitespace) && after.is_some_and(char::is_whitespace),
                '\\' => after.is_some_and(char::is_alphanumeric),
                _ => false,
            };
            out.push(if needless { next } else { c });
            if !needless {
                out.push(next);
            }
            i += 2;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `&name;`, `&#123;` and `&#x1F;` outside code spans with their `&` escaped: the text meant the characters, not
/// the character they name.
fn escape_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 4);
    let mut in_code = false;
    for (i, c) in text.char_indices() {
        if c == '`' {
            in_code = !in_code;
        }
        if c == '&' && !in_code && !text[..i].ends_with('\\') {
            let rest = &text[i + 1..];
            let name = rest
                .strip_prefix('#')
                .map_or(rest, |r| r.strip_prefix(['x', 'X']).unwrap_or(r));
            let len = name.bytes().take_while(u8::is_ascii_alphanumeric).count();
            let numeric = rest.starts_with('#');
            let known = |n: &str| html5ever::data::NAMED_ENTITIES.contains_key(format!("{n};").as_str());
            if len > 0 && name[len..].starts_with(';') && (numeric || known(&name[..len])) {
                out.push('\\');
            }
        }
        out.push(c);
    }
    out
}

/// The marker of a numbered list item at the start of `content` (`12. `, `3) `), with its space.
fn ordered_marker(content: &str) -> Option<&str> {
    let digits = content.len() - content.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &content[digits..];
    (digits > 0 && digits < 10 && (rest.starts_with(". ") || rest.starts_with(") "))).then(|| &content[..digits + 2])
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
    // The last line written is a task item made from a line of a paragraph: a line of text after it would read as
    // more of the item, so a blank line goes between.
    let mut after_made_item = false;
    for line in markdown.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        let content = bare.trim_start();
        let was_after_item = std::mem::take(&mut after_made_item);
        if was_after_item && !content.is_empty() && !content.starts_with(is_mark) {
            out.push('\n');
        }
        if !content.contains(is_mark) || content.starts_with('|') {
            out.push_str(&line.replace(CHECKED, "[x] ").replace(UNCHECKED, "[ ] "));
            continue;
        }
        let indent = &bare[..bare.len() - content.len()];
        // A numbered item keeps its number: `1. [ ] task` (Evernote 10's numbered checklist).
        let number = ordered_marker(content);
        let after_bullet = match number {
            Some(marker) => &content[marker.len()..],
            None => content
                .strip_prefix("- ")
                .or_else(|| content.strip_prefix("* "))
                .unwrap_or(content),
        };
        let in_list = after_bullet.len() != content.len();
        let mut bullet = number.unwrap_or("- ");
        let before = after_bullet[..after_bullet.find(is_mark).unwrap_or(0)].trim_end_matches(['\\', ' ', '\t']);
        if !before.trim().is_empty() {
            out.push_str(indent);
            if in_list {
                out.push_str(bullet);
                bullet = "- ";
            }
            out.push_str(before.trim_end());
            out.push('\n');
        }
        let mut rest = &after_bullet[after_bullet.find(is_mark).unwrap_or(0)..];
        while let Some(mark) = rest.chars().next().filter(|&c| is_mark(c)) {
            rest = &rest[mark.len_utf8()..];
            let end = rest.find(is_mark).unwrap_or(rest.len());
            let text = rest[..end].trim();
            // A break ending the item's first line holds (a line of the item follows).
            let broken = text.ends_with(BREAK);
            let text = text.trim_end_matches(BREAK).trim_end_matches('\\').trim_end();
            let done = if mark == CHECKED { "x" } else { " " };
            out.push_str(format!("{indent}{bullet}[{done}] {text}").trim_end());
            bullet = "- ";
            if broken && in_list {
                out.push(BREAK);
            }
            out.push('\n');
            rest = &rest[end..];
        }
        after_made_item = !in_list;
    }
    if !markdown.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}
