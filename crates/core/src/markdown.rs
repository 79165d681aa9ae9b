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
    /// The whole info string, trimmed (`query board`).
    pub info: String,
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
                let info = fence_of(line.text).map_or("", |(_, _, info)| info.trim()).to_owned();
                open = Some((info, line.byte + line.text.len()));
            }
            Some((info, content_start)) => blocks.push(FencedBlock {
                tag: info.split_whitespace().next().unwrap_or("").to_owned(),
                info,
                content_start,
                content_end: line.byte,
            }),
        }
    }
    blocks
}

/// The `#hashtags` of a note, outside code, in order of first use, without the `#`, as Obsidian counts them: not in
/// fenced or indented code blocks nor in `inline code` (a code span may cross a line ending inside its paragraph). A
/// tag starts after white space or at the start of a line and goes on with letters, digits, `_`, `-` and `/`; it
/// holds at least one character that is not a digit (`#1a` is a tag, `#2024` is not). Headings (`# Title`) are not
/// tags.
pub fn hashtags(body: &str) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    let mut block = String::new();
    // Whether the line before was blank (or there was none), and whether the last text was a list item's.
    let (mut after_blank, mut in_list) = (true, false);
    let flush = |block: &mut String, tags: &mut Vec<String>| {
        tags_in(block, tags);
        block.clear();
    };
    for line in lines(body) {
        match line.kind {
            LineKind::Code | LineKind::Fence => {
                flush(&mut block, &mut tags);
                after_blank = false;
                continue;
            }
            LineKind::Heading(_) => {
                flush(&mut block, &mut tags);
                block.push_str(&heading_text(line.text));
                flush(&mut block, &mut tags);
                (after_blank, in_list) = (false, false);
                continue;
            }
            LineKind::Text => {}
        }
        let text = line.text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            flush(&mut block, &mut tags);
            after_blank = true;
            continue;
        }
        let indent: usize = text
            .chars()
            .take_while(|c| matches!(c, ' ' | '\t'))
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum();
        // An indented code block: four spaces of indent where a paragraph cannot go on (after a blank line, or at
        // the start), outside a list (whose items' text is indented so).
        if indent >= 4 && after_blank && !in_list {
            flush(&mut block, &mut tags);
            continue;
        }
        let content = text.trim_start();
        let item = content.starts_with(['-', '*', '+']) && content[1..].starts_with([' ', '\t'])
            || content.split_once(['.', ')']).is_some_and(|(n, rest)| {
                !n.is_empty() && n.len() < 10 && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(' ')
            });
        if item {
            flush(&mut block, &mut tags);
            in_list = true;
        } else if indent == 0 && after_blank {
            in_list = false;
        }
        block.push_str(text);
        block.push('\n');
        after_blank = false;
    }
    flush(&mut block, &mut tags);
    tags
}

/// The tags of one block of text (a paragraph, a list item's lines, a heading's text), outside its code spans.
fn tags_in(text: &str, tags: &mut Vec<String>) {
    let code = code_spans(text);
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        if c == '#' && previous.is_whitespace() && !code.iter().any(|r| r.contains(&i)) {
            let tag: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
                .collect();
            let tag = tag.trim_end_matches(['-', '/']);
            if !tag.is_empty()
                && !tag.chars().all(|c| c.is_ascii_digit())
                && !tags.iter().any(|t| t.eq_ignore_ascii_case(tag))
            {
                tags.push(tag.to_owned());
            }
        }
        previous = c;
    }
}

/// The byte ranges of the code spans of a block of text: a run of backticks up to the next run of the same length
/// (CommonMark); a run with no partner is text.
fn code_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let start = i;
            while i < bytes.len() && bytes[i] == b'`' {
                i += 1;
            }
            runs.push((start, i - start));
        } else {
            i += 1;
        }
    }
    let mut spans = Vec::new();
    let mut at = 0;
    while at < runs.len() {
        let (start, len) = runs[at];
        match runs[at + 1..].iter().position(|&(_, l)| l == len) {
            Some(offset) => {
                let (end, _) = runs[at + 1 + offset];
                spans.push(start..end + len);
                at += offset + 2;
            }
            None => at += 1,
        }
    }
    spans
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

    /// Interop finding 2-#11: tags were taken from an indented code block and from a code span crossing a line
    /// ending; `#1a` (a digit, then a letter) was missed.
    #[test]
    fn hashtags_are_counted_as_obsidian_counts_them() {
        let body = "Build #shell notes, issue #1a, year #2024.\n\n    make #indented\n\nA span `starts\nand #multiline-code ends` here.\n\n- item #listed\n\n    still the item #continued\n";
        assert_eq!(hashtags(body), ["shell", "1a", "listed", "continued"]);
    }
}
