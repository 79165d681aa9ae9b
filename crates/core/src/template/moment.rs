//! Dates in Moment.js's format tokens (`YYYY-MM-DD`, `dddd, MMMM Do`, `gggg-[W]ww`), the ones Obsidian's daily notes,
//! the Periodic Notes plugin and Templater's `tp.date` write: formatting every common token, and reading a date back
//! from text written in a format made of numbers and names (a daily note's title).
//!
//! Weeks: `w`/`ww`/`gggg` are the English locale's (weeks start on Sunday, week 1 holds January 1st), as Moment gives
//! them with no locale set; `W`/`WW`/`GGGG` are ISO 8601's.

use jiff::ToSpan;
use jiff::civil::{Date, DateTime, Weekday};

/// The months' English names, January first (what Moment.js's `MMMM` writes, and exports of other apps name).
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// Longest first, so that `YYYY` is never read as two `YY`.
const TOKENS: &[&str] = &[
    "YYYY", "GGGG", "gggg", "MMMM", "DDDD", "dddd", "SSS", "MMM", "DDD", "ddd", "YY", "GG", "gg", "MM", "Mo", "DD",
    "Do", "dd", "do", "WW", "Wo", "ww", "wo", "HH", "hh", "kk", "mm", "ss", "M", "D", "d", "E", "e", "W", "w", "Q",
    "H", "h", "k", "m", "s", "A", "a", "X", "x",
];

/// One piece of a format: a token, or text to copy (`[...]` and characters that are not tokens).
#[derive(Debug, PartialEq, Eq)]
enum Piece<'a> {
    Token(&'static str),
    Literal(&'a str),
}

fn pieces(format: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = format;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            out.push(Piece::Literal(&inner[..end]));
            rest = inner.get(end + 1..).unwrap_or("");
            continue;
        }
        if let Some(token) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            out.push(Piece::Token(token));
            rest = &rest[token.len()..];
            continue;
        }
        let len = rest.chars().next().map_or(1, char::len_utf8);
        out.push(Piece::Literal(&rest[..len]));
        rest = &rest[len..];
    }
    out
}

fn ordinal(n: i64) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Sunday 0 .. Saturday 6, as Moment's `d`.
fn weekday_from_sunday(day: Date) -> i64 {
    i64::from(day.weekday().to_sunday_zero_offset())
}

/// The English locale's week of `day`: its week-year and number (weeks start on Sunday; week 1 holds January 1st,
/// so a week belongs to the year its Saturday is in).
pub(crate) fn locale_week(day: Date) -> (i16, i8) {
    let saturday = day.checked_add((6 - weekday_from_sunday(day)).days()).unwrap_or(day);
    let week = (saturday.day_of_year() - 1) / 7 + 1;
    (saturday.year(), i8::try_from(week).unwrap_or(1))
}

/// The Sunday that starts `day`'s week (the English locale's week).
pub(crate) fn week_start(day: Date) -> Date {
    day.checked_sub(weekday_from_sunday(day).days()).unwrap_or(day)
}

/// Whether `format` numbers weeks as ISO 8601 does (`W`, `WW`, `GGGG`: weeks from Monday) rather than as the English
/// locale (`w`, `ww`, `gggg`: weeks from Sunday).
pub fn iso_weeks(format: &str) -> bool {
    pieces(format)
        .iter()
        .any(|p| matches!(p, Piece::Token(t) if t.starts_with('W') || t.starts_with('G')))
}

/// `at` written in `format`'s Moment tokens.
pub fn format(at: DateTime, format: &str) -> String {
    let day = at.date();
    let iso = day.iso_week_date();
    let (week_year, week) = locale_week(day);
    let hour12 = match at.hour() % 12 {
        0 => 12,
        h => h,
    };
    let mut out = String::new();
    for piece in pieces(format) {
        let token = match piece {
            Piece::Literal(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Token(token) => token,
        };
        let month = usize::try_from(at.month() - 1).unwrap_or(0);
        let weekday = usize::try_from(weekday_from_sunday(day)).unwrap_or(0);
        let text = match token {
            "YYYY" => format!("{:04}", at.year()),
            "YY" => format!("{:02}", at.year().rem_euclid(100)),
            "GGGG" => format!("{:04}", iso.year()),
            "GG" => format!("{:02}", iso.year().rem_euclid(100)),
            "gggg" => format!("{week_year:04}"),
            "gg" => format!("{:02}", week_year.rem_euclid(100)),
            "MMMM" => MONTHS[month].to_owned(),
            "MMM" => MONTHS[month][..3].to_owned(),
            "MM" => format!("{:02}", at.month()),
            "Mo" => ordinal(i64::from(at.month())),
            "M" => at.month().to_string(),
            "DDDD" => format!("{:03}", day.day_of_year()),
            "DDD" => day.day_of_year().to_string(),
            "DD" => format!("{:02}", at.day()),
            "Do" => ordinal(i64::from(at.day())),
            "D" => at.day().to_string(),
            "dddd" => DAYS[weekday].to_owned(),
            "ddd" => DAYS[weekday][..3].to_owned(),
            "dd" => DAYS[weekday][..2].to_owned(),
            "do" => ordinal(weekday_from_sunday(day)),
            "d" | "e" => weekday_from_sunday(day).to_string(),
            "E" => day.weekday().to_monday_one_offset().to_string(),
            "WW" => format!("{:02}", iso.week()),
            "Wo" => ordinal(i64::from(iso.week())),
            "W" => iso.week().to_string(),
            "ww" => format!("{week:02}"),
            "wo" => ordinal(i64::from(week)),
            "w" => week.to_string(),
            "Q" => ((at.month() - 1) / 3 + 1).to_string(),
            "HH" => format!("{:02}", at.hour()),
            "H" => at.hour().to_string(),
            "hh" => format!("{hour12:02}"),
            "h" => hour12.to_string(),
            "kk" => format!("{:02}", if at.hour() == 0 { 24 } else { at.hour() }),
            "k" => (if at.hour() == 0 { 24 } else { at.hour() }).to_string(),
            "mm" => format!("{:02}", at.minute()),
            "m" => at.minute().to_string(),
            "ss" => format!("{:02}", at.second()),
            "s" => at.second().to_string(),
            "SSS" => format!("{:03}", at.subsec_nanosecond() / 1_000_000),
            "A" => (if at.hour() < 12 { "AM" } else { "PM" }).to_owned(),
            "a" => (if at.hour() < 12 { "am" } else { "pm" }).to_owned(),
            "X" | "x" => {
                let seconds = at
                    .to_zoned(jiff::tz::TimeZone::UTC)
                    .map(|z| z.timestamp().as_second())
                    .unwrap_or(0);
                if token == "X" {
                    seconds.to_string()
                } else {
                    (seconds * 1000).to_string()
                }
            }
            other => other.to_owned(),
        };
        out.push_str(&text);
    }
    out
}

/// The day `text` names when it was written in `format` (a daily note's title in its format). Reads the numeric
/// tokens of years, months, days and weeks and the names of months and weekdays; `None` when the text does not fit
/// the format or the format has a token this cannot read back.
pub fn parse(text: &str, format: &str) -> Option<Date> {
    parse_from(text, format, true)
}

/// [`parse`] of the start of `text`: what follows the date is let be, as Moment's non-strict parsing does.
pub fn parse_start(text: &str, format: &str) -> Option<Date> {
    parse_from(text, format, false)
}

fn parse_from(text: &str, format: &str, whole: bool) -> Option<Date> {
    let mut rest = text;
    let (mut year, mut month, mut day) = (None::<i16>, None::<i8>, None::<i8>);
    let (mut iso_year, mut iso_week, mut week_year, mut week) = (None::<i16>, None::<i8>, None::<i16>, None::<i8>);
    for piece in pieces(format) {
        match piece {
            Piece::Literal(lit) => rest = rest.strip_prefix(lit)?,
            Piece::Token(token) => {
                let (value, after) = match token {
                    "MMMM" | "MMM" | "dddd" | "ddd" | "dd" => {
                        let names: &[&str] = if token.starts_with('M') { &MONTHS } else { &DAYS };
                        let len = match token {
                            "MMM" | "ddd" => 3,
                            "dd" => 2,
                            _ => 0,
                        };
                        let (i, used) = names.iter().enumerate().find_map(|(i, name)| {
                            let name = if len == 0 { *name } else { &name[..len] };
                            rest.get(..name.len())
                                .filter(|head| head.eq_ignore_ascii_case(name))
                                .map(|_| (i, name.len()))
                        })?;
                        (i64::try_from(i).ok()? + 1, &rest[used..])
                    }
                    _ => {
                        let width = match token {
                            "YYYY" | "GGGG" | "gggg" => 4,
                            "YY" | "GG" | "gg" | "MM" | "DD" | "WW" | "ww" => 2,
                            "M" | "D" | "W" | "w" => rest.chars().take(2).take_while(char::is_ascii_digit).count(),
                            _ => return None,
                        };
                        let digits = rest.get(..width).filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
                        (digits.parse().ok()?, &rest[width..])
                    }
                };
                rest = after;
                let two = |v: i64| i8::try_from(v).ok();
                let year_of = |v: i64| i16::try_from(if token.len() == 2 { 2000 + v } else { v }).ok();
                match token {
                    "YYYY" | "YY" => year = Some(year_of(value)?),
                    "GGGG" | "GG" => iso_year = Some(year_of(value)?),
                    "gggg" | "gg" => week_year = Some(year_of(value)?),
                    "MMMM" | "MMM" | "MM" | "M" => month = Some(two(value)?),
                    "DD" | "D" => day = Some(two(value)?),
                    "WW" | "W" => iso_week = Some(two(value)?),
                    "ww" | "w" => week = Some(two(value)?),
                    _ => {}
                }
            }
        }
    }
    if whole && !rest.is_empty() {
        return None;
    }
    if let (Some(y), Some(w)) = (iso_year, iso_week) {
        return jiff::civil::ISOWeekDate::new(y, w, Weekday::Monday)
            .ok()
            .map(|d| d.date());
    }
    if let (Some(y), Some(w)) = (week_year, week) {
        // Week 1 is the week holding January 1st; its Sunday may be in December.
        let first = week_start(Date::new(y, 1, 1).ok()?);
        return first.checked_add((i64::from(w) - 1).weeks()).ok();
    }
    Date::new(year?, month.unwrap_or(1), day.unwrap_or(1)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn formats_the_tokens_obsidian_users_write() {
        let at = date(2026, 1, 3).at(14, 5, 9, 0);
        assert_eq!(format(at, "YYYY-MM-DD"), "2026-01-03");
        assert_eq!(format(at, "dddd, MMMM Do YYYY"), "Saturday, January 3rd 2026");
        assert_eq!(format(at, "ddd D MMM YY"), "Sat 3 Jan 26");
        assert_eq!(format(at, "HH:mm:ss h A"), "14:05:09 2 PM");
        assert_eq!(format(at, "[Week] W [of] GGGG, Q[Q]"), "Week 1 of 2026, 1Q");
        assert_eq!(format(at, "YYYY/MM/YYYY-MM-DD"), "2026/01/2026-01-03");
        assert_eq!(format(at, "DDDD E e"), "003 6 6");
    }

    #[test]
    fn weeks_follow_moment_for_both_kinds() {
        // 2027-01-01 is a Friday: ISO puts it in 2026's week 53, the English locale in 2027's week 1.
        let at = date(2027, 1, 1).at(0, 0, 0, 0);
        assert_eq!(format(at, "GGGG-[W]WW"), "2026-W53");
        assert_eq!(format(at, "gggg-[W]ww"), "2027-W01");
        // A Sunday starts an English week; ISO's week goes on to Monday.
        let sunday = date(2026, 12, 6).at(0, 0, 0, 0);
        assert_eq!(format(sunday, "gggg-[W]ww"), "2026-W50");
        assert_eq!(format(sunday, "GGGG-[W]WW"), "2026-W49");
        assert_eq!(format(date(2026, 12, 27).at(0, 0, 0, 0), "gggg-[W]ww"), "2027-W01");
    }

    #[test]
    fn reads_back_what_it_writes() {
        for f in [
            "YYYY-MM-DD",
            "DD.MM.YYYY",
            "dddd, MMMM Do YYYY",
            "YYYY/MM/YYYY-MM-DD",
            "MMM D, YYYY",
        ] {
            let day = date(2026, 3, 9);
            let text = format(day.at(0, 0, 0, 0), f);
            if f.contains("Do") {
                assert_eq!(parse(&text, f), None, "{f}: ordinals are not read back");
            } else {
                assert_eq!(parse(&text, f), Some(day), "{f} -> {text}");
            }
        }
        assert_eq!(parse("2026-W10", "GGGG-[W]WW"), Some(date(2026, 3, 2)));
        assert_eq!(parse("2026-W10", "gggg-[W]ww"), Some(date(2026, 3, 1)));
        assert_eq!(parse("2026-13-01", "YYYY-MM-DD"), None);
        assert_eq!(parse("2026-03-01 extra", "YYYY-MM-DD"), None);
        assert_eq!(parse("nonsense", "YYYY"), None);
    }
}
