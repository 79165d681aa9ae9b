//! Convergence of whole workspaces: three replicas in one process, random writes on each through core's write path,
//! random syncs and compactions, batch and snapshot files hidden for a while (a folder that delivers out of order, a
//! listing that lags, a snapshot half uploaded); once everything is exchanged, every replica holds the same notes,
//! bodies, notebooks, tags and labels, no text inserted anywhere is lost, and a device that joins last (starting
//! from snapshots where batches were removed) holds the same.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use quire_core::{Actor, AttributeKind, NewNote, NewNotebook, NoteUpdate, Page, Workspace, Writer};
use quire_sync::{Address, Device, SyncKey};

use crate::files_under;

const REPLICAS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    Attach {
        note: usize,
    },
    Detach {
        note: usize,
    },
    Create {
        notebook: usize,
    },
    /// What an import does: a notebook and notes with tags and a label, in one transaction (one change set).
    Import,
    Insert {
        note: usize,
        at: usize,
    },
    Rename {
        note: usize,
        title: u8,
    },
    Notebook {
        parent: usize,
    },
    MoveNotebook {
        notebook: usize,
        into: usize,
    },
    MoveNote {
        note: usize,
        notebook: usize,
    },
    Tag {
        note: usize,
        tag: u8,
        on: bool,
    },
    Label {
        note: usize,
        value: u8,
    },
    Trash {
        note: usize,
        back: bool,
    },
    Protect {
        note: usize,
        on: bool,
    },
    Undo,
    Sync,
    /// A sync that writes a snapshot and removes what every device has applied.
    Compact,
    /// Batches made, not uploaded (a sync stopped after its first step).
    Fold,
    Send,
    /// Other devices' batches applied while changes made here wait to be folded.
    Receive,
    Hide {
        file: usize,
    },
    Unhide,
}

fn op(undo: bool) -> impl Strategy<Value = (usize, Op)> {
    let i = any::<usize>;
    let ops = prop_oneof![
        3 => i().prop_map(|notebook| Op::Create { notebook }),
        1 => Just(Op::Import),
        6 => (i(), i()).prop_map(|(note, at)| Op::Insert { note, at }),
        1 => (i(), 0..4u8).prop_map(|(note, title)| Op::Rename { note, title }),
        1 => i().prop_map(|parent| Op::Notebook { parent }),
        1 => (i(), i()).prop_map(|(notebook, into)| Op::MoveNotebook { notebook, into }),
        1 => (i(), i()).prop_map(|(note, notebook)| Op::MoveNote { note, notebook }),
        2 => (i(), 0..3u8, any::<bool>()).prop_map(|(note, tag, on)| Op::Tag { note, tag, on }),
        1 => (i(), 0..3u8).prop_map(|(note, value)| Op::Label { note, value }),
        1 => (i(), any::<bool>()).prop_map(|(note, back)| Op::Trash { note, back }),
        1 => (i(), any::<bool>()).prop_map(|(note, on)| Op::Protect { note, on }),
        1 => i().prop_map(|note| Op::Attach { note }),
        1 => i().prop_map(|note| Op::Detach { note }),
        1 => Just(if undo { Op::Undo } else { Op::Sync }),
        3 => Just(Op::Sync),
        1 => Just(Op::Compact),
        1 => Just(Op::Fold),
        1 => Just(Op::Send),
        2 => Just(Op::Receive),
        1 => i().prop_map(|file| Op::Hide { file }),
        1 => Just(Op::Unhide),
    ];
    (0..REPLICAS, ops)
}

struct World {
    _dir: tempfile::TempDir,
    target: PathBuf,
    hidden: PathBuf,
    replicas: Vec<(Workspace, Device)>,
    /// Every token inserted into a note's body, by note.
    inserted: BTreeMap<String, BTreeSet<String>>,
    next_token: usize,
}

impl World {
    async fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        let hidden = dir.path().join("hidden");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(&hidden).unwrap();
        let mut replicas = Vec::new();
        for r in 0..REPLICAS {
            let ws = Workspace::open(dir.path().join(format!("{r}.quire"))).unwrap();
            let key = SyncKey::from_bytes([3; 32]);
            let device = if r == 0 {
                Device::init(ws.clone(), &Address::Folder(target.clone()), key, b"lock", "r0")
                    .await
                    .unwrap()
            } else {
                Device::join(
                    ws.clone(),
                    &Address::Folder(target.clone()),
                    key,
                    b"lock",
                    &format!("r{r}"),
                )
                .await
                .unwrap()
            };
            replicas.push((ws, device));
        }
        World {
            _dir: dir,
            target,
            hidden,
            replicas,
            inserted: BTreeMap::new(),
            next_token: 0,
        }
    }

    async fn run(&mut self, r: usize, op: &Op) {
        let ws = self.replicas[r].0.clone();
        let notes = note_ids(&ws);
        let notebooks: Vec<String> = ws
            .read(&Actor::User, |r| r.notebooks())
            .unwrap()
            .into_iter()
            .map(|n| n.id)
            .collect();
        let pick = |list: &[String], i: usize| (!list.is_empty()).then(|| list[i % list.len()].clone());
        let user = |f: &mut dyn FnMut(&mut Writer<'_>) -> quire_core::Result<()>| {
            // A write refused by the workspace (a note in the trash, a cycle) is a write not made.
            let _ = ws.write(&Actor::User, |w| f(w));
        };
        match op {
            Op::Create { notebook } => {
                let token = self.token();
                let mut new = NewNote::new(format!("note {token}"), format!("{token}\n"));
                new.notebook_id = pick(&notebooks, *notebook);
                if let Ok(note) = ws.write(&Actor::User, |w| w.create_note(new)) {
                    self.inserted.entry(note.summary.id).or_default().insert(token);
                }
            }
            Op::Import => {
                let tokens: Vec<String> = (0..3).map(|_| self.token()).collect();
                let folder = format!("import {}", tokens[0]);
                let made = ws.write(&Actor::User, |w| {
                    let notebook = w.create_notebook(NewNotebook {
                        title: folder.clone(),
                        parent_id: None,
                        icon: None,
                    })?;
                    let mut ids = Vec::new();
                    for token in &tokens {
                        let mut new = NewNote::new(format!("imported {token}"), format!("{token}\n"));
                        new.notebook_id = Some(notebook.id.clone());
                        new.tags = vec!["imported".into()];
                        let note = w.create_note(new)?;
                        w.set_attribute(&note.summary.id, AttributeKind::Label, "source", "vault")?;
                        ids.push(note.summary.id);
                    }
                    Ok::<_, quire_core::Error>(ids)
                });
                if let Ok(ids) = made {
                    for (id, token) in ids.into_iter().zip(tokens) {
                        self.inserted.entry(id).or_default().insert(token);
                    }
                }
            }
            Op::Insert { note, at } => {
                let Some(id) = pick(&notes, *note) else { return };
                let token = self.token();
                let done = ws.write(&Actor::User, |w| {
                    let body = w.note(&id)?.body;
                    let mut at = at % (body.len() + 1);
                    while !body.is_char_boundary(at) {
                        at -= 1;
                    }
                    // A token on a line of its own, so that no insertion splits another.
                    let at = body[..at].rfind('\n').map_or(0, |n| n + 1);
                    let new = format!("{}{token}\n{}", &body[..at], &body[at..]);
                    w.update_note(
                        &id,
                        NoteUpdate {
                            body: Some(new),
                            ..NoteUpdate::default()
                        },
                    )
                });
                if done.is_ok() {
                    self.inserted.entry(id).or_default().insert(token);
                }
            }
            Op::Rename { note, title } => {
                let Some(id) = pick(&notes, *note) else { return };
                user(&mut |w| {
                    w.update_note(
                        &id,
                        NoteUpdate {
                            title: Some(format!("title {title} by r{r}")),
                            ..NoteUpdate::default()
                        },
                    )
                    .map(drop)
                });
            }
            Op::Notebook { parent } => {
                let parent = pick(&notebooks, *parent);
                let title = format!("nb {}", self.token());
                user(&mut |w| {
                    w.create_notebook(NewNotebook {
                        title: title.clone(),
                        parent_id: parent.clone(),
                        icon: None,
                    })
                    .map(drop)
                });
            }
            Op::MoveNotebook { notebook, into } => {
                let (Some(id), Some(into)) = (pick(&notebooks, *notebook), pick(&notebooks, *into)) else {
                    return;
                };
                user(&mut |w| w.move_notebook(&id, &into).map(drop));
            }
            Op::MoveNote { note, notebook } => {
                let (Some(id), Some(into)) = (pick(&notes, *note), pick(&notebooks, *notebook)) else {
                    return;
                };
                user(&mut |w| w.move_note(&id, &into).map(drop));
            }
            Op::Tag { note, tag, on } => {
                let Some(id) = pick(&notes, *note) else { return };
                let name = format!("tag{tag}");
                user(&mut |w| {
                    if *on {
                        w.add_tag(&id, &name)
                    } else {
                        w.remove_tag(&id, &name)
                    }
                    .map(drop)
                });
            }
            Op::Label { note, value } => {
                let Some(id) = pick(&notes, *note) else { return };
                user(&mut |w| {
                    w.set_attribute(&id, AttributeKind::Label, "status", &format!("v{value}"))
                        .map(drop)
                });
            }
            Op::Trash { note, back } => {
                let Some(id) = pick(&notes, *note) else { return };
                user(&mut |w| if *back { w.restore_note(&id) } else { w.trash_note(&id) }.map(drop));
            }
            Op::Protect { note, on } => {
                let Some(id) = pick(&notes, *note) else { return };
                user(&mut |w| w.set_note_protected(&id, *on).map(drop));
            }
            Op::Attach { note } => {
                let Some(id) = pick(&notes, *note) else { return };
                let token = self.token();
                user(&mut |w| {
                    w.add_attachment(
                        &id,
                        quire_core::NewAttachment {
                            title: format!("{token}.txt"),
                            mime: "text/plain".into(),
                            data: token.clone().into_bytes(),
                            text: None,
                        },
                    )
                    .map(drop)
                });
            }
            Op::Detach { note } => {
                let Some(id) = pick(&notes, *note) else { return };
                user(&mut |w| {
                    let first = w.attachments(&id)?.into_iter().next();
                    match first {
                        Some(a) => w.delete_attachment(&a.id),
                        None => Ok(()),
                    }
                });
            }
            Op::Undo => {
                let sets = ws.read(&Actor::User, |r| r.change_sets(Page::default())).unwrap();
                if let Some(set) = sets.items.iter().find(|s| s.reverted.is_none()) {
                    let id = set.id.clone();
                    user(&mut |w| w.revert_change_set(&id).map(drop));
                }
            }
            Op::Sync => {
                let report = self.replicas[r].1.sync().await.unwrap();
                assert!(report.refused.is_empty(), "{report:?}");
            }
            Op::Compact => {
                let report = self.replicas[r].1.compact().await.unwrap();
                assert!(report.refused.is_empty(), "{report:?}");
            }
            Op::Fold => {
                self.replicas[r].1.fold_changes().unwrap();
            }
            Op::Send => {
                self.replicas[r].1.send().await.unwrap();
            }
            Op::Receive => {
                let report = self.replicas[r].1.receive().await.unwrap();
                assert!(report.refused.is_empty(), "{report:?}");
            }
            Op::Hide { file } => {
                let batches: Vec<PathBuf> = files_under(&self.target)
                    .into_iter()
                    .filter(|p| is_batch_or_snapshot(p))
                    .collect();
                if let Some(path) = (!batches.is_empty()).then(|| &batches[file % batches.len()]) {
                    let relative = path.strip_prefix(&self.target).unwrap();
                    let to = self.hidden.join(relative);
                    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                    std::fs::rename(path, to).unwrap();
                }
            }
            Op::Unhide => self.unhide(),
        }
    }

    fn unhide(&self) {
        for path in files_under(&self.hidden) {
            let to = self.target.join(path.strip_prefix(&self.hidden).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::rename(&path, to).unwrap();
        }
    }

    fn token(&mut self) -> String {
        self.next_token += 1;
        format!("t{}x", self.next_token)
    }

    /// Syncs every replica in turn until a whole round moves nothing.
    async fn settle(&mut self) {
        self.unhide();
        for round in 0.. {
            assert!(round < 8, "still exchanging after {round} rounds");
            let mut moved = false;
            for (_, device) in &self.replicas {
                let report = device.sync().await.unwrap();
                assert!(report.refused.is_empty(), "{report:?}");
                moved |= report.sent_batches > 0 || report.applied_batches > 0;
            }
            if !moved {
                break;
            }
        }
    }
}

fn is_batch_or_snapshot(path: &Path) -> bool {
    path.parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "b" || n == "s")
}

/// Every note's id (read as sync reads them: the user's own lists page and skip the trash).
pub(crate) fn note_ids(ws: &Workspace) -> Vec<String> {
    let sync = Actor::Sync { device: "test".into() };
    ws.read(&sync, |r| r.all_note_ids()).unwrap()
}

/// Everything a replica holds that must converge.
fn snapshot(ws: &Workspace) -> String {
    let ids = note_ids(ws);
    ws.read(&Actor::User, |r| {
        let mut out = String::new();
        for id in ids {
            let note = r.note(&id)?;
            let labels: Vec<(String, String)> = r.attributes(&id)?.into_iter().map(|a| (a.name, a.value)).collect();
            let files: Vec<(String, String, Vec<u8>)> = r
                .attachments(&id)?
                .into_iter()
                .map(|a| {
                    let data = r.attachment_data(&a.id)?;
                    Ok((a.id, a.title, data))
                })
                .collect::<quire_core::Result<_>>()?;
            out.push_str(&format!("  files {files:?}\n"));
            out.push_str(&format!(
                "{id} {:?} nb={} todo={} trash={} prot={} tags={:?} labels={:?}\n{:?}\n",
                note.summary.title,
                note.summary.notebook_id,
                note.summary.is_todo,
                note.summary.deleted.is_some(),
                note.summary.is_protected,
                note.summary.tags,
                labels,
                note.body
            ));
        }
        for nb in r.notebooks()? {
            out.push_str(&format!(
                "nb {} in {:?} {:?} {}\n",
                nb.id, nb.parent_id, nb.title, nb.is_protected
            ));
        }
        Ok::<_, quire_core::Error>(out)
    })
    .unwrap()
}

fn check(ops: Vec<(usize, Op)>, undo: bool) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut world = World::new().await;
        for (r, op) in &ops {
            world.run(*r, op).await;
        }
        world.settle().await;
        let first = snapshot(&world.replicas[0].0);
        for (r, (ws, _)) in world.replicas.iter().enumerate().skip(1) {
            assert_eq!(snapshot(ws), first, "replica {r} differs from replica 0");
        }
        // A device that joins now gets the same, from whatever batches and snapshots are left.
        let ws = Workspace::open(world._dir.path().join("late.quire")).unwrap();
        let late = Device::join(
            ws.clone(),
            &Address::Folder(world.target.clone()),
            SyncKey::from_bytes([3; 32]),
            b"lock",
            "late",
        )
        .await
        .unwrap();
        let report = late.sync().await.unwrap();
        assert!(report.refused.is_empty() && report.waiting == 0, "{report:?}");
        assert_eq!(snapshot(&ws), first, "the device that joined last differs");
        if !undo {
            // Insertions are never deleted without an undo: each is on every replica.
            let ws = &world.replicas[1].0;
            for (id, tokens) in &world.inserted {
                let body = ws.read(&Actor::User, |r| r.note(id)).unwrap().body;
                for token in tokens {
                    assert!(body.contains(token.as_str()), "{token} lost from note {id}: {body:?}");
                }
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("CONVERGE_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    #[test]
    fn replicas_converge_and_keep_every_insertion(ops in proptest::collection::vec(op(false), 1..40)) {
        check(ops, false);
    }

    #[test]
    fn replicas_converge_with_undo(ops in proptest::collection::vec(op(true), 1..40)) {
        check(ops, true);
    }
}
