//! One `<note>` of an ENEX file, as gathered while the file is read, turned into a note of the source: its key,
//! hash, times, tags, reminder, attributes, resources and its ENML as Markdown.

use std::collections::HashMap;

use quire_core::{Timestamp, hex};
use sha2::{Digest, Sha256};

use super::enml::{Media, NoteLink, Task, enml_to_markdown};
use super::resource::{RawResource, Stored};
use crate::frontmatter::FrontMatter;
use crate::source::{Parsed, Source};
use crate::{ItemReport, Outcome};

/// What is gathered of one `<note>`.
#[derive(Default)]
pub(super) struct RawNote {
    pub(super) title: String,
    pub(super) content: String,
    /// Its ENML was longer than [`MAX_CONTENT`]: read through, not kept.
    pub(super) content_too_long: bool,
    pub(super) created: String,
    pub(super) updated: String,
    pub(super) tags: Vec<String>,
    pub(super) author: String,
    pub(super) source_url: String,
    pub(super) reminder_time: String,
    pub(super) reminder_done: String,
    pub(super) latitude: String,
    pub(super) longitude: String,
    pub(super) altitude: String,
    pub(super) place: String,
    /// Its Evernote Tasks (`<task>`), as written.
    pub(super) tasks: Vec<RawTask>,
    /// The resource being read.
    pub(super) resource: Option<RawResource>,
    /// The resources read, each decoded and written to a file as soon as it ends (or why it was not).
    pub(super) resources: Vec<Result<Stored, String>>,
    /// What was repaired in the export's XML around it (a misspelt closing tag).
    pub(super) repaired: Vec<String>,
}

/// One `<task>` of a note, as written.
#[derive(Default)]
pub(super) struct RawTask {
    pub(super) title: String,
    pub(super) status: String,
    pub(super) group: String,
    pub(super) sort: String,
    pub(super) due: String,
    pub(super) due_option: String,
    pub(super) flag: String,
    /// Its first reminder's time.
    pub(super) reminder: String,
    pub(super) time_zone: String,
}

/// A note's ENML longer than this is not read (its Markdown could not be a note).
pub(super) const MAX_CONTENT: usize = 4 * quire_core::MAX_BODY_BYTES;

/// Turns a gathered note into a [`Parsed`] note with its resources written to files; returns its links to other
/// Evernote notes, resolved once every note of the file is read.
pub(super) fn finish(
    raw: RawNote,
    count: usize,
    folder: &str,
    prefix: &str,
    converter: &htmd::HtmlToMarkdown,
    keys: &mut HashMap<String, usize>,
    out: &mut Source,
) -> Vec<NoteLink> {
    let title = raw.title.trim().to_owned();
    let title = if title.is_empty() { "Untitled".to_owned() } else { title };
    // The note's key: its creation time (Evernote's export has no ids; a title can change), with a number when
    // several notes share it. The report names it by title and time.
    let base = format!("{prefix}created {}", raw.created.trim());
    let seen = keys.entry(base.clone()).or_insert(0);
    *seen += 1;
    let rel = if *seen == 1 { base } else { format!("{base} #{seen}") };
    let shown = format!("{title} ({})", raw.created.trim());

    let mut hasher = Sha256::new();
    for part in [
        &raw.title,
        &raw.content,
        &raw.created,
        &raw.updated,
        &raw.author,
        &raw.source_url,
        &raw.latitude,
        &raw.longitude,
        &raw.altitude,
        &raw.place,
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    for tag in &raw.tags {
        hasher.update(tag.as_bytes());
        hasher.update([0]);
    }
    let mut meta = FrontMatter {
        created: evernote_time(&raw.created),
        updated: evernote_time(&raw.updated),
        tags: raw.tags.iter().filter(|t| !t.is_empty()).cloned().collect(),
        ..FrontMatter::default()
    };
    if !raw.reminder_time.trim().is_empty() || !raw.reminder_done.trim().is_empty() {
        meta.todo = true;
        meta.completed = Some(evernote_time(&raw.reminder_done));
    }
    if let Some(reminder) = evernote_time(&raw.reminder_time) {
        meta.labels.push(("reminder".into(), label_time(reminder)));
    }
    // Where the note was written: numbers, kept as numbers (a label of structured value).
    for (name, value) in [
        ("latitude", &raw.latitude),
        ("longitude", &raw.longitude),
        ("altitude", &raw.altitude),
    ] {
        let value = value.trim();
        match value.parse::<f64>().ok().filter(|n| n.is_finite()) {
            Some(number) => meta
                .json_labels
                .push((name.into(), serde_json::json!(number).to_string())),
            None if !value.is_empty() => meta.labels.push((name.into(), value.to_owned())),
            None => {}
        }
    }
    if !raw.place.trim().is_empty() {
        meta.labels.push(("place".into(), raw.place.trim().to_owned()));
    }
    let tasks: Vec<Task> = raw
        .tasks
        .iter()
        .map(|t| Task {
            title: t.title.trim().to_owned(),
            done: t.status.trim() == "completed",
            group: t.group.trim().to_lowercase(),
            sort: t.sort.trim().to_owned(),
            due: evernote_time(&t.due),
            due_day: evernote_time(&t.due).map(|due| due_day(due, &t.due_option, &t.time_zone)),
            flagged: t.flag.trim() == "true",
            reminder_day: evernote_time(&t.reminder).map(|r| r.to_rfc3339()[..10].to_owned()),
        })
        .collect();
    for task in &raw.tasks {
        for part in [
            &task.title,
            &task.status,
            &task.group,
            &task.sort,
            &task.due,
            &task.due_option,
            &task.time_zone,
            &task.flag,
            &task.reminder,
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
    }
    // The earliest due date of the open tasks, so the note can be found and sorted by it.
    if let Some(due) = tasks.iter().filter(|t| !t.done).filter_map(|t| t.due).min() {
        meta.labels.push(("due".into(), label_time(due)));
    }
    if !raw.author.trim().is_empty() {
        meta.labels.push(("author".into(), raw.author.trim().to_owned()));
    }
    if !raw.source_url.trim().is_empty() {
        meta.labels
            .push(("source_url".into(), raw.source_url.trim().to_owned()));
    }
    let mut warnings = Vec::new();
    let mut media: HashMap<String, Media> = HashMap::new();
    // Resources whose bytes an earlier note carried too: this note's text links its own copy.
    let mut own_copies: Vec<(String, String)> = Vec::new();
    for stored in raw.resources {
        let stored = match stored {
            Ok(stored) => stored,
            Err(warning) => {
                warnings.push(warning);
                continue;
            }
        };
        hasher.update(stored.hash.as_bytes());
        hasher.update(stored.title.as_bytes());
        if stored.link != stored.hash {
            own_copies.push((format!(":/{}", stored.hash), format!(":/{}", stored.link)));
        }
        meta.attachments.push(stored.file_name.clone());
        meta.attachment_titles
            .push((stored.file_name.clone(), stored.title.clone()));
        if let Some(also) = stored.also {
            media.insert(
                also,
                Media {
                    mime: stored.mime.clone(),
                    title: stored.title.clone(),
                },
            );
        }
        media.insert(
            stored.hash,
            Media {
                mime: stored.mime,
                title: stored.title,
            },
        );
    }
    for part in [&raw.reminder_time, &raw.reminder_done] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    if raw.content_too_long {
        out.fail(
            shown,
            Outcome::Failed,
            format!(
                "its content is longer than {} MiB: more than a note may hold",
                MAX_CONTENT >> 20
            ),
        );
        return Vec::new();
    }
    let converted = enml_to_markdown(&raw.content, &media, &tasks, converter);
    let mut body = converted.markdown;
    for (shared, own) in &own_copies {
        body = body.replace(&format!("{shared})"), &format!("{own})"));
    }
    if body.len() > quire_core::MAX_BODY_BYTES {
        out.fail(
            shown,
            Outcome::Failed,
            format!("note {count}: {} bytes of text: more than a note may hold", body.len()),
        );
        return Vec::new();
    }
    if !warnings.is_empty() {
        // An attachment lost is a failure (exit code 1), as a resource a JEX cannot unpack is: a script must see
        // it. The note itself is imported without it.
        out.failures.push(ItemReport {
            path: shown.clone(),
            outcome: Outcome::Failed,
            note_id: None,
            notes: warnings,
        });
    }
    out.notes.push(Parsed {
        rel,
        shown,
        folder: folder.to_owned(),
        title,
        body,
        meta,
        hash: hex(&hasher.finalize()),
        links: Default::default(),
        notices: raw.repaired.iter().cloned().chain(converted.repaired).collect(),
    });
    converted.note_links
}

/// The day a task is due as its owner sees it. A task due on a day (no time) is due at 23:59:59 of that day in the
/// owner's time zone, written in UTC: the offset follows from the time (local end of day), so no time zone table is
/// needed; only when both an offset east and one west fit (UTC 10:00 to 12:00) does the zone's name decide. A task
/// due at a time is shown by its UTC day (quire carries no time zone table).
fn due_day(due: Timestamp, option: &str, zone: &str) -> String {
    let text = due.to_rfc3339();
    let utc_day = text[..10].to_owned();
    let seconds_of_day = || -> Option<i64> {
        let h: i64 = text.get(11..13)?.parse().ok()?;
        let m: i64 = text.get(14..16)?.parse().ok()?;
        let s: i64 = text.get(17..19)?.parse().ok()?;
        Some(h * 3600 + m * 60 + s)
    };
    let Some(t) = seconds_of_day() else {
        return utc_day;
    };
    let end_of_day = option.trim() == "date_only" || (option.trim().is_empty() && t % 900 == 899);
    if !end_of_day {
        return utc_day;
    }
    // East of UTC (offset 0 to +14 h): the UTC time is the local 23:59:59 minus the offset, the same day.
    let east = 86_399 - t <= 14 * 3600;
    // West (offset -1 to -12 h): the UTC time is past midnight, the next day.
    let west = t < 12 * 3600;
    let zone = zone.trim();
    let westward = [
        "America/",
        "US/",
        "Canada/",
        "Brazil/",
        "Chile/",
        "Mexico/",
        "Etc/GMT+",
        "Pacific/Honolulu",
    ]
    .iter()
    .any(|p| zone.starts_with(p))
        || matches!(
            zone,
            "Pacific/Pago_Pago" | "Pacific/Midway" | "Pacific/Niue" | "Pacific/Tahiti" | "Pacific/Marquesas"
        );
    if west && (!east || westward) {
        let previous = Timestamp(due.0 - 86_400_000);
        return previous.to_rfc3339()[..10].to_owned();
    }
    utc_day
}

/// A time as a label holds it: RFC 3339 in UTC, to the second (`2024-03-01T14:30:00Z`), as Evernote has it.
fn label_time(time: Timestamp) -> String {
    time.to_rfc3339().replace(".000Z", "Z")
}

/// Evernote's times: `20240301T143000Z`.
fn evernote_time(text: &str) -> Option<Timestamp> {
    let t = text.trim();
    if t.len() != 16 || !t.is_ascii() || &t[8..9] != "T" {
        return Timestamp::parse_rfc3339(t);
    }
    Timestamp::parse_rfc3339(&format!(
        "{}-{}-{}T{}:{}:{}Z",
        &t[0..4],
        &t[4..6],
        &t[6..8],
        &t[9..11],
        &t[11..13],
        &t[13..15]
    ))
}
