//! Reading dates, durations and field values from text, as Dataview reads them.

use jiff::civil::{Date, DateTime, Time};

use super::value::{DAY_MS, Duration, Link, Value};

/// The named dates `date()` knows.
const NAMED: &[&str] = &[
    "today",
    "now",
    "tomorrow",
    "yesterday",
    "sow",
    "eow",
    "som",
    "eom",
    "soy",
    "eoy",
];

/// The words inside `date(...)` when they are a date as written (a name such as `today`, or an ISO date): kept as
/// text for `date()` to read when the query runs.
pub(crate) fn date_words(inner: &str) -> Option<Value> {
    let inner = inner.trim();
    (NAMED.iter().any(|n| n.eq_ignore_ascii_case(inner)) || iso(inner).is_some()).then(|| Value::Text(inner.to_owned()))
}

/// Whether `date(...)` reads these words as a date: a name such as `today` or an ISO date.
pub fn is_date_words(words: &str) -> bool {
    date_words(words).is_some()
}

/// The day `words` name, relative to `now`: a named date (`today`, `tomorrow`, `eow`, ...) or an ISO date.
pub fn day_named(words: &str, now: DateTime) -> Option<Date> {
    named(words.trim(), now).or_else(|| iso(words)).map(|at| at.date())
}

/// A named date, relative to `now`.
pub(crate) fn named(word: &str, now: DateTime) -> Option<DateTime> {
    let today = now.date();
    let day = |d: Date| d.to_datetime(Time::midnight());
    let end = |d: Date| d.to_datetime(Time::constant(23, 59, 59, 999_000_000));
    let monday = today
        .checked_sub(jiff::Span::new().days(i64::from(today.weekday().to_monday_zero_offset())))
        .ok()?;
    Some(match word.to_ascii_lowercase().as_str() {
        "today" => day(today),
        "now" => now,
        "tomorrow" => day(today.tomorrow().ok()?),
        "yesterday" => day(today.yesterday().ok()?),
        "sow" => day(monday),
        "eow" => end(monday.checked_add(jiff::Span::new().days(6)).ok()?),
        "som" => day(today.first_of_month()),
        "eom" => end(today.last_of_month()),
        "soy" => day(today.first_of_year()),
        "eoy" => end(today.last_of_year()),
        _ => return None,
    })
}

/// An ISO 8601 date or date-time as Dataview reads them: `2026`, `2026-12`, `2026-12-06`, `2026-12-06T14:30`,
/// `2026-12-06T14:30:05(.123)`, `2026-12-06 14:30`; an offset or `Z` at the end is left out (dates here are the
/// workspace's local ones).
pub fn iso(text: &str) -> Option<DateTime> {
    let t = text.trim();
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i16> {
        let s = t.get(r)?;
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok())?
    };
    let year = num(0..4)?;
    if b.len() == 4 {
        return Date::new(year, 1, 1).ok().map(|d| d.to_datetime(Time::midnight()));
    }
    if b.get(4) != Some(&b'-') {
        return None;
    }
    let month = num(5..7)? as i8;
    if b.len() == 7 {
        return Date::new(year, month, 1).ok().map(|d| d.to_datetime(Time::midnight()));
    }
    if b.get(7) != Some(&b'-') {
        return None;
    }
    let date = Date::new(year, month, num(8..10)? as i8).ok()?;
    if b.len() == 10 {
        return Some(date.to_datetime(Time::midnight()));
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let mut rest = &t[11..];
    if let Some(cut) = rest.find(['Z', 'z', '+']).or_else(|| rest.rfind('-')) {
        rest = &rest[..cut];
    }
    let time: Time = if rest.len() == 5 {
        format!("{rest}:00").parse().ok()?
    } else {
        rest.parse().ok()?
    };
    Some(date.to_datetime(time))
}

/// A duration as written: `7 days`, `1 week 2 days`, `3 months, 1 day`, `2h 30m`, `90 minutes`.
pub fn duration(text: &str) -> Option<Duration> {
    let cleaned = text.replace([',', '+'], " ").to_lowercase();
    let mut words: Vec<String> = Vec::new();
    // `2h30m`: numbers and units apart.
    for word in cleaned.split_whitespace() {
        let mut cur = String::new();
        for c in word.chars() {
            if !cur.is_empty()
                && (c.is_ascii_digit() || c == '.') != cur.chars().all(|d| d.is_ascii_digit() || d == '.')
            {
                words.push(std::mem::take(&mut cur));
            }
            cur.push(c);
        }
        words.push(cur);
    }
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return None;
    }
    let mut total = Duration::default();
    for pair in words.chunks(2) {
        let n: f64 = pair[0].parse().ok()?;
        let unit = pair[1].as_str();
        let (months, millis): (f64, f64) = match unit {
            "ms" | "millisecond" | "milliseconds" => (0.0, 1.0),
            "s" | "sec" | "secs" | "second" | "seconds" => (0.0, 1000.0),
            "m" | "min" | "mins" | "minute" | "minutes" => (0.0, 60_000.0),
            "h" | "hr" | "hrs" | "hour" | "hours" => (0.0, 3_600_000.0),
            "d" | "day" | "days" => (0.0, DAY_MS as f64),
            "w" | "wk" | "wks" | "week" | "weeks" => (0.0, 7.0 * DAY_MS as f64),
            "mo" | "month" | "months" => (1.0, 0.0),
            "y" | "yr" | "yrs" | "year" | "years" => (12.0, 0.0),
            _ => return None,
        };
        // Saturating: `9999999999999999999 days` is as long as a duration gets, not a wrap or a panic.
        if months > 0.0 && n.fract() == 0.0 {
            total.months = total.months.saturating_add((n * months) as i64);
        } else if months > 0.0 {
            total.millis = total.millis.saturating_add((n * months * 30.0 * DAY_MS as f64) as i64);
        } else {
            total.millis = total.millis.saturating_add((n * millis) as i64);
        }
    }
    Some(total)
}

/// A field's value written as text (an inline field, a label), typed as Dataview types it: a number, a boolean,
/// a date, a duration, a link (`[[Note]]`), else text.
pub fn typed(text: &str) -> Value {
    // ASCII white space only, as SQL's `trim` in the query's narrowing (`source.rs`) takes it.
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() {
        return Value::Null;
    }
    if let Ok(n) = t.parse::<f64>()
        && n.is_finite()
        && !t.starts_with('+')
        && !t.eq_ignore_ascii_case("nan")
    {
        return Value::Number(n);
    }
    if t.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if t.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if t.len() >= 7
        && let Some(d) = iso(t)
    {
        return Value::Date(d);
    }
    if let Some(inner) = t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]"))
        && !inner.contains("]]")
    {
        let target = inner.split(['|', '#']).next().unwrap_or("").trim().to_owned();
        return Value::Link(Link {
            target,
            note_id: None,
            display: inner.split_once('|').map(|(_, d)| d.to_owned()),
        });
    }
    if t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && let Some(d) = duration(t)
    {
        return Value::Duration(d);
    }
    Value::Text(t.to_owned())
}

/// A label's JSON value as a query value: text inside is typed as [`typed`] types it.
pub(crate) fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => n.as_f64().map_or(Value::Null, Value::Number),
        serde_json::Value::String(s) => match typed(s) {
            Value::Number(_) | Value::Bool(_) => Value::Text(s.clone()),
            other => other,
        },
        serde_json::Value::Array(a) => Value::List(a.iter().map(from_json).collect()),
        serde_json::Value::Object(o) => Value::object(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_people_write_them() {
        assert_eq!(duration("7 days").unwrap().millis, 7 * DAY_MS);
        assert_eq!(duration("1 week, 2 days").unwrap().millis, 9 * DAY_MS);
        assert_eq!(duration("2h30m").unwrap().millis, 9_000_000);
        assert_eq!(duration("3 months").unwrap().months, 3);
        assert!(duration("seven days").is_none());
    }

    #[test]
    fn field_values_are_typed() {
        assert_eq!(typed("5"), Value::Number(5.0));
        assert_eq!(typed("2026-12-06"), Value::date(jiff::civil::date(2026, 12, 6)));
        assert!(matches!(typed("[[Book]]"), Value::Link(l) if l.target == "Book"));
        assert!(matches!(typed("3 days"), Value::Duration(_)));
        assert_eq!(typed("Le Guin"), Value::Text("Le Guin".into()));
    }
}
