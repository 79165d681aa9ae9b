//! Templates: notes whose text holds variables, filled in when a note is made from them. Two syntaxes, as vaults
//! hold them:
//!
//! - Obsidian's core Templates and daily notes (and the Periodic Notes plugin): `{{date}}`, `{{date:FORMAT}}`,
//!   `{{time}}`, `{{time:FORMAT}}`, `{{title}}`, `{{yesterday}}`, `{{tomorrow}}`, and for a week's note the days of
//!   its week, `{{monday:FORMAT}}` .. `{{sunday:FORMAT}}`. Formats are Moment.js's ([`moment`]).
//! - Templater's common commands: `<% tp.date.now("FORMAT", offset, reference, reference_format) %>` (an offset in
//!   days or an ISO duration such as `"P-1W"`; `tp.file.title` as the reference reads the date from the title),
//!   `tp.date.tomorrow`, `tp.date.yesterday`, `tp.date.weekday("FORMAT", n)`, `tp.file.title`,
//!   `tp.file.creation_date`, `tp.file.folder`, and `tp.file.cursor` (removed). `<%-`/`-%>` trim the line break
//!   beside them, `<%_`/`_%>` all the white space.
//!
//! Anything else (a JavaScript block `<%* ... %>`, a command not listed) is left as it is written and named in the
//! warnings: quire runs no template code.

pub mod moment;

use jiff::civil::{Date, DateTime};
use jiff::{Span, ToSpan};

/// What a template's variables stand for.
#[derive(Debug, Clone)]
pub struct TemplateVars {
    /// The day the note is for (a daily note's day; today for any other note).
    pub day: Date,
    /// The time it is made, local.
    pub now: DateTime,
    /// The new note's title.
    pub title: String,
    /// The date format of the title, when the title is a date (a daily or weekly note's): Templater's
    /// `tp.date.now(..., tp.file.title, ...)` reads it back with it.
    pub title_format: Option<String>,
    /// The notebook path the note goes in (`tp.file.folder`).
    pub folder: String,
}

/// A template filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub body: String,
    /// What was left as written, and why.
    pub warnings: Vec<String>,
}

/// Fills in `template`'s variables; see the module's documentation.
pub fn render(template: &str, vars: &TemplateVars) -> Rendered {
    let mut warnings = Vec::new();
    let body = templater(template, vars, &mut warnings);
    let body = braces(&body, vars);
    Rendered { body, warnings }
}

const DAY: &str = "YYYY-MM-DD";

fn braces(text: &str, vars: &TemplateVars) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &after[..end];
        match variable(inner.trim(), vars) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[start..start + 2 + end + 2]),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn variable(inner: &str, vars: &TemplateVars) -> Option<String> {
    let (name, format) = match inner.split_once(':') {
        Some((name, format)) => (name.trim(), Some(format.trim())),
        None => (inner, None),
    };
    let name = name.to_ascii_lowercase();
    let on = |day: Date| Some(moment::format(day.to_datetime(vars.now.time()), format.unwrap_or(DAY)));
    // The neighbours of a daily note link to their notes: by default in the notes' own title format.
    let neighbour = |day: Date| {
        let f = format.or(vars.title_format.as_deref()).unwrap_or(DAY);
        Some(moment::format(day.to_datetime(vars.now.time()), f))
    };
    match name.as_str() {
        "title" if format.is_none() => Some(vars.title.clone()),
        "date" => on(vars.day),
        "time" => Some(moment::format(vars.now, format.unwrap_or("HH:mm"))),
        "yesterday" => neighbour(vars.day.yesterday().ok()?),
        "tomorrow" => neighbour(vars.day.tomorrow().ok()?),
        "sunday" | "monday" | "tuesday" | "wednesday" | "thursday" | "friday" | "saturday" => {
            let index = [
                "sunday",
                "monday",
                "tuesday",
                "wednesday",
                "thursday",
                "friday",
                "saturday",
            ]
            .iter()
            .position(|d| *d == name)?;
            // An ISO week (a `W`/`G` title) runs Monday to Sunday; the English locale's, Sunday to Saturday.
            let (start, index) = if vars.title_format.as_deref().is_some_and(moment::iso_weeks) {
                let back = i64::from(vars.day.weekday().to_monday_zero_offset());
                (vars.day.checked_sub(back.days()).ok()?, (index + 6) % 7)
            } else {
                (moment::week_start(vars.day), index)
            };
            on(start.checked_add(i64::try_from(index).ok()?.days()).ok()?)
        }
        _ => None,
    }
}

fn templater(text: &str, vars: &TemplateVars, warnings: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<%") {
        let Some(len) = rest[start..].find("%>") else {
            break;
        };
        let tag = &rest[start..start + len + 2];
        let mut inner = &tag[2..tag.len() - 2];
        let mut before = &rest[..start];
        let mut after = &rest[start + len + 2..];
        // Whitespace control: `-` takes one line break, `_` all white space, on its side.
        if let Some(i) = inner.strip_prefix('-') {
            inner = i;
            before = before
                .strip_suffix("\r\n")
                .or_else(|| before.strip_suffix('\n'))
                .unwrap_or(before);
        } else if let Some(i) = inner.strip_prefix('_') {
            inner = i;
            before = before.trim_end();
        }
        if let Some(i) = inner.strip_suffix('-') {
            inner = i;
            after = after
                .strip_prefix("\r\n")
                .or_else(|| after.strip_prefix('\n'))
                .unwrap_or(after);
        } else if let Some(i) = inner.strip_suffix('_') {
            inner = i;
            after = after.trim_start();
        }
        out.push_str(before);
        match command(inner.trim(), vars) {
            Ok(value) => out.push_str(&value),
            Err(Left(why)) => {
                warnings.push(format!("{} left as written: {why}", tag.trim()));
                out.push_str(tag);
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Why a command is left as written.
#[derive(Debug)]
struct Left(String);

impl From<&str> for Left {
    fn from(why: &str) -> Left {
        Left(why.to_owned())
    }
}

impl From<String> for Left {
    fn from(why: String) -> Left {
        Left(why)
    }
}

/// A Templater argument.
#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Text(String),
    Number(i64),
    Title,
}

fn args(text: &str) -> Result<Vec<Arg>, Left> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (arg, after) = if let Some(q) = rest.chars().next().filter(|c| matches!(c, '"' | '\'' | '`')) {
            let inner = &rest[1..];
            let end = inner.find(q).ok_or("a string is not closed")?;
            (Arg::Text(inner[..end].to_owned()), &inner[end + 1..])
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            let word = rest[..end].trim();
            let arg = if word == "tp.file.title" {
                Arg::Title
            } else {
                Arg::Number(
                    word.parse()
                        .map_err(|_| format!("{word} is not an argument quire reads"))?,
                )
            };
            (arg, &rest[end..])
        };
        out.push(arg);
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
        if !rest.is_empty() && out.len() > 8 {
            return Err("too many arguments".into());
        }
    }
    Ok(out)
}

fn call<'a>(expr: &'a str, name: &str) -> Option<&'a str> {
    let rest = expr.strip_prefix(name)?.trim_start();
    if rest.is_empty() {
        return Some("");
    }
    rest.strip_prefix('(')?.strip_suffix(')')
}

fn text_arg(args: &[Arg], i: usize, default: &str) -> Result<String, Left> {
    match args.get(i) {
        None => Ok(default.to_owned()),
        Some(Arg::Text(t)) => Ok(t.clone()),
        Some(other) => Err(format!("argument {} should be text, not {other:?}", i + 1).into()),
    }
}

/// `tp.date.now`'s offset: days, or an ISO 8601 duration (`P1D`, `P-1W`, `P1M`).
fn offset(arg: Option<&Arg>) -> Result<Span, Left> {
    match arg {
        None => Ok(Span::new()),
        Some(Arg::Number(n)) => Ok(n.days()),
        Some(Arg::Text(t)) => {
            let (negative, body) = match t.strip_prefix("P-") {
                Some(rest) => (true, format!("P{rest}")),
                None => (false, t.clone()),
            };
            let span: Span = body.parse().map_err(|_| format!("{t} is not a duration"))?;
            Ok(if negative { span.negate() } else { span })
        }
        Some(Arg::Title) => Err("the offset cannot be the title".into()),
    }
}

fn command(expr: &str, vars: &TemplateVars) -> Result<String, Left> {
    if expr.starts_with('*') {
        return Err("quire runs no template code".into());
    }
    let base = vars.now;
    let shifted = |span: Span| base.checked_add(span).map_err(|e| e.to_string());
    if let Some(a) = call(expr, "tp.date.now") {
        let a = args(a)?;
        let format = text_arg(&a, 0, DAY)?;
        let reference = match (a.get(2), a.get(3)) {
            (None, _) => base,
            (Some(reference), f) => {
                let text = match reference {
                    Arg::Title => vars.title.clone(),
                    Arg::Text(t) => t.clone(),
                    Arg::Number(_) => return Err("the reference should be a date".into()),
                };
                let f = match f {
                    Some(Arg::Text(f)) => f.clone(),
                    _ => vars.title_format.clone().unwrap_or_else(|| DAY.to_owned()),
                };
                // As Moment without strict mode: text after the date (a daily note's "2026-12-09 Wednesday") is let be.
                let day = moment::parse_start(&text, &f).ok_or(format!("{text:?} is not a date in {f}"))?;
                day.to_datetime(base.time())
            }
        };
        let at = reference.checked_add(offset(a.get(1))?).map_err(|e| e.to_string())?;
        return Ok(moment::format(at, &format));
    }
    for (name, days) in [("tp.date.tomorrow", 1), ("tp.date.yesterday", -1)] {
        if let Some(a) = call(expr, name) {
            let a = args(a)?;
            return Ok(moment::format(shifted(days.days())?, &text_arg(&a, 0, DAY)?));
        }
    }
    if let Some(a) = call(expr, "tp.date.weekday") {
        let a = args(a)?;
        let n = match a.get(1) {
            Some(Arg::Number(n)) => *n,
            _ => return Err("tp.date.weekday needs a weekday number".into()),
        };
        // Moment's weekday(n) in the English locale: 0 is this week's Sunday.
        let day = moment::week_start(base.date())
            .checked_add(n.days())
            .map_err(|e| e.to_string())?;
        return Ok(moment::format(day.to_datetime(base.time()), &text_arg(&a, 0, DAY)?));
    }
    if expr == "tp.file.title" {
        return Ok(vars.title.clone());
    }
    if matches!(
        expr,
        "tp.file.folder" | "tp.file.folder()" | "tp.file.folder(true)" | "tp.file.folder(false)"
    ) {
        let path = if expr.contains("true") {
            vars.folder.as_str()
        } else {
            vars.folder.rsplit('/').next().unwrap_or("")
        };
        return Ok(path.to_owned());
    }
    for name in ["tp.file.creation_date", "tp.file.last_modified_date"] {
        if let Some(a) = call(expr, name) {
            let a = args(a)?;
            return Ok(moment::format(base, &text_arg(&a, 0, "YYYY-MM-DD HH:mm")?));
        }
    }
    if call(expr, "tp.file.cursor").is_some() || call(expr, "tp.file.cursor_append").is_some() {
        return Ok(String::new());
    }
    Err("not a command quire fills in".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn vars() -> TemplateVars {
        TemplateVars {
            day: date(2026, 12, 7),
            now: date(2026, 12, 6).at(9, 30, 0, 0),
            title: "2026-12-07".into(),
            title_format: Some("YYYY-MM-DD".into()),
            folder: "Journal/Daily".into(),
        }
    }

    #[test]
    fn fills_obsidians_variables() {
        let r = render(
            "# {{title}}\n{{date:dddd, MMMM Do}} at {{time}} ({{ TIME:h:mm A }})\n<< [[{{yesterday}}]] | [[{{tomorrow}}]] >>\n{{date}} {{unknown}} {{monday:MM-DD}}..{{sunday:MM-DD}} {{",
            &vars(),
        );
        assert_eq!(
            r.body,
            "# 2026-12-07\nMonday, December 7th at 09:30 (9:30 AM)\n<< [[2026-12-06]] | [[2026-12-08]] >>\n2026-12-07 {{unknown}} 12-07..12-06 {{"
        );
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn fills_templaters_common_commands() {
        let r = render(
            "<% tp.date.now() %> <% tp.date.now(\"DD/MM\", -1) %> <% tp.date.now('YYYY-MM-DD', \"P1W\") %> \
             <% tp.date.now(\"MM\", \"P-1M\") %>|<% tp.date.now(\"YYYY-MM-DD\", -1, tp.file.title, \"YYYY-MM-DD\") %> \
             <% tp.date.now(\"dddd\", 1, tp.file.title) %> <% tp.date.tomorrow() %> <% tp.date.yesterday(\"D\") %> \
             <% tp.date.weekday(\"YYYY-MM-DD\", 1) %> <% tp.file.title %> <% tp.file.folder() %> \
             <% tp.file.folder(true) %> <% tp.file.creation_date() %>[<% tp.file.cursor(1) %>]",
            &vars(),
        );
        assert_eq!(
            r.body,
            "2026-12-06 05/12 2026-12-13 11|2026-12-06 Tuesday 2026-12-07 5 2026-12-07 2026-12-07 Daily \
             Journal/Daily 2026-12-06 09:30[]"
        );
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn leaves_code_and_unknown_commands_as_written_and_says_so() {
        let text =
            "a\n<%* tR += 'x' %>\n<% tp.system.prompt(\"Name\") %> <% tp.date.now(\"x\", tp.file.title) %> <% open";
        let r = render(text, &vars());
        assert_eq!(r.body, text);
        assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("runs no template code"));
    }

    #[test]
    fn trims_white_space_where_asked() {
        let r = render("a\n<%- tp.file.title -%>\nb <%_ tp.file.title _%>   c", &vars());
        assert_eq!(r.body, "a2026-12-07b2026-12-07c");
    }

    #[test]
    fn hostile_text_is_copied_not_read() {
        let long = "<% ".repeat(10_000) + &"{{".repeat(10_000);
        let r = render(&long, &vars());
        assert_eq!(r.body, long);
        let nested = "<% tp.date.now(\"YYYY\", \"P99999999Y\") %>";
        let r = render(nested, &vars());
        assert_eq!(r.body, nested, "an offset out of range leaves the command");
    }
}
