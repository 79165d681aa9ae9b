//! Links in note bodies and label values: `[[Title]]`, `[[Title|alias]]` (and `[[Title\|alias]]`, as tables hold
//! it), `[[Title#Heading]]`, `[[#Heading]]`, `[[Notebook/Title]]`, embeds `![[file]]`, and Markdown links to quire's
//! own addresses (`[text](quire://note/ID)`, `![img](quire://attachment/ID)`).
//!
//! Every write of a note or of one of its labels extracts its links into `note_links` (derived data, like the
//! full-text index: never in the change log, rebuilt from the bodies and labels) and resolves them: a `quire://`
//! link by id; a wikilink by a note's title or alias (the `aliases` label, comma-separated), case-insensitively,
//! among notes not in the trash; when several notes share it, a `Notebook/Title` path narrows them, then a note
//! titled so wins over one with the alias, then the one in the linking note's notebook, then the one with the
//! shortest notebook path (as Obsidian picks among files of one name); a tie leaves the link unresolved and readers
//! list the candidates. `note_keys` holds each note's title and aliases, so a write re-resolves exactly the links that may
//! change: the ones naming the note's old or new keys and the ones pointing at it. A link by title thus resolves
//! when a matching note appears, and stops resolving when its note is renamed, trashed or gets a namesake.

mod extract;
mod read;

pub(crate) use extract::key_of;
pub use extract::{BodyLink, LinkAddress, LinkKind, extract, extract_with_addresses};
pub use read::{BodyBacklink, OutgoingLink, UnresolvedLink};

use crate::sql::Cached;
use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// The keys of a note: its title and its aliases (the `aliases` label: names separated by commas, or a JSON list).
fn keys_of(conn: &Connection, note_id: &str, title: &str) -> Result<BTreeSet<String>> {
    let mut keys = BTreeSet::from([title.trim().to_lowercase()]);
    let aliases: Option<(String, String)> = conn
        .row_cached(
            "SELECT value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label' AND name = 'aliases'",
            [note_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let aliases: Vec<String> = match aliases {
        Some((value, kind)) if kind == "json" => label_texts(&value, &kind),
        Some((value, _)) => value.split(',').map(str::to_owned).collect(),
        None => Vec::new(),
    };
    for alias in &aliases {
        let alias = alias.trim().to_lowercase();
        if !alias.is_empty() {
            keys.insert(alias);
        }
    }
    keys.remove("");
    Ok(keys)
}

/// Extracts a note's links again, updates its keys, and re-resolves every link whose target may have changed.
/// A note that no longer exists loses its links and keys.
pub(crate) fn refresh(conn: &Connection, note_id: &str) -> Result<()> {
    refresh_many(conn, &BTreeSet::from([note_id.to_owned()]))
}

/// [`refresh`] for many notes at once, for a write that deferred it (an import): every note's keys are written
/// first, then the links from other notes are re-resolved, then the notes' own links are written, resolved as
/// they are written, since every note they may name is there (one note at a time, a link to a note written later
/// was written unresolved and resolved again when its target came).
pub(crate) fn refresh_many(conn: &Connection, note_ids: &BTreeSet<String>) -> Result<()> {
    let mut keys = BTreeSet::new();
    for id in note_ids {
        keys.extend(rewrite_keys(conn, id)?);
        conn.exec_cached("DELETE FROM note_links WHERE source_id = ?1", [id])?;
    }
    // The notes' own links are gone until the end, so these find only the links from other notes (an import into
    // an empty workspace finds none, rather than reading back every link it wrote).
    for id in note_ids {
        resolve_where(conn, "target_note_id = ?1", &[id])?;
    }
    for key in &keys {
        resolve_where(conn, "target_key = ?1", &[key])?;
    }
    // Each body read again here rather than kept from above: an import of 50,000 notes held them all (issue 51).
    for id in note_ids {
        let body: Option<String> = conn
            .row_cached("SELECT body FROM notes WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        if let Some(body) = &body {
            insert_links(conn, id, body)?;
        }
        // What queries read from the body (tasks, inline fields, hashtags) is derived at the same moment.
        crate::structure::refresh(conn, id, body.as_deref())?;
    }
    Ok(())
}

/// Writes a note's keys (its title and aliases) from its row as it is now; returns its old and new keys (only the
/// old, when it no longer exists).
fn rewrite_keys(conn: &Connection, note_id: &str) -> Result<BTreeSet<String>> {
    let mut keys: BTreeSet<String> = {
        let mut stmt = conn.prepare_cached("SELECT key FROM note_keys WHERE note_id = ?1")?;
        let rows = stmt.query_map([note_id], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let title: Option<String> = conn
        .row_cached("SELECT title FROM notes WHERE id = ?1", [note_id], |r| r.get(0))
        .optional()?;
    conn.exec_cached("DELETE FROM note_keys WHERE note_id = ?1", [note_id])?;
    let Some(title) = title else {
        return Ok(keys);
    };
    let new_keys = keys_of(conn, note_id, &title)?;
    for key in &new_keys {
        conn.exec_cached(
            "INSERT OR IGNORE INTO note_keys (note_id, key) VALUES (?1, ?2)",
            params![note_id, key],
        )?;
    }
    keys.extend(new_keys);
    Ok(keys)
}

/// Writes a note's links from its body and then from its labels' values (its old ones deleted before), each
/// resolved. A link in a label (`related: "[[Note]]"`, `up: ["[[A]]", "[[B]]"]`, `cover: "[[photo.jpg]]"`, a
/// Markdown link) is a link of the note like one in its body: front matter written in Obsidian links notes that
/// way, and its targets list it among their backlinks.
fn insert_links(conn: &Connection, note_id: &str, body: &str) -> Result<()> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO note_links (source_id, ordinal, kind, target, heading, target_key, byte, len, target_note_id, \
         target_attachment_id, label) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    let labels: Vec<(String, String, String)> = {
        // Only a value with a link in it can hold one: most labels are skipped without being parsed.
        let mut stmt = conn.prepare_cached(
            "SELECT name, value, value_type FROM attributes WHERE note_id = ?1 AND kind = 'label' \
             AND instr(value, '[') > 0 ORDER BY name",
        )?;
        let rows = stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let in_labels = labels.iter().flat_map(|(name, value, kind)| {
        label_texts(value, kind)
            .into_iter()
            .flat_map(|text| extract(&text))
            .map(move |link| (Some(name.as_str()), link))
    });
    let links = extract(body).into_iter().map(|link| (None, link)).chain(in_labels);
    for (ordinal, (label, link)) in links.enumerate() {
        let key = matches!(link.kind, LinkKind::Wikilink | LinkKind::Embed).then(|| key_of(&link.target));
        let (note, attachment) = resolve(conn, link.kind, &link.target, note_id)?;
        insert.execute(params![
            note_id,
            ordinal as i64,
            link.kind.as_str(),
            link.target,
            link.heading,
            key,
            link.byte as i64,
            link.len as i64,
            note,
            attachment,
            label
        ])?;
    }
    Ok(())
}

/// The texts of a label's value that may hold links: the value itself, or every string inside a JSON value.
pub(crate) fn label_texts(value: &str, value_type: &str) -> Vec<String> {
    if value_type != "json" {
        return vec![value.to_owned()];
    }
    let mut out = Vec::new();
    if let Ok(parsed) = serde_json::from_str::<serde_json::Value>(value) {
        crate::entity::strings_in(&parsed, &mut out);
    }
    out
}

/// Re-resolves the wikilinks and embeds whose target has this key (an attachment of that name was added).
pub(crate) fn refresh_key(conn: &Connection, key: &str) -> Result<()> {
    resolve_where(conn, "target_key = ?1", &[key])
}

/// Resolves the `quire://` links written to this id before a note or attachment had it.
pub(crate) fn refresh_target_id(conn: &Connection, id: &str) -> Result<()> {
    resolve_where(conn, "target = ?1 AND kind IN ('note', 'attachment')", &[id])
}

/// Re-resolves the links that pointed at an attachment that is gone.
pub(crate) fn refresh_target_attachment(conn: &Connection, attachment_id: &str) -> Result<()> {
    resolve_where(conn, "target_attachment_id = ?1", &[attachment_id])
}

/// Re-resolves the links matching `condition`.
fn resolve_where(conn: &Connection, condition: &str, args: &[&str]) -> Result<()> {
    let links: Vec<(String, i64, String, String)> = {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT source_id, ordinal, kind, target FROM note_links WHERE {condition}"
        ))?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut update = conn.prepare_cached(
        "UPDATE note_links SET target_note_id = ?3, target_attachment_id = ?4 WHERE source_id = ?1 AND ordinal = ?2",
    )?;
    for (source, ordinal, kind, target) in links {
        let (note, attachment) = resolve(conn, LinkKind::parse(&kind), &target, &source)?;
        update.execute(params![source, ordinal, note, attachment])?;
    }
    Ok(())
}

/// The note or attachment a link points at, if exactly one.
fn resolve(conn: &Connection, kind: LinkKind, target: &str, source: &str) -> Result<(Option<String>, Option<String>)> {
    match kind {
        LinkKind::Note => Ok((
            conn.row_cached("SELECT id FROM notes WHERE id = ?1", [target], |r| r.get(0))
                .optional()?,
            None,
        )),
        LinkKind::Attachment => Ok((
            None,
            conn.row_cached("SELECT id FROM attachments WHERE id = ?1", [target], |r| r.get(0))
                .optional()?,
        )),
        // `[[#Heading]]`: a place in the note itself.
        LinkKind::Wikilink | LinkKind::Embed if target.trim().is_empty() => Ok((Some(source.to_owned()), None)),
        LinkKind::Wikilink | LinkKind::Embed => {
            let candidates = candidates(conn, target)?;
            if let Some(picked) = pick(conn, &candidates, &key_of(target), source)? {
                return Ok((Some(picked), None));
            }
            if candidates.is_empty() {
                // A file (embedded or linked): the linking note's own attachment of that name first, then a unique
                // one.
                let name = target.rsplit('/').next().unwrap_or(target);
                let own: Option<String> = conn
                    .row_cached(
                        "SELECT id FROM attachments WHERE note_id = ?1 AND title = ?2 COLLATE NOCASE LIMIT 1",
                        params![source, name],
                        |r| r.get(0),
                    )
                    .optional()?;
                if own.is_some() {
                    return Ok((None, own));
                }
                let mut stmt =
                    conn.prepare_cached("SELECT id FROM attachments WHERE title = ?1 COLLATE NOCASE LIMIT 2")?;
                let any: Vec<String> = stmt.query_map([name], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
                if let [only] = any.as_slice() {
                    return Ok((None, Some(only.clone())));
                }
            }
            Ok((None, None))
        }
    }
}

/// The one note a wikilink means among its candidates, as Obsidian picks among files of one name: a note titled so
/// before one that only has it as an alias (Obsidian finds files by name, never by alias); then the one in the
/// linking note's own notebook; then the one with the fewest notebooks above it (the shortest path). `None` when
/// there are none, or a tie remains (the candidates are listed to the reader then).
fn pick(conn: &Connection, candidates: &[String], key: &str, source: &str) -> Result<Option<String>> {
    if candidates.len() <= 1 {
        return Ok(candidates.first().cloned());
    }
    let mut rows = Vec::with_capacity(candidates.len());
    for id in candidates {
        let (title, notebook): (String, String) =
            conn.row_cached("SELECT title, notebook_id FROM notes WHERE id = ?1", [id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        rows.push((id, title.trim().to_lowercase() == key, notebook));
    }
    if rows.iter().any(|(_, titled, _)| *titled) {
        rows.retain(|(_, titled, _)| *titled);
    }
    if let [(only, ..)] = rows.as_slice() {
        return Ok(Some((*only).clone()));
    }
    let home: Option<String> = conn
        .row_cached("SELECT notebook_id FROM notes WHERE id = ?1", [source], |r| r.get(0))
        .optional()?;
    let beside: Vec<&String> = rows
        .iter()
        .filter(|(_, _, notebook)| Some(notebook) == home.as_ref())
        .map(|(id, ..)| *id)
        .collect();
    match beside.as_slice() {
        [only] => return Ok(Some((*only).clone())),
        [] => {}
        _ => return Ok(None),
    }
    let mut depths = Vec::with_capacity(rows.len());
    for (id, _, notebook) in &rows {
        depths.push((notebook_titles(conn, notebook)?.len(), *id));
    }
    depths.sort();
    Ok(match depths.as_slice() {
        [(a, only), (b, _), ..] if a < b => Some((*only).clone()),
        _ => None,
    })
}

/// The notes (not in the trash) a wikilink target may mean: those with its key as title or alias, narrowed by the
/// notebook path when the target has one (`Work/Ideas` matches a note "Ideas" in a notebook whose path ends with
/// "Work").
pub(crate) fn candidates(conn: &Connection, target: &str) -> Result<Vec<String>> {
    let key = key_of(target);
    let mut stmt = conn.prepare_cached(
        "SELECT n.id, n.notebook_id FROM note_keys k JOIN notes n ON n.id = k.note_id \
         WHERE k.key = ?1 AND n.deleted IS NULL ORDER BY n.created, n.seq",
    )?;
    let found: Vec<(String, String)> = stmt
        .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let segments: Vec<String> = target
        .split('/')
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    if segments.len() < 2 {
        return Ok(found.into_iter().map(|(id, _)| id).collect());
    }
    let wanted = &segments[..segments.len() - 1];
    let mut out = Vec::new();
    for (id, notebook) in found {
        let path = notebook_titles(conn, &notebook)?;
        if path.len() >= wanted.len() && path[path.len() - wanted.len()..] == *wanted {
            out.push(id);
        }
    }
    Ok(out)
}

/// The lower-case titles of a notebook's path from the top (the root left out).
fn notebook_titles(conn: &Connection, notebook: &str) -> Result<Vec<String>> {
    let mut titles = Vec::new();
    let mut current = notebook.to_owned();
    let mut stmt = conn.prepare_cached("SELECT parent_id, title FROM notebooks WHERE id = ?1")?;
    for _ in 0..64 {
        let row: Option<(Option<String>, String)> =
            stmt.query_row([&current], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
        match row {
            Some((Some(parent), title)) => {
                titles.push(title.to_lowercase());
                current = parent;
            }
            _ => break,
        }
    }
    titles.reverse();
    Ok(titles)
}

/// Builds the links of every note (a workspace made before links existed).
pub(crate) fn rebuild_all(conn: &Connection) -> Result<()> {
    conn.exec_cached("DELETE FROM note_links", [])?;
    conn.exec_cached("DELETE FROM note_keys", [])?;
    let ids: Vec<String> = {
        let mut stmt = conn.prepare("SELECT id FROM notes ORDER BY seq")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    // Keys first, so every link resolves against all notes.
    for id in &ids {
        let title: String = conn.row_cached("SELECT title FROM notes WHERE id = ?1", [id], |r| r.get(0))?;
        for key in keys_of(conn, id, &title)? {
            conn.exec_cached(
                "INSERT OR IGNORE INTO note_keys (note_id, key) VALUES (?1, ?2)",
                params![id, key],
            )?;
        }
    }
    for id in &ids {
        refresh(conn, id)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::extract::key_of;
    use super::*;

    #[test]
    fn every_form_of_link_is_found_outside_code() {
        let body = "See [[Ideas]], [[Work/Plan#Goals|the plan]] and ![[map.png]].\n\
                    `[[not a link]]` and [a note](quire://note/abc#Intro), ![img](quire://attachment/xyz \"t\").\n\
                    ```\n[[inside code]]\n```\n[[]] [[x\n[web](https://example.org)";
        let links = extract(body);
        let summary: Vec<(LinkKind, &str, Option<&str>, Option<&str>)> = links
            .iter()
            .map(|l| (l.kind, l.target.as_str(), l.heading.as_deref(), l.label.as_deref()))
            .collect();
        assert_eq!(
            summary,
            [
                (LinkKind::Wikilink, "Ideas", None, None),
                (LinkKind::Wikilink, "Work/Plan", Some("Goals"), Some("the plan")),
                (LinkKind::Embed, "map.png", None, None),
                (LinkKind::Note, "abc", Some("Intro"), Some("a note")),
                (LinkKind::Attachment, "xyz", None, Some("img")),
            ]
        );
        for link in &links {
            let text = &body[link.byte..link.byte + link.len];
            assert!(text.ends_with("]]") || text.ends_with(')'), "{text:?}");
            assert!(text.starts_with('[') || text.starts_with('!'), "{text:?}");
        }
        assert_eq!(key_of("Work/Plan.md"), "plan");
    }
}
