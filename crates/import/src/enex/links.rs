//! Links between the notes of an export (`evernote:///view/<user>/<shard>/<note guid>/...`, and the web addresses
//! of a note that "Copy link" and "Share" give). An export does not
//! carry its notes' guids, but Evernote writes such a link with the target's title as its text: once every note
//! of the file is read, a link whose text is the title of exactly one of them points at that note (through the
//! source's `:/ID` targets, which the import turns into `quire://note/` links); any other is left as written and
//! said in the report.

use std::collections::{HashMap, VecDeque};

use quire_core::links::extract_with_addresses;

use super::enml::NoteLink;
use crate::Error;
use crate::source::Source;

/// Points the links of `pending` (note index, its links) at the notes they name.
pub(super) fn resolve(out: &mut Source, pending: Vec<(usize, Vec<NoteLink>)>) -> Result<(), Error> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut by_title: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, note) in out.notes.iter().enumerate() {
        by_title.entry(fold(&note.title)).or_default().push(i);
    }
    for (at, links) in pending {
        // Each link's new address, in the order the links come in the text: two links with one address and two
        // texts (one guid written for two notes) each go to the note their text names.
        let mut addresses: HashMap<String, VecDeque<Option<String>>> = HashMap::new();
        let mut notices = Vec::new();
        for link in links {
            let to = addresses.entry(link.url.clone()).or_default();
            match by_title.get(&fold(&link.text)).map(Vec::as_slice) {
                Some(&[target]) => {
                    let key = format!("evernote-note-{target}");
                    out.targets.insert(key.clone(), out.notes[target].rel.clone());
                    to.push_back(Some(format!(":/{key}")));
                    continue;
                }
                Some(several) => notices.push(format!(
                    "the link “{}” could be to any of {} notes of that title: left pointing at Evernote ({})",
                    link.text,
                    several.len(),
                    link.url
                )),
                None => {
                    // A link text one or two letters off one title of the export (an edit after the link was
                    // made): that note, said.
                    let wanted = fold(&link.text);
                    let near: Vec<usize> = by_title
                        .iter()
                        .filter(|(title, _)| near_title(&wanted, title))
                        .flat_map(|(_, notes)| notes.iter().copied())
                        .collect();
                    if let [target] = near[..] {
                        let key = format!("evernote-note-{target}");
                        out.targets.insert(key.clone(), out.notes[target].rel.clone());
                        to.push_back(Some(format!(":/{key}")));
                        notices.push(format!(
                            "the link “{}” names no note of the export: it was pointed at “{}”, the one title a \
                             letter or two off",
                            link.text, out.notes[target].title
                        ));
                        continue;
                    }
                    // A note of another export (imported before or after this one): a link by its title, which
                    // quire resolves whenever that note is there (interop-2 #5: ENEX files imported one at a time).
                    let title = link.text.replace(['[', ']', '|', '#', '^'], "").trim().to_owned();
                    if !title.is_empty() && !title.contains("://") {
                        notices.push(format!(
                            "the link “{}” is to an Evernote note that is not in this export: it became [[{title}]], \
                             which finds that note once it is in quire ({})",
                            link.text, link.url
                        ));
                        to.push_back(Some(format!("{WIKI}{title}")));
                        continue;
                    }
                    notices.push(format!(
                        "the link “{}” is to an Evernote note that is not in this export: left pointing at Evernote ({})",
                        link.text, link.url
                    ));
                }
            }
            to.push_back(None);
        }
        let rewrite = !addresses.values().flatten().all(Option::is_none);
        let edited = out.notes.edit(at, |note| {
            note.notices.extend(notices);
            if rewrite {
                let body = &mut note.body;
                let (_, found) = extract_with_addresses(body);
                // Matched to the links in order; an address the text holds more often than the links said (should not
                // happen) takes the last new address it had.
                let mut replacements = Vec::new();
                let mut last: HashMap<String, Option<String>> = HashMap::new();
                for address in &found {
                    let Some(queue) = addresses.get_mut(&address.url) else {
                        continue;
                    };
                    let to = match queue.pop_front() {
                        Some(to) => to,
                        None => last.get(&address.url).cloned().flatten(),
                    };
                    last.insert(address.url.clone(), to.clone());
                    if let Some(to) = to {
                        replacements.push((address.byte, address.len, to));
                    }
                }
                for (byte, len, to) in replacements.into_iter().rev() {
                    if !(body.is_char_boundary(byte) && body.is_char_boundary(byte + len)) {
                        continue;
                    }
                    match to.strip_prefix(WIKI) {
                        // The whole `[text](url)` becomes `[[title]]`, when the link is written that way.
                        Some(title) => {
                            let start = body[..byte].strip_suffix("](").and_then(|before| before.rfind('['));
                            if let Some(start) = start.filter(|_| body[byte + len..].starts_with(')')) {
                                body.replace_range(start..byte + len + 1, &format!("[[{title}]]"));
                            }
                        }
                        None => body.replace_range(byte..byte + len, &to),
                    }
                }
            }
        });
        edited.map_err(|e| Error::Io {
            context: "cannot read back a note of the export".into(),
            source: e,
        })?;
    }
    Ok(())
}

/// Marks a new address that is a note's title, for a `[[title]]` link (never the start of a real address).
const WIKI: &str = "\u{1}wiki:";

/// A title or link text as they are compared: white space collapsed, case ignored.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// Whether a link text is a title misspelt: a letter off (two in a title longer than 8), and the same numbers (`Note
/// 4` is not `Note 1` misspelt).
fn near_title(text: &str, title: &str) -> bool {
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    let allowed = if title.chars().count() > 8 { 2 } else { 1 };
    title.chars().count() >= 4 && digits(text) == digits(title) && distance(text, title) <= allowed
}

/// Levenshtein distance of two texts, in characters.
pub(super) fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > 2 {
        return 3;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + usize::from(ca != cb));
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
