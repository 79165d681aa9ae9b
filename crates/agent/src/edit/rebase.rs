//! Carrying edits over a note that changed meanwhile: a three-way merge of the agent's text and the current text
//! against the text the edits were made for, or the edits that touch what changed.

use super::{Edit, apply_edits};
use crate::error::Error;

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
/// three-way merge of the agent's text and the current text against their common base.
pub(super) fn rebase(base: &str, current: &str, edits: &[Edit]) -> Result<String, Error> {
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
        let mut stale: Vec<(usize, String)> = spans
            .iter()
            .zip(edits)
            .enumerate()
            .filter(|(_, (span, _))| clashes.iter().any(|c| span.0 <= c.1 && c.0 <= span.1))
            .map(|(i, (_, edit))| (i + 1, edit.tool.clone()))
            .collect();
        if stale.is_empty() {
            stale = edits.iter().enumerate().map(|(i, e)| (i + 1, e.tool.clone())).collect();
        }
        return Err(Error::Stale { stale });
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
fn edit_spans(base: &str, edits: &[Edit]) -> Result<Vec<(usize, usize)>, Error> {
    let mut pieces = vec![Piece::Base(0, base.chars().count())];
    let mut spans = Vec::with_capacity(edits.len());
    for edit in edits {
        let total: usize = pieces.iter().map(Piece::len).sum();
        if edit.start > edit.end || edit.end > total {
            return Err(Error::InvalidEdits(format!(
                "an edit ({}..{}) does not fit a text of {total} characters",
                edit.start, edit.end
            )));
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

#[cfg(test)]
mod tests {
    use super::rebase;
    use crate::edit::tests::edit;
    use crate::edit::{Edit, apply_edits};
    use crate::error::Error;

    #[track_caller]
    fn check(base: &str, current: &str, edits: &[Edit], expected: Result<&str, Vec<usize>>) {
        let got = rebase(base, current, edits);
        match (got, expected) {
            (Ok(text), Ok(want)) => assert_eq!(text, want),
            (Err(Error::Stale { stale }), Err(want)) => {
                assert_eq!(stale.iter().map(|(i, _)| *i).collect::<Vec<_>>(), want);
            }
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn rebasing_edits_onto_a_changed_note() {
        let base = "Dear Sir,\nthe rent is due.\nRegards";
        // Unchanged note: the same as applying the edits.
        let edits = [edit(0, 9, "Hi Sam,")];
        check(base, base, &edits, Ok(&apply_edits(base, &edits).unwrap()));
        // The user changed the last line meanwhile: the greeting edit still applies, and the user's change stays.
        check(
            base,
            "Dear Sir,\nthe rent is due.\nBest",
            &edits,
            Ok("Hi Sam,\nthe rent is due.\nBest"),
        );
        // The user typed before the greeting: carried over after it.
        check(
            base,
            "NOTE\nDear Sir,\nthe rent is due.\nRegards",
            &edits,
            Ok("NOTE\nHi Sam,\nthe rent is due.\nRegards"),
        );
        // The user changed the greeting itself: that edit is stale.
        check(base, "Dear Madam,\nthe rent is due.\nRegards", &edits, Err(vec![1]));
        // Two edits, the second stale, the first not.
        let two = [edit(0, 9, "Hi Sam,"), edit(20, 23, "today")];
        assert_eq!(apply_edits(base, &two).unwrap(), "Hi Sam,\nthe rent is today.\nRegards");
        check(base, "Dear Sir,\nthe rent is overdue.\nRegards", &two, Err(vec![2]));
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
        // An insertion where the user also inserted is stale (their order is unknowable).
        let insert = [edit(9, 9, " and Madam")];
        check(base, "Dear Sir,!\nthe rent is due.\nRegards", &insert, Err(vec![1]));
        check(
            base,
            "Dear Sir!,\nthe rent is due.\nRegards",
            &insert,
            Ok("Dear Sir!, and Madam\nthe rent is due.\nRegards"),
        );
        // Appending at the end while the user changed the start.
        let append = [edit(34, 34, "\nP.S. thanks")];
        check(
            base,
            "Hello,\nthe rent is due.\nRegards",
            &append,
            Ok("Hello,\nthe rent is due.\nRegards\nP.S. thanks"),
        );
    }
}
