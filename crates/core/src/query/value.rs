//! The values a query computes with, as Dataview has them: null, booleans, numbers, text, dates, durations, links,
//! lists and objects, with Dataview's order between kinds (null first) and its idea of truth.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use jiff::civil::{Date, DateTime};
use serde_json::json;

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Nothing (a field a note does not have).
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (integers are numbers).
    Number(f64),
    /// Text.
    Text(String),
    /// A date, with a time of day (midnight for a plain date), in the workspace's time zone.
    Date(DateTime),
    /// A length of time.
    Duration(Duration),
    /// A link to a note.
    Link(Link),
    /// A list.
    List(Vec<Value>),
    /// Named values (`file`, a task, a group's row), shared: a row copied into many (a note's into each of its
    /// tasks) costs a count, not a copy.
    Object(std::rc::Rc<BTreeMap<String, Value>>),
    /// A function written in the query (`(x) => x * 2`), for `map`, `filter` and their kin.
    Lambda(std::rc::Rc<super::parse::Lambda>),
}

/// A link: its target as written, and the note it resolves to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Link {
    /// The target as written (a title, or the note's title for a link made by quire).
    pub target: String,
    /// The note it resolves to, if any.
    pub note_id: Option<String>,
    /// What it shows, if that is not the target.
    pub display: Option<String>,
}

/// A length of time: calendar months (a month is as long as the month it is added to) and milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Duration {
    /// Whole months (a year is twelve).
    pub months: i64,
    /// The rest, in milliseconds (a day is 86,400,000: dates here have no daylight saving gaps).
    pub millis: i64,
}

pub(crate) const DAY_MS: i64 = 86_400_000;

/// Keys of an object that are not shown (a task's note, which its unknown names are read from).
pub(crate) const HIDDEN: char = '\u{0}';

/// A task's note, under a key nobody can write.
pub(crate) const PAGE_KEY: &str = "\u{0}page";

impl Duration {
    /// Its length in milliseconds, a month counted as 30 days (for comparing and for `durationformat`).
    pub fn approx_millis(self) -> i64 {
        self.months.saturating_mul(30 * DAY_MS).saturating_add(self.millis)
    }

    pub(crate) fn neg(self) -> Duration {
        Duration {
            months: self.months.saturating_neg(),
            millis: self.millis.saturating_neg(),
        }
    }

    pub(crate) fn add(self, other: Duration) -> Duration {
        Duration {
            months: self.months.saturating_add(other.months),
            millis: self.millis.saturating_add(other.millis),
        }
    }

    pub(crate) fn scale(self, by: f64) -> Duration {
        if by.fract() == 0.0 {
            Duration {
                months: (self.months as f64 * by) as i64,
                millis: (self.millis as f64 * by) as i64,
            }
        } else {
            Duration {
                months: 0,
                millis: (self.approx_millis() as f64 * by) as i64,
            }
        }
    }

    /// Written as Dataview writes one: `2 months, 3 days, 4 hours`.
    pub fn describe(self) -> String {
        if self.months == 0 && self.millis == 0 {
            return "0 seconds".to_owned();
        }
        let mut parts = Vec::new();
        let (years, months) = (self.months / 12, self.months % 12);
        let mut ms = self.millis;
        let days = ms / DAY_MS;
        ms %= DAY_MS;
        let (hours, minutes, seconds) = (ms / 3_600_000, ms % 3_600_000 / 60_000, ms % 60_000 / 1000);
        for (n, unit) in [
            (years, "year"),
            (months, "month"),
            (days, "day"),
            (hours, "hour"),
            (minutes, "minute"),
            (seconds, "second"),
        ] {
            if n != 0 {
                parts.push(format!("{n} {unit}{}", if n.abs() == 1 { "" } else { "s" }));
            }
        }
        if parts.is_empty() {
            format!("{} milliseconds", self.millis)
        } else {
            parts.join(", ")
        }
    }
}

/// Adds a duration to a date; `None` past the calendar's ends.
pub(crate) fn date_plus(date: DateTime, d: Duration) -> Option<DateTime> {
    let moved = date.checked_add(jiff::Span::new().try_months(d.months).ok()?).ok()?;
    moved.checked_add(jiff::SignedDuration::from_millis(d.millis)).ok()
}

/// The duration from `b` to `a`.
pub(crate) fn date_minus(a: DateTime, b: DateTime) -> Duration {
    let ms = a.duration_since(b).as_millis();
    Duration {
        months: 0,
        millis: i64::try_from(ms).unwrap_or(if ms < 0 { i64::MIN } else { i64::MAX }),
    }
}

impl Value {
    /// Named values.
    pub fn object(map: BTreeMap<String, Value>) -> Value {
        Value::Object(std::rc::Rc::new(map))
    }

    /// A plain date at midnight.
    pub fn date(d: Date) -> Value {
        Value::Date(d.to_datetime(jiff::civil::Time::midnight()))
    }

    /// Dataview's truth: non-zero numbers, non-empty text, lists and objects, non-zero durations; dates and links.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::Text(s) => !s.is_empty(),
            Value::Date(_) | Value::Link(_) | Value::Lambda(_) => true,
            Value::Duration(d) => d.approx_millis() != 0,
            Value::List(l) => !l.is_empty(),
            Value::Object(o) => !o.is_empty(),
        }
    }

    /// The kind's name, as `typeof` says it.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::Text(_) => "string",
            Value::Date(_) => "date",
            Value::Duration(_) => "duration",
            Value::Link(_) => "link",
            Value::List(_) => "array",
            Value::Object(_) => "object",
            Value::Lambda(_) => "function",
        }
    }

    /// Dataview's order: null before everything, then by the kinds' names (as Dataview orders values of two kinds),
    /// then within a kind.
    pub fn compare(&self, other: &Value) -> Ordering {
        match (self, other) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Less,
            (_, Value::Null) => Ordering::Greater,
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (Value::Number(a), Value::Number(b)) => a.total_cmp(b),
            (Value::Text(a), Value::Text(b)) => a.cmp(b),
            (Value::Date(a), Value::Date(b)) => a.cmp(b),
            (Value::Duration(a), Value::Duration(b)) => a.approx_millis().cmp(&b.approx_millis()),
            (Value::Link(a), Value::Link(b)) => match (&a.note_id, &b.note_id) {
                (Some(x), Some(y)) if x == y => Ordering::Equal,
                _ => a.target.to_lowercase().cmp(&b.target.to_lowercase()),
            },
            (Value::List(a), Value::List(b)) => {
                for (x, y) in a.iter().zip(b) {
                    let o = x.compare(y);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Value::Object(a), Value::Object(b)) => {
                let (ka, kb): (Vec<_>, Vec<_>) = (a.keys().collect(), b.keys().collect());
                ka.cmp(&kb).then_with(|| {
                    a.values()
                        .zip(b.values())
                        .map(|(x, y)| x.compare(y))
                        .find(|o| *o != Ordering::Equal)
                        .unwrap_or(Ordering::Equal)
                })
            }
            _ => self.kind().cmp(other.kind()),
        }
    }

    /// The value as text, as a table cell shows it.
    pub fn display(&self) -> String {
        match self {
            Value::Null => "-".to_owned(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => number_text(*n),
            Value::Text(s) => s.clone(),
            Value::Date(d) => date_text(*d),
            Value::Duration(d) => d.describe(),
            Value::Link(l) => l.display.clone().unwrap_or_else(|| l.target.clone()),
            Value::List(l) => l.iter().map(Value::display).collect::<Vec<_>>().join(", "),
            Value::Object(o) => o
                .iter()
                .filter(|(k, _)| !k.starts_with(HIDDEN))
                .map(|(k, v)| format!("{k}: {}", v.display()))
                .collect::<Vec<_>>()
                .join(", "),
            Value::Lambda(_) => "<function>".to_owned(),
        }
    }

    /// The value as JSON: dates as ISO 8601 text, durations as `{"duration": "..."}`, links as
    /// `{"link": target, "note_id": ...}`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null | Value::Lambda(_) => serde_json::Value::Null,
            Value::Bool(b) => json!(b),
            Value::Number(n) => number_json(*n),
            Value::Text(s) => json!(s),
            Value::Date(d) => json!(date_text(*d)),
            Value::Duration(d) => json!({ "duration": d.describe(), "millis": d.approx_millis() }),
            Value::Link(l) => json!({ "link": l.target, "note_id": l.note_id, "display": l.display }),
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect()),
            Value::Object(o) => serde_json::Value::Object(
                o.iter()
                    .filter(|(k, _)| !k.starts_with(HIDDEN))
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

fn number_json(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

pub(crate) fn number_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// `2026-12-06`, or `2026-12-06T14:30` / `2026-12-06T14:30:05` with a time of day.
pub(crate) fn date_text(d: DateTime) -> String {
    if d.time() == jiff::civil::Time::midnight() {
        d.date().to_string()
    } else if d.second() == 0 && d.subsec_nanosecond() == 0 {
        format!("{}T{:02}:{:02}", d.date(), d.hour(), d.minute())
    } else {
        format!("{}T{:02}:{:02}:{:02}", d.date(), d.hour(), d.minute(), d.second())
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for Value {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QueryValue".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A field's value as JSON: null, a boolean, a number, text (a date as ISO text), a list, an object, a duration as {\"duration\", \"millis\"}, or a link as {\"link\", \"note_id\", \"display\"}."
        })
    }
}
