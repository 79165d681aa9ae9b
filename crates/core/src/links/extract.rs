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
