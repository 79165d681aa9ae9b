//! An attachment's text by page. A PDF's or a scan's text keeps its pages joined by a form feed (U+000C), as
//! `pdftotext` writes them: one text column, sealed, synced and indexed as before, and any offset in it names its
//! page. An image is one page; a text without form feeds is one page.

/// What stands between two pages of an attachment's text.
pub const PAGE_BREAK: char = '\u{c}';

/// The pages of `text`, joined as an attachment's text holds them.
pub fn join<S: AsRef<str>>(pages: &[S]) -> String {
    let mut out = String::new();
    for (i, page) in pages.iter().enumerate() {
        if i > 0 {
            out.push(PAGE_BREAK);
        }
        // A form feed inside a page would move every later page by one; a NUL the workspace never holds.
        out.extend(
            page.as_ref()
                .chars()
                .filter(|c| *c != '\0')
                .map(|c| if c == PAGE_BREAK { '\n' } else { c }),
        );
    }
    out
}

/// How many pages `text` holds (at least 1).
pub fn count(text: &str) -> u32 {
    u32::try_from(text.matches(PAGE_BREAK).count())
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// The page (from 1) that the character at `offset` (in characters) is on; past the end, the last page.
pub fn at_char(text: &str, offset: usize) -> u32 {
    let breaks = text.chars().take(offset).filter(|c| *c == PAGE_BREAK).count();
    u32::try_from(breaks).unwrap_or(u32::MAX - 1).saturating_add(1)
}

/// The page (from 1) that the byte at `offset` is on (an offset inside a character counts for that character).
pub fn at_byte(text: &str, offset: usize) -> u32 {
    let end = offset.min(text.len());
    let breaks = text.as_bytes()[..end].iter().filter(|b| **b == 0x0c).count();
    u32::try_from(breaks).unwrap_or(u32::MAX - 1).saturating_add(1)
}

/// Page `page` (from 1) of `text`, or `None` past the last.
pub fn page(text: &str, page: u32) -> Option<&str> {
    let index = usize::try_from(page.checked_sub(1)?).ok()?;
    text.split(PAGE_BREAK).nth(index)
}

/// Where page `page` (from 1) starts, in characters, or `None` past the last.
pub fn start_char(text: &str, page: u32) -> Option<usize> {
    if page == 1 {
        return Some(0);
    }
    let wanted = usize::try_from(page.checked_sub(1)?).ok()?;
    let mut seen = 0;
    for (i, c) in text.chars().enumerate() {
        if c == PAGE_BREAK {
            seen += 1;
            if seen == wanted {
                return Some(i + 1);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_counted_found_and_read() {
        let text = join(&["one", "two\u{c}still two", "", "four é"]);
        assert_eq!(count(&text), 4);
        assert_eq!(page(&text, 2), Some("two\nstill two"));
        assert_eq!(page(&text, 3), Some(""));
        assert_eq!(page(&text, 5), None);
        assert_eq!(page(&text, 0), None);
        assert_eq!(at_char(&text, 0), 1);
        assert_eq!(at_char(&text, 4), 2);
        let four = start_char(&text, 4).unwrap();
        assert_eq!(text.chars().skip(four).collect::<String>(), "four é");
        assert_eq!(at_char(&text, four), 4);
        assert_eq!(at_byte(&text, text.len()), 4);
        assert_eq!(start_char(&text, 9), None);
        assert_eq!(count("no pages at all"), 1);
    }
}
