//! The one Markdown scanner: headings, fenced code blocks and `#hashtags`, as every part of quire sees them.
//!
//! It follows CommonMark where notes need it: ATX headings (`#` to `######` then a space, up to three spaces of
//! indent), fenced code blocks opened by three or more backticks or tildes and closed by a fence of the same
//! character at least as long (a block left open runs to the end of the note), and nothing inside a code block
//! counts as a heading or a tag. `read_note`'s outline, the agent's session tools and semantic chunking all use it.

/// An ATX heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 for `#`, up to 6.
    pub level: u8,
    /// The text, without the markers (closing `#`s removed).
    pub text: String,
    /// Where its line starts, in bytes.
    pub byte: usize,
    /// Where its line starts, in characters.
    pub offset: usize,
}

/// A fenced code block that was closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedBlock {
    /// The info string's first word (`mermaid`, `rust`), empty when there is none.
    pub tag: String,
    /// Where the content starts (the line after the opening fence), in bytes.
    pub content_start: usize,
    /// Where the content ends (the start of the closing fence's line), in bytes.
    pub content_end: usize,
}

/// What a line of a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// An ATX heading of this level.
    Heading(u8),
    /// An opening or closing fence.
    Fence,
    /// A line inside a fenced code block.
    Code,
    /// Anything else.
    Text,
}

/// One line of a note with its kind; `text` keeps its line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line, with its `\n` if it has one.
    pub text: &'a str,
    /// Where it starts, in bytes.
    pub byte: usize,
    /// What it is.
    pub kind: LineKind,
}

/// The lines of `body`, each classified.
pub fn lines(body: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    // The open fence: its character and length.
    let mut open: Option<(char, usize)> = None;
    let mut byte = 0;
    for text in body.split_inclusive('\n') {
        let kind = match (open, fence_of(text)) {
            (None, Some((c, n, _))) => {
                open = Some((c, n));
                LineKind::Fence
            }
            (Some((c, n)), Some((d, m, info))) if c == d && m >= n && info.trim().is_empty() => {
                open = None;
                LineKind::Fence
            }
            (Some(_), _) => LineKind::Code,
            (None, None) => heading_level(text).map_or(LineKind::Text, LineKind::Heading),
        };
        out.push(Line { text, byte, kind });
        byte += text.len();
    }
    out
}

/// The ATX headings outside code blocks.
pub fn headings(body: &str) -> Vec<Heading> {
    let mut offset = 0;
    let mut found = Vec::new();
    for line in lines(body) {
        if let LineKind::Heading(level) = line.kind {
            found.push(Heading {
                level,
                text: heading_text(line.text),
                byte: line.byte,
                offset,
            });
        }
        offset += line.text.chars().count();
    }
    found
}

/// The closed fenced code blocks, in order.
pub fn fenced_blocks(body: &str) -> Vec<FencedBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, usize)> = None;
    for line in lines(body) {
        if line.kind != LineKind::Fence {
            continue;
        }
        match open.take() {
            None => {
                let tag = fence_of(line.text)
                    .and_then(|(_, _, info)| info.split_whitespace().next())
                    .unwrap_or("")
                    .to_owned();
                open = Some((tag, line.byte + line.text.len()));
            }
            Some((tag, content_start)) => blocks.push(FencedBlock {
                tag,
                content_start,
                content_end: line.byte,
            }),
        }
    }
    blocks
}

/// The `#hashtags` of a note, outside code (fenced blocks and `inline code`), in order of first use, without
/// the `#`. A tag starts after a space or at the start of a line, begins with a letter, and goes on with letters,
/// digits, `_`, `-` and `/`. Headings (`# Title`) are not tags.
pub fn hashtags(body: &str) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for line in lines(body) {
        if matches!(line.kind, LineKind::Code | LineKind::Fence) {
            continue;
        }
        let text = match line.kind {
            LineKind::Heading(_) => heading_text(line.text),
            _ => line.text.to_owned(),
        };
        let mut in_code = false;
        let mut previous = ' ';
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                in_code = !in_code;
            } else if c == '#' && !in_code && previous.is_whitespace() {
                let rest = &text[i + 1..];
                if rest.chars().next().is_some_and(char::is_alphabetic) {
                    let tag: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
                        .collect();
                    let tag = tag.trim_end_matches(['-', '/']).to_owned();
                    if !tags.iter().any(|t| t.eq_ignore_ascii_case(&tag)) {
                        tags.push(tag);
                    }
                }
            }
            previous = c;
            if chars.peek().is_none() {
                break;
            }
        }
    }
    tags
}

/// A fence line: its character, its length and the info string after it.
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let n = rest.chars().take_while(|d| *d == c).count();
    if n < 3 {
        return None;
    }
    let info = rest[n..].trim_end_matches(['\n', '\r']);
    // A backtick fence's info string cannot contain a backtick (CommonMark).
    if c == '`' && info.contains('`') {
        return None;
    }
    Some((c, n, info))
}

fn heading_level(line: &str) -> Option<u8> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.chars().take_while(|c| *c == '#').count();
    let after = &rest[level..];
    let text = after.trim();
    ((1..=6).contains(&level) && after.starts_with([' ', '\t']) && !text.trim_matches('#').trim().is_empty())
        .then_some(level as u8)
}

fn heading_text(line: &str) -> String {
    let text = line.trim().trim_start_matches('#').trim();
    // Closing `#`s go when a space separates them from the text.
    let without = text.trim_end_matches('#');
    if without.len() < text.len() && (without.is_empty() || without.ends_with([' ', '\t'])) {
        without.trim().to_owned()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::{LineKind, fenced_blocks, hashtags, headings, lines};

    #[test]
    fn headings_outside_code() {
        let body =
            "# Été\ntext\n```\n# not a heading\n```\n## Plan ##\n#hashtag\n    # indented code\n#\n####### seven\n";
        let found: Vec<(u8, String, usize)> = headings(body)
            .into_iter()
            .map(|h| (h.level, h.text, h.offset))
            .collect();
        assert_eq!(found, vec![(1, "Été".to_owned(), 0), (2, "Plan".to_owned(), 35)]);
        assert_eq!(headings("# C# tips")[0].text, "C# tips");
    }

    #[test]
    fn fences_of_every_length_and_kind() {
        let body = "a\n````md\n```\n# inside\n```\n````\n~~~ mermaid\ngraph\n~~~\n```open\nnever closed\n# hidden\n";
        let blocks = fenced_blocks(body);
        let tags: Vec<&str> = blocks.iter().map(|b| b.tag.as_str()).collect();
        assert_eq!(tags, ["md", "mermaid"]);
        assert_eq!(
            &body[blocks[0].content_start..blocks[0].content_end],
            "```\n# inside\n```\n"
        );
        assert_eq!(&body[blocks[1].content_start..blocks[1].content_end], "graph\n");
        assert!(
            headings(body).is_empty(),
            "nothing inside a block, closed or not, is a heading"
        );
        let kinds: Vec<LineKind> = lines("```\n~~~\n```\n").iter().map(|l| l.kind).collect();
        assert_eq!(kinds, [LineKind::Fence, LineKind::Code, LineKind::Fence]);
    }

    #[test]
    fn hashtags_are_not_headings_nor_code() {
        let body =
            "# Title #intitle\nBuy #milk and #Milk, #2024 no, a#b no, `#code` no.\n```\n#inside\n```\n#travel/japan-";
        assert_eq!(hashtags(body), ["intitle", "milk", "travel/japan"]);
    }
}
