//! Three-way comparison of a body: where two replicas changed the same lines of the text they shared
//! ([`Clash`]), and the merge by words a person may choose for such a place ([`merge_words`]).

use std::collections::BTreeSet;
use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices};

/// A place in a body that two replicas changed at the same time, from the same lines: both versions are in the
/// merged body, whole, one after the other, until the person keeps one (see [the module](super)). Each text is
/// whole lines with their line ends; an empty text is lines removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The lines both started from.
    pub base: String,
    /// What this replica made of them.
    pub ours: String,
    /// What the other replica made of them.
    pub theirs: String,
}

impl Clash {
    /// The same on every device for one conflict (each device's `ours` is the other's `theirs`): a hash of the base
    /// and the two versions in order, in hex. What [`crate::doc::NoteDoc::settle`] records.
    pub fn key(base: &str, ours: &str, theirs: &str) -> String {
        use sha2::Digest;
        let (first, second) = if ours <= theirs { (ours, theirs) } else { (theirs, ours) };
        let mut hash = sha2::Sha256::new();
        for part in [base, first, second] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
        hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// One side's change of a run of base tokens.
#[derive(Debug, Clone)]
struct Hunk {
    old: Range<usize>,
    new: Range<usize>,
}

fn hunks(base: &[&str], side: &[&str]) -> Vec<Hunk> {
    capture_diff_slices(Algorithm::Myers, base, side)
        .into_iter()
        .filter_map(|op| {
            let (tag, old, new) = op.as_tag_tuple();
            (tag != DiffTag::Equal).then_some(Hunk { old, new })
        })
        .collect()
}

/// Whether two hunks of different sides touch the same base tokens. For lines (`strict` false) an insertion touches
/// a change around it, and two insertions at one place do not touch (both are kept). For words (`strict`) hunks that
/// meet touch too: a word added right beside a word the other side replaced would make a phrase neither wrote.
fn touch(a: &Hunk, b: &Hunk, strict: bool) -> bool {
    let inside = |p: usize, r: &Range<usize>| {
        if strict {
            r.start <= p && p <= r.end
        } else {
            r.start < p && p < r.end
        }
    };
    match (a.old.is_empty(), b.old.is_empty()) {
        (false, false) if strict => a.old.start <= b.old.end && b.old.start <= a.old.end,
        (false, false) => a.old.start < b.old.end && b.old.start < a.old.end,
        (true, false) => inside(a.old.start, &b.old),
        (false, true) => inside(b.old.start, &a.old),
        (true, true) => strict && a.old.start == b.old.start,
    }
}

/// A run of base tokens both sides changed: the base range, and each side's hunks inside it.
struct Region {
    base: Range<usize>,
    ours: Vec<Hunk>,
    theirs: Vec<Hunk>,
}

/// The places both sides changed, in base order: hunks of the two sides that touch, joined transitively.
fn regions(ours: &[Hunk], theirs: &[Hunk], strict: bool) -> Vec<Region> {
    // Union-find over the hunks of both sides (ours first, then theirs).
    let n = ours.len() + theirs.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, a) in ours.iter().enumerate() {
        for (j, b) in theirs.iter().enumerate() {
            if touch(a, b, strict) {
                let (x, y) = (root(&mut parent, i), root(&mut parent, ours.len() + j));
                parent[x] = y;
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Region> = std::collections::BTreeMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        let (hunk, is_ours) = if i < ours.len() {
            (&ours[i], true)
        } else {
            (&theirs[i - ours.len()], false)
        };
        let region = groups.entry(r).or_insert_with(|| Region {
            base: hunk.old.clone(),
            ours: Vec::new(),
            theirs: Vec::new(),
        });
        region.base.start = region.base.start.min(hunk.old.start);
        region.base.end = region.base.end.max(hunk.old.end);
        if is_ours {
            region.ours.push(hunk.clone());
        } else {
            region.theirs.push(hunk.clone());
        }
    }
    let mut out: Vec<Region> = groups
        .into_values()
        .filter(|r| !r.ours.is_empty() && !r.theirs.is_empty())
        .collect();
    out.sort_by_key(|r| (r.base.start, r.base.end));
    out
}

/// A side's text of `base_range`: the base tokens there with the side's `hunks` applied.
fn side_text(base: &[&str], side: &[&str], base_range: &Range<usize>, hunks: &[Hunk]) -> String {
    let mut out = String::new();
    let mut at = base_range.start;
    let mut sorted = hunks.to_vec();
    sorted.sort_by_key(|h| (h.old.start, h.old.end));
    for hunk in sorted {
        out.push_str(&base[at..hunk.old.start].concat());
        out.push_str(&side[hunk.new.clone()].concat());
        at = hunk.old.end;
    }
    out.push_str(&base[at.min(base_range.end)..base_range.end].concat());
    out
}

/// The places where `ours` and `theirs`, both made from `base`, changed the same lines, with the text of each.
/// Two sides that add lines at the same place do not clash (both are kept, one after the other); two that change
/// the same lines do, also the same way (a change made on both sides is kept twice), but for the same lines removed
/// on both.
pub fn clashes(base: &str, ours: &str, theirs: &str) -> Vec<Clash> {
    fn lines(text: &str) -> Vec<&str> {
        text.split_inclusive('\n').collect()
    }
    let (b, o, t) = (lines(base), lines(ours), lines(theirs));
    let (ours_hunks, theirs_hunks) = (hunks(&b, &o), hunks(&b, &t));
    regions(&ours_hunks, &theirs_hunks, false)
        .into_iter()
        .map(|r| Clash {
            base: b[r.base.clone()].concat(),
            ours: side_text(&b, &o, &r.base, &r.ours),
            theirs: side_text(&b, &t, &r.base, &r.theirs),
        })
        // The same lines removed on both sides: removed once, nothing to choose.
        .filter(|c| !(c.ours.is_empty() && c.theirs.is_empty()))
        .collect()
}

/// One side of a conflict against its base: for each base line whether the side kept it, and the lines it added.
fn side_changes(base: &[&str], side: &[&str]) -> (Vec<bool>, Vec<String>) {
    let mut kept = vec![false; base.len()];
    let mut added = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, base, side) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            for i in old {
                kept[i] = true;
            }
        } else {
            added.extend(new.map(|k| side[k].to_owned()));
        }
    }
    (kept, added)
}

/// The lines a body merged by lines holds of a conflict's place (as sync merges: both sides' removals, both sides'
/// additions): each side's added lines and the base lines neither removed, in no particular order. How a conflict
/// is found in its note, whichever lines each side's texts span (two changes that overlap by one line make texts
/// of three lines on each side, and neither is whole in the body). Each line with its line end.
pub fn merged_lines(base: &str, ours: &str, theirs: &str) -> Vec<String> {
    let b: Vec<&str> = base.split_inclusive('\n').collect();
    let (o, t): (Vec<&str>, Vec<&str>) = (
        ours.split_inclusive('\n').collect(),
        theirs.split_inclusive('\n').collect(),
    );
    let ((kept_o, mut out), (kept_t, added_t)) = (side_changes(&b, &o), side_changes(&b, &t));
    out.extend(added_t);
    out.extend(
        (0..b.len())
            .filter(|&i| kept_o[i] && kept_t[i])
            .map(|i| b[i].to_owned()),
    );
    out
}

/// The lines each side of a conflict added (blank ones left out): how one conflict is told on devices that recorded
/// it with different texts.
pub(crate) fn added_sides(base: &str, ours: &str, theirs: &str) -> [BTreeSet<String>; 2] {
    let b: Vec<&str> = base.split_inclusive('\n').collect();
    [ours, theirs].map(|text| {
        let side: Vec<&str> = text.split_inclusive('\n').collect();
        let (_, added) = side_changes(&b, &side);
        added.into_iter().filter(|l| !l.trim().is_empty()).collect()
    })
}

/// The conflicts settled by keeping both versions, as a note's document holds them ([`crate::doc::NoteDoc::settle`]):
/// each one's [`Clash::key`] and the lines each side added ([`None`] from an older quire: the key only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settled(pub(crate) std::collections::BTreeMap<String, Option<[BTreeSet<String>; 2]>>);

impl Settled {
    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the conflict of `ours` and `theirs` (from `base`) is one of these: its key, or the same edits recorded
    /// from another place. Two devices may record one conflict with different texts (a third device's edit beside
    /// it widens one device's sides, its own version then holding that edit too), so keys differ; but the sides
    /// pair up, each pair sharing an added line (a side that only removed lines has none, and tells nothing), and
    /// at least one pair does. A change made alike on both sides (the same lines twice) is told by its key only: its
    /// lines are as likely in a place settled long before (found by the chaos run: a line left twice).
    pub fn holds(&self, base: &str, ours: &str, theirs: &str) -> bool {
        if self.0.contains_key(&Clash::key(base, ours, theirs)) {
            return true;
        }
        let local = added_sides(base, ours, theirs);
        if local.iter().all(BTreeSet::is_empty) || local[0] == local[1] {
            return false;
        }
        let pairs = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> Option<bool> {
            (!a.is_empty() && !b.is_empty()).then(|| !a.is_disjoint(b))
        };
        self.0.values().flatten().any(|settled| {
            [[0, 1], [1, 0]].iter().any(|order| {
                let met: Vec<Option<bool>> = (0..2).map(|k| pairs(&settled[k], &local[order[k]])).collect();
                met.iter().all(|m| *m != Some(false)) && met.contains(&Some(true))
            })
        })
    }
}

/// `base` with the lines `ours` and `theirs` both added (a line not of `base` on either side, matched between the
/// two sides), each after the base line it follows in `ours`. Merged from here, a line both sides added is added
/// once, wherever each side's diff against `base` happens to group it (a line replaced beside a line removed made
/// one hunk on one side and two on the other: found by the chaos run, a line twice).
pub(crate) fn with_shared_changes(base: &str, ours: &str, theirs: &str) -> String {
    fn lines(text: &str) -> Vec<&str> {
        text.split_inclusive('\n').collect()
    }
    /// For each line of `side`: `None` when it is a line of `base` kept, else `Some(after)`, the base line it comes
    /// after (`None` inside: at the start).
    fn added(base: &[&str], side: &[&str]) -> Vec<Option<Option<usize>>> {
        let mut out = vec![None; side.len()];
        for op in capture_diff_slices(Algorithm::Myers, base, side) {
            let (tag, old, new) = op.as_tag_tuple();
            if matches!(tag, DiffTag::Insert | DiffTag::Replace) {
                for k in new {
                    out[k] = Some(old.start.checked_sub(1));
                }
            }
        }
        out
    }
    let (b, o, t) = (lines(base), lines(ours), lines(theirs));
    let (in_ours, in_theirs) = (added(&b, &o), added(&b, &t));
    let mut after: std::collections::BTreeMap<Option<usize>, Vec<&str>> = std::collections::BTreeMap::new();
    for op in capture_diff_slices(Algorithm::Myers, &o, &t) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag != DiffTag::Equal {
            continue;
        }
        for (i, j) in old.zip(new) {
            if let (Some(place), Some(_)) = (in_ours[i], in_theirs[j]) {
                after.entry(place).or_default().push(o[i]);
            }
        }
    }
    let mut out: String = after.get(&None).map(|l| l.concat()).unwrap_or_default();
    for (i, line) in b.iter().enumerate() {
        out.push_str(line);
        if let Some(added) = after.get(&Some(i)) {
            out.push_str(&added.concat());
        }
    }
    out
}

/// Words and the spaces between them, each a token.
fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut space = None;
    for (i, c) in text.char_indices() {
        let is_space = c.is_whitespace();
        if space.is_some_and(|s| s != is_space) {
            out.push(&text[start..i]);
            start = i;
        }
        space = Some(is_space);
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// `base` with both sides' changes made by words, when they changed different words with at least one word left
/// as it was between them (a change made the same way on both sides counts once); `None` when they changed the
/// same or neighbouring words.
pub fn merge_words(base: &str, ours: &str, theirs: &str) -> Option<String> {
    let (b, o, t) = (words(base), words(ours), words(theirs));
    let (mut ours_hunks, mut theirs_hunks) = (hunks(&b, &o), hunks(&b, &t));
    // The same change on both sides is one change.
    theirs_hunks.retain(|th| {
        !ours_hunks
            .iter()
            .any(|oh| oh.old == th.old && o[oh.new.clone()] == t[th.new.clone()])
    });
    if !regions(&ours_hunks, &theirs_hunks, true).is_empty() {
        return None;
    }
    let mut all: Vec<(Hunk, bool)> = ours_hunks.drain(..).map(|h| (h, true)).collect();
    all.extend(theirs_hunks.drain(..).map(|h| (h, false)));
    all.sort_by_key(|(h, _)| (h.old.start, h.old.end));
    let mut out = String::new();
    let mut at = 0;
    for (hunk, is_ours) in all {
        out.push_str(&b[at..hunk.old.start.max(at)].concat());
        out.push_str(
            &if is_ours {
                &o[hunk.new.clone()]
            } else {
                &t[hunk.new.clone()]
            }
            .concat(),
        );
        at = at.max(hunk.old.end);
    }
    out.push_str(&b[at..].concat());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_line_changed_on_both_sides_clashes_and_different_lines_do_not() {
        let base = "Milk\nEggs\nBread\n";
        assert_eq!(
            clashes(
                base,
                "Milk\nEggs x12 (desk)\nBread\n",
                "Milk\nBrown eggs (laptop)\nBread\n"
            ),
            vec![Clash {
                base: "Eggs\n".into(),
                ours: "Eggs x12 (desk)\n".into(),
                theirs: "Brown eggs (laptop)\n".into(),
            }]
        );
        assert!(clashes(base, "Milk (2)\nEggs\nBread\n", "Milk\nEggs\nBread\nJam\n").is_empty());
        assert!(clashes(base, "Milk\nEggs\nBread\nTea\n", "Milk\nEggs\nBread\nJam\n").is_empty());
        assert_eq!(
            clashes(base, "Milk\nBread\n", "Milk\nRye eggs\nBread\n")[0].ours,
            "",
            "a removal against an edit clashes"
        );
        assert_eq!(clashes(base, "Milk\nEggs!\nBread\n", "Milk\nEggs!\nBread\n").len(), 1);
    }

    #[test]
    fn words_merge_when_different_words_changed() {
        assert_eq!(
            merge_words("Brown eggs x12\n", "White eggs x12\n", "Brown eggs x6\n").as_deref(),
            Some("White eggs x6\n")
        );
        assert_eq!(merge_words("Eggs\n", "Eggs x12 (desk)\n", "Eggs x12 (laptop)\n"), None);
        assert_eq!(merge_words("a b\n", "a c\n", "a c\n").as_deref(), Some("a c\n"));
        assert_eq!(merge_words("Bread\n", "", "Rye bread\n"), None);
        assert_eq!(
            merge_words("Eggs\n", "Eggs x12 (desk)\n", "Brown eggs (laptop)\n"),
            None,
            "words added beside a word the other side replaced"
        );
    }
}
