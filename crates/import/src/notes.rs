//! The notes of a source ([`Parsed`], with the links of its body), their bodies kept in a temporary file as they
//! are read: an import holds what it needs of every note to link them (titles, aliases, paths, the links found in
//! each body) and one body at a time, so its memory follows the largest note and the number of notes, not the size
//! of the export (issue 51; interop-2: 420 MB for an ENEX of 50,000 notes).

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use quire_core::links::{self, LinkKind};

use crate::frontmatter::FrontMatter;

/// Bodies written to the file together once this many bytes wait (one system call for many small notes).
const FLUSH_AT: usize = 1 << 20;

/// The notes read so far, in order. Reading one is indexing (`notes[i]`, `notes.iter()`); its body is
/// [`Notes::body`], never `Parsed::body`, which is empty once the note is pushed.
#[derive(Default)]
pub(crate) struct Notes {
    list: Vec<Parsed>,
    /// Where each note's body is in the spill (`None`: in the note, as when the spill could not be made).
    spans: Vec<Option<Span>>,
    spill: Option<Spill>,
    /// The temporary file could not be made or written: bodies stay in memory, as they did before the spill.
    in_memory: bool,
}

#[derive(Clone, Copy)]
struct Span {
    at: u64,
    len: usize,
}

struct Spill {
    /// Read through `&self` while the workspace is written; written only through `&mut self`.
    file: Mutex<File>,
    /// Bytes in the file.
    written: u64,
    /// Bytes after those, not written yet.
    pending: Vec<u8>,
}

impl Notes {
    /// Adds a note read: its links are found while its body is here, then the body goes to the spill.
    pub(crate) fn push(&mut self, mut note: Parsed) {
        note.links();
        let span = self.keep(&note.body);
        if span.is_some() {
            note.body = String::new();
        }
        self.list.push(note);
        self.spans.push(span);
    }

    /// Note `i`'s body.
    pub(crate) fn body(&self, i: usize) -> std::io::Result<Cow<'_, str>> {
        let Some(Span { at, len }) = self.spans[i] else {
            return Ok(Cow::Borrowed(&self.list[i].body));
        };
        let spill = self
            .spill
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the spill is gone"))?;
        if at >= spill.written {
            let start = (at - spill.written) as usize;
            let bytes = &spill.pending[start..start + len];
            return Ok(Cow::Borrowed(
                std::str::from_utf8(bytes).map_err(std::io::Error::other)?,
            ));
        }
        let mut bytes = vec![0; len];
        {
            let mut file = spill
                .file
                .lock()
                .map_err(|_| std::io::Error::other("the spill's lock is poisoned"))?;
            file.seek(SeekFrom::Start(at))?;
            file.read_exact(&mut bytes)?;
        }
        String::from_utf8(bytes).map(Cow::Owned).map_err(std::io::Error::other)
    }

    /// Replaces note `i`'s body (a format's reader rewriting it once every note is known), its links found again.
    pub(crate) fn set_body(&mut self, i: usize, body: String) {
        self.list[i].links = std::sync::OnceLock::from(links_of(&body));
        let span = self.keep(&body);
        self.list[i].body = if span.is_some() { String::new() } else { body };
        self.spans[i] = span;
    }

    /// Note `i`, to change anything but its body (see [`Notes::set_body`]).
    pub(crate) fn get_mut(&mut self, i: usize) -> &mut Parsed {
        &mut self.list[i]
    }

    /// Writes `body` to the spill: where it went, or `None` when it stays in memory.
    fn keep(&mut self, body: &str) -> Option<Span> {
        if body.is_empty() || self.in_memory {
            return None;
        }
        if self.spill.is_none() {
            match tempfile::tempfile() {
                Ok(file) => {
                    self.spill = Some(Spill {
                        file: Mutex::new(file),
                        written: 0,
                        pending: Vec::new(),
                    })
                }
                Err(_) => {
                    self.in_memory = true;
                    return None;
                }
            }
        }
        let spill = self.spill.as_mut()?;
        let span = Span {
            at: spill.written + spill.pending.len() as u64,
            len: body.len(),
        };
        spill.pending.extend_from_slice(body.as_bytes());
        if spill.pending.len() >= FLUSH_AT && spill.flush().is_err() {
            // What could not be written stays readable from memory: nothing is lost, only the memory bound.
            self.in_memory = true;
        }
        Some(span)
    }
}

impl Spill {
    fn flush(&mut self) -> std::io::Result<()> {
        let file = self
            .file
            .get_mut()
            .map_err(|_| std::io::Error::other("the spill's lock is poisoned"))?;
        file.seek(SeekFrom::Start(self.written))?;
        file.write_all(&self.pending)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }
}

impl Extend<Parsed> for Notes {
    fn extend<I: IntoIterator<Item = Parsed>>(&mut self, notes: I) {
        for note in notes {
            self.push(note);
        }
    }
}

impl std::ops::Deref for Notes {
    type Target = [Parsed];

    fn deref(&self) -> &[Parsed] {
        &self.list
    }
}

/// One note of the source, read and checked (a `.md` file; a Joplin item; an Evernote note).
pub(crate) struct Parsed {
    /// Where it comes from, unique in the source and the same on every import of it (relative path with `/`, or a
    /// Joplin item's file, or an Evernote note's title and time): the key of its import record.
    pub(crate) rel: String,
    /// How the report names it (the relative path; for an Evernote note its title and time).
    pub(crate) shown: String,
    /// Its notebook: a relative folder with `/` (empty at the top), a key of [`Source::notebooks`] when that names
    /// the notebook's title.
    pub(crate) folder: String,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) meta: FrontMatter,
    /// A hash of everything the source says about it, to see later whether it changed there.
    pub(crate) hash: String,
    /// The links of its body, found once (see [`Parsed::links`]).
    pub(crate) links: std::sync::OnceLock<Vec<Link>>,
    /// What the import report says of it besides its outcome (what was repaired in it, a link left as written).
    pub(crate) notices: Vec<String>,
}

impl Parsed {
    /// The relative links and wikilinks of its body, outside code (an import looks at them four times per note):
    /// found when the note is pushed into [`Notes`], while its body is still here.
    pub(crate) fn links(&self) -> &[Link] {
        self.links.get_or_init(|| links_of(&self.body))
    }
}

/// A link of a note's body (or of a label's value) that may name a note or file of the source.
pub(crate) enum Link {
    /// `[text](path)` or `![alt](path)`: where the URL is in the text.
    Path { target: String, start: usize, end: usize },
    /// `[[target]]` or `![[target]]`: the target without its `#heading` and `|alias`, the alias, and where the
    /// whole link is in the text.
    Wiki {
        target: String,
        embed: bool,
        label: Option<String>,
        start: usize,
        end: usize,
    },
}

/// The Markdown links and images with relative targets (no scheme, or Joplin's `:/ID`) and the wikilinks and
/// embeds of a body, outside code, as core's link extractor finds them.
pub(crate) fn links_of(body: &str) -> Vec<Link> {
    let (found, addresses) = links::extract_with_addresses(body);
    let mut out: Vec<Link> = found
        .into_iter()
        .filter(|link| matches!(link.kind, LinkKind::Wikilink | LinkKind::Embed))
        .map(|link| Link::Wiki {
            embed: link.kind == LinkKind::Embed,
            target: link.target,
            label: link.label,
            start: link.byte,
            end: link.byte + link.len,
        })
        .collect();
    for address in addresses {
        let url = address.url.as_str();
        let relative = !url.is_empty() && !url.contains(':') && !url.starts_with('#') && !url.starts_with("//")
            || url.starts_with(":/");
        if relative {
            out.push(Link::Path {
                target: address.url,
                start: address.byte,
                end: address.byte + address.len,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(rel: &str, body: &str) -> Parsed {
        Parsed {
            rel: rel.to_owned(),
            shown: rel.to_owned(),
            folder: String::new(),
            title: rel.to_owned(),
            body: body.to_owned(),
            meta: Default::default(),
            hash: String::new(),
            links: Default::default(),
            notices: Vec::new(),
        }
    }

    #[test]
    fn bodies_leave_memory_and_come_back_whole() {
        let mut notes = Notes::default();
        // Enough to be written to the file several times over, with text that is not ASCII.
        let big = "Grüße, [[Zweite]] und ![Bild](a.png) ".repeat(9_000);
        for i in 0..40 {
            notes.push(note(&format!("n{i}.md"), &format!("{i}: {big}")));
        }
        notes.push(note("empty.md", ""));
        assert!(notes.iter().all(|n| n.body.is_empty()), "no body is held by its note");
        let spill = notes.spill.as_ref().unwrap();
        assert!(
            spill.written > 0 && spill.pending.len() < FLUSH_AT,
            "most of it is in the file"
        );
        for i in [0, 17, 39] {
            assert_eq!(notes.body(i).unwrap(), format!("{i}: {big}"));
            // The links were found before the body left.
            assert_eq!(notes[i].links().len(), 9_000 * 2);
        }
        assert_eq!(notes.body(40).unwrap(), "");
        notes.set_body(17, "now [[Other]]".to_owned());
        assert_eq!(notes.body(17).unwrap(), "now [[Other]]");
        assert_eq!(notes[17].links().len(), 1);
        assert_eq!(notes.body(16).unwrap(), format!("16: {big}"));
    }
}
