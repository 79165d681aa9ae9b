//! Convergence of the merge model: three replicas in one process make random changes to notes and notebooks and
//! exchange updates in random orders, with batches duplicated, reordered, and dropped then sent again. After a
//! final full exchange every replica holds the same notes and the same tree, the tree has no cycle and every
//! parent exists, and every marker word that was written and never deleted is in its note's body.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use proptest::sample::Index;
use quire_sync::doc::{Label, NoteDoc, NoteState, NotebookState, TreeDoc};

const REPLICAS: usize = 3;

/// A marker word: two characters that appear nowhere else (one from the CJK block, one from Hangul), so a text
/// diff can only record them as inserted, never match them with other text.
fn marker(k: u32) -> String {
    [0x4E00 + k, 0xAC00 + k]
        .iter()
        .filter_map(|c| char::from_u32(*c))
        .collect()
}

/// The number of the marker a character belongs to, if it is one.
fn marker_of(c: char) -> Option<u32> {
    let c = u32::from(c);
    match c {
        0x4E00..0x9F00 => Some(c - 0x4E00),
        0xAC00..0xD700 => Some(c - 0xAC00),
        _ => None,
    }
}

/// The first character of a marker: a position right after it would split the word.
fn starts_marker(c: char) -> bool {
    (0x4E00..0x9F00).contains(&u32::from(c))
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        r: usize,
        note: Index,
        at: Index,
    },
    Delete {
        r: usize,
        note: Index,
        at: Index,
        len: usize,
    },
    Rename {
        r: usize,
        note: Index,
        title: u8,
    },
    Tag {
        r: usize,
        note: Index,
        tag: u8,
    },
    Label {
        r: usize,
        note: Index,
        name: u8,
        value: u8,
        json: bool,
    },
    Unlabel {
        r: usize,
        note: Index,
        name: u8,
    },
    Trash {
        r: usize,
        note: Index,
        at: i64,
    },
    Protect {
        r: usize,
        note: Index,
    },
    Seal {
        r: usize,
        note: Index,
        sealed: Option<Vec<u8>>,
    },
    Todo {
        r: usize,
        note: Index,
        done: Option<i64>,
    },
    CreateNote {
        r: usize,
        notebook: Index,
    },
    MoveNote {
        r: usize,
        note: Index,
        notebook: Index,
    },
    CreateNotebook {
        r: usize,
        parent: Option<Index>,
    },
    MoveNotebook {
        r: usize,
        notebook: Index,
        into: Option<Index>,
    },
    /// Two replicas each move one notebook into the other, before either hears of the other's move.
    CrossMove {
        a: Index,
        b: Index,
    },
    RenameNotebook {
        r: usize,
        notebook: Index,
        title: u8,
    },
    RemoveNotebook {
        r: usize,
        notebook: Index,
    },
    Send {
        from: usize,
        to: usize,
    },
    Deliver {
        pick: Index,
        again: bool,
    },
    Drop {
        pick: Index,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let r = 0..REPLICAS;
    let i = any::<Index>;
    prop_oneof![
        6 => (r.clone(), i(), i()).prop_map(|(r, note, at)| Op::Insert { r, note, at }),
        3 => (r.clone(), i(), i(), 1..8usize).prop_map(|(r, note, at, len)| Op::Delete { r, note, at, len }),
        2 => (r.clone(), i(), any::<u8>()).prop_map(|(r, note, title)| Op::Rename { r, note, title }),
        2 => (r.clone(), i(), 0..4u8).prop_map(|(r, note, tag)| Op::Tag { r, note, tag }),
        1 => (r.clone(), i(), 0..3u8, any::<u8>(), any::<bool>())
            .prop_map(|(r, note, name, value, json)| Op::Label { r, note, name, value, json }),
        1 => (r.clone(), i(), 0..3u8).prop_map(|(r, note, name)| Op::Unlabel { r, note, name }),
        1 => (r.clone(), i(), 1..1_000i64).prop_map(|(r, note, at)| Op::Trash { r, note, at }),
        1 => (r.clone(), i()).prop_map(|(r, note)| Op::Protect { r, note }),
        1 => (r.clone(), i(), proptest::option::of(proptest::collection::vec(any::<u8>(), 0..24)))
            .prop_map(|(r, note, sealed)| Op::Seal { r, note, sealed }),
        1 => (r.clone(), i(), proptest::option::of(1..1_000i64)).prop_map(|(r, note, done)| Op::Todo { r, note, done }),
        1 => (r.clone(), i()).prop_map(|(r, notebook)| Op::CreateNote { r, notebook }),
        1 => (r.clone(), i(), i()).prop_map(|(r, note, notebook)| Op::MoveNote { r, note, notebook }),
        1 => (r.clone(), proptest::option::of(i())).prop_map(|(r, parent)| Op::CreateNotebook { r, parent }),
        2 => (r.clone(), i(), proptest::option::of(i()))
            .prop_map(|(r, notebook, into)| Op::MoveNotebook { r, notebook, into }),
        1 => (i(), i()).prop_map(|(a, b)| Op::CrossMove { a, b }),
        1 => (r.clone(), i(), any::<u8>()).prop_map(|(r, notebook, title)| Op::RenameNotebook { r, notebook, title }),
        1 => (r.clone(), i()).prop_map(|(r, notebook)| Op::RemoveNotebook { r, notebook }),
        4 => (r.clone(), r).prop_map(|(from, to)| Op::Send { from, to }),
        5 => (i(), any::<bool>()).prop_map(|(pick, again)| Op::Deliver { pick, again }),
        1 => i().prop_map(|pick| Op::Drop { pick }),
    ]
}

/// Which document a batch is for.
#[derive(Debug, Clone)]
enum Doc {
    Tree,
    Note(String),
}

#[derive(Debug, Clone)]
struct Batch {
    to: usize,
    doc: Doc,
    bytes: Vec<u8>,
}

struct Replica {
    peer: u64,
    notes: BTreeMap<String, NoteDoc>,
    tree: TreeDoc,
}

/// The three replicas, the batches on their way, and what the test must find at the end.
struct World {
    replicas: Vec<Replica>,
    in_flight: Vec<Batch>,
    dropped: Vec<Batch>,
    next_id: u32,
    /// Marker number -> the note it was written into.
    written: BTreeMap<u32, String>,
    /// Markers some replica deleted (whole or in part).
    deleted: BTreeSet<u32>,
}

impl World {
    /// Replica 0 writes a common start; replica 1 loads its saved documents, replica 2 imports its updates.
    fn new() -> Self {
        let mut first = Replica {
            peer: 1,
            notes: BTreeMap::new(),
            tree: TreeDoc::new(1).unwrap(),
        };
        first
            .tree
            .fold(&[notebook("b0", None), notebook("b1", Some("b0"))])
            .unwrap();
        for (id, notebook_id, body) in [("n0", "b0", "alpha beta gamma"), ("n1", "b1", "one two")] {
            let mut doc = NoteDoc::new(1).unwrap();
            doc.fold(&NoteState {
                id: id.into(),
                title: format!("title of {id}"),
                body: body.into(),
                notebook_id: notebook_id.into(),
                ..NoteState::default()
            })
            .unwrap();
            first.notes.insert(id.into(), doc);
        }
        let loaded = Replica {
            peer: 2,
            notes: first
                .notes
                .iter()
                .map(|(id, doc)| (id.clone(), NoteDoc::load(&doc.save().unwrap(), 2).unwrap()))
                .collect(),
            tree: TreeDoc::load(&first.tree.save().unwrap(), 2).unwrap(),
        };
        let mut imported = Replica {
            peer: 3,
            notes: BTreeMap::new(),
            tree: TreeDoc::new(3).unwrap(),
        };
        imported.tree.import(&first.tree.updates_since(&[]).unwrap()).unwrap();
        for (id, doc) in &first.notes {
            let mut copy = NoteDoc::new(3).unwrap();
            copy.import(&doc.updates_since(&[]).unwrap()).unwrap();
            imported.notes.insert(id.clone(), copy);
        }
        Self {
            replicas: vec![first, loaded, imported],
            in_flight: Vec::new(),
            dropped: Vec::new(),
            next_id: 100,
            written: BTreeMap::new(),
            deleted: BTreeSet::new(),
        }
    }

    fn fresh(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    /// Changes one note on replica `r` as the device would: read its state, change the plain copy, fold it in.
    fn edit_note(&mut self, r: usize, pick: &Index, change: impl FnOnce(&mut NoteState, &mut Self)) {
        let ids: Vec<String> = self.replicas[r].notes.keys().cloned().collect();
        let id = ids[pick.index(ids.len())].clone();
        let mut state = self.replicas[r].notes[&id].state().unwrap();
        change(&mut state, self);
        let doc = self.replicas[r].notes.get_mut(&id).unwrap();
        doc.fold(&state).unwrap();
        assert_eq!(
            doc.state().as_ref(),
            Some(&state),
            "a fold reads back as what was folded"
        );
    }

    /// Changes the notebooks on replica `r` the same way.
    fn edit_tree(&mut self, r: usize, change: impl FnOnce(&mut BTreeMap<String, NotebookState>, &mut Self)) {
        let mut notebooks: BTreeMap<String, NotebookState> = self.replicas[r]
            .tree
            .state()
            .into_iter()
            .map(|n| (n.id.clone(), n))
            .collect();
        change(&mut notebooks, self);
        let states: Vec<NotebookState> = notebooks.into_values().collect();
        let tree = &mut self.replicas[r].tree;
        tree.fold(&states).unwrap();
        assert_eq!(tree.state(), states, "a fold reads back as what was folded");
    }

    fn notebook_ids(&self, r: usize) -> Vec<String> {
        self.replicas[r].tree.state().into_iter().map(|n| n.id).collect()
    }

    /// Moves `notebook` into `into` on replica `r` unless that would put it inside itself there.
    fn move_notebook(&mut self, r: usize, notebook: &str, into: Option<&str>) {
        self.edit_tree(r, |notebooks, _| {
            if let Some(into) = into
                && is_within(notebooks, into, notebook)
            {
                return;
            }
            if let Some(n) = notebooks.get_mut(notebook) {
                n.parent_id = into.map(str::to_owned);
            }
        });
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Insert { r, note, at } => {
                let k = self.fresh();
                self.edit_note(r, &note, |state, world| {
                    let chars: Vec<char> = state.body.chars().collect();
                    let gaps: Vec<usize> = (0..=chars.len())
                        .filter(|&p| p == 0 || !starts_marker(chars[p - 1]))
                        .collect();
                    let p = gaps[at.index(gaps.len())];
                    let mut body: String = chars[..p].iter().collect();
                    body.push_str(&marker(k));
                    body.extend(&chars[p..]);
                    state.body = body;
                    world.written.insert(k, state.id.clone());
                });
            }
            Op::Delete { r, note, at, len } => self.edit_note(r, &note, |state, world| {
                let chars: Vec<char> = state.body.chars().collect();
                let start = at.index(chars.len() + 1);
                let end = (start + len).min(chars.len());
                world
                    .deleted
                    .extend(chars[start..end].iter().filter_map(|c| marker_of(*c)));
                state.body = chars[..start].iter().chain(&chars[end..]).collect();
            }),
            Op::Rename { r, note, title } => self.edit_note(r, &note, |s, _| s.title = format!("title {title}")),
            Op::Tag { r, note, tag } => self.edit_note(r, &note, |s, _| {
                let tag = format!("tag{tag}");
                if !s.tags.remove(&tag) {
                    s.tags.insert(tag);
                }
            }),
            Op::Label {
                r,
                note,
                name,
                value,
                json,
            } => self.edit_note(r, &note, |s, _| {
                let value = if json {
                    format!("{{\"v\":{value}}}")
                } else {
                    format!("value {value}")
                };
                s.labels.insert(format!("label{name}"), Label { value, json });
            }),
            Op::Unlabel { r, note, name } => self.edit_note(r, &note, |s, _| {
                s.labels.remove(&format!("label{name}"));
            }),
            Op::Trash { r, note, at } => self.edit_note(r, &note, |s, _| {
                s.trashed = if s.trashed.is_some() { None } else { Some(at) };
            }),
            Op::Protect { r, note } => self.edit_note(r, &note, |s, _| s.protected = !s.protected),
            Op::Seal { r, note, sealed } => self.edit_note(r, &note, |s, world| {
                if sealed.is_some() {
                    // Sealing takes the text out of the body: the markers in it are deleted on this replica.
                    world.deleted.extend(s.body.chars().filter_map(marker_of));
                    s.body.clear();
                }
                s.sealed = sealed;
                s.version += 1;
            }),
            Op::Todo { r, note, done } => self.edit_note(r, &note, |s, _| {
                s.is_todo = !s.is_todo;
                s.todo_completed = if s.is_todo { done } else { None };
            }),
            Op::CreateNote { r, notebook } => {
                let id = format!("n{}", self.fresh());
                let notebooks = self.notebook_ids(r);
                let mut doc = NoteDoc::new(self.replicas[r].peer).unwrap();
                doc.fold(&NoteState {
                    id: id.clone(),
                    title: format!("new {id}"),
                    body: "some words".into(),
                    notebook_id: notebooks[notebook.index(notebooks.len())].clone(),
                    ..NoteState::default()
                })
                .unwrap();
                self.replicas[r].notes.insert(id, doc);
            }
            Op::MoveNote { r, note, notebook } => {
                let notebooks = self.notebook_ids(r);
                let to = notebooks[notebook.index(notebooks.len())].clone();
                self.edit_note(r, &note, |s, _| s.notebook_id = to);
            }
            Op::CreateNotebook { r, parent } => {
                let id = format!("b{}", self.fresh());
                self.edit_tree(r, |notebooks, _| {
                    let ids: Vec<String> = notebooks.keys().cloned().collect();
                    let parent_id = parent.map(|p| ids[p.index(ids.len())].clone());
                    notebooks.insert(
                        id.clone(),
                        NotebookState {
                            title: format!("notebook {id}"),
                            ..notebook(&id, parent_id.as_deref())
                        },
                    );
                });
            }
            Op::MoveNotebook { r, notebook, into } => {
                let ids = self.notebook_ids(r);
                let moved = ids[notebook.index(ids.len())].clone();
                let into = into.map(|i| ids[i.index(ids.len())].clone());
                self.move_notebook(r, &moved, into.as_deref());
            }
            Op::CrossMove { a, b } => {
                let ids = self.notebook_ids(0);
                let (a, b) = (ids[a.index(ids.len())].clone(), ids[b.index(ids.len())].clone());
                if a != b && self.notebook_ids(1).contains(&a) && self.notebook_ids(1).contains(&b) {
                    self.move_notebook(0, &a, Some(&b));
                    self.move_notebook(1, &b, Some(&a));
                }
            }
            Op::RenameNotebook { r, notebook, title } => self.edit_tree(r, |notebooks, _| {
                let ids: Vec<String> = notebooks.keys().cloned().collect();
                let id = &ids[notebook.index(ids.len())];
                if let Some(n) = notebooks.get_mut(id) {
                    n.title = format!("renamed {title}");
                }
            }),
            Op::RemoveNotebook { r, notebook } => self.edit_tree(r, |notebooks, _| {
                let ids: Vec<String> = notebooks.keys().cloned().collect();
                let id = &ids[notebook.index(ids.len())];
                if let Some(n) = notebooks.get_mut(id) {
                    n.gone = !n.gone;
                }
            }),
            Op::Send { from, to } if from != to => self.send(from, to),
            Op::Send { .. } => {}
            Op::Deliver { pick, again } if !self.in_flight.is_empty() => {
                let at = pick.index(self.in_flight.len());
                let batch = if again {
                    self.in_flight[at].clone()
                } else {
                    self.in_flight.remove(at)
                };
                self.deliver(&batch);
            }
            Op::Drop { pick } if !self.in_flight.is_empty() => {
                let batch = self.in_flight.remove(pick.index(self.in_flight.len()));
                self.dropped.push(batch);
            }
            Op::Deliver { .. } | Op::Drop { .. } => {}
        }
    }

    /// Puts on the way, for every document `from` has, what `to` lacks of it as `from` knows now.
    fn send(&mut self, from: usize, to: usize) {
        let (sender, receiver) = (&self.replicas[from], &self.replicas[to]);
        let mut batches = vec![Batch {
            to,
            doc: Doc::Tree,
            bytes: sender.tree.updates_since(&receiver.tree.version()).unwrap(),
        }];
        for (id, doc) in &sender.notes {
            let version = receiver.notes.get(id).map(NoteDoc::version).unwrap_or_default();
            batches.push(Batch {
                to,
                doc: Doc::Note(id.clone()),
                bytes: doc.updates_since(&version).unwrap(),
            });
        }
        self.in_flight.extend(batches);
    }

    fn deliver(&mut self, batch: &Batch) {
        let replica = &mut self.replicas[batch.to];
        match &batch.doc {
            Doc::Tree => replica.tree.import(&batch.bytes).map(drop),
            Doc::Note(id) => {
                let peer = replica.peer;
                let doc = replica
                    .notes
                    .entry(id.clone())
                    .or_insert_with(|| NoteDoc::new(peer).unwrap());
                doc.import(&batch.bytes).map(drop)
            }
        }
        .unwrap();
    }

    /// Everything dropped is sent again, everything on the way arrives (the latest first), then every replica
    /// exchanges with every other until all have everything.
    fn settle(&mut self) {
        self.in_flight.append(&mut self.dropped);
        while let Some(batch) = self.in_flight.pop() {
            self.deliver(&batch);
        }
        for _ in 0..2 {
            for from in 0..REPLICAS {
                for to in 0..REPLICAS {
                    if from != to {
                        self.send(from, to);
                        while let Some(batch) = self.in_flight.pop() {
                            self.deliver(&batch);
                        }
                    }
                }
            }
        }
    }
}

fn notebook(id: &str, parent: Option<&str>) -> NotebookState {
    NotebookState {
        id: id.into(),
        parent_id: parent.map(str::to_owned),
        title: format!("notebook {id}"),
        protected: false,
        gone: false,
    }
}

/// Whether `inner` is `outer` or inside it.
fn is_within(notebooks: &BTreeMap<String, NotebookState>, inner: &str, outer: &str) -> bool {
    let mut at = Some(inner.to_owned());
    for _ in 0..=notebooks.len() {
        match at {
            Some(id) if id == outer => return true,
            Some(id) => at = notebooks.get(&id).and_then(|n| n.parent_id.clone()),
            None => return false,
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn three_replicas_converge_and_lose_no_write(ops in proptest::collection::vec(op(), 1..80)) {
        let mut world = World::new();
        for op in ops {
            world.apply(op);
        }
        world.settle();

        let notes: Vec<BTreeMap<String, NoteState>> = world
            .replicas
            .iter()
            .map(|r| r.notes.iter().map(|(id, doc)| (id.clone(), doc.state().unwrap())).collect())
            .collect();
        let trees: Vec<Vec<NotebookState>> = world.replicas.iter().map(|r| r.tree.state()).collect();
        prop_assert_eq!(&notes[0], &notes[1]);
        prop_assert_eq!(&notes[0], &notes[2]);
        prop_assert_eq!(&trees[0], &trees[1]);
        prop_assert_eq!(&trees[0], &trees[2]);

        let tree: BTreeMap<String, NotebookState> = trees[0].iter().map(|n| (n.id.clone(), n.clone())).collect();
        for notebook in tree.values() {
            if let Some(parent) = &notebook.parent_id {
                prop_assert!(tree.contains_key(parent), "the parent of {} exists", notebook.id);
                prop_assert!(!is_within(&tree, parent, &notebook.id), "{} is not inside itself", notebook.id);
            }
        }
        for (k, note) in &world.written {
            if !world.deleted.contains(k) {
                let body = &notes[0][note].body;
                prop_assert!(body.contains(&marker(*k)), "marker {} is in note {}: {:?}", k, note, body);
            }
        }
    }
}
