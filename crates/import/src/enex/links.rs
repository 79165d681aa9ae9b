//! Links between the notes of an export (`evernote:///view/<user>/<shard>/<note guid>/...`). An export does not
//! carry its notes' guids, but Evernote writes such a link with the target's title as its text: once every note
//! of the file is read, a link whose text is the title of exactly one of them points at that note (through the
//! source's `:/ID` targets, which the import turns into `quire://note/` links); any other is left as written and
//! said in the report.

use std::collections::HashMap;

use quire_core::links::extract_with_addresses;

use super::enml::NoteLink;
use crate::source::Source;

/// Points the links of `pending` (note index, its links) at the notes they name.
pub(super) fn resolve(out: &mut Source, pending: Vec<(usize, Vec<NoteLink>)>) {
    if pending.is_empty() {
        return;
    }
    let mut by_title: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, note) in out.notes.iter().enumerate() {
        by_title.entry(fold(&note.title)).or_default().push(i);
    }
    for (at, links) in pending {
        let mut addresses: HashMap<String, String> = HashMap::new();
        let mut notices = Vec::new();
        for link in links {
            if addresses.contains_key(&link.url) {
                continue;
            }
            match by_title.get(&fold(&link.text)).map(Vec::as_slice) {
                Some(&[target]) => {
                    let key = format!("evernote-note-{target}");
                    out.targets.insert(key.clone(), out.notes[target].rel.clone());
                    addresses.insert(link.url, format!(":/{key}"));
                }
                Some(several) => notices.push(format!(
                    "the link “{}” could be to any of {} notes of that title: left pointing at Evernote ({})",
                    link.text,
                    several.len(),
                    link.url
                )),
                None => notices.push(format!(
                    "the link “{}” is to an Evernote note that is not in this export: left pointing at Evernote ({})",
                    link.text, link.url
                )),
            }
        }
        let note = &mut out.notes[at];
        note.notices.extend(notices);
        if addresses.is_empty() {
            continue;
        }
        let (_, found) = extract_with_addresses(&note.body);
        let mut body = note.body.clone();
        for address in found.iter().rev() {
            if let Some(to) = addresses.get(&address.url)
                && body.is_char_boundary(address.byte)
                && body.is_char_boundary(address.byte + address.len)
            {
                body.replace_range(address.byte..address.byte + address.len, to);
            }
        }
        note.body = body;
    }
}

/// A title or link text as they are compared: white space collapsed, case ignored.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}
