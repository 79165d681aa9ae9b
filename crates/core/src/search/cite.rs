//! Citations (issue 50): a hit whose words are in one of its note's attachments names that file and the page they
//! are on (an attachment's text keeps its pages apart, see [`crate::pages`]), and when the note's own text does not
//! hold them, its snippet is the file's text around them.

use serde::{Deserialize, Serialize};

use super::query::{Query, Term};
use crate::error::Result;
use crate::read::Reader;

/// Where a hit's words were found in an attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    /// The attachment's id.
    pub attachment_id: String,
    /// Its title, usually the file name.
    pub title: String,
    /// The page (from 1) of the first match.
    pub page: u32,
    /// How many pages its text has.
    pub pages: u32,
}

/// How many words a snippet from a file shows around the match.
const AROUND: usize = 8;

/// The words of a query's plain text terms, lowercase, each with whether it is a prefix.
fn words(query: &Query) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for term in &query.terms {
        if let Term::Text {
            column: None,
            text,
            prefix,
            negated: false,
        } = term
        {
            let parts: Vec<String> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            let last = parts.len().saturating_sub(1);
            out.extend(parts.into_iter().enumerate().map(|(i, w)| (w, *prefix && i == last)));
        }
    }
    out
}

/// Where the first of `words` is in `text`, as a byte offset and its length (whole words; a prefix word matches a
/// word's start), ignoring case. A file's text can be megabytes: ASCII case is folded in one pass (byte offsets
/// stay), and each word is looked for with a substring search; only a word with other letters in it walks the text.
fn find(text: &str, words: &[(String, bool)]) -> Option<(usize, usize)> {
    let folded = text.to_ascii_lowercase();
    let bytes = folded.as_bytes();
    let is_word = |at: usize| folded[at..].chars().next().is_some_and(char::is_alphanumeric);
    let word_before = |at: usize| folded[..at].chars().next_back().is_some_and(char::is_alphanumeric);
    let mut best: Option<(usize, usize)> = None;
    for (word, prefix) in words {
        if !word.is_ascii() {
            if let Some(found) = find_slowly(text, word, *prefix)
                && best.is_none_or(|(b, _)| found.0 < b)
            {
                best = Some(found);
            }
            continue;
        }
        let mut from = 0;
        while let Some(at) = folded[from..].find(word.as_str()).map(|i| i + from) {
            let mut end = at + word.len();
            let whole_start = !word_before(at);
            if *prefix {
                while end < bytes.len() && is_word(end) {
                    end += folded[end..].chars().next().map_or(1, char::len_utf8);
                }
            }
            if whole_start && (*prefix || !is_word(end)) {
                if best.is_none_or(|(b, _)| at < b) {
                    best = Some((at, end - at));
                }
                break;
            }
            from = at + 1;
            while !folded.is_char_boundary(from) {
                from += 1;
            }
        }
    }
    best
}

/// [`find`] for one word with letters beyond ASCII: each word of the text lowercased and compared.
fn find_slowly(text: &str, wanted: &str, prefix: bool) -> Option<(usize, usize)> {
    let matches = |from: usize, to: usize| {
        let word = text[from..to].to_lowercase();
        if prefix {
            word.starts_with(wanted)
        } else {
            word == wanted
        }
    };
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if matches(s, i) {
                    return Some((s, i - s));
                }
                start = None;
            }
            _ => {}
        }
    }
    start.filter(|&s| matches(s, text.len())).map(|s| (s, text.len() - s))
}

/// The text around a match at `at` (of `len` bytes), the match in `<mark>…</mark>`, pages' breaks as spaces. Only the
/// words near it are split (a file's text can be megabytes): a window of characters each side.
fn excerpt(text: &str, at: usize, len: usize) -> String {
    let mut from = at.saturating_sub(AROUND * 40);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (at + len + AROUND * 40).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    // The text as it is around the match (no space added inside "word:"), AROUND words each side, each run of
    // whitespace (line ends, page breaks) one space.
    let window_before = &text[from..at];
    let starts: Vec<usize> = window_before
        .char_indices()
        .filter(|&(k, c)| !c.is_whitespace() && (k == 0 || window_before[..k].ends_with(char::is_whitespace)))
        .map(|(k, _)| k)
        .collect();
    let head_from = starts.len().checked_sub(AROUND).map_or(0, |k| starts[k]);
    let window_after = &text[at + len..to];
    let ends: Vec<usize> = window_after
        .char_indices()
        .filter(|&(k, c)| c.is_whitespace() && k > 0 && !window_after[..k].ends_with(char::is_whitespace))
        .map(|(k, _)| k)
        .collect();
    let tail_to = ends.get(AROUND).copied().unwrap_or(window_after.len());
    let cut_before = from > 0 || starts.len() > AROUND;
    let cut_after = to < text.len() || ends.len() > AROUND;
    let squeeze = |s: &str| {
        let mut out = String::with_capacity(s.len());
        for (k, part) in s.split(char::is_whitespace).enumerate() {
            if k > 0 && !out.ends_with(' ') {
                out.push(' ');
            }
            out.push_str(part);
        }
        out
    };
    format!(
        "{}{}<mark>{}</mark>{}{}",
        if cut_before { "…" } else { "" },
        squeeze(window_before[head_from..].trim_start()),
        &text[at..at + len],
        squeeze(window_after[..tail_to].trim_end()),
        if cut_after { "…" } else { "" }
    )
}

impl Reader<'_> {
    /// Adds to each hit the attachment (and page) its words were found in, when they were; a hit whose note's
    /// title and text hold none of them shows the file's text around them as its snippet.
    pub(super) fn cite(&self, query: &Query, hits: &mut [super::SearchHit]) -> Result<()> {
        let words = words(query);
        if words.is_empty() {
            return Ok(());
        }
        let mut files = self.conn.prepare_cached(
            "SELECT id, title, text FROM attachments WHERE note_id = ?1 AND text IS NOT NULL AND sealed IS NULL \
             ORDER BY created, id",
        )?;
        for hit in hits.iter_mut().filter(|h| !h.note.is_protected) {
            let rows = files.query_map([&hit.note.id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
            })?;
            for row in rows {
                let (id, title, text) = row?;
                let Some((at, len)) = find(&text, &words) else {
                    continue;
                };
                if !hit.snippet.contains("<mark>") || !self.note_holds(&hit.note.id, &words)? {
                    hit.snippet = excerpt(&text, at, len);
                }
                hit.found_in = Some(Citation {
                    attachment_id: id,
                    title,
                    page: crate::pages::at_byte(&text, at),
                    pages: crate::pages::count(&text),
                });
                break;
            }
        }
        Ok(())
    }

    /// Whether a note's title or body holds one of `words`.
    fn note_holds(&self, note_id: &str, words: &[(String, bool)]) -> Result<bool> {
        let (title, body): (String, String) =
            self.conn
                .query_row("SELECT title, body FROM notes WHERE id = ?1", [note_id], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
        Ok(find(&title, words).is_some() || find(&body, words).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_found_whole_and_shown_in_its_place() {
        let words = vec![("tide".to_owned(), false)];
        let text = "one\u{c}Page two lists the Tide tables, tidewater aside";
        let (at, len) = find(text, &words).unwrap();
        assert_eq!(&text[at..at + len], "Tide");
        assert_eq!(crate::pages::at_byte(text, at), 2);
        assert_eq!(
            excerpt(text, at, len),
            "one Page two lists the <mark>Tide</mark> tables, tidewater aside"
        );
        assert_eq!(find("tidewater", &words), None);
        assert_eq!(find("tidewater", &[("tide".to_owned(), true)]), Some((0, 9)));
        assert_eq!(find("Ärger über", &[("über".to_owned(), false)]), Some((7, 5)));
    }
}
