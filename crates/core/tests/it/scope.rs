//! Scopes: a handle limited to some notebooks sees and changes only what is inside them, whatever the call.

use quire_core::{
    Actor, AttributeKind, Error, NewNote, NewNotebook, NoteUpdate, Page, Scope, SearchOptions, Workspace, changes,
    testing,
};

use crate::fixture::{Fixture, mcp};

/// The fixture, with a handle limited to Projects (inside Work), and a note outside with the same words.
fn scoped() -> (Fixture, Workspace, String) {
    let f = Fixture::new();
    let outside = testing::note("Roadmap draft", "Ship the search engine in April.")
        .notebook(&f.work)
        .tags(["planning", "private"])
        .create_in(&f.ws)
        .unwrap();
    let scoped = f.ws.scoped(Scope::notebooks([f.projects.clone()]));
    (f, scoped, outside)
}

#[test]
fn reads_see_only_the_scope() {
    let (f, ws, outside) = scoped();
    ws.read(&mcp(), |r| {
        assert!(matches!(r.note(&outside), Err(Error::NotFound(_))));
        assert!(matches!(r.note_summary(&f.todo), Err(Error::NotFound(_))));
        assert_eq!(r.note(&f.plain)?.summary.title, "Roadmap");
        // The scope's root is at the top; the notebooks around it do not exist here.
        let books: Vec<(String, Option<String>)> = r.notebooks()?.into_iter().map(|b| (b.title, b.parent_id)).collect();
        assert_eq!(
            books,
            [
                ("Notebooks".to_owned(), None),
                ("Projects".to_owned(), Some("_root".to_owned()))
            ]
        );
        assert!(matches!(r.notebook(&f.work), Err(Error::NotFound(_))));
        assert_eq!(r.notebook_path(&f.projects)?.len(), 2);
        assert!(r.notebooks_titled("Work")?.is_empty());
        let all: Vec<String> = r.all_notes(Page::first(50))?.items.into_iter().map(|n| n.id).collect();
        assert_eq!(all, std::slice::from_ref(&f.plain));
        assert_eq!(r.all_notes(Page::first(50))?.total, 1);
        assert!(matches!(
            r.notes_in_notebook(&f.work, Page::first(50)),
            Err(Error::NotFound(_))
        ));
        assert_eq!(r.notes_tagged("planning", Page::first(50))?.total, 1);
        let hits = r.search("ship search", SearchOptions::default())?;
        assert_eq!(hits.total, 1);
        assert_eq!(hits.items[0].note.id, f.plain);
        let tags: Vec<(String, u64)> = r.tags()?.into_iter().map(|t| (t.name, t.note_count)).collect();
        assert_eq!(
            tags,
            [("planning".to_owned(), 1)],
            "tags used only outside are not seen"
        );
        assert!(r.notebook_note_counts()?.keys().all(|k| *k == f.projects));
        // Paths start at the scope: a filter cannot name the notebook above it.
        assert_eq!(r.search("notebook:Work", SearchOptions::default())?.total, 0);
        assert_eq!(r.search("notebook:Projects", SearchOptions::default())?.total, 1);
        Ok::<_, Error>(())
    })
    .unwrap();
    // An attachment of a note outside is not found either, with the same words as one that never existed.
    let attachment =
        f.ws.write(&Actor::User, |w| {
            let file = quire_core::NewAttachment {
                title: "plan.txt".into(),
                mime: "text/plain".into(),
                data: b"outside".to_vec(),
                text: None,
            };
            w.add_attachment(&outside, file)
        })
        .unwrap();
    let hidden = ws.read(&mcp(), |r| r.attachment(&attachment.id));
    assert!(
        matches!(hidden, Err(Error::NotFound(quire_core::Missing::Attachment))),
        "{hidden:?}"
    );
    // The user's unscoped view is unchanged.
    assert_eq!(
        f.ws.read(&Actor::User, |r| r.all_notes(Page::first(50))).unwrap().total,
        5
    );
}

#[test]
fn writes_stay_inside_the_scope() {
    let (f, ws, outside) = scoped();
    let before = f.ws.read(&Actor::User, |r| r.note(&outside)).unwrap();
    let refused = [
        ws.write(&mcp(), |w| {
            w.update_note(
                &outside,
                NoteUpdate {
                    body: Some("x".into()),
                    ..Default::default()
                },
            )
            .map(|_| ())
        }),
        ws.write(&mcp(), |w| w.trash_note(&outside).map(|_| ())),
        ws.write(&mcp(), |w| w.move_note(&f.plain, &f.work).map(|_| ())),
        ws.write(&mcp(), |w| w.add_tag(&outside, "x").map(|_| ())),
        ws.write(&mcp(), |w| {
            w.set_attribute(&f.plain, AttributeKind::Relation, "see", &outside)
                .map(|_| ())
        }),
        ws.write(&mcp(), |w| {
            w.create_note(NewNote {
                notebook_id: Some(f.work.clone()),
                ..NewNote::new("Escape", "")
            })
            .map(|_| ())
        }),
        ws.write(&mcp(), |w| {
            w.create_note(NewNote {
                notebook_id: Some("_root".into()),
                ..NewNote::new("Top", "")
            })
            .map(|_| ())
        }),
        ws.write(&mcp(), |w| w.move_notebook(&f.projects, "_root").map(|_| ())),
        ws.write(&mcp(), |w| w.delete_notebook(&f.projects)),
        ws.write(&mcp(), |w| w.rename_notebook(&f.projects, "Renamed").map(|_| ())),
    ];
    for (i, result) in refused.iter().enumerate() {
        assert!(result.is_err(), "write {i} went through");
    }
    assert!(
        matches!(&refused[7], Err(Error::OutsideScope(m)) if m.contains("Projects")),
        "{:?}",
        refused[7]
    );
    assert!(
        matches!(&refused[6], Err(Error::OutsideScope(m)) if m.contains("top level")),
        "{:?}",
        refused[6]
    );
    assert_eq!(f.ws.read(&Actor::User, |r| r.note(&outside)).unwrap(), before);
    assert!(matches!(&refused[9], Err(Error::OutsideScope(_))), "{:?}", refused[9]);
    // Inside, everything works; a note or notebook created without a place goes into the scope.
    let (note, book) = ws
        .write(&mcp(), |w| {
            let note = w.create_note(NewNote::new("Scoped idea", "inside"))?;
            let book = w.create_notebook(NewNotebook {
                title: "Sub".into(),
                ..Default::default()
            })?;
            w.move_note(&note.summary.id, &book.id)?;
            w.rename_notebook(&book.id, "Sub 2026")?;
            Ok::<_, Error>((note, book))
        })
        .unwrap();
    assert_eq!(note.summary.notebook_id, f.projects);
    assert_eq!(book.parent_id.as_deref(), Some(f.projects.as_str()));
    // Created inside, the notebook is in the scope at once: the scope follows the tree.
    assert!(ws.read(&mcp(), |r| r.notebook(&book.id)).is_ok());
}

#[test]
fn relations_to_notes_outside_do_not_exist() {
    let (f, ws, outside) = scoped();
    f.ws.write(&Actor::User, |w| {
        w.set_attribute(&f.plain, AttributeKind::Relation, "draft", &outside)?;
        w.set_attribute(&f.plain, AttributeKind::Label, "status", "active")?;
        w.set_attribute(&outside, AttributeKind::Relation, "final", &f.plain)
    })
    .unwrap();
    let (attributes, backlinks) = ws
        .read(&mcp(), |r| {
            Ok::<_, Error>((r.attributes(&f.plain)?, r.backlinks(&f.plain)?))
        })
        .unwrap();
    let names: Vec<&str> = attributes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["status"]);
    assert!(backlinks.is_empty(), "{backlinks:?}");
    assert_eq!(f.ws.read(&Actor::User, |r| r.attributes(&f.plain)).unwrap().len(), 2);
    // The hidden relation can be neither removed nor overwritten, and history does not show it.
    let hidden =
        f.ws.read(&Actor::User, |r| r.attributes(&f.plain))
            .unwrap()
            .into_iter()
            .find(|a| a.name == "draft")
            .unwrap();
    let removed = ws.write(&mcp(), |w| w.delete_attribute(&f.plain, &hidden.id));
    assert!(matches!(removed, Err(Error::NotFound(_))), "{removed:?}");
    let overwritten = ws.write(&mcp(), |w| {
        w.set_attribute(&f.plain, AttributeKind::Relation, "draft", &f.plain)
    });
    assert!(matches!(overwritten, Err(Error::OutsideScope(_))), "{overwritten:?}");
    let seen = ws.read(&mcp(), |r| r.changes(None, Page::first(200))).unwrap();
    assert!(seen.items.iter().all(|c| c.entity_id != hidden.id), "{:?}", seen.items);
    assert!(
        seen.items.iter().any(|c| c.entity == quire_core::EntityKind::Attribute),
        "the label is seen"
    );
    assert_eq!(
        f.ws.read(&Actor::User, |r| r.attribute(&hidden.id)).unwrap().value,
        outside
    );
}

#[test]
fn history_and_undo_stay_inside_the_scope() {
    let (f, ws, outside) = scoped();
    let outside_set =
        f.ws.write(&mcp(), |w| {
            w.update_note(
                &outside,
                NoteUpdate {
                    body: Some("changed".into()),
                    ..Default::default()
                },
            )?;
            Ok::<_, Error>(w.change_set_id().map(str::to_owned))
        })
        .unwrap()
        .unwrap();
    let inside_set = ws
        .write(&mcp(), |w| {
            w.update_note(
                &f.plain,
                NoteUpdate {
                    body: Some("changed".into()),
                    ..Default::default()
                },
            )?;
            Ok::<_, Error>(w.change_set_id().map(str::to_owned))
        })
        .unwrap()
        .unwrap();
    ws.read(&mcp(), |r| {
        let sets: Vec<String> = r
            .change_sets(Page::first(100))?
            .items
            .into_iter()
            .map(|s| s.id)
            .collect();
        assert!(sets.contains(&inside_set) && !sets.contains(&outside_set), "{sets:?}");
        assert!(
            r.changes(None, Page::first(100))?
                .items
                .iter()
                .all(|c| c.entity_id != outside)
        );
        assert!(matches!(r.change_set(&outside_set), Err(Error::NotFound(_))));
        Ok::<_, Error>(())
    })
    .unwrap();
    assert!(matches!(
        changes::undo_change_set(&ws, &outside_set),
        Err(Error::NotFound(_))
    ));
    assert_eq!(f.ws.read(&Actor::User, |r| r.note(&outside)).unwrap().body, "changed");
    changes::undo_change_set(&ws, &inside_set).unwrap();
    // A change set that made a notebook and a new tag inside the scope is undone through it too.
    let made = ws
        .write(&mcp(), |w| {
            let book = testing::notebook(w, "Sub")?;
            testing::note("Tagged", "").notebook(&book).tags(["fresh"]).create(w)?;
            Ok::<_, Error>(w.change_set_id().map(str::to_owned))
        })
        .unwrap()
        .unwrap();
    changes::undo_change_set(&ws, &made).unwrap();
    assert!(ws.read(&mcp(), |r| r.tags()).unwrap().iter().all(|t| t.name != "fresh"));
    // Outside the scope a set is not even found; a set with changes both inside and outside is refused.
    let both =
        f.ws.write(&mcp(), |w| {
            w.update_note(
                &f.plain,
                NoteUpdate {
                    body: Some("both".into()),
                    ..Default::default()
                },
            )?;
            w.update_note(
                &outside,
                NoteUpdate {
                    body: Some("both".into()),
                    ..Default::default()
                },
            )?;
            Ok::<_, Error>(w.change_set_id().map(str::to_owned))
        })
        .unwrap()
        .unwrap();
    let refused = ws.write(&Actor::User, |w| w.revert_change_set(&both));
    assert!(matches!(refused, Err(Error::OutsideScope(_))), "{refused:?}");
}

#[test]
fn a_scope_of_missing_notebooks_reaches_nothing() {
    let f = Fixture::new();
    let ws = f.ws.scoped(Scope::notebooks(["gone".to_owned()]));
    assert_eq!(ws.read(&mcp(), |r| r.all_notes(Page::first(50))).unwrap().total, 0);
    let refused = ws.write(&mcp(), |w| w.create_note(NewNote::new("Lost", "")));
    assert!(matches!(refused, Err(Error::InvalidTarget(_))), "{refused:?}");
    // A root inside another root is not a root of its own.
    let nested = f.ws.scoped(Scope::notebooks([f.work.clone(), f.projects.clone()]));
    let projects = nested.read(&mcp(), |r| r.notebook(&f.projects)).unwrap();
    assert_eq!(projects.parent_id.as_deref(), Some(f.work.as_str()));
}

#[test]
fn a_scope_inside_a_scope_reaches_what_both_reach() {
    let f = Fixture::new();
    let work = f.ws.scoped(Scope::notebooks([f.work.clone()]));
    // Narrower inside: Projects only.
    let projects = work.scoped(Scope::notebooks([f.projects.clone()]));
    let titles = |ws: &Workspace| -> Vec<String> {
        ws.read(&mcp(), |r| r.all_notes(Page::first(50)))
            .unwrap()
            .items
            .into_iter()
            .map(|n| n.title)
            .collect()
    };
    assert_eq!(titles(&projects), ["Roadmap"]);
    // Wider inside, or elsewhere: never more than the outer scope.
    let wider =
        f.ws.scoped(Scope::notebooks([f.projects.clone()]))
            .scoped(Scope::notebooks([f.work.clone()]));
    assert_eq!(titles(&wider), ["Roadmap"]);
    let elsewhere = work.scoped(Scope::notebooks([f.vault.clone()]));
    assert!(titles(&elsewhere).is_empty());
    // The top of a narrowed view is what it can reach.
    let top = wider.read(&mcp(), |r| r.notebook(&f.projects)).unwrap();
    assert_eq!(top.parent_id.as_deref(), Some("_root"));
    assert!(wider.read(&mcp(), |r| r.notebook(&f.work)).is_err());
}
