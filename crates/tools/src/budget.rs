//! How big a tool's answer may be. Every output fits in about [`OUTPUT_TOKENS`] tokens, whatever the workspace
//! holds: a model with a small context can afford any answer, and a hosted one is not billed for a runaway list.
//! Lists stop early (with `has_more`, so the next page starts at `offset` plus the items returned), long texts come
//! in slices, and the strings no page can split (titles, paths, tag lists) are shortened where they would crowd out
//! the rest.
//!
//! The budget is for models. The user's own reads ([`crate::ToolRegistry::read_as_user`]: the web app, the
//! command line's `--json`) run [`unlimited`]: whole titles and tag lists, and slices as long as asked for.
//!
//! Sizes are estimated rather than tokenised: a real tokenizer would cost more than the read it measures. The
//! estimate errs high for prose and code and is about right for ids and CJK text; the catalog tests check it
//! against the `o200k_base` tokenizer on the largest inputs the workspace allows.

use std::cell::Cell;

use serde::Serialize;

thread_local! {
    /// Whether the call running on this thread is the user's own read (see [`unlimited`]).
    static UNLIMITED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a tool handler, on this thread) without the budget, for the user's own reads.
pub(crate) fn unlimited<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNLIMITED.with(|u| u.set(self.0));
        }
    }
    let _restore = Restore(UNLIMITED.with(|u| u.replace(true)));
    f()
}

/// Whether the call running on this thread is the user's own read.
pub(crate) fn is_unlimited() -> bool {
    UNLIMITED.with(Cell::get)
}

/// The most tokens, as [`estimate_tokens`] counts them, that any tool's output takes.
pub(crate) const OUTPUT_TOKENS: usize = 3_600;

/// The estimated tokens of a page's items: what is left of [`OUTPUT_TOKENS`] after the page's own fields.
pub(crate) const PAGE_TOKENS: usize = OUTPUT_TOKENS - 200;

/// Search snippets and backlink contexts are shortened beyond this many characters.
pub(crate) const SNIPPET_CHARS: usize = 400;

/// Tokens `text` is likely to take, erring high: a run of ASCII letters a token per five letters, a run with digits
/// (ids, numbers) one per two characters, a space nothing (tokenizers join it to the next word), other ASCII
/// characters one each, and any other character one (two outside the Basic Multilingual Plane: emoji).
pub fn estimate_tokens(text: &str) -> usize {
    // Over bytes, as `slice` walks: this runs on every read. A character's cost is its first byte's.
    let mut tokens = 0;
    let mut run = 0;
    let mut digits = false;
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() {
            run += 1;
            digits |= b.is_ascii_digit();
            continue;
        }
        if run > 0 {
            tokens += run_tokens(run, digits);
            run = 0;
            digits = false;
        }
        tokens += byte_tokens(b);
    }
    tokens + run_tokens(run, digits)
}

/// A bound on [`estimate_tokens`] that is cheap to count: one token per byte (a run of letters or digits costs at
/// most that, and so does any other character but these), one more per quote or backslash, two more per control
/// character other than `\n`, `\t` and `\r` (DEL included).
fn tokens_at_most(text: &str) -> usize {
    // Branch-free, so that it compiles to vector instructions: this runs on every read.
    let extra: usize = text
        .as_bytes()
        .chunks(64)
        .map(|chunk| {
            chunk.iter().fold(0u8, |sum, &b| {
                let escaped = u8::from(b == b'"' || b == b'\\');
                let control = u8::from((b < 0x20 && b != b'\n' && b != b'\t' && b != b'\r') || b == 0x7F);
                sum + escaped + 2 * control
            }) as usize
        })
        .sum();
    text.len() + extra
}

/// The tokens of a character that is not a letter or digit, by its first byte (0 for the bytes that continue one).
fn byte_tokens(b: u8) -> usize {
    match b {
        b' ' => 0,
        // Sent as JSON: a quote or backslash is escaped, a control character written as \u00XX.
        b'"' | b'\\' => 2,
        b'\n' | b'\t' | b'\r' => 1,
        0..0x20 | 0x7F => 3,
        0..0x80 => 1,
        // Continuation bytes of a character already counted.
        0x80..0xC0 => 0,
        // Outside the Basic Multilingual Plane (emoji).
        0xF0.. => 2,
        _ => 1,
    }
}

fn run_tokens(len: usize, digits: bool) -> usize {
    if digits { len.div_ceil(2) } else { len.div_ceil(5) }
}

/// The estimate for a value as it will be sent (compact JSON).
pub(crate) fn estimate_json<T: Serialize>(value: &T) -> usize {
    serde_json::to_string(value).map_or(0, |s| estimate_tokens(&s))
}

/// Keeps the longest prefix of `items` that fits in `budget` tokens (at least one item, which callers keep small
/// enough); returns whether any were left out.
pub(crate) fn fit<T: Serialize>(items: &mut Vec<T>, budget: usize) -> bool {
    if is_unlimited() {
        return false;
    }
    let mut used = 0;
    let mut keep = items.len();
    for (i, item) in items.iter().enumerate() {
        // A comma between items, and brackets once.
        used += estimate_json(item) + 1;
        if used > budget && i > 0 {
            keep = i;
            break;
        }
    }
    let cut = keep < items.len();
    items.truncate(keep);
    cut
}

/// [`fit`], with how many were left out when any were.
pub(crate) fn fit_counted<T: Serialize>(items: &mut Vec<T>, budget: usize) -> Option<u64> {
    let all = items.len();
    fit(items, budget).then(|| (all - items.len()) as u64)
}

/// `text` shortened to about `max_chars` characters, its start and end kept around an ellipsis.
pub(crate) fn shorten(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars || is_unlimited() {
        return text.to_owned();
    }
    let head = max_chars * 2 / 3;
    let tail = max_chars.saturating_sub(head + 1);
    let mut out: String = text.chars().take(head).collect();
    out.push('…');
    out.extend(text.chars().skip(count - tail));
    out
}

/// Characters from `offset` of `text`, at most `max_chars` of them and at most `budget` estimated tokens (at least
/// one character), with the total length in characters. An offset past the end is an error that says the length.
pub(crate) fn slice(
    text: &str,
    offset: u64,
    max_chars: u64,
    budget: usize,
    what: &str,
) -> Result<(String, u64), crate::ToolError> {
    let budget = if is_unlimited() { usize::MAX } else { budget };
    let total = text.chars().count() as u64;
    if offset > total {
        return Err(crate::ToolError::new(format!(
            "offset {offset} is past the end of the {what}, which has {total} characters."
        )));
    }
    let rest: &str = match text.char_indices().nth(offset as usize) {
        Some((at, _)) => &text[at..],
        None => "",
    };
    // Most reads take the whole rest: a bound says so without the estimate (a byte costs at most one token but for
    // quotes, backslashes and control characters), else one pass of the estimate.
    if total - offset <= max_chars && (tokens_at_most(rest) <= budget || estimate_tokens(rest) <= budget) {
        return Ok((rest.to_owned(), total));
    }
    // Walk the estimate along as estimate_tokens counts (over bytes: this runs on every read), and stop before
    // the budget is passed.
    let bytes = rest.as_bytes();
    let mut end = 0;
    let mut taken = 0u64;
    let mut used = 0;
    let mut run = 0;
    let mut digits = false;
    while end < bytes.len() && taken < max_chars {
        let b = bytes[end];
        let (len, cost) = if b.is_ascii_alphanumeric() {
            // The run's estimate grows by one every few characters: charge it as it does.
            let before = run_tokens(run, digits);
            run += 1;
            digits |= b.is_ascii_digit();
            (1, run_tokens(run, digits) - before)
        } else {
            run = 0;
            digits = false;
            let len = match b {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            (len, byte_tokens(b))
        };
        if used + cost > budget && taken > 0 {
            break;
        }
        used += cost;
        taken += 1;
        end += len;
    }
    Ok((rest[..end].to_owned(), total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_and_slices_agree() {
        let text = "Pack the bags: 2026-01-15, id 0a1b2c3d4e5f. 旅行の準備 🎒 done.";
        let whole = estimate_tokens(text);
        let (all, total) = slice(text, 0, 1_000, usize::MAX, "note").unwrap_or_default();
        assert_eq!((all.as_str(), total), (text, text.chars().count() as u64));
        for budget in [1, 3, 7, whole - 1] {
            let (part, _) = slice(text, 0, 1_000, budget, "note").unwrap_or_default();
            assert!(estimate_tokens(&part) <= budget.max(1), "{budget}: {part:?}");
            assert!(part.len() < text.len());
        }
        let (tail, _) = slice(text, 45, 3, 100, "note").unwrap_or_default();
        assert_eq!(tail.chars().count(), 3);
        assert!(slice(text, 1_000, 3, 100, "note").is_err());
    }

    /// The estimate as it was first written, over characters.
    fn estimate_by_chars(text: &str) -> usize {
        let (mut tokens, mut run, mut digits) = (0, 0, false);
        for c in text.chars() {
            if c.is_ascii_alphanumeric() {
                run += 1;
                digits |= c.is_ascii_digit();
                continue;
            }
            tokens += run_tokens(run, digits);
            (run, digits) = (0, false);
            tokens += match c {
                ' ' => 0,
                '"' | '\\' => 2,
                '\n' | '\t' | '\r' => 1,
                c if c.is_ascii_control() => 3,
                c if c.is_ascii() => 1,
                c if (c as u32) > 0xFFFF => 2,
                _ => 1,
            };
        }
        tokens + run_tokens(run, digits)
    }

    proptest::proptest! {
        #[test]
        fn the_estimate_over_bytes_counts_as_over_characters(text in "(?s).{0,120}") {
            proptest::prop_assert_eq!(estimate_tokens(&text), estimate_by_chars(&text));
            proptest::prop_assert!(estimate_tokens(&text) <= tokens_at_most(&text));
        }

        /// The whole-text shortcut and the walk count alike: a text fits exactly its own estimate either way, and
        /// one token less cuts it.
        #[test]
        fn the_shortcut_and_the_walk_agree(text in r#"[a-z0-9 "\\\n\x01é旅🎒.-]{1,80}"#) {
            let estimate = estimate_tokens(&text);
            let chars = text.chars().count() as u64;
            let (all, _) = slice(&text, 0, u64::MAX, estimate, "note").unwrap_or_default();
            proptest::prop_assert_eq!(&all, &text);
            // With a character limit just short of the padded text, only the walk runs.
            let padded = format!("{text} ");
            let (walked, _) = slice(&padded, 0, chars, estimate, "note").unwrap_or_default();
            proptest::prop_assert_eq!(&walked, &text);
            if estimate > 1 && chars > 1 {
                let (cut, _) = slice(&text, 0, u64::MAX, estimate - 1, "note").unwrap_or_default();
                proptest::prop_assert!(cut.len() < text.len());
            }
        }
    }

    #[test]
    fn fit_keeps_a_prefix_and_at_least_one() {
        let mut items: Vec<String> = (0..100).map(|i| format!("item number {i}")).collect();
        assert!(fit(&mut items, 50));
        assert!(!items.is_empty() && items.len() < 20);
        assert_eq!(items[0], "item number 0");
        let mut one = vec!["x".repeat(10_000)];
        assert!(!fit(&mut one, 5));
        assert_eq!(one.len(), 1);
    }

    #[test]
    fn shorten_keeps_both_ends() {
        assert_eq!(shorten("short", 10), "short");
        let long = shorten(&"a".repeat(50).replace("aaaaa", "abcde"), 10);
        assert_eq!(long.chars().count(), 10);
        assert!(long.contains('…'));
    }
}
