//! Three-way merges of a text: edits made against one version carried over onto a version that changed meanwhile,
//! or the edits that touch what changed. The one merge behind the sidebar's proposed edits (quire-agent) and the
//! review of staged changes ([`crate::review`]).

/// One replacement: the characters `start..end` of the text as it was after the previous edits (edits apply in
/// order) become `text`. Offsets count characters, not bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    /// First replaced character.
    pub start: usize,
    /// One past the last replaced character (`start` for an insertion).
    pub end: usize,
    /// The new text.
    pub text: String,
}

/// Why a merge did not give a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeError {
    /// Edit `index` (0-based) does not fit the text it applies to: edits made for another text.
    DoesNotFit {
        /// The edit.
        index: usize,
        /// What does not fit, in words.
        detail: String,
    },
    /// These edits (0-based, in order) touch text that changed meanwhile; nothing was merged.
    Stale(Vec<usize>),
}

/// Applies edits in order to `text`.
pub fn apply_edits(text: &str, edits: &[TextEdit]) -> Result<String, MergeError> {
    let mut text = text.to_owned();
    for (index, edit) in edits.iter().enumerate() {
        match (byte_at(&text, edit.start), byte_at(&text, edit.end)) {
            (Some(start), Some(end)) if start <= end => text.replace_range(start..end, &edit.text),
            _ => {
                return Err(MergeError::DoesNotFit {
                    index,
                    detail: format!(
                        "edit {} ({}..{}) does not fit a text of {} characters",
                        index + 1,
                        edit.start,
                        edit.end,
                        text.chars().count()
                    ),
                });
            }
        }
    }
    Ok(text)
}

/// The byte offset of the `chars`-th character (the end for `chars == count`).
pub fn byte_at(text: &str, chars: usize) -> Option<usize> {
    if chars == text.chars().count() {
        return Some(text.len());
    }
    text.char_indices().nth(chars).map(|(i, _)| i)
}

/// Where the text of the working copy comes from: a range of the base text, or text an edit inserted.
#[derive(Debug, Clone)]
enum Piece {
    Base(usize, usize),
    Inserted(Vec<char>),
}

impl Piece {
    fn len(&self) -> usize {
        match self {
            Piece::Base(a, b) => b - a,
            Piece::Inserted(text) => text.len(),
        }
    }

    /// Characters `i..j` of this piece.
    fn sub(&self, i: usize, j: usize) -> Piece {
        match self {
            Piece::Base(a, _) => Piece::Base(a + i, a + j),
            Piece::Inserted(text) => Piece::Inserted(text[i..j].to_vec()),
        }
    }
}

/// One replacement of a range of the base text (`start == end` for an insertion).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    start: usize,
    end: usize,
    text: String,
}

fn hunks(base: &str, changed: &str) -> Vec<Hunk> {
    let diff = similar::TextDiff::from_chars(base, changed);
    let new: Vec<char> = changed.chars().collect();
    diff.ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| Hunk {
            start: op.old_range().start,
            end: op.old_range().end,
            text: new[op.new_range()].iter().collect(),
        })
        .collect()
}

/// Whether two changes of the base text cannot both be applied: they overlap, or insert at the same place.
fn conflict(a: (usize, usize), b: (usize, usize)) -> bool {
    let (a_empty, b_empty) = (a.0 == a.1, b.0 == b.1);
    match (a_empty, b_empty) {
        (false, false) => a.0 < b.1 && b.0 < a.1,
        (true, true) => a.0 == b.0,
        (true, false) => b.0 < a.0 && a.0 < b.1,
        (false, true) => a.0 < b.0 && b.0 < a.1,
    }
}

/// Carries `edits` (made against `base`) over onto `current`, or names the edits that touch what changed: a
/// three-way merge of the edited text and the current text against their common base.
pub fn rebase(base: &str, current: &str, edits: &[TextEdit]) -> Result<String, MergeError> {
    let proposed = apply_edits(base, edits)?;
    let ours = hunks(base, &proposed);
    let theirs = hunks(base, current);
    let clashes: Vec<(usize, usize)> = ours
        .iter()
        .filter(|o| theirs.iter().any(|t| conflict((o.start, o.end), (t.start, t.end))))
        .map(|o| (o.start, o.end))
        .collect();
    if !clashes.is_empty() {
        let spans = edit_spans(base, edits)?;
        let mut stale: Vec<usize> = spans
            .iter()
            .enumerate()
            .filter(|(_, span)| clashes.iter().any(|c| span.0 <= c.1 && c.0 <= span.1))
            .map(|(i, _)| i)
            .collect();
        if stale.is_empty() {
            stale = (0..edits.len()).collect();
        }
        return Err(MergeError::Stale(stale));
    }
    let mut all: Vec<&Hunk> = ours.iter().chain(&theirs).collect();
    // At one position, an insertion goes before a replacement that starts there.
    all.sort_by_key(|h| (h.start, h.end));
    let base: Vec<char> = base.chars().collect();
    let mut out = String::with_capacity(current.len() + proposed.len() - base.len().min(proposed.len()));
    let mut at = 0;
    for hunk in all {
        out.extend(&base[at..hunk.start.max(at)]);
        out.push_str(&hunk.text);
        at = at.max(hunk.end);
    }
    out.extend(&base[at.min(base.len())..]);
    Ok(out)
}

/// The base characters each edit replaced (or the base position it inserted at), following the edits in order.
fn edit_spans(base: &str, edits: &[TextEdit]) -> Result<Vec<(usize, usize)>, MergeError> {
    let mut pieces = vec![Piece::Base(0, base.chars().count())];
    let mut spans = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        let total: usize = pieces.iter().map(Piece::len).sum();
        if edit.start > edit.end || edit.end > total {
            return Err(MergeError::DoesNotFit {
                index,
                detail: format!(
                    "an edit ({}..{}) does not fit a text of {total} characters",
                    edit.start, edit.end
                ),
            });
        }
        let mut next = Vec::with_capacity(pieces.len() + 2);
        let mut span: Option<(usize, usize)> = None;
        let mut inserted = false;
        let mut offset = 0;
        for piece in &pieces {
            let (start, end) = (offset, offset + piece.len());
            offset = end;
            let cut_a = edit.start.clamp(start, end) - start;
            let cut_b = edit.end.clamp(start, end) - start;
            next.push(piece.sub(0, cut_a));
            if let Piece::Base(a, _) = piece
                && edit.start <= end
                && edit.end >= start
            {
                let (s, e) = (a + cut_a, a + cut_b);
                span = Some(span.map_or((s, e), |(s0, e0)| (s0.min(s), e0.max(e))));
            }
            if !inserted && edit.start >= start && edit.start <= end {
                next.push(Piece::Inserted(edit.text.chars().collect()));
                inserted = true;
            }
            next.push(piece.sub(cut_b, piece.len()));
        }
        if !inserted {
            next.push(Piece::Inserted(edit.text.chars().collect()));
        }
        // An edit inside text that earlier edits inserted touches no base text: it sits where that text sits.
        let span = span.unwrap_or_else(|| {
            let mut offset = 0;
            let mut last = 0;
            for piece in &pieces {
                if offset >= edit.start {
                    break;
                }
                if let Piece::Base(a, b) = piece {
                    last = (a + (edit.start - offset)).min(*b);
                }
                offset += piece.len();
            }
            (last, last)
        });
        spans.push(span);
        pieces = next.into_iter().filter(|p| p.len() > 0).collect();
    }
    Ok(spans)
}

/// A change of a text by lines, as a person reviews it: the base lines `start..end` (characters of the base
/// text) become `text`. Hunks of one diff never overlap and come in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineHunk {
    /// First replaced character of the base text (at a line start).
    pub start: usize,
    /// One past the last replaced character of the base text.
    pub end: usize,
    /// The base text replaced.
    pub old: String,
    /// The new text.
    pub text: String,
}

/// The changes from `base` to `changed` by lines: each run of changed lines one hunk.
pub fn line_hunks(base: &str, changed: &str) -> Vec<LineHunk> {
    let diff = similar::TextDiff::from_lines(base, changed);
    let offsets = |lines: &[&str]| {
        let mut at = vec![0usize];
        for line in lines {
            at.push(at.last().copied().unwrap_or(0) + line.chars().count());
        }
        at
    };
    let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
    let old_at = offsets(old_lines);
    let mut hunks: Vec<LineHunk> = Vec::new();
    let mut open: Option<(usize, usize, usize, usize)> = None;
    let close = |(os, oe, ns, ne): (usize, usize, usize, usize), hunks: &mut Vec<LineHunk>| {
        hunks.push(LineHunk {
            start: old_at[os],
            end: old_at[oe],
            old: old_lines[os..oe].concat(),
            text: new_lines[ns..ne].concat(),
        });
    };
    for op in diff.ops() {
        let (old, new) = (op.old_range(), op.new_range());
        if op.tag() == similar::DiffTag::Equal {
            if let Some(run) = open.take() {
                close(run, &mut hunks);
            }
            continue;
        }
        open = Some(match open {
            Some((os, _, ns, _)) => (os, old.end, ns, new.end),
            None => (old.start, old.end, new.start, new.end),
        });
    }
    if let Some(run) = open {
        close(run, &mut hunks);
    }
    hunks
}

/// The line hunks `chosen` (indices into `hunks`) applied to `base`.
pub fn apply_line_hunks(base: &str, hunks: &[LineHunk], chosen: &[usize]) -> String {
    let mut chosen: Vec<&LineHunk> = chosen.iter().filter_map(|i| hunks.get(*i)).collect();
    chosen.sort_by_key(|h| std::cmp::Reverse(h.start));
    let mut text = base.to_owned();
    for hunk in chosen {
        if let (Some(a), Some(b)) = (byte_at(&text, hunk.start), byte_at(&text, hunk.end)) {
            text.replace_range(a..b, &hunk.text);
        }
    }
    text
}

/// Carries the line hunks `chosen` over onto `current`, on top of the hunks `applied` before (which `current` is
/// expected to hold already). Returns the merged text and the chosen hunks that touch what changed meanwhile (stale,
/// left out).
pub fn merge_line_hunks(
    base: &str,
    current: &str,
    hunks: &[LineHunk],
    applied: &[usize],
    chosen: &[usize],
) -> (String, Vec<usize>) {
    let known = apply_line_hunks(base, hunks, applied);
    // A chosen hunk's place in `known`: moved by what the hunks applied before it added or removed.
    let shift = |at: usize| -> isize {
        applied
            .iter()
            .filter_map(|i| hunks.get(*i))
            .filter(|h| h.end <= at)
            .map(|h| h.text.chars().count() as isize - (h.end - h.start) as isize)
            .sum()
    };
    let mut remaining: Vec<usize> = chosen.iter().copied().filter(|i| !applied.contains(i)).collect();
    remaining.sort_by_key(|i| std::cmp::Reverse(hunks.get(*i).map_or(0, |h| h.start)));
    // A person reviews lines: a hunk whose lines changed meanwhile (or that inserts where lines were inserted) is
    // stale, even where the letters would still merge.
    let theirs = line_hunks(&known, current);
    let (mut stale, fits): (Vec<usize>, Vec<usize>) = remaining.into_iter().partition(|i| {
        hunks.get(*i).is_some_and(|h| {
            let at = (h.start as isize + shift(h.start)).max(0) as usize;
            let end = (h.end as isize + shift(h.start)).max(0) as usize;
            theirs
                .iter()
                .any(|t| conflict((at, end), (t.start, t.end)) || (at < t.end && t.start < end))
        })
    });
    let mut remaining = fits;
    loop {
        let edits: Vec<TextEdit> = remaining
            .iter()
            .filter_map(|i| hunks.get(*i))
            .map(|h| TextEdit {
                start: (h.start as isize + shift(h.start)).max(0) as usize,
                end: (h.end as isize + shift(h.start)).max(0) as usize,
                text: h.text.clone(),
            })
            .collect();
        match rebase(&known, current, &edits) {
            Ok(text) => return (text, stale),
            Err(MergeError::Stale(which)) => {
                let mut keep = Vec::new();
                for (n, i) in remaining.iter().enumerate() {
                    if which.contains(&n) {
                        stale.push(*i);
                    } else {
                        keep.push(*i);
                    }
                }
                remaining = keep;
            }
            Err(MergeError::DoesNotFit { .. }) => {
                stale.extend(remaining);
                return (current.to_owned(), stale);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn edit(start: usize, end: usize, text: &str) -> TextEdit {
        TextEdit {
            start,
            end,
            text: text.into(),
        }
    }

    #[track_caller]
    fn check(base: &str, current: &str, edits: &[TextEdit], expected: Result<&str, Vec<usize>>) {
        match (rebase(base, current, edits), expected) {
            (Ok(text), Ok(want)) => assert_eq!(text, want),
            (Err(MergeError::Stale(stale)), Err(want)) => assert_eq!(stale, want),
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn rebasing_edits_onto_a_changed_text() {
        let base = "Dear Sir,\nthe rent is due.\nRegards";
        // Unchanged text: the same as applying the edits.
        let edits = [edit(0, 9, "Hi Sam,")];
        check(base, base, &edits, Ok(&apply_edits(base, &edits).unwrap()));
        // The last line changed meanwhile: the greeting edit still applies, and that change stays.
        check(
            base,
            "Dear Sir,\nthe rent is due.\nBest",
            &edits,
            Ok("Hi Sam,\nthe rent is due.\nBest"),
        );
        // Text typed before the greeting: carried over after it.
        check(
            base,
            "NOTE\nDear Sir,\nthe rent is due.\nRegards",
            &edits,
            Ok("NOTE\nHi Sam,\nthe rent is due.\nRegards"),
        );
        // The greeting itself changed: that edit is stale.
        check(base, "Dear Madam,\nthe rent is due.\nRegards", &edits, Err(vec![0]));
        // Two edits, the second stale, the first not.
        let two = [edit(0, 9, "Hi Sam,"), edit(20, 23, "today")];
        assert_eq!(apply_edits(base, &two).unwrap(), "Hi Sam,\nthe rent is today.\nRegards");
        check(base, "Dear Sir,\nthe rent is overdue.\nRegards", &two, Err(vec![1]));
        check(
            base,
            "Dear Sir,\nthe rent is due.\nCheers",
            &two,
            Ok("Hi Sam,\nthe rent is today.\nCheers"),
        );
        // An edit inside the text an earlier edit inserted follows it.
        let nested = [edit(0, 9, "Hi Sam,"), edit(3, 6, "Samuel")];
        check(
            base,
            "Dear Sir,\nthe rent is due.\nBest",
            &nested,
            Ok("Hi Samuel,\nthe rent is due.\nBest"),
        );
        // An insertion where the other side also inserted is stale (their order is unknowable).
        let insert = [edit(9, 9, " and Madam")];
        check(base, "Dear Sir,!\nthe rent is due.\nRegards", &insert, Err(vec![0]));
        check(
            base,
            "Dear Sir!,\nthe rent is due.\nRegards",
            &insert,
            Ok("Dear Sir!, and Madam\nthe rent is due.\nRegards"),
        );
        // Appending at the end while the start changed.
        let append = [edit(34, 34, "\nP.S. thanks")];
        check(
            base,
            "Hello,\nthe rent is due.\nRegards",
            &append,
            Ok("Hello,\nthe rent is due.\nRegards\nP.S. thanks"),
        );
        // Offsets count characters, not bytes, and an edit past the end does not fit.
        assert_eq!(
            apply_edits("été x", &[edit(0, 1, "E"), edit(5, 5, "!")]).unwrap(),
            "Eté x!"
        );
        assert!(matches!(
            apply_edits("short", &[edit(3, 9, "x")]),
            Err(MergeError::DoesNotFit { index: 0, .. })
        ));
    }

    #[test]
    fn line_hunks_apply_one_by_one_and_merge_over_a_changed_text() {
        let base = "one\ntwo\nthree\nfour\nfive\n";
        let proposed = "ONE\ntwo\nthree\nFOUR\nfour and a half\nfive\nsix\n";
        let hunks = line_hunks(base, proposed);
        let olds: Vec<&str> = hunks.iter().map(|h| h.old.as_str()).collect();
        assert_eq!(olds, ["one\n", "four\n", ""]);
        assert_eq!(apply_line_hunks(base, &hunks, &[0, 1, 2]), proposed);
        assert_eq!(
            apply_line_hunks(base, &hunks, &[1]),
            "one\ntwo\nthree\nFOUR\nfour and a half\nfive\n"
        );
        // The first hunk accepted earlier, the third now, over a text where "three" changed since.
        let current = "ONE\ntwo\nTHREE\nfour\nfive\n";
        assert_eq!(
            merge_line_hunks(base, current, &hunks, &[0], &[2]),
            ("ONE\ntwo\nTHREE\nfour\nfive\nsix\n".into(), vec![])
        );
        // "four" changed meanwhile: the second hunk is stale and left out, the third still applies.
        let current = "ONE\ntwo\nthree\nfour!\nfive\n";
        assert_eq!(
            merge_line_hunks(base, current, &hunks, &[0], &[1, 2]),
            ("ONE\ntwo\nthree\nfour!\nfive\nsix\n".into(), vec![1])
        );
    }
}
