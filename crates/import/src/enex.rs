//! Importing an Evernote export (ENEX): an XML file of notes, each with its ENML content and its resources.
//!
//! The file is read as a stream, a note at a time, so a large export does not sit in memory whole. Each note's ENML
//! (XHTML with Evernote's own elements) becomes Markdown through htmd: `<en-media>` becomes an image or a link to
//! the resource with that MD5 hash, `<en-todo>` a task-list checkbox, `<en-crypt>` a line saying what was left out.
//! Resources are decoded from base64 into a temporary folder as they are read and become attachments of their
//! notes (linked from the text or not). No element's text is held in memory whole: the reader's own events would
//! hold a text of any size, so after each piece of markup the text is read straight from the file, a resource's
//! decoded into its file, a note's content kept up to [`MAX_CONTENT`], anything else up to 64 KiB or not at all.
//! Tags and times are kept; a note with a reminder is a to-do, completed when the reminder was done (as Joplin reads
//! them). The notes go into a notebook named after the file, as Evernote exports one notebook per file.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine as _;
use md5::Md5;
use quick_xml::events::Event;
use quire_core::Timestamp;
use sha2::{Digest, Sha256};

use crate::Error;
use crate::Outcome;
use crate::folder::{Parsed, Source};
use crate::frontmatter::FrontMatter;
use quire_core::hex;

/// What is gathered of one `<note>`.
#[derive(Default)]
struct RawNote {
    title: String,
    content: String,
    /// Its ENML was longer than [`MAX_CONTENT`]: read through, not kept.
    content_too_long: bool,
    created: String,
    updated: String,
    tags: Vec<String>,
    author: String,
    source_url: String,
    reminder_time: String,
    reminder_done: String,
    /// The resource being read.
    resource: Option<RawResource>,
    /// The resources read, each decoded and written to a file as soon as it ends (or why it was not).
    resources: Vec<Result<Stored, String>>,
}

#[derive(Default)]
struct RawResource {
    /// Its `<data>`, decoded into a file as it is read.
    data: Option<ResourceFile>,
    mime: String,
    file_name: String,
}

/// A resource decoded into the temporary folder.
struct Stored {
    /// MD5 of its bytes, as ENML names it.
    hash: String,
    /// Its file in the temporary folder (`HASH.ext`, beside the note's other files).
    file_name: String,
    title: String,
    mime: String,
}

/// A note's ENML longer than this is not read (its Markdown could not be a note).
const MAX_CONTENT: usize = 4 * quire_core::MAX_BODY_BYTES;

/// Reads an ENEX file.
pub(crate) fn read(source: &Path) -> Result<Source, Error> {
    let path = source.canonicalize().map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    let file = std::fs::File::open(&path).map_err(|e| Error::Source {
        path: source.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut out = Source::unpacked(path.display().to_string(), "quire-enex-")?;
    // One notebook, named after the file; its key is a folder name no title can make.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "Evernote".into());
    let folder = "enex".to_owned();
    std::fs::create_dir(out.root.join(&folder)).map_err(|e| Error::Io {
        context: "cannot make a folder for the export's attachments".into(),
        source: e,
    })?;
    out.notebooks.insert(
        folder.clone(),
        FrontMatter {
            title: Some(stem),
            ..FrontMatter::default()
        },
    );
    out.folders.push(folder.clone());
    let converter = converter();

    let mut reader = quick_xml::Reader::from_reader(LookAhead::new(file));
    reader.config_mut().allow_dangling_amp = true;
    let mut buf = Vec::new();
    // Element names from the top; the text of the innermost element of interest is gathered.
    let mut path: Vec<String> = Vec::new();
    let mut note: Option<RawNote> = None;
    let mut text = Gathered::default();
    let mut seen_export = false;
    let mut count = 0usize;
    let mut keys: HashMap<String, usize> = HashMap::new();
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                out.fail(
                    source.display().to_string(),
                    Outcome::Failed,
                    format!(
                        "the file is damaged or cut short after {count} notes, nothing after was read: {e} \
                         (at byte {})",
                        reader.buffer_position()
                    ),
                );
                break;
            }
        };
        match event {
            Event::Start(e) => {
                let name = e.name().as_ref().to_owned();
                if name == "en-export" {
                    seen_export = true;
                }
                if name == "note" && path.last().is_some_and(|p| p == "en-export") {
                    note = Some(RawNote::default());
                }
                if name == "resource"
                    && let Some(n) = note.as_mut()
                {
                    n.resource = Some(RawResource::default());
                }
                if name == "data"
                    && path.last().is_some_and(|p| p == "resource")
                    && let Some(n) = note.as_mut()
                    && let Some(r) = n.resource.as_mut()
                    && r.data.is_none()
                {
                    let part = out
                        .root
                        .join(&folder)
                        .join(format!("resource-{}.part", n.resources.len() + 1));
                    r.data = Some(ResourceFile::create(part));
                }
                path.push(name);
                text.clear();
            }
            Event::Empty(_) => text.clear(),
            Event::End(_) => {
                let name = path.pop().unwrap_or_default();
                let parent = path.last().map_or("", String::as_str);
                if parent == "en-export" && name == "note" {
                    if let Some(done) = note.take() {
                        count += 1;
                        finish(done, count, &folder, &converter, &mut keys, &mut out);
                    }
                } else if let Some(n) = note.as_mut() {
                    let over = text.over;
                    let value = text.take();
                    match (parent, name.as_str()) {
                        ("note", "title") => n.title = value,
                        ("note", "content") => {
                            n.content_too_long |= over;
                            if !over {
                                n.content = value;
                            }
                        }
                        ("note", "created") => n.created = value,
                        ("note", "updated") => n.updated = value,
                        ("note", "tag") => n.tags.push(value.trim().to_owned()),
                        ("note-attributes", "author") => n.author = value,
                        ("note-attributes", "source-url") => n.source_url = value,
                        ("note-attributes", "reminder-time") => n.reminder_time = value,
                        ("note-attributes", "reminder-done-time") => n.reminder_done = value,
                        ("resource", "mime") => {
                            if let Some(r) = n.resource.as_mut() {
                                r.mime = value.trim().to_owned();
                            }
                        }
                        ("resource-attributes", "file-name") => {
                            if let Some(r) = n.resource.as_mut() {
                                r.file_name = value.trim().to_owned();
                            }
                        }
                        ("note", "resource") => {
                            if let Some(r) = n.resource.take() {
                                let number = n.resources.len() + 1;
                                n.resources.push(store(r, number, &folder, &mut out));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Event::Eof => {
                // Elements still open: the file ends in the middle of one (the note being read is lost).
                if !path.is_empty() && seen_export {
                    out.fail(
                        source.display().to_string(),
                        Outcome::Failed,
                        format!(
                            "the file is damaged or cut short after {count} notes (it ends inside <{}>): \
                             the note it was reading is not imported",
                            path.last().map_or("", String::as_str)
                        ),
                    );
                }
                break;
            }
            // Text reaches the reader only before the first element; after that it is read below.
            _ => {}
        }
        buf.clear();
        let note_open = note.is_some();
        // The text after each piece of markup is read here, straight from the file, keeping what the element it
        // belongs to may hold: the reader's own events would hold a text of any size in memory whole.
        let resource = note
            .as_mut()
            .and_then(|n| n.resource.as_mut())
            .and_then(|r| r.data.as_mut());
        let mut sink = match (text_limit(&path, note_open), resource) {
            (Field::Base64, Some(file)) => Sink::Base64(file),
            (Field::Text(max), _) => Sink::Text(&mut text, max),
            _ => Sink::Skip,
        };
        if let Err(e) = read_text(&mut reader, &mut sink) {
            out.fail(
                source.display().to_string(),
                Outcome::Failed,
                format!("the file could not be read after {count} notes, nothing after was read: {e}"),
            );
            break;
        }
    }
    if !seen_export {
        return Err(Error::Source {
            path: source.display().to_string(),
            reason: "not an Evernote export: it has no <en-export> element".into(),
        });
    }
    Ok(out)
}

/// The most text kept of a note's other fields (title, times, tags, attributes): more is read through.
const MAX_FIELD: usize = 64 * 1024;

/// How the text of the element at the end of `path` is read: nothing is kept outside a note or of an element quire
/// does not use (its text is read through, never held).
fn text_limit(path: &[String], in_note: bool) -> Field {
    let [.., parent, name] = path else {
        return Field::Skip;
    };
    if !in_note {
        return Field::Skip;
    }
    match (parent.as_str(), name.as_str()) {
        ("resource", "data") => Field::Base64,
        ("note", "content") => Field::Text(MAX_CONTENT),
        ("note", "title" | "created" | "updated" | "tag")
        | ("note-attributes", "author" | "source-url" | "reminder-time" | "reminder-done-time")
        | ("resource", "mime")
        | ("resource-attributes", "file-name") => Field::Text(MAX_FIELD),
        _ => Field::Skip,
    }
}

/// What an element's text is.
#[derive(Clone, Copy)]
enum Field {
    /// Not used.
    Skip,
    /// Text kept up to this many bytes as written.
    Text(usize),
    /// A resource's base64.
    Base64,
}

/// Where the text being read goes.
enum Sink<'a> {
    /// Nowhere: it is read through.
    Skip,
    /// Kept, up to this many bytes (as written): past them, nothing more.
    Text(&'a mut Gathered, usize),
    /// Decoded into a resource's file as it comes.
    Base64(&'a mut ResourceFile),
}

impl Sink<'_> {
    /// A piece of the text: character data (`cdata` false, where an entity such as `&#13;` in base64 is not data)
    /// or a CDATA section's.
    fn take(&mut self, piece: &[u8], cdata: bool, in_entity: &mut bool) {
        match self {
            Sink::Skip => {}
            Sink::Text(gathered, max) => gathered.keep(piece, *max),
            Sink::Base64(file) => file.push(piece, cdata, in_entity),
        }
    }

    /// Character data kept from `start` on has ended: its entities are resolved.
    fn end_run(&mut self, start: usize) {
        if let Sink::Text(gathered, _) = self {
            gathered.resolve_entities(start);
        }
    }

    fn run_start(&self) -> usize {
        match self {
            Sink::Text(gathered, _) => gathered.bytes.len(),
            _ => 0,
        }
    }
}

/// Reads the text that follows the markup just read, straight from the file, up to the next markup that is not a
/// CDATA section (left for the XML reader) or to the end of the file. Nothing is held but what `sink` keeps.
fn read_text(reader: &mut quick_xml::Reader<LookAhead<std::fs::File>>, sink: &mut Sink<'_>) -> std::io::Result<()> {
    use std::io::BufRead as _;
    let mut stream = reader.stream();
    let mut run_start = sink.run_start();
    let mut in_entity = false;
    loop {
        let available = stream.fill_buf()?;
        if available.is_empty() {
            break;
        }
        let end = available.iter().position(|&b| b == b'<');
        let taken = end.unwrap_or(available.len());
        sink.take(&available[..taken], false, &mut in_entity);
        stream.consume(taken);
        if end.is_none() {
            continue;
        }
        // A CDATA section is text; a comment is not, and is read through here too, since the XML reader would
        // hold one of any size whole.
        let ahead = stream.get_mut().peek(CDATA_OPEN.len())?;
        let cdata = ahead.starts_with(CDATA_OPEN);
        if !cdata && !ahead.starts_with(COMMENT_OPEN) {
            break;
        }
        sink.end_run(run_start);
        if cdata {
            stream.consume(CDATA_OPEN.len());
            read_through(&mut stream, CDATA_CLOSE, sink)?;
        } else {
            stream.consume(COMMENT_OPEN.len());
            read_through(&mut stream, COMMENT_CLOSE, &mut Sink::Skip)?;
        }
        run_start = sink.run_start();
    }
    sink.end_run(run_start);
    Ok(())
}

/// Reads a CDATA section's text (or a comment's) after its opening, through `close` (`]]>`, `-->`).
fn read_through(
    stream: &mut quick_xml::reader::BinaryStream<'_, LookAhead<std::fs::File>>,
    close: &[u8],
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    use std::io::BufRead as _;
    let mut in_entity = false;
    loop {
        // As many bytes as `close` at least, so one split between two reads is seen whole.
        let available = stream.get_mut().peek(close.len())?;
        if available.len() < close.len() {
            // The file ends inside the section: the XML reader says where.
            let rest = available.len();
            stream.consume(rest);
            return Ok(());
        }
        let found = available.windows(close.len()).position(|w| w == close);
        // Without the end in view, all but the last bytes are text (they may begin the end).
        let taken = found.unwrap_or(available.len() + 1 - close.len());
        sink.take(&available[..taken], true, &mut in_entity);
        match found {
            Some(at) => {
                stream.consume(at + close.len());
                return Ok(());
            }
            None => stream.consume(taken),
        }
    }
}

/// The text of the element being read, gathered piece by piece; past its limit nothing more is kept and what was
/// kept is let go, so an element of any size holds no more memory than its limit.
#[derive(Default)]
struct Gathered {
    bytes: Vec<u8>,
    /// More than the limit was there.
    over: bool,
}

impl Gathered {
    fn clear(&mut self) {
        self.bytes.clear();
        self.over = false;
    }

    /// The text gathered (lossy where it is not UTF-8), leaving nothing behind.
    fn take(&mut self) -> String {
        let bytes = std::mem::take(&mut self.bytes);
        self.over = false;
        String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    fn keep(&mut self, piece: &[u8], limit: usize) {
        if self.over || piece.is_empty() {
            return;
        }
        if self.bytes.len() + piece.len() > limit {
            self.over = true;
            self.bytes = Vec::new();
        } else {
            self.bytes.extend_from_slice(piece);
        }
    }

    /// Resolves the entities (`&amp;`, `&#233;`) of the character data kept from `start` on; an unknown entity or
    /// a lone `&` leaves the text as written.
    fn resolve_entities(&mut self, start: usize) {
        let Some(run) = self.bytes.get(start..) else {
            return;
        };
        if !run.contains(&b'&') {
            return;
        }
        let Ok(run) = std::str::from_utf8(run) else {
            return;
        };
        if let Ok(resolved) = quick_xml::escape::unescape(run) {
            let resolved = resolved.into_owned();
            self.bytes.truncate(start);
            self.bytes.extend_from_slice(resolved.as_bytes());
        }
    }
}

/// How much base64 is decoded at a time.
const DECODE_CHUNK: usize = 64 * 1024;

/// A resource's `<data>`, decoded from base64 into a file of the temporary folder as it is read, and hashed on the
/// way: a resource of any size takes a few KiB of memory, and one over the limit is let go as soon as it is.
struct ResourceFile {
    path: std::path::PathBuf,
    file: Option<std::io::BufWriter<std::fs::File>>,
    md5: Md5,
    /// Base64 characters not decoded yet (fewer than a chunk and four).
    pending: Vec<u8>,
    size: u64,
    /// Why it cannot be attached, once that is known.
    problem: Option<String>,
}

impl ResourceFile {
    fn create(path: std::path::PathBuf) -> ResourceFile {
        let (file, problem) = match std::fs::File::create(&path) {
            Ok(file) => (Some(std::io::BufWriter::new(file)), None),
            Err(e) => (None, Some(format!("cannot write it to a temporary file: {e}"))),
        };
        ResourceFile {
            path,
            file,
            md5: Md5::default(),
            pending: Vec::new(),
            size: 0,
            problem,
        }
    }

    /// Takes base64 text: white space is not data, nor (outside CDATA) an entity such as `&#13;`.
    fn push(&mut self, text: &[u8], cdata: bool, in_entity: &mut bool) {
        if self.problem.is_some() {
            return;
        }
        for &b in text {
            match b {
                b'&' if !cdata => *in_entity = true,
                b';' if *in_entity => *in_entity = false,
                _ if *in_entity || b.is_ascii_whitespace() => {}
                _ => self.pending.push(b),
            }
        }
        if self.pending.len() >= DECODE_CHUNK {
            self.decode(false);
        }
    }

    /// Decodes what is pending: whole groups of four characters, or (`last`) everything.
    fn decode(&mut self, last: bool) {
        let whole = if last {
            self.pending.len()
        } else {
            self.pending.len() / 4 * 4
        };
        if self.problem.is_none() {
            match base64::engine::general_purpose::STANDARD.decode(&self.pending[..whole]) {
                Ok(bytes) => {
                    self.size += bytes.len() as u64;
                    if self.size > quire_core::MAX_ATTACHMENT_BYTES as u64 {
                        self.problem = Some("more than an attachment may hold".into());
                    } else {
                        self.md5.update(&bytes);
                        if let Some(file) = self.file.as_mut()
                            && let Err(e) = std::io::Write::write_all(file, &bytes)
                        {
                            self.problem = Some(format!("cannot write it to a temporary file: {e}"));
                        }
                    }
                }
                Err(e) => self.problem = Some(format!("its data is not valid base64 ({e})")),
            }
            if self.problem.is_some() {
                // Nothing more is written: the file goes now, not at the end of the resource.
                self.file = None;
                let _ = std::fs::remove_file(&self.path);
            }
        }
        self.pending.drain(..whole);
    }

    /// The file, complete: its path, MD5 (as hex) and size; or why it cannot be attached (the file is removed).
    fn finish(mut self) -> Result<(std::path::PathBuf, String, u64), String> {
        self.decode(true);
        if let Some(file) = self.file.take()
            && let Err(e) = file.into_inner()
            && self.problem.is_none()
        {
            self.problem = Some(format!("cannot write it to a temporary file: {e}"));
        }
        if let Some(problem) = self.problem {
            let _ = std::fs::remove_file(&self.path);
            return Err(problem);
        }
        Ok((self.path, hex(&self.md5.finalize()), self.size))
    }
}

const CDATA_OPEN: &[u8] = b"<![CDATA[";
const CDATA_CLOSE: &[u8] = b"]]>";
const COMMENT_OPEN: &[u8] = b"<!--";
const COMMENT_CLOSE: &[u8] = b"-->";

/// The file under the XML reader, read through a buffer that can look a few bytes ahead without taking them (to
/// tell a CDATA section from the markup that ends a text).
struct LookAhead<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<R: std::io::Read> LookAhead<R> {
    fn new(inner: R) -> LookAhead<R> {
        LookAhead {
            inner,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// The bytes buffered, at least `n` of them unless the file ends first (`n` is at most the buffer's size).
    fn peek(&mut self, n: usize) -> std::io::Result<&[u8]> {
        if self.end - self.start < n {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            while self.end < n.min(self.buf.len()) {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(0) => break,
                    Ok(read) => self.end += read,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.start..self.end])
    }
}

impl<R: std::io::Read> std::io::Read for LookAhead<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let available = std::io::BufRead::fill_buf(self)?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::Read> std::io::BufRead for LookAhead<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            return self.peek(1);
        }
        Ok(&self.buf[self.start..self.end])
    }

    fn consume(&mut self, amount: usize) {
        self.start = (self.start + amount).min(self.end);
    }
}

/// A resource, decoded and written.
struct Media {
    mime: String,
    title: String,
}

/// Turns a gathered note into a [`Parsed`] note with its resources written to files.
fn finish(
    raw: RawNote,
    count: usize,
    folder: &str,
    converter: &htmd::HtmlToMarkdown,
    keys: &mut HashMap<String, usize>,
    out: &mut Source,
) {
    let title = raw.title.trim().to_owned();
    let title = if title.is_empty() { "Untitled".to_owned() } else { title };
    // The note's key: its creation time (Evernote's export has no ids; a title can change), with a number when
    // several notes share it. The report names it by title and time.
    let base = format!("created {}", raw.created.trim());
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
    if !raw.author.trim().is_empty() {
        meta.labels.push(("author".into(), raw.author.trim().to_owned()));
    }
    if !raw.source_url.trim().is_empty() {
        meta.labels
            .push(("source_url".into(), raw.source_url.trim().to_owned()));
    }
    let mut warnings = Vec::new();
    let mut media: HashMap<String, Media> = HashMap::new();
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
        meta.attachments.push(stored.file_name.clone());
        meta.attachment_titles
            .push((stored.file_name.clone(), stored.title.clone()));
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
        return;
    }
    let body = match enml_to_markdown(&raw.content, &media, converter) {
        Ok(body) => body,
        Err(reason) => {
            out.fail(shown, Outcome::Failed, format!("note {count}: {reason}"));
            return;
        }
    };
    if body.len() > quire_core::MAX_BODY_BYTES {
        out.fail(
            shown,
            Outcome::Failed,
            format!("{} bytes of text: more than a note may hold", body.len()),
        );
        return;
    }
    if !warnings.is_empty() {
        // An attachment lost is a failure (exit code 1), as a resource a JEX cannot unpack is: a script must see
        // it. The note itself is imported without it.
        out.failures.push(crate::ItemReport {
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
    });
}

/// Names a decoded resource by its MD5 in the temporary folder (once per content); or says why it is not attached.
fn store(resource: RawResource, number: usize, folder: &str, out: &mut Source) -> Result<Stored, String> {
    let label = if resource.file_name.is_empty() {
        format!("attachment {number}")
    } else {
        resource.file_name.clone()
    };
    let (part, hash, size) = resource
        .data
        .ok_or_else(|| "it has no data".to_owned())
        .and_then(ResourceFile::finish)
        .map_err(|reason| format!("{label} not attached: {reason}"))?;
    let extension = extension_for(&resource.file_name, &resource.mime);
    let file_name = format!("{hash}.{extension}");
    let rel_file = format!("{folder}/{file_name}");
    if out.files.contains_key(&rel_file) {
        let _ = std::fs::remove_file(&part);
    } else {
        std::fs::rename(&part, out.root.join(&rel_file))
            .map_err(|e| format!("{label} not attached: cannot write it to a temporary file: {e}"))?;
        out.files.insert(rel_file.clone(), size);
        out.targets.insert(hash.clone(), rel_file);
    }
    // A title with an extension, so the attachment's type is known.
    let title = if resource.file_name.is_empty() {
        format!("attachment-{number}.{extension}")
    } else if resource.file_name.contains('.') {
        resource.file_name.clone()
    } else {
        format!("{}.{extension}", resource.file_name)
    };
    Ok(Stored {
        hash,
        file_name,
        title,
        mime: resource.mime,
    })
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

/// A plain extension for a resource's file: its name's, or one for its media type.
fn extension_for(file_name: &str, mime: &str) -> String {
    let from_name = file_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_lowercase())
        .filter(|e| !e.is_empty() && e.len() <= 10 && e.bytes().all(|b| b.is_ascii_alphanumeric()));
    from_name.unwrap_or_else(|| {
        match mime {
            "image/png" => "png",
            "image/jpeg" => "jpg",
            "image/gif" => "gif",
            "image/webp" => "webp",
            "image/svg+xml" => "svg",
            "application/pdf" => "pdf",
            "text/plain" => "txt",
            "text/html" => "html",
            "audio/mpeg" => "mp3",
            "audio/wav" => "wav",
            "video/mp4" => "mp4",
            _ => "bin",
        }
        .to_owned()
    })
}

/// Checkbox marks put in the HTML where `<en-todo>` was, turned into `[x]` / `[ ]` after the conversion: characters
/// of the private use area, removed from the text before, so only the marks are left.
const CHECKED: char = '\u{F8F0}';
const UNCHECKED: char = '\u{F8F1}';

/// The HTML to Markdown converter: `-` bullets, one space after list markers, `---` rules; scripts and styles
/// dropped.
pub(crate) fn converter() -> htmd::HtmlToMarkdown {
    htmd::HtmlToMarkdown::builder()
        .options(htmd::options::Options {
            bullet_list_marker: htmd::options::BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            hr_style: htmd::options::HrStyle::Dashes,
            ..htmd::options::Options::default()
        })
        .skip_tags(vec!["script", "style", "head", "title"])
        .build()
}

/// An HTML text (a Joplin web clip, say) as Markdown.
pub(crate) fn html_to_markdown(html: &str, converter: &htmd::HtmlToMarkdown) -> Result<String, String> {
    let html = html.replace([CHECKED, UNCHECKED], "");
    converter
        .convert(&html)
        .map_err(|e| format!("its HTML could not be converted: {e}"))
}

/// A note's ENML as Markdown, its media pointing at the resources by hash (`:/HASH`, turned into attachment links
/// once they are written).
fn enml_to_markdown(
    enml: &str,
    media: &HashMap<String, Media>,
    converter: &htmd::HtmlToMarkdown,
) -> Result<String, String> {
    let enml = enml.replace([CHECKED, UNCHECKED], "");
    let mut reader = quick_xml::Reader::from_str(&enml);
    reader.config_mut().allow_dangling_amp = true;
    reader.config_mut().check_end_names = false;
    let mut html = String::with_capacity(enml.len());
    // Inside <en-crypt>: its text is cipher text, left out.
    let mut crypt = 0usize;
    // Per open table, whether its first row is still to come or being read: Evernote's tables have no header
    // cells, and a Markdown table needs a header row, so the first row's cells become header cells.
    let mut tables: Vec<FirstRow> = Vec::new();
    // Open elements: the name, whether its tags are written, and (for a list item) how many `<div>`s it has had.
    // Evernote wraps each list item's text in a `<div>`, which would make every item a paragraph of its own.
    let mut open: Vec<(String, bool, usize)> = Vec::new();
    // An Evernote 10 checklist item's mark, until its text comes.
    let mut mark: Option<char> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("its content is not well-formed ENML: {e}"))?;
        let starts = matches!(event, Event::Start(_));
        match event {
            Event::Start(e) | Event::Empty(e) if matches!(e.name().as_ref(), "en-media" | "en-todo" | "en-crypt") => {
                let attribute = |name: &str| {
                    e.try_get_attribute(name)
                        .ok()
                        .flatten()
                        .and_then(|a| {
                            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .ok()
                                .map(|v| v.into_owned())
                        })
                        .unwrap_or_default()
                };
                match e.name().as_ref() {
                    "en-todo" => html.push(if attribute("checked") == "true" {
                        CHECKED
                    } else {
                        UNCHECKED
                    }),
                    "en-media" => {
                        let hash = attribute("hash").to_lowercase();
                        let (mime, title) = match media.get(&hash) {
                            Some(m) => (m.mime.clone(), m.title.clone()),
                            None => (attribute("type"), "attachment".to_owned()),
                        };
                        let title = quick_xml::escape::escape(title.as_str()).into_owned();
                        if mime.starts_with("image/") {
                            html.push_str(&format!("<img src=\":/{hash}\" alt=\"{title}\">"));
                        } else {
                            html.push_str(&format!("<a href=\":/{hash}\">{title}</a>"));
                        }
                    }
                    _ => {
                        html.push_str("<p>(encrypted text: not imported)</p>");
                        // `<en-crypt/>` has nothing inside to leave out.
                        if starts {
                            crypt += 1;
                        }
                    }
                }
            }
            Event::End(e) if matches!(e.name().as_ref(), "en-media" | "en-todo") => {}
            Event::End(e) if e.name().as_ref() == "en-crypt" => crypt = crypt.saturating_sub(1),
            _ if crypt > 0 => {}
            Event::Start(e) => {
                let tag = e.name().as_ref().to_owned();
                match tag.as_str() {
                    "table" => tables.push(FirstRow::Ahead),
                    "tr" => {
                        if let Some(t) = tables.last_mut() {
                            *t = if *t == FirstRow::Ahead {
                                FirstRow::Reading
                            } else {
                                FirstRow::Read
                            };
                        }
                    }
                    _ => {}
                }
                let in_item = tag == "div" && open.last().is_some_and(|(t, ..)| t == "li");
                if in_item {
                    // The item's first `<div>` is left out, a later one starts a new line of the item.
                    if let Some((_, _, divs)) = open.last_mut() {
                        if *divs > 0 {
                            html.push_str("<br>");
                        }
                        *divs += 1;
                    }
                    open.push((tag, false, 0));
                    continue;
                }
                open.push((tag.clone(), true, 0));
                if tag == "en-note" {
                    html.push_str("<div>");
                } else if tag == "td" && tables.last() == Some(&FirstRow::Reading) {
                    html.push_str("<th>");
                } else {
                    html.push('<');
                    html.push_str(&e);
                    html.push('>');
                }
                // Evernote 10 writes a checklist as `<ul style="--en-todo:true">` with `<li style="--en-checked:…">`.
                // The mark goes before the item's first text (often inside a `<div>` of its own).
                if tag == "li" {
                    let style: String = e.chars().filter(|c| !c.is_whitespace()).collect();
                    if style.contains("--en-checked:true") {
                        mark = Some(CHECKED);
                    } else if style.contains("--en-checked:false") {
                        mark = Some(UNCHECKED);
                    }
                }
            }
            Event::Empty(e) => {
                let tag = e.name().as_ref().to_owned();
                html.push('<');
                html.push_str(if tag == "en-note" { "div" } else { &e });
                html.push('>');
                if !is_void(&tag) {
                    html.push_str(&format!("</{}>", if tag == "en-note" { "div" } else { &tag }));
                }
            }
            Event::End(e) => {
                let tag = e.name().as_ref().to_owned();
                if open.pop().is_some_and(|(_, written, _)| !written) {
                    continue;
                }
                let in_first_row = tables.last() == Some(&FirstRow::Reading);
                match tag.as_str() {
                    "table" => {
                        tables.pop();
                    }
                    "tr" if in_first_row => {
                        if let Some(t) = tables.last_mut() {
                            *t = FirstRow::Read;
                        }
                    }
                    _ => {}
                }
                let tag = match tag.as_str() {
                    "en-note" => "div",
                    "td" if in_first_row => "th",
                    other => other,
                };
                html.push_str(&format!("</{tag}>"));
            }
            Event::Text(t) => {
                if !t.trim().is_empty()
                    && let Some(mark) = mark.take()
                {
                    html.push(mark);
                }
                html.push_str(&t);
            }
            Event::GeneralRef(r) => {
                html.push('&');
                html.push_str(&r);
                html.push(';');
            }
            Event::CData(t) => html.push_str(&quick_xml::escape::escape(&*t)),
            Event::Eof => break,
            // The declaration, doctype, comments, processing instructions.
            _ => {}
        }
    }
    let markdown = converter
        .convert(&html)
        .map_err(|e| format!("its content could not be converted: {e}"))?;
    Ok(tidy(&checkboxes(&markdown)))
}

/// Blank-looking lines made blank, no two blank lines in a row, and no blank line between two items of a list
/// (Evernote's `<div>`s around each line make loose lists and stray line breaks).
fn tidy(markdown: &str) -> String {
    let lines: Vec<&str> = markdown
        .lines()
        .map(|l| if l.trim().is_empty() { "" } else { l })
        .collect();
    let item = |line: &str| {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        let bullet = text.starts_with("- ")
            || text.starts_with("* ")
            || text
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        bullet.then_some(indent)
    };
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            let previous = out.last().copied();
            if previous.is_none_or(str::is_empty) {
                continue;
            }
            let next = lines[i + 1..].iter().find(|l| !l.is_empty());
            if let (Some(a), Some(b)) = (previous.and_then(item), next.and_then(|l| item(l)))
                && a == b
            {
                continue;
            }
        }
        out.push(line);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Where a table's first row is, as its ENML is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FirstRow {
    Ahead,
    Reading,
    Read,
}

fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "br" | "hr"
            | "img"
            | "input"
            | "col"
            | "area"
            | "base"
            | "embed"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
    )
}

/// The checkbox marks as Markdown: a line starting with one (after a list bullet or not) becomes a task list
/// item; any other becomes `[x]` / `[ ]` in the text.
fn checkboxes(markdown: &str) -> String {
    if !markdown.contains([CHECKED, UNCHECKED]) {
        return markdown.to_owned();
    }
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.split_inclusive('\n') {
        let content = line.trim_start();
        let indent = &line[..line.len() - content.len()];
        let after_bullet = content
            .strip_prefix("- ")
            .or_else(|| content.strip_prefix("* "))
            .unwrap_or(content)
            .trim_start_matches('\\');
        let mut done = None;
        if let Some(rest) = after_bullet.strip_prefix(CHECKED) {
            done = Some(("x", rest));
        } else if let Some(rest) = after_bullet.strip_prefix(UNCHECKED) {
            done = Some((" ", rest));
        }
        let line = match done {
            Some((mark, rest)) => format!("{indent}- [{mark}] {}", rest.trim_start()),
            None => line.to_owned(),
        };
        out.push_str(&line.replace(CHECKED, "[x] ").replace(UNCHECKED, "[ ] "));
    }
    out
}
