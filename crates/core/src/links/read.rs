//! What readers see of links: backlinks in bodies and labels, unresolved links with their candidates, a note's
//! outgoing links.

use super::{LinkKind, candidates};
use crate::error::Result;

/// A link in another note's body (or in one of its labels) that points at a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyBacklink {
    /// The note whose body has the link.
    pub source: crate::NoteSummary,
    /// What kind of link it is.
    pub kind: LinkKind,
    /// The text around the link, when this reader may read the linking note's body (never for a protected note
    /// read by anyone but the user); for a link in a label, `name: value`.
    pub snippet: Option<String>,
    /// The label whose value holds the link, when the linking note's body has none (and this reader may read the
    /// linking note's content).
    pub label: Option<String>,
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
    /// Where the link is in the body, in bytes (for a link in a label, in the text of the label it is in).
    pub byte: usize,
    /// Its length in bytes.
    pub len: usize,
    /// The label whose value holds the link; `None` for a link in the body.
    pub label: Option<String>,
    /// The note it points at.
    pub note_id: Option<String>,
    /// The attachment it points at.
    pub attachment_id: Option<String>,
}

/// Characters of context on each side of a link in a backlink's snippet.
const SNIPPET_CHARS: usize = 60;

impl crate::Reader<'_> {
    /// The notes whose bodies (or labels) link to `note_id` (not in the trash, within this reader's scope), each
    /// with the text around its first link in the body, or else the label that links; for a protected linking
    /// note, readers other than the user get its title only.
    pub fn body_backlinks(&self, note_id: &str) -> Result<Vec<BodyBacklink>> {
        self.note_summary(note_id)?;
        let rows: Vec<(String, String, i64, Option<String>)> = {
            // In the order of each note's links: those of its body first, by place, then those of its labels.
            let mut stmt = self.conn.prepare_cached(
                "SELECT l.source_id, l.kind, l.byte, l.label FROM note_links l JOIN notes s ON s.id = l.source_id \
                 WHERE l.target_note_id = ?1 AND s.deleted IS NULL AND l.source_id <> ?1 \
                 ORDER BY s.title COLLATE NOCASE, s.id, l.ordinal",
            )?;
            let rows = stmt.query_map([note_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let mut out: Vec<BodyBacklink> = Vec::with_capacity(rows.len());
        let mut last: Option<String> = None;
        for (source, kind, byte, label) in rows {
            if last.as_deref() == Some(source.as_str()) {
                continue;
            }
            last = Some(source.clone());
            let summary = match self.note_summary(&source) {
                Ok(summary) => summary,
                Err(crate::Error::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            let read = self.note_unrecorded(&source);
            if let Ok(note) = &read {
                self.record_read(&note.summary, None, "link context");
            }
            let (snippet, label) = match read {
                Ok(note) => (
                    match &label {
                        None => Some(snippet_at(&note.body, byte as usize)),
                        Some(name) => self
                            .attributes(&source)?
                            .into_iter()
                            .find(|a| a.kind == crate::AttributeKind::Label && a.name == *name)
                            .map(|a| snippet_at(&format!("{name}: {}", a.value), 0)),
                    },
                    label,
                ),
                // A protected note's labels are its content: not even the label's name.
                Err(crate::Error::Protected(_) | crate::Error::ProtectedContent) => (None, None),
                Err(e) => return Err(e),
            };
            out.push(BodyBacklink {
                source: summary,
                kind: LinkKind::parse(&kind),
                snippet,
                label,
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

    /// Every link of a note's body, in order, then those of its labels, as stored. The note's content must be
    /// readable by this reader.
    pub fn outgoing_links(&self, note_id: &str) -> Result<Vec<OutgoingLink>> {
        self.note_unrecorded(note_id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT kind, target, heading, byte, len, target_note_id, target_attachment_id, label FROM note_links \
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
                label: r.get(7)?,
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
