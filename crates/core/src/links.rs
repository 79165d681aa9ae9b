//! Links in note bodies: `[[Title]]`, `[[Title|alias]]`, `[[Title#Heading]]`, `[[Notebook/Title]]`, embeds
//! `![[file]]`, and Markdown links to quire's own addresses (`[text](quire://note/ID)`, `![img](quire://attachment/ID)`).
//!
//! Every write of a note extracts its links into `note_links` (derived data, like the full-text index: never in the
//! change log, rebuilt from the bodies) and resolves them: a `quire://` link by id; a wikilink by a note's title or
//! alias (the `aliases` label, comma-separated), case-insensitively, among notes not in the trash; when several
//! notes share it, a `Notebook/Title` path picks one; otherwise the link stays unresolved and readers list the
//! candidates. `note_keys` holds each note's title and aliases, so a write re-resolves exactly the links that may
//! change: the ones naming the note's old or new keys and the ones pointing at it. A link by title thus resolves
//! when a matching note appears, and stops resolving when its note is renamed, trashed or gets a namesake.

use crate::sql::Cached;
use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
use crate::markdown::{LineKind, lines};

/// What a link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[[Title]]`.
    Wikilink,
    /// `![[file]]`: a note or attachment shown in place.
    Embed,
    /// `[text](quire://note/ID)`.
    Note,
    /// `![img](quire://attachment/ID)` or `[file](quire://attachment/ID)`.
    Attachment,
}

impl LinkKind {
    fn as_str(self) -> &'static str {
        match self {
            LinkKind::Wikilink => "wikilink",
            LinkKind::Embed => "embed",
            LinkKind::Note => "note",
            LinkKind::Attachment => "attachment",
        }
    }

    pub(crate) fn parse(text: &str) -> LinkKind {
        match text {
            "embed" => LinkKind::Embed,
            "note" => LinkKind::Note,
            "attachment" => LinkKind::Attachment,
            _ => LinkKind::Wikilink,
        }
    }
}

/// One link of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyLink {
    /// What it is.
    pub kind: LinkKind,
    /// The target as written: a title or `Notebook/Title` path (without `#heading` and `|alias`), or an id.
    pub target: String,
    /// The `#heading` part, if any.
    pub heading: Option<String>,
    /// The `|alias` part or the Markdown link's text, if any.
    pub label: Option<String>,
    /// Where the link starts, in bytes.
    pub byte: usize,
    /// Its length in bytes.
    pub len: usize,
}

/// The links of `body`, outside code (fenced blocks and `inline code`), in order.
pub fn extract(body: &str) -> Vec<BodyLink> {
    scan(body, None)
}

/// Where a Markdown link or image (`[text](address)`, `![alt](address "title")`) has its address, whatever the
/// address is: a web page, a relative path, one of quire's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkAddress {
    /// The address, without the angle brackets it may be written in.
    pub url: String,
    /// Where the address starts, in bytes (at its `<` when it has one).
    pub byte: usize,
    /// Its length in bytes as written, angle brackets included: the part to replace to point the link elsewhere.
    pub len: usize,
}

/// The links of `body` as [`extract`] finds them and, from the same scan, the address of every Markdown link and
/// image outside code, in order, whatever it points at (`extract` keeps only quire's own); an import rewrites
/// relative paths with them.
pub fn extract_with_addresses(body: &str) -> (Vec<BodyLink>, Vec<LinkAddress>) {
    let mut addresses = Vec::new();
    let links = scan(body, Some(&mut addresses));
    (links, addresses)
}

/// The links of `body` outside code; with `addresses`, every Markdown link's address as well.
fn scan(body: &str, mut addresses: Option<&mut Vec<LinkAddress>>) -> Vec<BodyLink> {
    let mut found = Vec::new();
    for line in lines(body) {
        if matches!(line.kind, LineKind::Code | LineKind::Fence) {
            continue;
        }
        scan_line(line.text, line.byte, &mut found, addresses.as_deref_mut());
    }
    found
}

fn scan_line(text: &str, base: usize, found: &mut Vec<BodyLink>, mut addresses: Option<&mut Vec<LinkAddress>>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_code = false;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => {
                in_code = !in_code;
                i += 1;
            }
            _ if in_code => i += 1,
            b'[' if bytes.get(i + 1) == Some(&b'[') => {
                let embed = i > 0 && bytes[i - 1] == b'!';
                let start = if embed { i - 1 } else { i };
                match text[i + 2..].find("]]") {
                    Some(end) if !text[i + 2..i + 2 + end].contains(['[', '\n']) => {
                        let inner = &text[i + 2..i + 2 + end];
                        let (rest, label) = match inner.split_once('|') {
                            Some((rest, label)) => (rest, Some(label.trim().to_owned())),
                            None => (inner, None),
                        };
                        let (target, heading) = match rest.split_once('#') {
                            Some((target, heading)) => (target, Some(heading.trim().to_owned())),
                            None => (rest, None),
                        };
                        let after = i + 2 + end + 2;
                        if !target.trim().is_empty() || heading.is_some() {
                            found.push(BodyLink {
                                kind: if embed { LinkKind::Embed } else { LinkKind::Wikilink },
                                target: target.trim().to_owned(),
                                heading,
                                label,
                                byte: base + start,
                                len: after - start,
                            });
                        }
                        i = after;
                    }
                    _ => i += 2,
                }
            }
            b'[' => {
                let image = i > 0 && bytes[i - 1] == b'!';
                let start = if image { i - 1 } else { i };
                match markdown_link(&text[i..]) {
                    Some(MarkdownLink {
                        label,
                        url,
                        written,
                        len,
                    }) => {
                        if let Some(addresses) = addresses.as_deref_mut() {
                            addresses.push(LinkAddress {
                                url: url.to_owned(),
                                byte: base + i + written.start,
                                len: written.len(),
                            });
                        }
                        for (prefix, kind) in [
                            ("quire://note/", LinkKind::Note),
                            ("quire://attachment/", LinkKind::Attachment),
                        ] {
                            if let Some(rest) = url.strip_prefix(prefix) {
                                let (id, heading) = match rest.split_once('#') {
                                    Some((id, heading)) => (id, Some(heading.to_owned())),
                                    None => (rest, None),
                                };
                                if !id.is_empty() {
                                    found.push(BodyLink {
                                        kind,
                                        target: id.to_owned(),
                                        heading,
                                        label: Some(label.to_owned()).filter(|l| !l.is_empty()),
                                        byte: base + start,
                                        len: i + len - start,
                                    });
                                }
                            }
                        }
                        i += len;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
}

/// A Markdown link found by [`markdown_link`].
struct MarkdownLink<'a> {
    label: &'a str,
    /// The URL without its angle brackets.
    url: &'a str,
    /// Where the URL is written (angle brackets included), in bytes from the link's `[`.
    written: std::ops::Range<usize>,
    /// The link's length in bytes.
    len: usize,
}

/// `[label](url)` or `[label](url "title")` at the start of `text`.
fn markdown_link(text: &str) -> Option<MarkdownLink<'_>> {
    let close = text.find("](")?;
    let label = &text[1..close];
    if label.contains(['[', ']']) {
        return None;
    }
    let rest = &text[close + 2..];
    let end = rest.find(')')?;
    let inside = &rest[..end];
    let written = inside.split_whitespace().next().unwrap_or("");
    let start = close + 2 + (inside.len() - inside.trim_start().len());
    Some(MarkdownLink {
        label,
        url: written.trim_start_matches('<').trim_end_matches('>'),
        written: start..start + written.len(),
        len: close + 2 + end + 1,
    })
}

/// The key a wikilink target is looked up by: its last path segment, without a `.md` ending, in lower case.
pub(crate) fn key_of(target: &str) -> String {
    let last = target.rsplit('/').next().unwrap_or(target).trim();
    let last = last.strip_suffix(".md").unwrap_or(last);
    last.to_lowercase()
}

/// The keys of a note: its title and its aliases.
fn keys_of(conn: &Connection, note_id: &str, title: &str) -> Result<BTreeSet<String>> {
    let mut keys = BTreeSet::from([title.trim().to_lowercase()]);
    let aliases: Option<String> = conn
        .row_cached(
            "SELECT value FROM attributes WHERE note_id = ?1 AND kind = 'label' AND name = 'aliases'",
            [note_id],
            |r| r.get(0),
        )
        .optional()?;
    for alias in aliases.iter().flat_map(|a| a.split(',')) {
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
    let mut bodies = Vec::with_capacity(note_ids.len());
    for id in note_ids {
        let row = rewrite_keys(conn, id)?;
        keys.extend(row.keys);
        conn.exec_cached("DELETE FROM note_links WHERE source_id = ?1", [id])?;
        bodies.push((id, row.body));
    }
    // The notes' own links are gone until the end, so these find only the links from other notes (an import into
    // an empty workspace finds none, rather than reading back every link it wrote).
    for id in note_ids {
        resolve_where(conn, "target_note_id = ?1", &[id])?;
    }
    for key in &keys {
        resolve_where(conn, "target_key = ?1", &[key])?;
    }
    for (id, body) in bodies {
        if let Some(body) = body {
            insert_links(conn, id, &body)?;
        }
    }
    Ok(())
}

/// A note as [`rewrite_keys`] found it: its old and new keys, and its body (`None`: it no longer exists).
struct Rewritten {
    keys: BTreeSet<String>,
    body: Option<String>,
}

/// Writes a note's keys (its title and aliases) from its row as it is now.
fn rewrite_keys(conn: &Connection, note_id: &str) -> Result<Rewritten> {
    let mut keys: BTreeSet<String> = {
        let mut stmt = conn.prepare_cached("SELECT key FROM note_keys WHERE note_id = ?1")?;
        let rows = stmt.query_map([note_id], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let row: Option<(String, String)> = conn
        .row_cached("SELECT title, body FROM notes WHERE id = ?1", [note_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    conn.exec_cached("DELETE FROM note_keys WHERE note_id = ?1", [note_id])?;
    let Some((title, body)) = row else {
        return Ok(Rewritten { keys, body: None });
    };
    let new_keys = keys_of(conn, note_id, &title)?;
    for key in &new_keys {
        conn.exec_cached(
            "INSERT OR IGNORE INTO note_keys (note_id, key) VALUES (?1, ?2)",
            params![note_id, key],
        )?;
    }
    keys.extend(new_keys);
    Ok(Rewritten { keys, body: Some(body) })
}

/// Writes a note's links from its body (its old ones deleted before), each resolved.
fn insert_links(conn: &Connection, note_id: &str, body: &str) -> Result<()> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO note_links (source_id, ordinal, kind, target, heading, target_key, byte, len, target_note_id, \
         target_attachment_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for (ordinal, link) in extract(body).into_iter().enumerate() {
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
            attachment
        ])?;
    }
    Ok(())
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
        LinkKind::Wikilink | LinkKind::Embed => {
            let candidates = candidates(conn, target)?;
            if let [only] = candidates.as_slice() {
                return Ok((Some(only.clone()), None));
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

/// A link in another note's body that points at a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyBacklink {
    /// The note whose body has the link.
    pub source: crate::NoteSummary,
    /// What kind of link it is.
    pub kind: LinkKind,
    /// The text around the link, when this reader may read the linking note's body (never for a protected note
    /// read by anyone but the user).
    pub snippet: Option<String>,
}

/// A wikilink of a note that points at no note: nothing has its title, or several notes do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedLink {
    /// The target as written.
    pub target: String,
    /// The notes it may mean (several share the title; a `Notebook/Title` path picks one). Empty when none.
    pub candidates: Vec<crate::NoteSummary>,
}

/// A link of a note as stored, resolved or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingLink {
    /// What it is.
    pub kind: LinkKind,
    /// The target as written.
    pub target: String,
    /// The `#heading` part.
    pub heading: Option<String>,
    /// Where the link is in the body, in bytes, and its length.
    pub byte: usize,
    /// Its length in bytes.
    pub len: usize,
    /// The note it points at.
    pub note_id: Option<String>,
    /// The attachment it points at.
    pub attachment_id: Option<String>,
}

/// Characters of context on each side of a link in a backlink's snippet.
const SNIPPET_CHARS: usize = 60;

impl crate::Reader<'_> {
    /// The notes whose bodies link to `note_id` (not in the trash, within this reader's scope), each with the text
    /// around its first link there; for a protected linking note, readers other than the user get its title only.
    pub fn body_backlinks(&self, note_id: &str) -> Result<Vec<BodyBacklink>> {
        self.note_summary(note_id)?;
        let rows: Vec<(String, String, i64)> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT l.source_id, l.kind, min(l.byte) FROM note_links l JOIN notes s ON s.id = l.source_id \
                 WHERE l.target_note_id = ?1 AND s.deleted IS NULL AND l.source_id <> ?1 \
                 GROUP BY l.source_id ORDER BY s.title COLLATE NOCASE, s.id",
            )?;
            let rows = stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::with_capacity(rows.len());
        for (source, kind, byte) in rows {
            let summary = match self.note_summary(&source) {
                Ok(summary) => summary,
                Err(crate::Error::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            let snippet = match self.note(&source) {
                Ok(note) => Some(snippet_at(&note.body, byte as usize)),
                Err(crate::Error::Protected(_) | crate::Error::ProtectedContent) => None,
                Err(e) => return Err(e),
            };
            out.push(BodyBacklink {
                source: summary,
                kind: LinkKind::parse(&kind),
                snippet,
            });
        }
        Ok(out)
    }

    /// The wikilinks of a note that resolve to no note, with the notes they may mean (at most five each).
    pub fn unresolved_links(&self, note_id: &str) -> Result<Vec<UnresolvedLink>> {
        Ok(self.note_with_unresolved_links(note_id)?.1)
    }

    /// A note and its unresolved links, read once (see [`crate::Reader::note`] and
    /// [`crate::Reader::unresolved_links`]).
    pub fn note_with_unresolved_links(&self, note_id: &str) -> Result<(crate::Note, Vec<UnresolvedLink>)> {
        // The targets are the note's own text: only a reader who may read it gets them.
        let note = self.note(note_id)?;
        let links = self.unresolved_links_of(&note)?;
        Ok((note, links))
    }

    pub(crate) fn unresolved_links_of(&self, note: &crate::Note) -> Result<Vec<UnresolvedLink>> {
        let note_id = note.summary.id.as_str();
        let targets: Vec<String> = {
            let mut stmt = self.conn.prepare_cached(
                "SELECT target FROM note_links WHERE source_id = ?1 AND kind IN ('wikilink', 'embed') \
                 AND target_note_id IS NULL AND target_attachment_id IS NULL AND target <> '' \
                 GROUP BY lower(target) ORDER BY min(ordinal)",
            )?;
            let rows = stmt.query_map([note_id], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out = Vec::with_capacity(targets.len());
        for target in targets {
            let mut found = Vec::new();
            for id in candidates(self.conn, &target)?.into_iter().take(5) {
                match self.note_summary(&id) {
                    Ok(summary) => found.push(summary),
                    Err(crate::Error::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            out.push(UnresolvedLink {
                target,
                candidates: found,
            });
        }
        Ok(out)
    }

    /// Every link of a note's body, in order, as stored. The note's content must be readable by this reader.
    pub fn outgoing_links(&self, note_id: &str) -> Result<Vec<OutgoingLink>> {
        self.note(note_id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT kind, target, heading, byte, len, target_note_id, target_attachment_id FROM note_links \
             WHERE source_id = ?1 ORDER BY ordinal",
        )?;
        let rows = stmt.query_map([note_id], |r| {
            Ok(OutgoingLink {
                kind: LinkKind::parse(&r.get::<_, String>(0)?),
                target: r.get(1)?,
                heading: r.get(2)?,
                byte: r.get::<_, i64>(3)? as usize,
                len: r.get::<_, i64>(4)? as usize,
                note_id: r.get(5)?,
                attachment_id: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

/// About `SNIPPET_CHARS` characters each side of `byte`, cut at word boundaries, on one line.
fn snippet_at(body: &str, byte: usize) -> String {
    let byte = (0..=byte.min(body.len()))
        .rev()
        .find(|b| body.is_char_boundary(*b))
        .unwrap_or(0);
    let before: String = {
        let chars: Vec<char> = body[..byte].chars().rev().take(SNIPPET_CHARS).collect();
        chars.into_iter().rev().collect()
    };
    let after: String = body[byte..].chars().take(SNIPPET_CHARS * 2).collect();
    let cut_start = if before.chars().count() == SNIPPET_CHARS {
        before.split_once(' ').map_or(before.as_str(), |(_, rest)| rest)
    } else {
        before.as_str()
    };
    let cut_end = if after.chars().count() == SNIPPET_CHARS * 2 {
        after.rsplit_once(' ').map_or(after.as_str(), |(rest, _)| rest)
    } else {
        after.as_str()
    };
    let text = format!("{cut_start}{cut_end}");
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    if cut_start.len() < byte {
        out.push('…');
    }
    out.push_str(&text);
    if cut_end.len() < body.len() - byte {
        out.push('…');
    }
    out
}
