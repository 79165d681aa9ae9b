//! The notes of a source ([`Parsed`], with the links of its body), kept in a temporary file as they are read: an
//! import holds in memory only what links resolve by (each note's [`Head`]: its path, folder, title and aliases)
//! and one note at a time, so its memory follows the largest note, not the size of the export (issue 51;
//! interop-2: 420 MB for an ENEX of 50,000 notes). Everything else of a note (its text, front matter, hash, links
//! and notices) is read back when the import writes it.

use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Mutex, OnceLock};

use quire_core::links::{self, LinkKind};
use serde::{Deserialize, Serialize};

use crate::frontmatter::FrontMatter;

/// Bytes written to the file together once this many wait (one system call for many small notes).
const FLUSH_AT: usize = 1 << 20;

/// The notes read so far, in order. Indexing (`notes[i]`, `notes.iter()`) gives their [`Head`]s; the whole note
/// is [`Notes::get`] and its text [`Notes::body`].
#[derive(Default)]
pub(crate) struct Notes {
    heads: Vec<Head>,
    places: Vec<Place>,
    store: Store,
}

/// What an import keeps in memory of each note: what a link or a relation may name it by, and what finds it
/// again in the workspace.
pub(crate) struct Head {
    pub(crate) rel: String,
    pub(crate) folder: String,
    pub(crate) title: String,
    pub(crate) aliases: Vec<String>,
    /// A day's journal (see `FrontMatter::daily`).
    pub(crate) daily: bool,
}

impl Head {
    fn of(note: &Parsed) -> Head {
        Head {
            rel: note.rel.clone(),
            folder: note.folder.clone(),
            title: note.title.clone(),
            aliases: note.meta.aliases.clone(),
            daily: note.meta.daily,
        }
    }
}

/// Where the rest of a note is in the store: the JSON of its [`RestOut`], and its text.
struct Place {
    rest: Span,
    body: Span,
}

#[derive(Clone, Copy)]
struct Span {
    at: u64,
    len: usize,
}

/// A note but for its [`Head`] and its text, as stored.
#[derive(Serialize)]
struct RestOut<'a> {
    shown: &'a str,
    meta: &'a FrontMatter,
    hash: &'a str,
    links: &'a [Link],
    notices: &'a [String],
}

#[derive(Deserialize)]
struct RestIn {
    shown: String,
    meta: FrontMatter,
    hash: String,
    links: Vec<Link>,
    notices: Vec<String>,
}

/// Bytes appended to a temporary file, read back by where they are.
#[derive(Default)]
struct Store {
    /// Made at the first flush. Read through `&self` while the workspace is written; written through `&mut self`.
    file: Option<Mutex<File>>,
    /// No temporary file could be made or written: what is not in the file stays in `pending`. Nothing is lost,
    /// only the memory bound.
    stuck: bool,
    /// Bytes in the file.
    written: u64,
    /// Bytes after those, not written yet.
    pending: Vec<u8>,
}

impl Store {
    fn put(&mut self, bytes: &[u8]) -> Span {
        let span = Span {
            at: self.written + self.pending.len() as u64,
            len: bytes.len(),
        };
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= FLUSH_AT && !self.stuck && self.flush().is_err() {
            self.stuck = true;
        }
        span
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.file.is_none() {
            self.file = Some(Mutex::new(tempfile::tempfile()?));
        }
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("no temporary file"))?
            .get_mut()
            .map_err(|_| std::io::Error::other("the temporary file's lock is poisoned"))?;
        file.seek(SeekFrom::Start(self.written))?;
        file.write_all(&self.pending)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    fn get(&self, Span { at, len }: Span) -> std::io::Result<Cow<'_, [u8]>> {
        if at >= self.written {
            let start = (at - self.written) as usize;
            return Ok(Cow::Borrowed(&self.pending[start..start + len]));
        }
        let mut bytes = vec![0; len];
        let mut file = self
            .file
            .as_ref()
            .ok_or_else(|| std::io::Error::other("the temporary file is gone"))?
            .lock()
            .map_err(|_| std::io::Error::other("the temporary file's lock is poisoned"))?;
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(&mut bytes)?;
        Ok(Cow::Owned(bytes))
    }
}

impl Notes {
    /// Adds a note read: its links are found while its text is here, then all but its head goes to the store.
    pub(crate) fn push(&mut self, note: Parsed) {
        self.heads.push(Head::of(&note));
        let place = self.keep(note);
        self.places.push(place);
    }

    /// Note `i`, all of it but its text (see [`Notes::body`]): read back from the store.
    pub(crate) fn get(&self, i: usize) -> std::io::Result<Parsed> {
        let rest = self.store.get(self.places[i].rest)?;
        let rest: RestIn = serde_json::from_slice(&rest).map_err(std::io::Error::other)?;
        let head = &self.heads[i];
        Ok(Parsed {
            rel: head.rel.clone(),
            shown: rest.shown,
            folder: head.folder.clone(),
            title: head.title.clone(),
            body: String::new(),
            meta: rest.meta,
            hash: rest.hash,
            links: OnceLock::from(rest.links),
            notices: rest.notices,
        })
    }

    /// Note `i`'s text.
    pub(crate) fn body(&self, i: usize) -> std::io::Result<Cow<'_, str>> {
        match self.store.get(self.places[i].body)? {
            Cow::Borrowed(bytes) => std::str::from_utf8(bytes)
                .map(Cow::Borrowed)
                .map_err(std::io::Error::other),
            Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(std::io::Error::other),
        }
    }

    /// Changes note `i` (a format's reader, once every note is known): `change` gets the whole note, its text
    /// included, and what it leaves is kept, the links of its text found again.
    pub(crate) fn edit<T>(&mut self, i: usize, change: impl FnOnce(&mut Parsed) -> T) -> std::io::Result<T> {
        let mut note = self.get(i)?;
        note.body = self.body(i)?.into_owned();
        let out = change(&mut note);
        note.links = OnceLock::new();
        self.heads[i] = Head::of(&note);
        self.places[i] = self.keep(note);
        Ok(out)
    }

    /// Writes all of `note` but its head to the store.
    fn keep(&mut self, note: Parsed) -> Place {
        // Strings, booleans and numbers always make JSON; were one not to, reading the note back would fail and
        // say so (the import stops), rather than lose it here.
        let rest = serde_json::to_vec(&RestOut {
            shown: &note.shown,
            meta: &note.meta,
            hash: &note.hash,
            links: note.links(),
            notices: &note.notices,
        })
        .unwrap_or_default();
        Place {
            rest: self.store.put(&rest),
            body: self.store.put(note.body.as_bytes()),
        }
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
    type Target = [Head];

    fn deref(&self) -> &[Head] {
        &self.heads
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
    pub(crate) links: OnceLock<Vec<Link>>,
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
#[derive(Clone, Serialize, Deserialize)]
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
    fn notes_leave_memory_and_come_back_whole() {
        let mut notes = Notes::default();
        // Enough to be written to the file several times over, with text that is not ASCII.
        let big = "Grüße, [[Zweite]] und ![Bild](a.png) ".repeat(9_000);
        for i in 0..40 {
            let mut one = note(&format!("n{i}.md"), &format!("{i}: {big}"));
            one.meta.aliases = vec![format!("alias {i}")];
            one.meta.completed = Some(None);
            one.meta.created = Some(quire_core::Timestamp(i64::MIN + 1));
            one.notices = vec!["said".to_owned()];
            notes.push(one);
        }
        notes.push(note("empty.md", ""));
        assert!(
            notes.store.written > 0 && notes.store.pending.len() < FLUSH_AT,
            "most of it is in the file"
        );
        for i in [0, 17, 39] {
            assert_eq!(notes.body(i).unwrap(), format!("{i}: {big}"));
            assert_eq!(notes[i].aliases, [format!("alias {i}")]);
            let back = notes.get(i).unwrap();
            assert_eq!(
                (back.rel.as_str(), back.body.as_str()),
                (format!("n{i}.md").as_str(), "")
            );
            // Open (not done, not "no task"), and a time outside RFC 3339's years, as they went.
            assert_eq!(back.meta.completed, Some(None));
            assert_eq!(back.meta.created, Some(quire_core::Timestamp(i64::MIN + 1)));
            assert_eq!(back.notices, ["said"]);
            // The links were found before the text left.
            assert_eq!(back.links().len(), 9_000 * 2);
        }
        assert_eq!(notes.body(40).unwrap(), "");
        assert_eq!(notes.get(40).unwrap().meta.completed, None);
        let length = notes
            .edit(17, |n| {
                n.title = "Renamed".to_owned();
                n.body = format!("now [[Other]] after {}", n.body.len());
                n.notices.push("edited".to_owned());
                n.body.len()
            })
            .unwrap();
        assert_eq!(
            notes.body(17).unwrap(),
            format!("now [[Other]] after {}", big.len() + 4)
        );
        assert_eq!(notes.body(17).unwrap().len(), length);
        assert_eq!(notes[17].title, "Renamed");
        let back = notes.get(17).unwrap();
        assert_eq!((back.links().len(), back.notices.len()), (1, 2));
        assert_eq!(notes.body(16).unwrap(), format!("16: {big}"));
    }

    #[test]
    fn without_a_file_everything_stays_readable_in_memory() {
        let mut notes = Notes::default();
        notes.store.stuck = true;
        let big = "x".repeat(FLUSH_AT);
        for i in 0..3 {
            notes.push(note(&format!("n{i}.md"), &format!("{i}{big}")));
        }
        assert!(notes.store.file.is_none() && notes.store.written == 0);
        assert_eq!(notes.body(2).unwrap(), format!("2{big}"));
        assert_eq!(notes.get(1).unwrap().rel, "n1.md");
    }
}
