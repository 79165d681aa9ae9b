//! What queries read from a note's Markdown: its tasks (with the Tasks plugin's fields), Dataview's inline fields
//! and its hashtags. Pure functions of the body; `super` writes them to the derived tables.

use crate::markdown::{LineKind, lines};

/// A task: a `- [ ]` / `- [x]` list item outside code.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Task {
    /// 0-based line number in the body.
    pub line: usize,
    /// The character between the brackets (a space when open).
    pub status: char,
    /// The text after the box, as written.
    pub text: String,
    /// 📅 (or `[due:: ...]`), as YYYY-MM-DD.
    pub due: Option<String>,
    /// ⏳ (or `[scheduled:: ...]`).
    pub scheduled: Option<String>,
    /// 🛫 (or `[start:: ...]`).
    pub start: Option<String>,
    /// ✅ (or `[completion:: ...]`).
    pub done_on: Option<String>,
    /// ➕ (or `[created:: ...]`).
    pub created_on: Option<String>,
    /// ❌ (or `[cancelled:: ...]`).
    pub cancelled_on: Option<String>,
    /// 1 lowest, 2 low, 3 none, 4 medium, 5 high, 6 highest.
    pub priority: u8,
    /// The text after 🔁 (`every week`, `every 2 days when done`).
    pub recurrence: Option<String>,
    /// The heading above it, if any.
    pub heading: Option<String>,
}

impl Task {
    /// Whether it is done: `x` or `X` between the brackets.
    pub fn is_done(&self) -> bool {
        matches!(self.status, 'x' | 'X')
    }
}

/// The priority of no sign.
pub const NO_PRIORITY: u8 = 3;

/// The signs of the Tasks plugin and what they set.
const DATE_SIGNS: &[(&str, DateField)] = &[
    ("📅", DateField::Due),
    ("📆", DateField::Due),
    ("🗓", DateField::Due),
    ("⏳", DateField::Scheduled),
    ("⌛", DateField::Scheduled),
    ("🛫", DateField::Start),
    ("✅", DateField::Done),
    ("➕", DateField::Created),
    ("❌", DateField::Cancelled),
];
const PRIORITY_SIGNS: &[(&str, u8)] = &[("🔺", 6), ("⏫", 5), ("🔼", 4), ("🔽", 2), ("⏬", 1)];
const RECURRENCE_SIGN: &str = "🔁";

#[derive(Debug, Clone, Copy)]
enum DateField {
    Due,
    Scheduled,
    Start,
    Done,
    Created,
    Cancelled,
}

/// An inline field: `key:: value` on its own line or list item, or `[key:: value]` / `(key:: value)` in a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The name as written (formatting left in).
    pub name: String,
    /// The name as queries match it: see [`field_key`].
    pub key: String,
    /// The value, trimmed, as written.
    pub value: String,
    /// 0-based line number.
    pub line: usize,
}

/// What a body holds for queries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Structure {
    /// Its tasks, in order.
    pub tasks: Vec<Task>,
    /// Its inline fields, in order.
    pub fields: Vec<Field>,
    /// Its hashtags, without `#`.
    pub hashtags: Vec<String>,
}

/// Reads the tasks, inline fields and hashtags of a body.
pub fn structure(body: &str) -> Structure {
    let mut out = Structure {
        hashtags: crate::markdown::hashtags(body),
        ..Structure::default()
    };
    let mut heading: Option<String> = None;
    for (n, line) in lines(body).into_iter().enumerate() {
        match line.kind {
            LineKind::Heading(_) => {
                heading = Some(
                    crate::markdown::headings(line.text)
                        .pop()
                        .map(|h| h.text)
                        .unwrap_or_default(),
                );
                continue;
            }
            LineKind::Text => {}
            LineKind::Fence | LineKind::Code => continue,
        }
        let text = line.text.trim_end_matches(['\n', '\r']);
        if let Some((status, rest)) = task_parts(text) {
            let mut task = Task {
                line: n,
                status,
                text: rest.trim().to_owned(),
                priority: NO_PRIORITY,
                heading: heading.clone(),
                ..Task::default()
            };
            read_signs(&mut task, rest);
            for field in bracketed_fields(rest, n) {
                let date = first_date(&field.value);
                match field.key.as_str() {
                    "due" => task.due = task.due.take().or(date),
                    "scheduled" => task.scheduled = task.scheduled.take().or(date),
                    "start" => task.start = task.start.take().or(date),
                    "completion" => task.done_on = task.done_on.take().or(date),
                    "created" => task.created_on = task.created_on.take().or(date),
                    "cancelled" => task.cancelled_on = task.cancelled_on.take().or(date),
                    _ => {}
                }
                out.fields.push(field);
            }
            out.tasks.push(task);
            continue;
        }
        let inline = bracketed_fields(text, n);
        if inline.is_empty() {
            out.fields.extend(line_field(text, n));
        } else {
            out.fields.extend(inline);
        }
    }
    out
}

/// The marker of a list item at the start of a line (`-`, `*`, `+`, `1.`, `1)`) and what follows it.
pub(crate) fn after_list_marker(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches([' ', '\t']);
    let after = if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        rest[digits..].strip_prefix(['.', ')'])?
    };
    if !after.starts_with([' ', '\t']) {
        return None;
    }
    Some(after.trim_start_matches([' ', '\t']))
}

/// A task line's status character and its text after the box.
pub(crate) fn task_parts(line: &str) -> Option<(char, &str)> {
    let rest = after_list_marker(line)?;
    let rest = rest.strip_prefix('[')?;
    let mut chars = rest.chars();
    let status = chars.next()?;
    let rest = chars.as_str().strip_prefix(']')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    Some((status, rest))
}

fn read_signs(task: &mut Task, text: &str) {
    for (sign, field) in DATE_SIGNS {
        if let Some(at) = text.find(sign) {
            let after = text[at + sign.len()..].trim_start_matches(['\u{fe0f}', ' ', '\t']);
            if let Some(date) = leading_date(after) {
                let slot = match field {
                    DateField::Due => &mut task.due,
                    DateField::Scheduled => &mut task.scheduled,
                    DateField::Start => &mut task.start,
                    DateField::Done => &mut task.done_on,
                    DateField::Created => &mut task.created_on,
                    DateField::Cancelled => &mut task.cancelled_on,
                };
                if slot.is_none() {
                    *slot = Some(date);
                }
            }
        }
    }
    for (sign, priority) in PRIORITY_SIGNS {
        if text.contains(sign) {
            task.priority = *priority;
            break;
        }
    }
    if let Some(at) = text.find(RECURRENCE_SIGN) {
        let after = &text[at + RECURRENCE_SIGN.len()..];
        let end = next_sign(after).unwrap_or(after.len());
        let rule = after[..end].trim().trim_end_matches('\u{fe0f}').trim();
        if !rule.is_empty() {
            task.recurrence = Some(rule.to_owned());
        }
    }
}

/// Where the next of the Tasks plugin's signs starts in `text`.
fn next_sign(text: &str) -> Option<usize> {
    let signs = DATE_SIGNS
        .iter()
        .map(|(s, _)| *s)
        .chain(PRIORITY_SIGNS.iter().map(|(s, _)| *s))
        .chain([RECURRENCE_SIGN, "🆔", "⛔", "🏁"]);
    signs.filter_map(|s| text.find(s)).min()
}

/// A YYYY-MM-DD date at the start of `text`.
fn leading_date(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let shape = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit);
    // A real date only (2026-02-30 is none): what SQL compares as text is what the evaluator reads as a date.
    (shape && (b.len() == 10 || !b[10].is_ascii_digit()) && text[..10].parse::<jiff::civil::Date>().is_ok())
        .then(|| text[..10].to_owned())
}

fn first_date(text: &str) -> Option<String> {
    leading_date(text.trim().trim_start_matches("[[").trim())
}

/// The name a field is matched by: formatting (`*`, `` ` ``, `~`, `=`) left out, lower case, white space as single
/// dashes (Dataview matches `**Due Date**::` as `due-date`); `_` stays (`due_date` is a name, not italics).
pub fn field_key(name: &str) -> String {
    let plain: String = name
        .chars()
        .filter(|c| !matches!(c, '*' | '`' | '~' | '='))
        .collect::<String>()
        .to_lowercase();
    plain.split_whitespace().collect::<Vec<_>>().join("-")
}

/// `[key:: value]` and `(key:: value)` inside a line.
fn bracketed_fields(line: &str, n: usize) -> Vec<Field> {
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let (open, close) = match bytes[i] {
            b'[' => (b'[', b']'),
            b'(' => (b'(', b')'),
            _ => {
                i += 1;
                continue;
            }
        };
        // A link's `[[` is not a field.
        if open == b'[' && bytes.get(i + 1) == Some(&b'[') {
            i += 2;
            continue;
        }
        let mut depth = 0usize;
        let mut end = None;
        for (j, &c) in bytes.iter().enumerate().skip(i) {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    end = Some(j);
                    break;
                }
            }
        }
        let Some(end) = end else { break };
        let inner = &line[i + 1..end];
        if let Some((name, value)) = split_field(inner) {
            found.push(Field {
                key: field_key(name),
                name: name.trim().to_owned(),
                value: value.trim().to_owned(),
                line: n,
            });
            i = end + 1;
        } else {
            i += 1;
        }
    }
    found
}

/// `line` with the value of its field `key` replaced by `value`: the first `[key:: ...]`/`(key:: ...)`, or a line that
/// is `key:: ...`; `None` when the line has no such field. What surrounds the value is kept.
pub(crate) fn set_field_in_line(line: &str, key: &str, value: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let close = match bytes[i] {
            b'[' if bytes.get(i + 1) != Some(&b'[') => b']',
            b'(' => b')',
            _ => {
                i += 1;
                continue;
            }
        };
        let open = bytes[i];
        let mut depth = 0usize;
        let end = bytes.iter().enumerate().skip(i).find_map(|(j, &c)| {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            None
        })?;
        let inner = &line[i + 1..end];
        if let Some((name, _)) = split_field(inner)
            && field_key(name) == key
        {
            let from = i + 1 + name.len() + 2;
            return Some(format!("{} {value}{}", &line[..from], &line[end..]));
        }
        i += 1;
    }
    let field = line_field(line, 0).filter(|f| f.key == key)?;
    let start = line.find(&field.name)?;
    let at = start + line[start..].find("::")? + 2;
    Some(format!("{} {value}", &line[..at]))
}

/// `name:: value` with a name that could be one.
fn split_field(text: &str) -> Option<(&str, &str)> {
    let at = text.find("::")?;
    let name = &text[..at];
    let plain = field_key(name);
    let fits = !plain.is_empty()
        && name.chars().count() <= 100
        && !name.contains(['[', ']', '(', ')', '#', ':'])
        && plain.chars().any(char::is_alphanumeric);
    fits.then(|| (name, &text[at + 2..]))
}

/// `key:: value` filling a line (after a list marker or a quote's `>`).
fn line_field(line: &str, n: usize) -> Option<Field> {
    let mut rest = line.trim_start();
    while let Some(r) = rest.strip_prefix('>') {
        rest = r.trim_start();
    }
    let rest = after_list_marker(rest).unwrap_or(rest);
    let (name, value) = split_field(rest)?;
    Some(Field {
        key: field_key(name),
        name: name.trim().to_owned(),
        value: value.trim().to_owned(),
        line: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_carry_the_tasks_plugins_fields() {
        let body = "# Week\n- [ ] Call Ann 📅 2026-12-07 ⏫ 🔁 every week\n  - [x] Pay rent ✅ 2026-12-01\n\
                    ```\n- [ ] in code\n```\n1. [/] Draft [due:: 2026-12-09]\n- [] not a task\n";
        let s = structure(body);
        assert_eq!(s.tasks.len(), 3);
        let call = &s.tasks[0];
        assert_eq!((call.line, call.status), (1, ' '));
        assert_eq!(call.due.as_deref(), Some("2026-12-07"));
        assert_eq!(call.priority, 5);
        assert_eq!(call.recurrence.as_deref(), Some("every week"));
        assert_eq!(call.heading.as_deref(), Some("Week"));
        assert!(s.tasks[1].is_done());
        assert_eq!(s.tasks[1].done_on.as_deref(), Some("2026-12-01"));
        assert_eq!(s.tasks[2].status, '/');
        assert_eq!(s.tasks[2].due.as_deref(), Some("2026-12-09"));
    }

    #[test]
    fn inline_fields_on_their_line_and_in_brackets() {
        let body = "Rating:: 5\n- **Due Date**:: 2026-01-02\nRead [author:: Le Guin] and (year:: 1969).\n\
                    [[Not:: a field]] http://x.y/z::w\n";
        let s = structure(body);
        let keys: Vec<(&str, &str)> = s.fields.iter().map(|f| (f.key.as_str(), f.value.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("rating", "5"),
                ("due-date", "2026-01-02"),
                ("author", "Le Guin"),
                ("year", "1969")
            ]
        );
    }
}
