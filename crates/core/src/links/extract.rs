//! Finding links in a body: the one scanner of `[[wikilinks]]`, `![[embeds]]` and Markdown links, code left out.

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
    pub(crate) fn as_str(self) -> &'static str {
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
        let mut scanner = Scanner {
            text: line.text,
            base: line.byte,
            found: &mut found,
            addresses: addresses.as_deref_mut(),
        };
        scanner.span(0, line.text.len());
    }
    found
}

/// One line being scanned, and what was found so far.
struct Scanner<'s, 'f> {
    text: &'s str,
    /// Where the line starts in the body.
    base: usize,
    found: &'f mut Vec<BodyLink>,
    addresses: Option<&'f mut Vec<LinkAddress>>,
}

impl Scanner<'_, '_> {
    /// Scans `text[from..to]`; returns whether it holds a Markdown link that is not an image (CommonMark: a link
    /// cannot hold another link, so the brackets around such a one are not a link).
    fn span(&mut self, from: usize, to: usize) -> bool {
        let bytes = &self.text.as_bytes()[..to];
        // No `[` after the last `](` opens a Markdown link, nor `[[` after the last `]]` a wikilink: a line of
        // brackets is not read again from each one.
        let last_close = self.text[..to].rfind("](");
        let last_wiki_close = self.text[..to].rfind("]]");
        let mut has_link = false;
        let mut i = from;
        while i < to {
            match bytes[i] {
                b'`' => i = skip_code_span(bytes, i),
                // `\[` is a bracket, not a link.
                b'\\' if bytes.get(i + 1).is_some_and(u8::is_ascii_punctuation) => i += 2,
                b'[' if bytes.get(i + 1) == Some(&b'[') && last_wiki_close.is_none_or(|close| i > close) => i += 2,
                b'[' if bytes.get(i + 1) == Some(&b'[') => i = self.wikilink(from, i, to),
                b'[' if last_close.is_none_or(|close| i > close) => i += 1,
                b'[' => {
                    let (next, link) = self.markdown(from, i, to);
                    has_link |= link;
                    i = next;
                }
                _ => i += 1,
            }
        }
        has_link
    }

    /// The wikilink or embed whose `[[` is at `i`; where to go on.
    fn wikilink(&mut self, from: usize, i: usize, to: usize) -> usize {
        let text = &self.text[..to];
        let embed = i > from && text.as_bytes()[i - 1] == b'!';
        let start = if embed { i - 1 } else { i };
        // The inner text holds no `[` and no line break: looking only that far keeps a line of `[[` without `]]`
        // linear.
        let bytes = text.as_bytes();
        let mut end = None;
        for (k, &b) in bytes.iter().enumerate().skip(i + 2) {
            match b {
                b'[' | b'\n' => break,
                b']' if bytes.get(k + 1) == Some(&b']') => {
                    end = Some(k - (i + 2));
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return i + 2;
        };
        let inner = &text[i + 2..i + 2 + end];
        if inner.contains(['[', '\n']) {
            return i + 2;
        }
        let (rest, label) = match inner.split_once('|') {
            // `[[Note\|alias]]`: the pipe escaped, as Obsidian writes it inside a table.
            Some((rest, label)) => (rest.strip_suffix('\\').unwrap_or(rest), Some(label.trim().to_owned())),
            None => (inner, None),
        };
        let (target, heading) = match rest.split_once('#') {
            Some((target, heading)) => (target, Some(heading.trim().to_owned())),
            None => (rest, None),
        };
        let after = i + 2 + end + 2;
        if !target.trim().is_empty() || heading.is_some() {
            self.found.push(BodyLink {
                kind: if embed { LinkKind::Embed } else { LinkKind::Wikilink },
                target: target.trim().to_owned(),
                heading,
                label,
                byte: self.base + start,
                len: after - start,
            });
        }
        after
    }

    /// The Markdown link or image whose `[` is at `i`, with the links inside its text; where to go on, and whether
    /// a link (not an image) was found.
    fn markdown(&mut self, from: usize, i: usize, to: usize) -> (usize, bool) {
        let image = i > from && self.text.as_bytes()[i - 1] == b'!';
        let start = if image { i - 1 } else { i };
        let Some(link) = markdown_link(&self.text[i..to]) else {
            return (i + 1, false);
        };
        // The links inside its text (an image inside a link: `[![pic](p.png)](page.md)`) come after it in the
        // list of links, before it in the list of addresses: both in the order they start.
        let at = self.found.len();
        let label_end = i + 1 + link.label.len();
        let inner_link = self.span(i + 1, label_end);
        if inner_link && !image {
            // `[a [b](c) d](e)`: the inner one is the link; the rest is text.
            return (label_end + 1, true);
        }
        if let Some(addresses) = self.addresses.as_deref_mut() {
            addresses.push(LinkAddress {
                url: link.url.to_owned(),
                byte: self.base + i + link.written.start,
                len: link.written.len(),
            });
        }
        for (prefix, kind) in [
            ("quire://note/", LinkKind::Note),
            ("quire://attachment/", LinkKind::Attachment),
        ] {
            if let Some(rest) = link.url.strip_prefix(prefix) {
                let (id, heading) = match rest.split_once('#') {
                    Some((id, heading)) => (id, Some(heading.to_owned())),
                    None => (rest, None),
                };
                if !id.is_empty() {
                    self.found.insert(
                        at,
                        BodyLink {
                            kind,
                            target: id.to_owned(),
                            heading,
                            label: Some(link.label.to_owned()).filter(|l| !l.is_empty()),
                            byte: self.base + start,
                            len: i + link.len - start,
                        },
                    );
                }
            }
        }
        (i + link.len, !image)
    }
}

/// Past the code span whose opening backticks are at `i` (closed by as many backticks); past the backticks alone
/// when nothing closes it (they are text then).
fn skip_code_span(bytes: &[u8], i: usize) -> usize {
    let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut j = i + run;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let closing = bytes[j..].iter().take_while(|b| **b == b'`').count();
            if closing == run {
                return j + closing;
            }
            j += closing;
        } else {
            j += 1;
        }
    }
    i + run
}

/// The longest link text looked at: a line of brackets that never close is not read to its end from each one.
const MAX_LABEL_BYTES: usize = 4_096;

/// A Markdown link found by [`markdown_link`].
struct MarkdownLink<'a> {
    /// The text between the brackets, as written.
    label: &'a str,
    /// The URL without its angle brackets.
    url: &'a str,
    /// Where the URL is written (angle brackets included), in bytes from the link's `[`.
    written: std::ops::Range<usize>,
    /// The link's length in bytes.
    len: usize,
}

/// `[label](url)`, `[label](<url with spaces>)` or `[label](url "title")` at the start of `text`, as CommonMark
/// reads it: brackets in the label balanced (`[a [b] c](x)`), parentheses in the URL balanced
/// (`[clip](Demo%20(1968).ogg)`), backslash escapes skipped. A URL with spaces and no angle brackets
/// (`[x](Other note.md)`), which CommonMark does not take but Obsidian's vaults hold, is read up to the `)`.
fn markdown_link(text: &str) -> Option<MarkdownLink<'_>> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut j = 1;
    let close = loop {
        if j > MAX_LABEL_BYTES {
            return None;
        }
        match *bytes.get(j)? {
            b'\\' => j += 2,
            b'`' => j = skip_code_span(bytes, j),
            b'[' => {
                depth += 1;
                j += 1;
            }
            b']' if depth == 0 => break j,
            b']' => {
                depth -= 1;
                j += 1;
            }
            _ => j += 1,
        }
    };
    if bytes.get(close + 1) != Some(&b'(') {
        return None;
    }
    let label = &text[1..close];
    let open = close + 2;
    destination(text, open)
        .or_else(|| loose_destination(text, open))
        .map(|(written, url, len)| MarkdownLink {
            label,
            url,
            written,
            len,
        })
}

/// How far a link's destination and title are looked for: a line of `[a](` that never closes must not be read to its
/// end from every `[`.
const MAX_DESTINATION: usize = 4096;

/// The destination (and title) after `(` at `open`, strictly: where the URL is written, the URL, the link's length.
fn destination(text: &str, open: usize) -> Option<(std::ops::Range<usize>, &str, usize)> {
    let text = &text[..floor_boundary(text, open + MAX_DESTINATION)];
    let bytes = text.as_bytes();
    let spaces = |mut k: usize| {
        while matches!(bytes.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        k
    };
    let start = spaces(open);
    let (written, url) = if bytes.get(start) == Some(&b'<') {
        let mut k = start + 1;
        loop {
            match *bytes.get(k)? {
                b'\\' => k += 2,
                b'>' => break,
                b'<' | b'\n' => return None,
                _ => k += 1,
            }
        }
        (start..k + 1, text.get(start + 1..k)?)
    } else {
        let mut k = start;
        let mut parens = 0usize;
        loop {
            match *bytes.get(k)? {
                b'\\' => k += 2,
                // CommonMark's readers stop at 32 nested parentheses; so does this one.
                b'(' if parens >= 32 => return None,
                b'(' => {
                    parens += 1;
                    k += 1;
                }
                b')' if parens == 0 => break,
                b')' => {
                    parens -= 1;
                    k += 1;
                }
                c if c.is_ascii_whitespace() => break,
                c if c.is_ascii_control() => return None,
                _ => k += 1,
            }
        }
        (start..k, text.get(start..k)?)
    };
    let mut k = spaces(written.end);
    if let Some(&quote @ (b'"' | b'\'' | b'(')) = bytes.get(k) {
        if k == written.end {
            // A title must be apart from the URL.
            return None;
        }
        let closing = if quote == b'(' { b')' } else { quote };
        k += 1;
        loop {
            match *bytes.get(k)? {
                b'\\' => k += 2,
                c if c == closing => break,
                // A title in parentheses holds none unescaped.
                b'(' if quote == b'(' => return None,
                _ => k += 1,
            }
        }
        k = spaces(k + 1);
    }
    (bytes.get(k) == Some(&b')')).then_some((written, url, k + 1))
}

/// A destination with spaces and no angle brackets, up to the first `)`: `[x](Other note.md)`.
fn loose_destination(text: &str, open: usize) -> Option<(std::ops::Range<usize>, &str, usize)> {
    let text = &text[..floor_boundary(text, open + MAX_DESTINATION)];
    let end = open
        + text[open..]
            .find(['\n', '(', ')'])
            .filter(|&e| text[open + e..].starts_with(')'))?;
    let inside = &text[open..end];
    if inside.contains(['(', '"', '<', '\n']) || inside.trim().is_empty() {
        return None;
    }
    let start = open + (inside.len() - inside.trim_start().len());
    let url = inside.trim();
    Some((start..start + url.len(), url, end + 1))
}

/// `at`, or the end of `text` when it is shorter, moved back to the start of the character it falls in.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The key a wikilink target is looked up by: its last path segment, without a `.md` ending, in lower case.
pub(crate) fn key_of(target: &str) -> String {
    let last = target.rsplit('/').next().unwrap_or(target).trim();
    let last = last.strip_suffix(".md").unwrap_or(last);
    last.to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The links `extract` finds in `body` as `kind target #heading |label`, and the addresses
    /// `extract_with_addresses` finds, each with the text it covers.
    fn check(body: &str, links: &[&str], addresses: &[(&str, &str)]) {
        let (found, found_addresses) = extract_with_addresses(body);
        let shown: Vec<String> = found
            .iter()
            .map(|l| {
                let mut out = format!("{} {}", l.kind.as_str(), l.target);
                if let Some(heading) = &l.heading {
                    out.push_str(&format!(" #{heading}"));
                }
                if let Some(label) = &l.label {
                    out.push_str(&format!(" |{label}"));
                }
                out
            })
            .collect();
        assert_eq!(shown, links, "links of {body:?}");
        assert_eq!(extract(body), found, "extract agrees");
        let shown: Vec<(&str, &str)> = found_addresses
            .iter()
            .map(|a| (a.url.as_str(), &body[a.byte..a.byte + a.len]))
            .collect();
        assert_eq!(shown, addresses, "addresses of {body:?}");
        for link in &found {
            let text = &body[link.byte..link.byte + link.len];
            assert!(text.ends_with("]]") || text.ends_with(')'), "{text:?}");
        }
    }

    /// Lines a scanner that looks ahead from every bracket reads in quadratic time: at this size, minutes rather than
    /// milliseconds, so a regression shows as a test that does not end (no timing is asserted).
    #[test]
    fn hostile_lines_of_brackets_are_read_in_one_pass() {
        let unclosed = "[a](".repeat(100_000);
        assert!(extract(&unclosed).is_empty());
        let mut wikis = "[[a ".repeat(100_000);
        wikis.push_str("]]");
        assert_eq!(extract(&wikis).len(), 1);
        let spaced = "[x](a b ".repeat(100_000);
        assert!(extract(&spaced).is_empty());
        let titled = "[x](a (".repeat(100_000);
        assert!(extract(&titled).is_empty());
        let quoted = "[x](a \"".repeat(100_000);
        assert!(extract(&quoted).is_empty());
    }

    #[test]
    fn balanced_brackets_and_images_inside_links() {
        check("[a [b] c](x.md)", &[], &[("x.md", "x.md")]);
        check(
            "[![pic](quire://attachment/p)](quire://note/n)",
            &["note n |![pic](quire://attachment/p)", "attachment p |pic"],
            &[
                ("quire://attachment/p", "quire://attachment/p"),
                ("quire://note/n", "quire://note/n"),
            ],
        );
        check(
            "[![pic](p.png)](other.md)",
            &[],
            &[("p.png", "p.png"), ("other.md", "other.md")],
        );
        // A link inside a link: only the inner one is a link (CommonMark).
        check("[a [b](c.md) d](e.md)", &[], &[("c.md", "c.md")]);
        check(r"\[not a link](x.md) [[Real]]", &["wikilink Real"], &[]);
        check("[a](x.md", &[], &[]);
    }

    #[test]
    fn destinations_as_commonmark_reads_them_and_as_vaults_write_them() {
        check(
            "[x](<Other note.md>) and [y](Other%20note.md \"title\")",
            &[],
            &[
                ("Other note.md", "<Other note.md>"),
                ("Other%20note.md", "Other%20note.md"),
            ],
        );
        check(
            "![clip](Demo%20(1968).ogg) [z](Other note.md)",
            &[],
            &[
                ("Demo%20(1968).ogg", "Demo%20(1968).ogg"),
                ("Other note.md", "Other note.md"),
            ],
        );
        check(
            "[e]() [t](x.md 'single') [p](x.md (paren))",
            &[],
            &[("", ""), ("x.md", "x.md"), ("x.md", "x.md")],
        );
        check("[n](x.md \"t\" junk)", &[], &[]);
    }

    #[test]
    fn wikilinks_with_escaped_pipes_headings_and_code() {
        check(
            "| [[Note\\|alias]] | ![[og.png\\|200]] | [[Tags#Heading\\|Tags]] | [[#Local]] |",
            &[
                "wikilink Note |alias",
                "embed og.png |200",
                "wikilink Tags #Heading |Tags",
                "wikilink  #Local",
            ],
            &[],
        );
        check(
            "`[[a]]` ``x ` [[b]]`` a lone ` then [[c]] and [[My note#H1#H2]]",
            &["wikilink c", "wikilink My note #H1#H2"],
            &[],
        );
    }
}
