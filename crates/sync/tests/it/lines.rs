//! Issue 46's invariant of merged bodies, as a property: three replicas of one note edit it at the same time
//! (whole lines, single words, lines added and removed, the whole note rewritten) and exchange what they have in
//! random orders, then all at the end. Every replica ends with the same body; every line of the common ancestor that
//! no replica changed is in it; and every line in it is one a replica wrote whole (no line mixes two replicas'
//! words). Every line written is unique, so a line in the result names who wrote it.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::sample::Index;
use quire_sync::doc::{NoteDoc, NoteState};

const REPLICAS: usize = 3;
const BASE_LINES: usize = 8;

#[derive(Debug, Clone)]
enum Edit {
    /// A line replaced by a new one.
    Replace(usize, Index),
    /// One word of a line changed.
    Word(usize, Index, Index),
    /// A line removed.
    Remove(usize, Index),
    /// A new line put before a line (or at the end).
    Add(usize, Index),
    /// The whole note written anew, keeping one line of it.
    Rewrite(usize, Index),
    /// What one replica has, given to another.
    Send(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let r = 0..REPLICAS;
    prop_oneof![
        3 => (r.clone(), any::<Index>()).prop_map(|(r, i)| Edit::Replace(r, i)),
        3 => (r.clone(), any::<Index>(), any::<Index>()).prop_map(|(r, i, w)| Edit::Word(r, i, w)),
        2 => (r.clone(), any::<Index>()).prop_map(|(r, i)| Edit::Remove(r, i)),
        2 => (r.clone(), any::<Index>()).prop_map(|(r, i)| Edit::Add(r, i)),
        1 => (r.clone(), any::<Index>()).prop_map(|(r, i)| Edit::Rewrite(r, i)),
        3 => (r.clone(), r).prop_map(|(a, b)| Edit::Send(a, b)),
    ]
}

struct World {
    docs: Vec<NoteDoc>,
    /// Every line any replica wrote, the base's included.
    written: BTreeSet<String>,
    /// The base's lines some replica removed or changed.
    touched: BTreeSet<String>,
    base: Vec<String>,
    next: u32,
}

impl World {
    fn new() -> Self {
        let base: Vec<String> = (0..BASE_LINES).map(|i| format!("base{i} alpha beta gamma")).collect();
        let state = NoteState {
            id: "n".into(),
            title: "t".into(),
            body: base.join("\n"),
            notebook_id: "b".into(),
            ..NoteState::default()
        };
        let mut first = NoteDoc::new(1).unwrap();
        first.fold(&state).unwrap();
        let saved = first.save().unwrap();
        let mut docs = vec![first];
        for peer in 2..=REPLICAS as u64 {
            docs.push(NoteDoc::load(&saved, peer).unwrap());
        }
        Self {
            docs,
            written: base.iter().cloned().collect(),
            touched: BTreeSet::new(),
            base,
            next: 0,
        }
    }

    fn fresh(&mut self, what: &str) -> String {
        self.next += 1;
        format!("{what}{}", self.next)
    }

    /// Changes replica `r`'s lines with `f`, which says which old lines it removed or changed.
    fn edit(&mut self, r: usize, f: impl FnOnce(&mut Vec<String>, &mut Self) -> Vec<String>) {
        let mut state = self.docs[r].state().unwrap();
        let mut lines: Vec<String> = state.body.split('\n').map(str::to_owned).collect();
        let gone = f(&mut lines, self);
        for line in gone {
            if self.base.contains(&line) {
                self.touched.insert(line);
            }
        }
        for line in &lines {
            self.written.insert(line.clone());
        }
        state.body = lines.join("\n");
        self.docs[r].fold(&state).unwrap();
    }

    fn send(&mut self, from: usize, to: usize) {
        if from == to {
            return;
        }
        let bytes = self.docs[from].updates_since(&self.docs[to].version()).unwrap();
        self.docs[to].import(&bytes).unwrap();
    }

    fn apply(&mut self, edit: Edit) {
        match edit {
            Edit::Replace(r, i) => self.edit(r, |lines, w| {
                let at = i.index(lines.len());
                let new = w.fresh("line");
                vec![std::mem::replace(&mut lines[at], new)]
            }),
            Edit::Word(r, i, word) => self.edit(r, |lines, w| {
                let at = i.index(lines.len());
                let mut words: Vec<String> = lines[at].split(' ').map(str::to_owned).collect();
                let which = word.index(words.len());
                words[which] = w.fresh("word");
                vec![std::mem::replace(&mut lines[at], words.join(" "))]
            }),
            Edit::Remove(r, i) => self.edit(r, |lines, _| {
                if lines.len() < 2 {
                    return Vec::new();
                }
                vec![lines.remove(i.index(lines.len()))]
            }),
            Edit::Add(r, i) => self.edit(r, |lines, w| {
                let at = i.index(lines.len() + 1);
                let new = w.fresh("added");
                lines.insert(at, new);
                Vec::new()
            }),
            Edit::Rewrite(r, keep) => self.edit(r, |lines, w| {
                let kept = lines[keep.index(lines.len())].clone();
                let old = std::mem::take(lines);
                *lines = vec![w.fresh("new"), kept.clone(), w.fresh("new")];
                old.into_iter().filter(|l| *l != kept).collect()
            }),
            Edit::Send(from, to) => self.send(from, to),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn no_line_nobody_changed_is_lost_and_no_line_mixes_two_versions(edits in proptest::collection::vec(edit(), 1..40)) {
        let mut world = World::new();
        for edit in edits {
            world.apply(edit);
        }
        for _ in 0..2 {
            for from in 0..REPLICAS {
                for to in 0..REPLICAS {
                    world.send(from, to);
                }
            }
        }
        let bodies: Vec<String> = world.docs.iter().map(|d| d.state().unwrap().body).collect();
        prop_assert_eq!(&bodies[0], &bodies[1]);
        prop_assert_eq!(&bodies[0], &bodies[2]);
        let lines: BTreeSet<&str> = bodies[0].split('\n').collect();
        for line in &world.base {
            if !world.touched.contains(line) {
                prop_assert!(lines.contains(line.as_str()), "untouched line {:?} lost: {:?}", line, bodies[0]);
            }
        }
        for line in &lines {
            prop_assert!(world.written.contains(*line), "a line nobody wrote: {:?} in {:?}", line, bodies[0]);
        }
    }
}
