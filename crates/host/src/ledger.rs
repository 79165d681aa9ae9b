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
    let since = match since {
        Some(text) => Some(
            quire_core::parse_time(text)
                .map_err(|e| anyhow::anyhow!("--since {text:?}: {e}"))?
                .as_millis(),
        ),
        None => None,
    };
    Ok(LedgerFilter {
        note_id: note,
        client,
        since,
        limit: limit.max(1),
    })
}

/// A time as this computer's clock says it, to the second.
fn local(millis: i64) -> String {
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
            local(entry.first_at),
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
    }
}
