//! The text of an ENEX file read straight from the file after each piece of markup (the XML reader's own events
//! would hold a text of any size whole): kept up to a limit, decoded into a resource's file, or read through.

use super::resource::ResourceFile;

/// Where the text being read goes.
pub(super) enum Sink<'a> {
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
pub(super) fn read_text(
    reader: &mut quick_xml::Reader<LookAhead<std::fs::File>>,
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
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
///
/// A CDATA section opened inside a CDATA section is text of the outer one, its end included: Evernote 10.19 wrote
/// `<![CDATA[>]]>` inside a note's content, whose first `]]>` would otherwise end the content there and leave the
/// rest of the note to be read as the export's own markup (a damaged file).
fn read_through(
    stream: &mut quick_xml::reader::BinaryStream<'_, LookAhead<std::fs::File>>,
    close: &[u8],
    sink: &mut Sink<'_>,
) -> std::io::Result<()> {
    use std::io::BufRead as _;
    let mut in_entity = false;
    let nests = close == CDATA_CLOSE;
    let mut depth = 0usize;
    // Enough bytes that an opening or an end split between two reads is seen whole.
    let window = if nests { CDATA_OPEN.len() } else { close.len() };
    loop {
        let available = stream.get_mut().peek(window)?;
        if available.len() < close.len() {
            // The file ends inside the section: the XML reader says where.
            let rest = available.len();
            stream.consume(rest);
            return Ok(());
        }
        let found = available.windows(close.len()).position(|w| w == close);
        let opened = if nests {
            available.windows(CDATA_OPEN.len()).position(|w| w == CDATA_OPEN)
        } else {
            None
        };
        match (opened, found) {
            (Some(open), found) if found.is_none_or(|end| open < end) => {
                sink.take(&available[..open + CDATA_OPEN.len()], true, &mut in_entity);
                stream.consume(open + CDATA_OPEN.len());
                depth += 1;
            }
            (_, Some(at)) if depth > 0 => {
                sink.take(&available[..at + close.len()], true, &mut in_entity);
                stream.consume(at + close.len());
                depth -= 1;
            }
            (_, Some(at)) => {
                sink.take(&available[..at], true, &mut in_entity);
                stream.consume(at + close.len());
                return Ok(());
            }
            (_, None) => {
                // Without an end or an opening in view, all but the last bytes are text (they may begin one).
                let taken = available.len() + 1 - window.min(available.len());
                sink.take(&available[..taken], true, &mut in_entity);
                stream.consume(taken);
            }
        }
    }
}

/// The text of the element being read, gathered piece by piece; past its limit nothing more is kept and what was
/// kept is let go, so an element of any size holds no more memory than its limit.
#[derive(Default)]
pub(super) struct Gathered {
    bytes: Vec<u8>,
    /// More than the limit was there.
    pub(super) over: bool,
}

impl Gathered {
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.over = false;
    }

    /// The text gathered (lossy where it is not UTF-8), leaving nothing behind.
    pub(super) fn take(&mut self) -> String {
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

const CDATA_OPEN: &[u8] = b"<![CDATA[";
const CDATA_CLOSE: &[u8] = b"]]>";
const COMMENT_OPEN: &[u8] = b"<!--";
const COMMENT_CLOSE: &[u8] = b"-->";

/// The file under the XML reader, read through a buffer that can look a few bytes ahead without taking them (to
/// tell a CDATA section from the markup that ends a text).
pub(super) struct LookAhead<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
}

impl<R: std::io::Read> LookAhead<R> {
    pub(super) fn new(inner: R) -> LookAhead<R> {
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
