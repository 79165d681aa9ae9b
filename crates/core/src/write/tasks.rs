//! Completing a task: the `- [ ]` line in its note changes through the ordinary note update (a revision for AI
//! actors, guards, one change set, undoable), with the Tasks plugin's ✅ date, and a recurring task (🔁) gets its
//! next occurrence on a new line above it, its dates moved on, as the Tasks plugin writes it.

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use super::{NoteUpdate, Writer};
use crate::error::{Error, Result};
use crate::markdown::{LineKind, lines};

/// Which task, and what to make it.
#[derive(Debug, Clone, Default)]
pub struct TaskToggle {
    /// Its note.
    pub note_id: String,
    /// Its line in the body, from 0 (as queries and `list_tasks` give it).
    pub line: usize,
    /// Done (`true`) or open again (`false`).
    pub done: bool,
    /// The task's text as the caller saw it: when given and the line now says something else, nothing changes
    /// and the error says what the line holds (the note changed since it was read).
    pub expect_text: Option<String>,
    /// The day it is done (today, local, when not given).
    pub today: Option<Date>,
}

/// What completing a task did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskDone {
    /// Its note.
    pub note_id: String,
    /// Its line now (one lower when a next occurrence was written above it).
    pub line: usize,
    /// The line's text after the box, as it is now.
    pub text: String,
    /// Whether it is done now.
    pub done: bool,
    /// The next occurrence written above it, for a recurring task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Whether anything changed (a task already in the state asked for is left as it is).
    pub changed: bool,
}

impl Writer<'_> {
    /// Marks a task done or open again; see [`TaskToggle`].
    pub fn set_task_done(&mut self, t: &TaskToggle) -> Result<TaskDone> {
        let note = self.note(&t.note_id)?;
        let body = note.body;
        let all = lines(&body);
        let Some(line) = all.get(t.line) else {
            return Err(Error::invalid(format!(
                "\"{}\" has {} lines; line {} is not one of them",
                note.summary.title,
                all.len(),
                t.line
            )));
        };
        let text = line.text.trim_end_matches(['\n', '\r']);
        let parts = (line.kind == LineKind::Text)
            .then(|| crate::structure::task_parts(text))
            .flatten();
        let Some((status, rest)) = parts else {
            return Err(Error::invalid(format!(
                "line {} of \"{}\" is not a task: {text:?}",
                t.line, note.summary.title
            )));
        };
        let rest = rest.trim();
        if let Some(expected) = &t.expect_text
            && expected.trim() != rest
        {
            return Err(Error::invalid(format!(
                "the note changed since it was read: line {} of \"{}\" now says {rest:?}; read its tasks again",
                t.line, note.summary.title
            )));
        }
        let is_done = matches!(status, 'x' | 'X');
        if is_done == t.done {
            return Ok(TaskDone {
                note_id: t.note_id.clone(),
                line: t.line,
                text: rest.to_owned(),
                done: is_done,
                next: None,
                changed: false,
            });
        }
        let today = t.today.unwrap_or_else(|| jiff::Zoned::now().date());
        let box_at = text.find('[').unwrap_or(0);
        let head = &text[..box_at];
        let ending = &line.text[text.len()..];
        let (new_rest, next) = if t.done {
            let task = crate::structure::structure(&format!("{text}\n"))
                .tasks
                .pop()
                .unwrap_or_default();
            let next = task
                .recurrence
                .as_deref()
                .and_then(|rule| next_occurrence(rest, &task, rule, today));
            (with_done_date(rest, today), next)
        } else {
            (without_done_date(rest), None)
        };
        let mark = if t.done { 'x' } else { ' ' };
        let changed_line = format!("{head}[{mark}] {new_rest}{ending}");
        let mut new_body = String::with_capacity(body.len() + 64);
        new_body.push_str(&body[..line.byte]);
        if let Some(next) = &next {
            new_body.push_str(&format!(
                "{head}[ ] {next}{}",
                if ending.is_empty() { "\n" } else { ending }
            ));
        }
        new_body.push_str(&changed_line);
        new_body.push_str(&body[line.byte + line.text.len()..]);
        self.update_note(
            &t.note_id,
            NoteUpdate {
                body: Some(new_body),
                ..NoteUpdate::default()
            },
        )?;
        Ok(TaskDone {
            note_id: t.note_id.clone(),
            line: t.line + usize::from(next.is_some()),
            text: new_rest,
            done: t.done,
            next,
            changed: true,
        })
    }
}

impl Writer<'_> {
    /// Derives a note's tasks, inline fields and hashtags again from its body, as every write of the body does:
    /// `cargo xtask bench query` times it against a whole save. Changes nothing a reader can tell.
    #[doc(hidden)]
    pub fn rederive_structure(&mut self, note_id: &str) -> Result<()> {
        let body: Option<String> = self
            .conn
            .query_row("SELECT body FROM notes WHERE id = ?1", [note_id], |r| r.get(0))
            .ok();
        crate::structure::refresh(self.conn, note_id, body.as_deref())
    }
}

/// The text with ` ✅ YYYY-MM-DD` (before a block id `^id` at the end), an older done date replaced.
fn with_done_date(rest: &str, today: Date) -> String {
    let plain = without_done_date(rest);
    let (text, block) = match plain.rfind(" ^") {
        Some(at) if !plain[at + 2..].contains(' ') => (&plain[..at], &plain[at..]),
        _ => (plain.as_str(), ""),
    };
    format!("{} ✅ {today}{block}", text.trim_end())
}

/// The text without its ✅ date.
fn without_done_date(rest: &str) -> String {
    match rest.find('✅') {
        Some(at) => {
            let after = rest[at + '✅'.len_utf8()..].trim_start();
            let after = match after.get(..10) {
                Some(date) if crate::query::iso(date).is_some() => &after[10..],
                _ => after,
            };
            format!("{}{}", rest[..at].trim_end(), after).trim().to_owned()
        }
        None => rest.to_owned(),
    }
}

/// The next occurrence of a recurring task: its text with its dates moved on by the rule, from its due (or
/// scheduled, or start) date, or from the day it is done for a rule that ends in `when done`.
fn next_occurrence(rest: &str, task: &crate::structure::Task, rule: &str, today: Date) -> Option<String> {
    let rule_l = rule.to_lowercase();
    let when_done = rule_l.ends_with("when done");
    let base_text = task.due.as_ref().or(task.scheduled.as_ref()).or(task.start.as_ref());
    let base = match (when_done, base_text) {
        (false, Some(d)) => d.parse::<Date>().ok()?,
        _ => today,
    };
    let next = step(&rule_l, base)?;
    let shift = next.since(base).ok()?;
    let mut out = without_done_date(rest);
    for sign in ["📅", "⏳", "🛫"] {
        if let Some(at) = out.find(sign) {
            let after_at = at + sign.len();
            let trimmed = out[after_at..].trim_start();
            let pad = out[after_at..].len() - trimmed.len();
            if let Some(Ok(d)) = trimmed.get(..10).map(str::parse::<Date>) {
                let moved = d.checked_add(shift).ok()?;
                let start = after_at + pad;
                out.replace_range(start..start + 10, &moved.to_string());
            }
        }
    }
    if base_text.is_none() {
        // A rule without a date to move: the next one is due then.
        out = format!("{} 📅 {next}", out.trim_end());
    }
    Some(out)
}

/// The day after `from` that the rule names: `every day`, `every 3 weeks`, `every month`, `every weekday`,
/// `every monday` (and `... when done`).
fn step(rule: &str, from: Date) -> Option<Date> {
    let words: Vec<&str> = rule.trim_end_matches("when done").split_whitespace().collect();
    let words = words.strip_prefix(&["every"])?;
    let (n, unit) = match words {
        [unit] => (1i64, *unit),
        [n, unit, ..] if n.parse::<i64>().is_ok() => (n.parse().ok()?, *unit),
        [unit, ..] => (1, *unit),
        [] => return None,
    };
    let unit = unit.trim_end_matches(',');
    let span = match unit.trim_end_matches('s') {
        "day" => jiff::Span::new().try_days(n).ok()?,
        "week" => jiff::Span::new().try_weeks(n).ok()?,
        "month" => jiff::Span::new().try_months(n).ok()?,
        "year" => jiff::Span::new().try_years(n).ok()?,
        "weekday" => {
            let mut d = from.tomorrow().ok()?;
            while matches!(
                d.weekday(),
                jiff::civil::Weekday::Saturday | jiff::civil::Weekday::Sunday
            ) {
                d = d.tomorrow().ok()?;
            }
            return Some(d);
        }
        name => {
            let day = [
                ("monday", jiff::civil::Weekday::Monday),
                ("tuesday", jiff::civil::Weekday::Tuesday),
                ("wednesday", jiff::civil::Weekday::Wednesday),
                ("thursday", jiff::civil::Weekday::Thursday),
                ("friday", jiff::civil::Weekday::Friday),
                ("saturday", jiff::civil::Weekday::Saturday),
                ("sunday", jiff::civil::Weekday::Sunday),
            ]
            .iter()
            .find(|(w, _)| w.trim_end_matches('s') == name || *w == name)?
            .1;
            return from.nth_weekday(1, day).ok();
        }
    };
    from.checked_add(span).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_step_as_the_tasks_plugin_steps_them() {
        let d: Date = "2026-12-06".parse().unwrap(); // a Sunday
        let on = |r: &str| step(r, d).map(|x| x.to_string());
        assert_eq!(on("every day").as_deref(), Some("2026-12-07"));
        assert_eq!(on("every 2 weeks").as_deref(), Some("2026-12-20"));
        assert_eq!(on("every month when done").as_deref(), Some("2027-01-06"));
        assert_eq!(on("every weekday").as_deref(), Some("2026-12-07"));
        assert_eq!(on("every friday").as_deref(), Some("2026-12-11"));
        assert_eq!(on("sometimes"), None);
    }

    #[test]
    fn done_dates_are_added_and_taken_away() {
        let d: Date = "2026-12-06".parse().unwrap();
        assert_eq!(
            with_done_date("Pay rent 📅 2026-12-01 ^rent", d),
            "Pay rent 📅 2026-12-01 ✅ 2026-12-06 ^rent"
        );
        assert_eq!(without_done_date("Pay rent ✅ 2026-12-06"), "Pay rent");
    }
}
