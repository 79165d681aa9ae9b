//! What Logseq and Roam share: outlines of blocks, blocks referenced by id (`((id))`), and journal pages named by
//! their day (which become quire's daily notes, titled the way `quire today` finds them, the outliner's name of
//! the day kept as an alias so `[[Feb 7th, 2024]]` still finds them).

use std::collections::HashMap;

/// A block that can be referenced: the page it is on and its text (first line, markers out).
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) page: String,
    pub(crate) text: String,
}

/// The longest text a reference shows of its block.
const MAX_SHOWN: usize = 80;

/// The next `((` of `rest` with what it holds up to `))`: where the inner `((` is (`(((id)))`: the inner pair), and the
/// id when it is one (not empty, at most 64 bytes, no spaces); `None` when no `((…))` is left.
fn next_ref(rest: &str) -> Option<(usize, usize, Option<&str>)> {
    let mut at = rest.find("((")?;
    while rest[at + 2..].starts_with('(') {
        at += 1;
    }
    let len = rest[at + 2..].find("))")?;
    let id = &rest[at + 2..at + 2 + len];
    let valid = !id.is_empty() && id.len() <= 64 && !id.contains(char::is_whitespace);
    Some((at, len, valid.then_some(id)))
}

/// The ids a line's block references name (`((id))`, as [`resolve_refs`] reads them), added to `into`.
pub(crate) fn referenced(line: &str, into: &mut std::collections::HashSet<String>) {
    let mut rest = line;
    while let Some((at, _, id)) = next_ref(rest) {
        if let Some(id) = id {
            into.insert(id.to_owned());
        }
        rest = &rest[at + 2..];
    }
}

/// `((id))`, `[label](((id)))` and `{{embed ((id))}}` as links to the block's page showing its text (or the
/// label); a reference to a block the export does not have is left as written and said.
pub(crate) fn resolve_refs(line: &str, blocks: &HashMap<String, Block>, notices: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some((at, len, id)) = next_ref(rest) {
        let Some(id) = id else {
            out.push_str(&rest[..at + 2]);
            rest = &rest[at + 2..];
            continue;
        };
        let mut start = at;
        let mut end = at + 2 + len + 2;
        let mut label = None;
        // `[label](((id)))`
        if rest[..at].ends_with("](")
            && rest[end..].starts_with(')')
            && let Some(open) = rest[..at - 2].rfind('[')
        {
            label = Some(rest[open + 1..at - 2].to_owned());
            start = open;
            end += 1;
        }
        // `{{embed ((id))}}`
        if rest[..start].ends_with("{{embed ") && rest[end..].starts_with("}}") {
            start -= "{{embed ".len();
            end += 2;
        }
        out.push_str(&rest[..start]);
        match blocks.get(id) {
            Some(block) => {
                let shown = label.unwrap_or_else(|| shorten(&block.text));
                out.push_str(&format!("[[{}|{}]]", plain(&block.page), plain(&shown)));
            }
            None => {
                notices.push(format!(
                    "the block reference (({id})) names no block of the export: left as written"
                ));
                out.push_str(&rest[start..end]);
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Text that can stand inside a wikilink: no brackets or bars.
fn plain(text: &str) -> String {
    text.replace(['[', ']', '|'], "").trim().to_owned()
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_SHOWN {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(MAX_SHOWN).collect();
    short.push('…');
    short
}

/// The day a journal's name says: `2024_02_07` (Logseq's file) or `February 7th, 2024` (Roam's page).
pub(crate) fn journal_day(name: &str) -> Option<(u32, u32, u32)> {
    if let [y, m, d] = name.split(['_', '-']).collect::<Vec<_>>()[..]
        && y.len() == 4
    {
        let (y, m, d) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        return valid(y, m, d);
    }
    let (month, rest) = name.split_once(' ')?;
    let m = quire_core::template::moment::MONTHS
        .iter()
        .position(|n| *n == month || n.get(..3) == Some(month))? as u32
        + 1;
    let (day, year) = rest.split_once(", ")?;
    let day = day.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    valid(year.trim().parse().ok()?, m, day.parse().ok()?)
}

fn valid(y: u32, m: u32, d: u32) -> Option<(u32, u32, u32)> {
    ((1000..=9999).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

/// Where quire keeps the daily note of a day, by the person's `[daily]` settings: its notebook path and title
/// (`Daily`, `2024-02-07` by default), where `quire today` looks for it. The marker `daily` asks the writer to fill
/// the day's note when it is there and empty (made by `quire today` before the import) rather than make another.
pub(crate) fn daily_place(
    day: (u32, u32, u32),
    settings: &quire_core::PeriodicSettings,
    meta: &mut crate::frontmatter::FrontMatter,
) -> (String, String) {
    meta.daily = true;
    let (y, m, d) = day;
    let date = jiff::civil::Date::new(y as i16, m as i8, d as i8).ok();
    date.and_then(|date| quire_core::periodic_place(quire_core::Period::Day, date, settings).ok())
        .unwrap_or_else(|| (settings.notebook.clone(), iso(day)))
}

/// A day as quire's daily notes are titled by default (`2024-02-07`).
pub(crate) fn iso((y, m, d): (u32, u32, u32)) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// A day as the outliners title it: `Feb 7th, 2024` (Logseq's default) or `February 7th, 2024` (Roam's).
pub(crate) fn long_name((y, m, d): (u32, u32, u32), short_month: bool) -> String {
    let month = quire_core::template::moment::MONTHS[(m - 1) as usize];
    let month = if short_month { &month[..3] } else { month };
    let suffix = match (d % 10, d % 100) {
        (1, n) if n != 11 => "st",
        (2, n) if n != 12 => "nd",
        (3, n) if n != 13 => "rd",
        _ => "th",
    };
    format!("{month} {d}{suffix}, {y}")
}

/// A task marker at the start of a block's text as a Markdown task: `TODO x` is `[ ] x`, `DONE x` `[x] x`.
pub(crate) fn task(text: &str) -> Option<String> {
    let (marker, rest) = text.split_once(' ').unwrap_or((text, ""));
    let status = match marker {
        "TODO" | "LATER" | "WAITING" | "WAIT" => " ",
        // In progress, as the Tasks plugin writes it.
        "NOW" | "DOING" | "IN-PROGRESS" => "/",
        "DONE" => "x",
        "CANCELED" | "CANCELLED" => "-",
        _ => return None,
    };
    // `[#A]` priorities as the Tasks plugin's signs.
    let mut rest = rest.to_owned();
    for (mark, sign) in [("[#A]", "⏫"), ("[#B]", "🔼"), ("[#C]", "🔽")] {
        if rest.contains(mark) {
            rest = format!(
                "{} {sign}",
                rest.replacen(mark, "", 1)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    Some(format!("[{status}] {}", rest.trim()))
}
