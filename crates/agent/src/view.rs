//! What the model sees of the focused note in a turn's first request: the whole note while it is small; above a
//! budget (about 2,000 tokens), its size, its outline (headings with their lines and offsets) and the part around
//! the selection or the cursor, the rest read with `read_note` as needed. Every word of the first request is paid
//! again at every step of the turn, and a 5,000-line note is some 90,000 tokens.

use quire_core::markdown::headings;

use crate::context::FocusedNote;

/// The part of the focused note a turn starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoteView {
    /// The whole note fits.
    pub(crate) whole: bool,
    /// The byte ranges of the body shown (the whole body when `whole`).
    pub(crate) seen: Vec<(usize, usize)>,
    /// How the note is written in the system prompt.
    pub(crate) text: String,
}

/// The view of `note` within `budget` tokens.
pub(crate) fn note_view(note: &FocusedNote, budget: usize) -> NoteView {
    let body = &note.body;
    let tokens = quire_tools::estimate_tokens(body);
    if tokens <= budget {
        return NoteView {
            whole: true,
            seen: vec![(0, body.len())],
            text: format!("<note>\n{body}\n</note>\n"),
        };
    }
    let lines = body.lines().count();
    let chars = body.chars().count();
    // A third of the budget for the outline, the rest for the text around the selection or cursor.
    let outline = outline(body, budget / 3);
    let window_tokens = budget
        .saturating_sub(quire_tools::estimate_tokens(&outline))
        .max(budget / 2);
    let (start, end) = window(note, window_tokens);
    let first_line = body[..start].matches('\n').count() + 1;
    let last_line = first_line + body[start..end].matches('\n').count();
    let offset = body[..start].chars().count();
    let text = format!(
        "The note is long ({lines} lines, {chars} characters, about {tokens} tokens): you see its outline and lines \
         {first_line}-{last_line}. Read other parts with read_note (offset in characters, from the outline) before \
         quoting or changing them.\n<outline>\n{outline}</outline>\n<note-part offset=\"{offset}\">\n{}\n</note-part>\n",
        &body[start..end]
    );
    NoteView {
        whole: false,
        seen: vec![(start, end)],
        text,
    }
}

/// The headings of `body`, a line each (`## Title (line 12, offset 340)`), within `budget` tokens: the deepest
/// levels left out first, then the last headings.
fn outline(body: &str, budget: usize) -> String {
    let all = headings(body);
    let line_of = {
        let mut starts: Vec<usize> = vec![0];
        starts.extend(body.match_indices('\n').map(|(i, _)| i + 1));
        move |byte: usize| starts.partition_point(|&s| s <= byte)
    };
    let render = |max_level: u8| -> String {
        let mut out = String::new();
        for h in all.iter().filter(|h| h.level <= max_level) {
            let line = format!(
                "{} {} (line {}, offset {})\n",
                "#".repeat(usize::from(h.level)),
                h.text,
                line_of(h.byte),
                h.offset
            );
            if quire_tools::estimate_tokens(&out) + quire_tools::estimate_tokens(&line) > budget {
                out.push_str("(more headings: read_note lists them all)\n");
                break;
            }
            out.push_str(&line);
        }
        out
    };
    let mut levels: Vec<u8> = all.iter().map(|h| h.level).collect();
    levels.sort_unstable();
    levels.dedup();
    for &level in levels.iter().rev() {
        let text = render(level);
        if !text.contains("(more headings") {
            return text;
        }
    }
    levels.first().map_or_else(String::new, |&level| render(level))
}

/// The byte range of the body shown: the selection with what surrounds it, or the text around the cursor, or the
/// start of the note; whole lines, within `budget` tokens.
fn window(note: &FocusedNote, budget: usize) -> (usize, usize) {
    let body = &note.body;
    let byte = |chars: usize| body.char_indices().nth(chars).map_or(body.len(), |(i, _)| i);
    let (from, to) = match (note.selection, note.cursor) {
        (Some(s), _) => (byte(s.start), byte(s.end)),
        (None, Some(c)) => (byte(c), byte(c)),
        (None, None) => (0, 0),
    };
    // Grow a line at a time on both sides (after first, when at the start) while the budget allows.
    let mut start = body[..from].rfind('\n').map_or(0, |i| i + 1);
    let mut end = body[to..].find('\n').map_or(body.len(), |i| to + i + 1);
    loop {
        let before = body[..start.saturating_sub(1)].rfind('\n').map_or(0, |i| i + 1);
        let after = body[end..].find('\n').map_or(body.len(), |i| end + i + 1);
        let grew_before = start > 0 && quire_tools::estimate_tokens(&body[before..end]) <= budget;
        if grew_before {
            start = before;
        }
        let grew_after = end < body.len() && quire_tools::estimate_tokens(&body[start..after]) <= budget;
        if grew_after {
            end = after;
        }
        if !grew_before && !grew_after {
            break;
        }
    }
    (start, end.max(start))
}
