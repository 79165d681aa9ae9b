//! The guards, in their fixed order, for every non-user actor, with their literal messages.

use quire_core::{Actor, AttributeKind, Error, NewAttachment, NewNote, NewNotebook, NoteUpdate, Writer};

use crate::fixture::{Fixture, agent, dump, mcp};

/// Runs `op` as `actor` on a fresh fixture; an error must leave the workspace exactly as it was.
fn check(actor: &Actor, op: impl Fn(&mut Writer<'_>, &Fixture) -> Result<(), Error>, expected: &str) {
    let fx = Fixture::new();
    let before = dump(&fx.ws);
    let result = fx.ws.write(actor, |w| op(w, &fx));
    match result {
        Ok(()) => assert_eq!("ok", expected, "{actor}: expected an error"),
        Err(e) => {
            assert_eq!(e.to_string(), expected, "{actor}");
            assert_eq!(dump(&fx.ws), before, "{actor}: a refused write changed the workspace");
        }
    }
}

fn body(text: &str) -> NoteUpdate {
    NoteUpdate {
        body: Some(text.into()),
        ..Default::default()
    }
}

#[test]
fn missing_entities() {
    for actor in [agent(), mcp(), Actor::Plugin { id: "p".into() }] {
        check(
            &actor,
            |w, _| w.update_note("nope", body("x")).map(drop),
            "Note not found",
        );
        check(&actor, |w, _| w.trash_note("nope").map(drop), "Note not found");
        check(&actor, |w, _| w.move_note("nope", "_root").map(drop), "Note not found");
        check(&actor, |w, _| w.add_tag("nope", "t").map(drop), "Note not found");
        check(
            &actor,
            |w, _| w.set_attribute("nope", AttributeKind::Label, "a", "b").map(drop),
            "Note not found",
        );
        check(
            &actor,
            |w, _| w.rename_notebook("nope", "x").map(drop),
            "Notebook not found",
        );
        check(&actor, |w, _| w.delete_attachment("nope"), "Attachment not found");
        check(
            &actor,
            |w, fx| w.delete_attribute(&fx.plain, "nope"),
            "Attribute not found",
        );
        check(
            &actor,
            |w, _| w.revert_change_set("nope").map(drop),
            "Change set not found",
        );
    }
}

/// A `/` in a notebook title would make a notebook whose path is another's (ux finding 8): refused, for every actor.
#[test]
fn a_notebook_title_cannot_hold_the_path_separator() {
    let refused = "Notebook title cannot contain '/': it separates the notebooks of a path. To put Projects inside \
                   Work, create Projects in the notebook Work.";
    for actor in [Actor::User, agent()] {
        check(
            &actor,
            |w, _| {
                w.create_notebook(NewNotebook {
                    title: "Work/Projects".into(),
                    ..Default::default()
                })
                .map(drop)
            },
            refused,
        );
        check(
            &actor,
            |w, fx| w.rename_notebook(&fx.projects, "Work/Plans").map(drop),
            &refused.replace("Projects", "Plans"),
        );
    }
}

/// The one rule for "make this path": found by title (ignoring case) or created, below a parent; refused when empty.
#[test]
fn a_notebook_path_is_found_or_made() {
    let fx = Fixture::new();
    let made = fx
        .ws
        .write(&Actor::User, |w| w.create_notebook_path(None, " work / Clients//Acme "))
        .unwrap();
    let titles: Vec<&str> = made.created.iter().map(|n| n.title.as_str()).collect();
    assert_eq!(
        titles,
        ["Clients", "Acme"],
        "Work exists (its case aside): only the rest is made"
    );
    let path = fx
        .ws
        .read(&Actor::User, |r| r.notebook_path_text(&made.notebook.id))
        .unwrap();
    assert_eq!(path, "Work/Clients/Acme");
    let again = fx
        .ws
        .write(&Actor::User, |w| w.create_notebook_path(None, "Work/Clients/Acme"))
        .unwrap();
    assert!(again.created.is_empty());
    assert_eq!(again.notebook.id, made.notebook.id);
    let inside = fx
        .ws
        .write(&Actor::User, |w| w.create_notebook_path(Some(&fx.projects), "Q3"))
        .unwrap();
    assert_eq!(inside.notebook.parent_id.as_deref(), Some(fx.projects.as_str()));
    check(
        &Actor::User,
        |w, _| w.create_notebook_path(None, " / ").map(drop),
        "Give the notebook a title, or a path such as Work/Projects.",
    );
    // An agent makes paths by the same rules, and never inside a protected notebook.
    check(
        &agent(),
        |w, fx| w.create_notebook_path(Some(&fx.vault), "Inside").map(drop),
        "Cannot create a notebook inside a protected notebook",
    );
}

#[test]
fn system_notebooks() {
    for actor in [Actor::User, agent()] {
        check(
            &actor,
            |w, _| w.delete_notebook("_root"),
            "Cannot delete system notebooks",
        );
        check(
            &actor,
            |w, _| w.rename_notebook("_root", "Mine").map(drop),
            "Cannot rename system notebooks",
        );
        check(
            &actor,
            |w, fx| w.move_notebook("_root", &fx.work).map(drop),
            "Cannot move system notebooks",
        );
    }
    check(
        &Actor::User,
        |w, _| w.set_notebook_protected("_root", true).map(drop),
        "Cannot protect system notebooks",
    );
}

#[test]
fn protected_notes_cannot_be_changed_by_non_user_actors() {
    let protected_message = "Note is protected and cannot be modified";
    for actor in [agent(), mcp()] {
        for secret in [|fx: &Fixture| fx.secret.clone(), |fx: &Fixture| fx.in_vault.clone()] {
            check(
                &actor,
                move |w, fx| w.update_note(&secret(fx), body("pwned")).map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| {
                    w.update_note(
                        &secret(fx),
                        NoteUpdate {
                            title: Some("x".into()),
                            ..Default::default()
                        },
                    )
                    .map(drop)
                },
                protected_message,
            );
            check(
                &actor,
                move |w, fx| w.trash_note(&secret(fx)).map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| w.move_note(&secret(fx), &fx.work).map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| w.add_tag(&secret(fx), "leak").map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| w.remove_tag(&secret(fx), "leak").map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| w.set_attribute(&secret(fx), AttributeKind::Label, "x", "y").map(drop),
                protected_message,
            );
            check(
                &actor,
                move |w, fx| {
                    w.add_attachment(
                        &secret(fx),
                        NewAttachment {
                            title: "a.txt".into(),
                            mime: "text/plain".into(),
                            data: vec![1],
                            text: None,
                        },
                    )
                    .map(drop)
                },
                protected_message,
            );
        }
        check(
            &actor,
            |w, fx| w.set_note_protected(&fx.secret, false).map(drop),
            "Only the user can unprotect notes",
        );
        check(
            &actor,
            |w, fx| w.set_note_protected(&fx.plain, true).map(drop),
            "Only the user can protect notes",
        );
        check(
            &actor,
            |w, fx| w.set_notebook_protected(&fx.vault, false).map(drop),
            "Only the user can unprotect notebooks",
        );
        check(
            &actor,
            |w, fx| w.purge_note(&fx.plain),
            "Only the user can delete notes permanently; move the note to the trash instead",
        );
        check(
            &actor,
            |w, fx| w.rename_notebook(&fx.vault, "Open").map(drop),
            "Notebook is protected and cannot be modified",
        );
        check(
            &actor,
            |w, fx| w.delete_notebook(&fx.vault),
            "Notebook is protected and cannot be modified",
        );
        // The guard order: a protected note is reported before the (invalid) target is even looked at.
        check(
            &actor,
            |w, fx| w.move_note(&fx.secret, "nope").map(drop),
            protected_message,
        );
        check(
            &actor,
            // The id as the user knows it: a non-user actor cannot list a protected note's attributes.
            |w, fx| w.delete_attribute(&fx.secret, &fx.secret_label),
            protected_message,
        );
    }
    // The user may do all of it.
    check(
        &Actor::User,
        |w, fx| w.update_note(&fx.secret, body("mine")).map(drop),
        "ok",
    );
    check(&Actor::User, |w, fx| w.trash_note(&fx.in_vault).map(drop), "ok");
}

#[test]
fn targets_must_be_valid() {
    for actor in [agent(), mcp()] {
        check(
            &actor,
            |w, _| {
                w.create_note(NewNote {
                    notebook_id: Some("nope".into()),
                    ..NewNote::new("t", "b")
                })
                .map(drop)
            },
            "Target notebook not found",
        );
        check(
            &actor,
            |w, fx| {
                w.create_note(NewNote {
                    notebook_id: Some(fx.vault.clone()),
                    ..NewNote::new("t", "b")
                })
                .map(drop)
            },
            "Cannot create a note inside a protected notebook",
        );
        check(
            &actor,
            |w, fx| w.move_note(&fx.plain, "nope").map(drop),
            "Target notebook not found",
        );
        check(
            &actor,
            |w, fx| w.move_note(&fx.plain, &fx.vault).map(drop),
            "Cannot move a note into a protected notebook",
        );
        check(
            &actor,
            |w, fx| {
                w.create_notebook(NewNotebook {
                    title: "x".into(),
                    parent_id: Some(fx.vault.clone()),
                    icon: None,
                })
                .map(drop)
            },
            "Cannot create a notebook inside a protected notebook",
        );
        check(
            &actor,
            |w, fx| w.move_notebook(&fx.work, &fx.projects).map(drop),
            "Cannot move a notebook into itself or one of its sub-notebooks",
        );
        check(
            &actor,
            |w, fx| w.move_notebook(&fx.work, &fx.work).map(drop),
            "Cannot move a notebook into itself or one of its sub-notebooks",
        );
        check(
            &actor,
            |w, fx| {
                w.set_attribute(&fx.plain, AttributeKind::Relation, "see", "nope")
                    .map(drop)
            },
            "Relation target note not found",
        );
        // Order: the target is checked before the name is judged dangerous.
        check(
            &actor,
            |w, fx| {
                w.set_attribute(&fx.plain, AttributeKind::Relation, "renderNote", "nope")
                    .map(drop)
            },
            "Relation target note not found",
        );
    }
    // The user is not bound by protection, but a target must still exist and a tree must stay a tree.
    check(
        &Actor::User,
        |w, fx| {
            w.create_note(NewNote {
                notebook_id: Some(fx.vault.clone()),
                ..NewNote::new("t", "b")
            })
            .map(drop)
        },
        "ok",
    );
    check(
        &Actor::User,
        |w, fx| w.move_note(&fx.plain, "nope").map(drop),
        "Target notebook not found",
    );
    check(
        &Actor::User,
        |w, fx| w.move_notebook(&fx.work, &fx.projects).map(drop),
        "Cannot move a notebook into itself or one of its sub-notebooks",
    );
}

#[test]
fn dangerous_attributes() {
    for actor in [agent(), mcp()] {
        for name in ["run", "widget", "runOnNoteCreation", "customRequestHandler"] {
            check(
                &actor,
                move |w, fx| w.set_attribute(&fx.plain, AttributeKind::Label, name, "x").map(drop),
                &format!("Attribute '{name}' is potentially dangerous and cannot be set"),
            );
        }
        check(
            &actor,
            |w, fx| {
                w.set_attribute(&fx.plain, AttributeKind::Relation, "renderNote", &fx.todo)
                    .map(drop)
            },
            "Attribute 'renderNote' is potentially dangerous and cannot be set",
        );
        check(
            &actor,
            |w, fx| {
                w.set_attribute(&fx.plain, AttributeKind::Label, "status", "draft")
                    .map(drop)
            },
            "ok",
        );
    }
    check(
        &Actor::User,
        |w, fx| {
            w.set_attribute(&fx.plain, AttributeKind::Label, "run", "backend")
                .map(drop)
        },
        "ok",
    );
}

#[test]
fn input_validation() {
    let a = agent();
    check(
        &a,
        |w, _| w.create_note(NewNote::new("   ", "b")).map(drop),
        "Note title cannot be empty.",
    );
    check(
        &a,
        |w, _| w.create_note(NewNote::new("two\nlines", "b")).map(drop),
        "Note title must be one line of text without control characters; put longer text in the body.",
    );
    check(
        &a,
        |w, _| w.create_note(NewNote::new("t", "nul\0")).map(drop),
        "Note body cannot contain NUL characters.",
    );
    check(
        &a,
        |w, fx| w.add_tag(&fx.plain, " ").map(drop),
        "Tag name cannot be empty.",
    );
    check(
        &a,
        |w, fx| {
            w.set_attribute(&fx.plain, AttributeKind::Label, "two  spaces", "x")
                .map(drop)
        },
        "Attribute name 'two  spaces' is not valid: use letters, digits, '_', ':', '-', '.' or single spaces between \
         words, starting with a letter or '_', at most 100 characters.",
    );
    // Obsidian's property names have spaces between words.
    check(
        &a,
        |w, fx| {
            w.set_attribute(&fx.plain, AttributeKind::Label, "due date", "x")
                .map(drop)
        },
        "ok",
    );
    check(
        &a,
        |w, fx| {
            w.set_attribute(&fx.plain, AttributeKind::Label, "trailing ", "x")
                .map(drop)
        },
        "Attribute name 'trailing ' is not valid: use letters, digits, '_', ':', '-', '.' or single spaces between \
         words, starting with a letter or '_', at most 100 characters.",
    );
    check(
        &a,
        |w, fx| w.trash_note(&fx.plain).and_then(|_| w.trash_note(&fx.plain)).map(drop),
        "Note is already in the trash.",
    );
    check(
        &a,
        |w, fx| w.restore_note(&fx.plain).map(drop),
        "Note is not in the trash.",
    );
    check(
        &a,
        |w, fx| {
            w.trash_note(&fx.plain)
                .and_then(|_| w.update_note(&fx.plain, body("x")))
                .map(drop)
        },
        "Note is in the trash; restore it before changing it.",
    );
    check(
        &a,
        |w, fx| w.delete_notebook(&fx.work),
        "Notebook is not empty: it holds 1 note (trashed ones included) and 1 notebook. Move or delete them first.",
    );
    check(
        &a,
        |w, _| w.create_note(NewNote::new("t".repeat(1_001), "b")).map(drop),
        "Note title is longer than 1000 characters.",
    );
    check(
        &a,
        |w, _| {
            w.create_note(NewNote::new("t", "x".repeat(16 * 1024 * 1024 + 1)))
                .map(drop)
        },
        "Note body is 16777217 bytes; the limit is 16777216 bytes. Split it into several notes.",
    );
    check(
        &a,
        |w, fx| w.add_tag(&fx.plain, &"t".repeat(101)).map(drop),
        "Tag name is longer than 100 characters.",
    );
    check(
        &a,
        |w, fx| w.add_tag(&fx.plain, "a\tb").map(drop),
        "Tag name cannot contain control characters.",
    );
    check(
        &a,
        |w, _| {
            w.create_notebook(NewNotebook {
                title: "Icons".into(),
                icon: Some("x".repeat(65)),
                ..NewNotebook::default()
            })
            .map(drop)
        },
        "Icon must be an emoji or a short icon name (at most 64 characters).",
    );
}

#[test]
fn non_user_reads_never_see_protected_content() {
    let fx = Fixture::new();
    for actor in [agent(), mcp()] {
        fx.ws
            .read(&actor, |r| {
                for id in [&fx.secret, &fx.in_vault] {
                    let summary = r.note_summary(id)?;
                    assert!(summary.is_protected);
                    assert!(!summary.title.is_empty(), "the title stays visible");
                    for err in [
                        r.note(id).map(drop).unwrap_err(),
                        r.attachments(id).map(drop).unwrap_err(),
                        r.revisions(id).map(drop).unwrap_err(),
                    ] {
                        assert_eq!(err.to_string(), "Note is protected; its content cannot be read");
                    }
                }
                for query in ["rubies", "gold", "secret", "body:thoughts"] {
                    assert_eq!(r.search(query, Default::default())?.total, 0, "{query}");
                }
                let hits = r.search("diary", Default::default())?;
                assert_eq!(hits.total, 1, "found by title");
                assert_eq!(hits.items[0].snippet, "", "no snippet of a protected note");
                Ok::<_, Error>(())
            })
            .unwrap();
    }
    let body = fx.ws.read(&Actor::User, |r| r.note(&fx.secret)).unwrap().body;
    assert_eq!(body, "my secret thoughts about rubies");
}

#[test]
fn unprotecting_makes_content_searchable_again() {
    let fx = Fixture::new();
    let search = |q: &str| fx.ws.read(&agent(), |r| r.search(q, Default::default())).unwrap().total;
    assert_eq!(search("gold"), 0);
    fx.ws
        .write(&Actor::User, |w| w.set_notebook_protected(&fx.vault, false))
        .unwrap();
    assert_eq!(search("gold"), 1);
    fx.ws
        .write(&Actor::User, |w| w.move_note(&fx.plain, &fx.vault))
        .unwrap();
    fx.ws
        .write(&Actor::User, |w| w.set_notebook_protected(&fx.vault, true))
        .unwrap();
    assert_eq!(search("gold"), 0);
    assert_eq!(
        search("march"),
        0,
        "a note moved into a protected notebook is protected"
    );
}

#[test]
fn the_note_open_in_the_editor_keeps_its_text_for_the_user() {
    let in_editor = |op: fn(&mut Writer<'_>, &Fixture) -> Result<(), Error>| {
        move |w: &mut Writer<'_>, fx: &Fixture| {
            w.set_open_in_editor(&fx.plain);
            op(w, fx)
        }
    };
    let refused = "This note is open in the user's editor, so its title and text cannot be written directly. Propose \
                   the change with the tools that edit the open note; the user reviews it before it is saved.";
    check(
        &agent(),
        in_editor(|w, fx| w.update_note(&fx.plain, body("x")).map(drop)),
        refused,
    );
    check(
        &mcp(),
        in_editor(|w, fx| {
            w.update_note(
                &fx.plain,
                NoteUpdate {
                    title: Some("Renamed".into()),
                    ..NoteUpdate::default()
                },
            )
            .map(drop)
        }),
        refused,
    );
    // Tags, moves, the to-do state and other notes stay writable; the user is never held back.
    check(&agent(), in_editor(|w, fx| w.add_tag(&fx.plain, "x").map(drop)), "ok");
    check(
        &agent(),
        in_editor(|w, fx| {
            w.update_note(
                &fx.plain,
                NoteUpdate {
                    is_todo: Some(true),
                    ..NoteUpdate::default()
                },
            )
            .map(drop)
        }),
        "ok",
    );
    check(
        &agent(),
        in_editor(|w, fx| w.update_note(&fx.todo, body("x")).map(drop)),
        "ok",
    );
    check(
        &Actor::User,
        in_editor(|w, fx| w.update_note(&fx.plain, body("x")).map(drop)),
        "ok",
    );
}
