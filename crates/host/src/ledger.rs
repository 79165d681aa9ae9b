//! The read ledger as the command line shows it (`quire ledger`), and its retention (`[ledger] retention_days` in
//! config.toml). Core keeps the ledger (see `quire_core::ledger`); this says it in words.

use quire_core::ledger::{LedgerEntry, LedgerFilter};

/// The rows `quire ledger` asks for: of a note, of a client, since a time (`20261201`, `2026-12-01T09:00:00Z`, or
/// what search's `since:` takes, such as `day-7`), the latest `limit`.
pub fn filter(
    note: Option<String>,
    client: Option<String>,
    since: Option<&str>,
    limit: usize,
) -> anyhow::Result<LedgerFilter> {
    if limit == 0 {
        anyhow::bail!("--limit is how many rows to show: 1 or more");
    }
    let since = since.map(since_millis).transpose()?;
    Ok(LedgerFilter {
        note_id: note,
        client,
        since,
        limit,
    })
}

/// A `--since` as milliseconds since the epoch: a day or a time without a zone are this computer's (as the list
/// shows them), a time with one is that time, `day-7` is seven days back.
fn since_millis(text: &str) -> anyhow::Result<i64> {
    let tz = jiff::tz::TimeZone::system();
    let t = text.trim();
    for format in ["%Y%m%d", "%Y-%m-%d"] {
        if let Ok(day) = jiff::civil::Date::strptime(format, t) {
            return Ok(day.to_zoned(tz)?.timestamp().as_millisecond());
        }
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(time) = jiff::civil::DateTime::strptime(format, t) {
            return Ok(time.to_zoned(tz)?.timestamp().as_millisecond());
        }
    }
    if let Ok(time) = t.parse::<jiff::Timestamp>() {
        return Ok(time.as_millisecond());
    }
    // What search's `since:` takes as a time back from now.
    if t.contains('-')
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && let Ok(time) = quire_core::parse_time(t)
    {
        return Ok(time.as_millis());
    }
    anyhow::bail!(
        "--since {text:?}: give a day (2026-12-01 or 20261201), a time (2026-12-01T09:00 in this computer's time zone, \
         or 2026-12-01T09:00:00Z), or a time back from now (day-7, week-2, month-1)"
    )
}

/// Whether the ledger records nothing (`[ledger] retention_days = 0`).
pub fn is_off() -> bool {
    crate::settings::config_dir()
        .and_then(|dir| crate::settings::read_config(&dir))
        .is_ok_and(|config| config.ledger.retention_days == Some(0))
}

/// A time as this computer's clock says it, to the second.
pub fn local_time(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| millis.to_string())
}

/// Who read, in words: the client, and the chat for the assistant.
pub fn reader(entry: &LedgerEntry) -> String {
    match (entry.actor.as_str(), &entry.chat) {
        ("assistant", Some(chat)) => format!("the assistant (chat {chat})"),
        ("plugin", _) => format!("plugin {}", entry.client),
        _ => entry.client.clone(),
    }
}

/// The rows, one line each, the latest first; or what to do when there are none.
pub fn text(entries: &[LedgerEntry], filtered: bool) -> String {
    if entries.is_empty() && is_off() {
        return "The ledger is off: config.toml's [ledger] retention_days = 0 records nothing.\n".to_owned();
    }
    if entries.is_empty() {
        return if filtered {
            "Nothing was read by AI that matches.\n".to_owned()
        } else {
            "Nothing was read by AI yet: the assistant's, MCP clients' and plugins' reads are listed here.\n".to_owned()
        };
    }
    let mut out = String::new();
    for entry in entries {
        let times = if entry.reads > 1 {
            format!(" ({} times)", entry.reads)
        } else {
            String::new()
        };
        let what = match &entry.attachment_id {
            Some(attachment) => format!("{} of “{}” [{attachment}]", entry.part, entry.title),
            None => format!("“{}” [{}], {}", entry.title, entry.note_id, entry.part),
        };
        out.push_str(&format!(
            "{}  {}  read {what}{times}\n",
            local_time(entry.first_at),
            reader(entry)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_as_a_sentence() {
        let entry = LedgerEntry {
            seq: 1,
            first_at: 0,
            last_at: 0,
            reads: 3,
            actor: "mcp".into(),
            client: "Claude Desktop".into(),
            chat: None,
            note_id: "n1".into(),
            attachment_id: None,
            title: "Plan".into(),
            part: "whole note".into(),
        };
        let line = text(&[entry], false);
        assert!(
            line.ends_with("Claude Desktop  read “Plan” [n1], whole note (3 times)\n"),
            "{line}"
        );
        assert!(text(&[], true).starts_with("Nothing"));
        assert!(filter(None, None, Some("not a date"), 10).is_err());
        assert!(filter(None, None, Some("day"), 10).is_err());
        assert!(filter(None, None, None, 0).is_err());
        let local = |text| since_millis(text).unwrap();
        assert_eq!(local("20261207"), local("2026-12-07"));
        assert_eq!(local("2026-12-07"), local("2026-12-07T00:00"));
        assert_eq!(local("2026-12-07T09:00:00Z"), 1_796_634_000_000);
        assert!(local("day-7") < local("day-1"));
    }
}
