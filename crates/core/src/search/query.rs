//! The search query language: parsing user text into terms, and relative and absolute dates.

use time::{Date, Duration, Month, OffsetDateTime, Time};

use crate::entity::Timestamp;
use crate::error::{Error, Result};

/// The longest query accepted, in characters.
const MAX_QUERY_CHARS: usize = 4_000;
/// The most terms one query may have.
const MAX_TERMS: usize = 64;

/// A column of the full-text index that `title:` and `body:` restrict a term to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    Title,
    Body,
}

/// One piece of a parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Term {
    /// Words or a phrase matched against the full-text index.
    Text {
        column: Option<Column>,
        text: String,
        prefix: bool,
        negated: bool,
    },
    /// A tag name, `*` as wildcard.
    Tag { pattern: String, negated: bool },
    /// A notebook title, `*` as wildcard; sub-notebooks included.
    Notebook { pattern: String, negated: bool },
    /// Created at or after (negated: before).
    Created { since: Timestamp, negated: bool },
    /// Updated at or after (negated: before).
    Updated { since: Timestamp, negated: bool },
    /// `type:todo` (true) or `type:note` (false).
    IsTodo(bool),
    /// `iscompleted:1` (true) or `iscompleted:0` (false); only to-dos match either.
    IsCompleted(bool),
}

/// A parsed query: its terms and whether they are ORed (`any:1`) rather than ANDed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Query {
    pub(crate) terms: Vec<Term>,
    pub(crate) any: bool,
}

const HELP: &str = concat!("Search syntax: ", crate::search_syntax!());

/// Parses a query. Any input gives a query or an [`Error::Query`] that says what to change.
pub(crate) fn parse(input: &str, now: Timestamp) -> Result<Query> {
    if input.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::Query(format!(
            "The search query is longer than {MAX_QUERY_CHARS} characters; shorten it."
        )));
    }
    let input = input.replace('\0', " ");
    let mut terms = Vec::new();
    let mut any = false;
    // Text terms without a letter or digit: the index has no tokens for them, so they would match nothing.
    let mut skipped = 0;
    for raw in split(&input) {
        let (negated, body) = match raw.strip_prefix('-') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, raw.as_str()),
        };
        if let Some((field, value)) = body.split_once(':')
            && let Some(field) = Field::parse(field)
        {
            let value = unquote(value);
            if value.trim().is_empty() {
                return Err(Error::Query(format!(
                    "'{}:' needs a value, for example {}. {HELP}",
                    field.name(),
                    field.example()
                )));
            }
            match field {
                Field::Any => {
                    any = match value.as_str() {
                        "1" => true,
                        "0" => false,
                        _ => {
                            return Err(Error::Query(format!("'any:{value}' is not valid: use any:1 or any:0.")));
                        }
                    }
                }
                Field::Title | Field::Body => {
                    let column = if field == Field::Title {
                        Column::Title
                    } else {
                        Column::Body
                    };
                    let (text, prefix) = strip_star(&value);
                    if searchable(&text) {
                        terms.push(Term::Text {
                            column: Some(column),
                            text,
                            prefix,
                            negated,
                        });
                    } else {
                        skipped += 1;
                    }
                }
                Field::Tag => terms.push(Term::Tag {
                    pattern: value,
                    negated,
                }),
                Field::Notebook => terms.push(Term::Notebook {
                    pattern: value,
                    negated,
                }),
                Field::Created => terms.push(Term::Created {
                    since: parse_date(&value, now, "created")?,
                    negated,
                }),
                Field::Updated => terms.push(Term::Updated {
                    since: parse_date(&value, now, "updated")?,
                    negated,
                }),
                Field::Type => {
                    let todo = match value.to_ascii_lowercase().as_str() {
                        "todo" => true,
                        "note" => false,
                        _ => {
                            return Err(Error::Query(format!(
                                "'type:{value}' is not valid: use type:note or type:todo."
                            )));
                        }
                    };
                    terms.push(Term::IsTodo(todo != negated));
                }
                Field::IsCompleted => {
                    let completed = match value.as_str() {
                        "1" => true,
                        "0" => false,
                        _ => {
                            return Err(Error::Query(format!(
                                "'iscompleted:{value}' is not valid: use iscompleted:1 or iscompleted:0."
                            )));
                        }
                    };
                    terms.push(Term::IsCompleted(completed != negated));
                }
            }
        } else {
            let quoted = body.starts_with('"');
            let text = unquote(body);
            let (text, prefix) = if quoted { (text, false) } else { strip_star(&text) };
            if searchable(&text) {
                terms.push(Term::Text {
                    column: None,
                    text,
                    prefix,
                    negated,
                });
            } else if !text.trim().is_empty() {
                skipped += 1;
            }
        }
        if terms.len() > MAX_TERMS {
            return Err(Error::Query(format!(
                "The search query has more than {MAX_TERMS} terms; use fewer words."
            )));
        }
    }
    if terms.is_empty() && skipped > 0 {
        return Err(Error::Query(format!(
            "The search query has no words to look for: symbols and emoji are not indexed (only letters and digits \
             are), so search for the words around them, or an \"exact phrase\" that contains them. {HELP}"
        )));
    }
    if terms.is_empty() {
        return Err(Error::Query(format!(
            "The search query is empty: give at least one word or filter, for example 'meeting notes' or 'tag:work'. \
             {HELP}"
        )));
    }
    Ok(Query { terms, any })
}

/// Whether a text term has anything the full-text index keeps: FTS5's unicode61 tokenizer indexes letters and
/// digits and treats everything else (punctuation, symbols, emoji) as separators.
fn searchable(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Title,
    Body,
    Tag,
    Notebook,
    Created,
    Updated,
    Type,
    IsCompleted,
    Any,
}

impl Field {
    fn parse(name: &str) -> Option<Field> {
        Some(match name.to_ascii_lowercase().as_str() {
            "title" => Field::Title,
            "body" => Field::Body,
            "tag" => Field::Tag,
            "notebook" => Field::Notebook,
            "created" => Field::Created,
            "updated" => Field::Updated,
            "type" => Field::Type,
            "iscompleted" => Field::IsCompleted,
            "any" => Field::Any,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Body => "body",
            Field::Tag => "tag",
            Field::Notebook => "notebook",
            Field::Created => "created",
            Field::Updated => "updated",
            Field::Type => "type",
            Field::IsCompleted => "iscompleted",
            Field::Any => "any",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Field::Title => "title:budget",
            Field::Body => "body:\"next steps\"",
            Field::Tag => "tag:work",
            Field::Notebook => "notebook:Projects",
            Field::Created => "created:day-7",
            Field::Updated => "updated:20260115",
            Field::Type => "type:todo",
            Field::IsCompleted => "iscompleted:0",
            Field::Any => "any:1",
        }
    }
}

/// Splits on whitespace, keeping `"quoted phrases"` (also after `field:` or `-`) together.
/// An unbalanced quote runs to the end of the input.
fn split(input: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    for c in input.chars() {
        if c == '"' {
            in_quotes = !in_quotes;
            current.push(c);
        } else if c.is_whitespace() && !in_quotes {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn unquote(value: &str) -> String {
    let value = value.strip_prefix('"').unwrap_or(value);
    let value = value.strip_suffix('"').unwrap_or(value);
    value.replace('"', " ")
}

fn strip_star(text: &str) -> (String, bool) {
    match text.strip_suffix('*') {
        Some(rest) if !rest.trim_end_matches('*').is_empty() => (rest.trim_end_matches('*').to_owned(), true),
        _ => (text.to_owned(), false),
    }
}

/// Reads `20260115`, `202601`, `2026`, or `day-N`, `week-N`, `month-N`, `year-N` (N may be left out for 0),
/// as the start of that day, week (Monday), month or year in UTC.
pub(crate) fn parse_date(value: &str, now: Timestamp, field: &str) -> Result<Timestamp> {
    let error = || {
        Error::Query(format!(
            "Cannot read the date '{value}' in '{field}:{value}': use YYYYMMDD, YYYYMM or YYYY (20260115), \
             or a time relative to today: day-7, week-2, month-1, year-1."
        ))
    };
    let today = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now.as_millis()) * 1_000_000)
        .map_err(|_| error())?
        .date();
    let date = if value.chars().all(|c| c.is_ascii_digit()) {
        let year: i32 = value.get(0..4).and_then(|y| y.parse().ok()).ok_or_else(error)?;
        let month = match value.len() {
            4 => 1,
            6 | 8 => value.get(4..6).and_then(|m| m.parse::<u8>().ok()).ok_or_else(error)?,
            _ => return Err(error()),
        };
        let day = if value.len() == 8 {
            value.get(6..8).and_then(|d| d.parse().ok()).ok_or_else(error)?
        } else {
            1
        };
        let month = Month::try_from(month).map_err(|_| error())?;
        Date::from_calendar_date(year, month, day).map_err(|_| error())?
    } else {
        let lower = value.to_ascii_lowercase();
        let (unit, back) = match lower.split_once('-') {
            Some((unit, n)) => (unit.to_owned(), n.parse::<i64>().map_err(|_| error())?),
            None => (lower.clone(), 0),
        };
        if !(0..=100_000).contains(&back) {
            return Err(error());
        }
        match unit.as_str() {
            "day" => today.checked_sub(Duration::days(back)).ok_or_else(error)?,
            "week" => {
                let monday = today
                    .checked_sub(Duration::days(i64::from(today.weekday().number_days_from_monday())))
                    .ok_or_else(error)?;
                monday.checked_sub(Duration::weeks(back)).ok_or_else(error)?
            }
            "month" => {
                let months = i64::from(today.year()) * 12 + i64::from(u8::from(today.month())) - 1 - back;
                let year = i32::try_from(months.div_euclid(12)).map_err(|_| error())?;
                let month = u8::try_from(months.rem_euclid(12) + 1).map_err(|_| error())?;
                Date::from_calendar_date(year, Month::try_from(month).map_err(|_| error())?, 1).map_err(|_| error())?
            }
            "year" => {
                let year = i64::from(today.year()) - back;
                Date::from_calendar_date(i32::try_from(year).map_err(|_| error())?, Month::January, 1)
                    .map_err(|_| error())?
            }
            _ => return Err(error()),
        }
    };
    let start = date.with_time(Time::MIDNIGHT).assume_utc();
    i64::try_from(start.unix_timestamp_nanos() / 1_000_000)
        .map(Timestamp)
        .map_err(|_| error())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-15 (a Thursday) 12:00 UTC.
    const NOW: Timestamp = Timestamp(1_768_478_400_000);

    fn check(input: &str, expected: &str) {
        let actual = match parse(input, NOW) {
            Ok(q) => format!("{}{:?}", if q.any { "any " } else { "" }, q.terms),
            Err(e) => format!("error: {e}"),
        };
        assert!(
            actual.starts_with(expected),
            "query {input:?}\n  got:      {actual}\n  expected: {expected}"
        );
    }

    fn date(text: &str) -> String {
        let t = parse_date(text, NOW, "created").map(Timestamp::to_rfc3339);
        t.unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn terms() {
        check(
            "apple pie",
            r#"[Text { column: None, text: "apple", prefix: false, negated: false }, Text { column: None, text: "pie""#,
        );
        check(
            "\"apple pie\"",
            r#"[Text { column: None, text: "apple pie", prefix: false"#,
        );
        check("app*", r#"[Text { column: None, text: "app", prefix: true"#);
        check(
            "-apple",
            r#"[Text { column: None, text: "apple", prefix: false, negated: true }]"#,
        );
        check("title:\"big plan\"", r#"[Text { column: Some(Title), text: "big plan""#);
        check(
            "body:plan*",
            r#"[Text { column: Some(Body), text: "plan", prefix: true"#,
        );
        check(
            "tag:work -tag:old",
            r#"[Tag { pattern: "work", negated: false }, Tag { pattern: "old", negated: true }]"#,
        );
        check("notebook:Pro*", r#"[Notebook { pattern: "Pro*""#);
        check("type:todo", "[IsTodo(true)]");
        check("-type:todo", "[IsTodo(false)]");
        check("iscompleted:0", "[IsCompleted(false)]");
        check("any:1 a b", "any [Text");
        check("url:thing", r#"[Text { column: None, text: "url:thing""#);
        check("-", "error: The search query has no words to look for");
    }

    #[test]
    fn errors() {
        check("", "error: The search query is empty");
        check("   \t ", "error: The search query is empty");
        check("any:1", "error: The search query is empty");
        check("type:poem", "error: 'type:poem' is not valid");
        check("iscompleted:yes", "error: 'iscompleted:yes' is not valid");
        check("created:yesterday", "error: Cannot read the date 'yesterday'");
        check("created:20261345", "error: Cannot read the date");
        check("tag:", "error: 'tag:' needs a value");
        check("any:2 x", "error: 'any:2' is not valid");
        check(&"w ".repeat(65), "error: The search query has more than 64 terms");
        check(&"x".repeat(5000), "error: The search query is longer");
    }

    #[test]
    fn dates() {
        assert_eq!(date("20260110"), "2026-01-10T00:00:00.000Z");
        assert_eq!(date("202512"), "2025-12-01T00:00:00.000Z");
        assert_eq!(date("2024"), "2024-01-01T00:00:00.000Z");
        assert_eq!(date("day"), "2026-01-15T00:00:00.000Z");
        assert_eq!(date("day-7"), "2026-01-08T00:00:00.000Z");
        assert_eq!(date("week-0"), "2026-01-12T00:00:00.000Z");
        assert_eq!(date("week-2"), "2025-12-29T00:00:00.000Z");
        assert_eq!(date("month-1"), "2025-12-01T00:00:00.000Z");
        assert_eq!(date("month-13"), "2024-12-01T00:00:00.000Z");
        assert_eq!(date("year-1"), "2025-01-01T00:00:00.000Z");
        assert!(date("day-x").starts_with("error"));
        assert!(date("fortnight-1").starts_with("error"));
    }
}
