//! Revisions before non-user writes, the change log, and reverting change sets.

use quire_core::{
    Actor, AttributeKind, EntityKind, Error, NewAttachment, NoteUpdate, Operation, Page, Workspace, testing,
};

use crate::fixture::{Fixture, agent, dump, mcp};

fn body(text: &str) -> NoteUpdate {
    NoteUpdate {
        body: Some(text.into()),
        ..Default::default()
    }
}

#[test]
fn non_user_writes_save_a_revision_first() {
    let fx = Fixture::new();
    fx.ws
        .write(&mcp(), |w| w.update_note(&fx.plain, body("rewritten by a model")))
        .unwrap();
    fx.ws
        .write(&Actor::User, |w| w.update_note(&fx.plain, body("rewritten by me")))
        .unwrap();
    // A write that changes nothing in the text saves nothing.
    fx.ws
        .write(&mcp(), |w| w.update_note(&fx.plain, body("rewritten by me")))
        .unwrap();
    let revisions = fx.ws.read(&Actor::User, |r| r.revisions(&fx.plain)).unwrap();
    assert_eq!(revisions.len(), 1);
    assert_eq!(
        revisions[0].body,
        "# Roadmap\n\nShip search in March.\n\n## Risks\n\nScope creep.\n"
    );
    assert_eq!(revisions[0].actor, mcp());
    assert!(revisions[0].change_set_id.is_some());
}

#[test]
fn every_mutation_is_logged_with_its_actor() {
    let ws = Workspace::open_in_memory().unwrap();
    let note = ws
        .write(&mcp(), |w| {
            let n = testing::note("T", "B").tags(["a"]).create(w)?;
            w.update_note(&n, body("B2"))?;
            w.set_attribute(&n, AttributeKind::Label, "status", "draft")?;
            w.trash_note(&n)?;
            Ok::<_, Error>(n)
        })
        .unwrap();
    let changes = ws.read(&Actor::User, |r| r.changes(None, Page::default())).unwrap();
    let mut seen: Vec<(EntityKind, Operation)> = changes.items.iter().map(|c| (c.entity, c.operation)).collect();
    seen.reverse();
    assert_eq!(
        seen,
        vec![
            (EntityKind::Note, Operation::Create),
            (EntityKind::Tag, Operation::Create),
            (EntityKind::NoteTag, Operation::Create),
            (EntityKind::Note, Operation::Update),
            (EntityKind::Attribute, Operation::Create),
            (EntityKind::Note, Operation::Update),
        ]
    );
    assert!(changes.items.iter().all(|c| c.actor == mcp()));
    let sets: std::collections::BTreeSet<_> = changes.items.iter().map(|c| c.change_set_id.clone()).collect();
    assert_eq!(sets.len(), 1, "one write call is one change set");
    assert_eq!(
        changes
            .items
            .iter()
            .find(|c| c.entity == EntityKind::Note)
            .unwrap()
            .entity_id,
        note
    );
}

#[test]
fn an_agent_turn_is_one_change_set_across_writes() {
    let fx = Fixture::new();
    let turn = Actor::Agent {
        chat: "chat-9".into(),
        turn: 3,
    };
    let first = fx.ws.write(&turn, |w| {
        w.update_note(&fx.plain, body("one"))
            .map(|_| w.change_set_id().map(str::to_owned))
    });
    let second = fx.ws.write(&turn, |w| {
        w.add_tag(&fx.todo, "x").map(|_| w.change_set_id().map(str::to_owned))
    });
    assert_eq!(first.unwrap(), second.unwrap());
    let next_turn = Actor::Agent {
        chat: "chat-9".into(),
        turn: 4,
    };
    let third = fx.ws.write(&next_turn, |w| {
        w.add_tag(&fx.todo, "y").map(|_| w.change_set_id().map(str::to_owned))
    });
    assert_ne!(
        third.unwrap(),
        fx.ws
            .write(&turn, |w| w
                .add_tag(&fx.todo, "z")
                .map(|_| w.change_set_id().map(str::to_owned)))
            .unwrap()
    );
}

#[test]
fn revert_undoes_a_whole_change_set() {
    let fx = Fixture::new();
    let before = dump(&fx.ws);
    let set = fx
        .ws
        .write(&agent(), |w| {
            w.update_note(
                &fx.plain,
                NoteUpdate {
                    title: Some("Renamed".into()),
                    body: Some("new".into()),
                    ..Default::default()
                },
            )?;
            let created = testing::note("New", "note").tags(["fresh"]).create(w)?;
            w.set_attribute(&created, AttributeKind::Relation, "see", &fx.plain)?;
            w.add_attachment(
                &created,
                NewAttachment {
                    title: "a.bin".into(),
                    mime: "".into(),
                    data: vec![0, 1, 2, 255],
                    text: Some("zebra".into()),
                },
            )?;
            w.move_note(&fx.todo, &fx.projects)?;
            w.trash_note(&fx.todo)?;
            w.remove_tag(&fx.plain, "planning")?;
            Ok::<_, Error>(w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    assert_ne!(dump(&fx.ws), before);
    let found = |q: &str| {
        fx.ws
            .read(&Actor::User, |r| r.search(q, Default::default()))
            .unwrap()
            .total
    };
    assert_eq!(found("zebra"), 1);
    let report = fx.ws.write(&agent(), |w| w.revert_change_set(&set)).unwrap();
    assert_eq!(report.undone_changes, 9);
    assert_eq!(dump(&fx.ws), before, "revert restores every row");
    assert_eq!(found("zebra"), 0, "the search index follows a revert");
    assert_eq!(found("march"), 1);
    assert_eq!(found("tag:planning"), 1);
    assert!(fx.ws.check_integrity().unwrap().is_empty());

    let again = fx.ws.write(&agent(), |w| w.revert_change_set(&set)).unwrap_err();
    assert_eq!(again.to_string(), "This change set was already reverted.");
    // The revert is a change set too: reverting it brings the agent's work back.
    let redo = report.change_set_id.unwrap();
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&redo)).unwrap();
    assert_eq!(found("zebra"), 1);
}

#[test]
fn revert_refuses_when_later_writes_touched_the_same_entity() {
    let fx = Fixture::new();
    let set = fx
        .ws
        .write(&mcp(), |w| {
            w.update_note(&fx.plain, body("model"))
                .map(|_| w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    fx.ws
        .write(&Actor::User, |w| w.update_note(&fx.plain, body("user edit after")))
        .unwrap();
    let snapshot = dump(&fx.ws);
    let err = fx.ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap_err();
    let title = fx.ws.read(&Actor::User, |r| r.note_summary(&fx.plain)).unwrap().title;
    let message = err.to_string();
    // In words, without ids (ux finding 14): what changed, who changed it and what to do.
    assert!(
        message.starts_with(&format!(
            "Cannot undo: the note \"{title}\" was changed again afterwards, by you on "
        )),
        "{message}"
    );
    assert!(
        message.ends_with(" UTC. Undo that later change first, or undo both together."),
        "{message}"
    );
    assert!(!message.contains(&set), "no change set id: {message}");
    assert_eq!(dump(&fx.ws), snapshot);
    let Error::ChangedSince(blocked) = err else {
        panic!("a typed refusal")
    };
    assert!(blocked.later.is_some_and(|later| later.actor == Actor::User));

    // Undone together: the later change first, then the model's, in one change set that brings both back.
    let reports = fx
        .ws
        .write(&Actor::User, |w| w.revert_change_set_and_later(&set))
        .unwrap();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1].reverted_change_set_id, set);
    let body = |fx: &Fixture| fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap().body;
    assert_eq!(
        body(&fx),
        "# Roadmap\n\nShip search in March.\n\n## Risks\n\nScope creep.\n"
    );
    let undo = reports[1].change_set_id.clone().unwrap();
    assert_eq!(
        reports[0].change_set_id.as_deref(),
        Some(undo.as_str()),
        "one change set"
    );
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&undo)).unwrap();
    assert_eq!(body(&fx), "user edit after");
}

#[test]
fn revert_of_a_create_that_others_now_reference_is_refused() {
    let fx = Fixture::new();
    let (set, id) = fx
        .ws
        .write(&mcp(), |w| {
            let n = testing::note("Target", "").create(w)?;
            Ok::<_, Error>((w.change_set_id().unwrap().to_owned(), n))
        })
        .unwrap();
    fx.ws
        .write(&Actor::User, |w| {
            w.set_attribute(&fx.plain, AttributeKind::Relation, "see", &id)
        })
        .unwrap();
    let snapshot = dump(&fx.ws);
    let err = fx.ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap_err();
    assert!(err.to_string().starts_with("Cannot revert"), "{err}");
    assert_eq!(dump(&fx.ws), snapshot);
}

#[test]
fn purge_and_chats() {
    let fx = Fixture::new();
    let message = |text: &str| quire_core::ChatMessage {
        role: "user".into(),
        content: serde_json::json!(text),
    };
    let before = fx
        .ws
        .read(&Actor::User, |r| r.changes(None, Page::default()))
        .unwrap()
        .total;
    let chat = fx
        .ws
        .write(&Actor::User, |w| {
            let chat = w.create_chat("About the roadmap", Some(&fx.plain))?;
            assert_eq!(w.append_chat_messages(&chat.id, &[message("hello")])?, 1);
            Ok::<_, quire_core::Error>(chat)
        })
        .unwrap();
    let count = fx
        .ws
        .write(&Actor::User, |w| {
            w.append_chat_messages(&chat.id, &[message("again"), message("and again")])
        })
        .unwrap();
    assert_eq!(count, 3, "messages are appended");
    let stored = fx.ws.read(&Actor::User, |r| r.chat(&chat.id)).unwrap();
    let texts: Vec<&str> = stored.messages.iter().filter_map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["hello", "again", "and again"]);
    let after = fx
        .ws
        .read(&Actor::User, |r| r.changes(None, Page::default()))
        .unwrap()
        .total;
    assert_eq!(
        after, before,
        "chats are not workspace changes: the change log does not grow"
    );
    let set = fx
        .ws
        .write(&Actor::User, |w| {
            w.purge_note(&fx.plain).map(|_| w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap_err().to_string(),
        "Note not found"
    );
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap();
    let note = fx.ws.read(&Actor::User, |r| r.note(&fx.plain)).unwrap();
    assert_eq!(note.summary.tags, vec!["planning".to_owned()]);
    assert_eq!(
        fx.ws
            .read(&Actor::User, |r| r.search("march", Default::default()))
            .unwrap()
            .total,
        1
    );
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.chat(&chat.id)).unwrap().messages.len(),
        3
    );
    // Chats belong to the user and the agent: MCP clients and plugins neither write nor delete them.
    let refused = fx.ws.write(&mcp(), |w| w.create_chat("x", None)).unwrap_err();
    assert_eq!(refused.to_string(), "Only the user can write chats");
    let refused = fx.ws.write(&agent(), |w| w.delete_chat(&chat.id)).unwrap_err();
    assert_eq!(refused.to_string(), "Only the user can delete chats");
    fx.ws
        .write(&agent(), |w| {
            w.append_chat_messages(&chat.id, &[message("from the agent")])
        })
        .unwrap();
    fx.ws.write(&Actor::User, |w| w.delete_chat(&chat.id)).unwrap();
    assert_eq!(
        fx.ws.read(&Actor::User, |r| r.chat(&chat.id)).unwrap_err().to_string(),
        "Chat not found"
    );
}

#[test]
fn tags_are_renamed_and_deleted_by_the_user_only() {
    let fx = Fixture::new();
    let err = fx.ws.write(&mcp(), |w| w.rename_tag("planning", "plans")).unwrap_err();
    assert_eq!(err.to_string(), "Only the user can rename tags");
    let err = fx.ws.write(&agent(), |w| w.delete_tag("planning")).unwrap_err();
    assert_eq!(err.to_string(), "Only the user can delete tags");
    fx.ws
        .write(&Actor::User, |w| w.rename_tag("Planning", "plans"))
        .unwrap();
    let found = |q: &str| {
        fx.ws
            .read(&Actor::User, |r| r.search(q, Default::default()))
            .unwrap()
            .total
    };
    assert_eq!((found("tag:plans"), found("tag:planning"), found("plans")), (1, 0, 1));
    let clash = fx.ws.write(&Actor::User, |w| {
        w.add_tag(&fx.todo, "other")?;
        w.rename_tag("plans", "OTHER")
    });
    assert_eq!(clash.unwrap_err().to_string(), "A tag named 'OTHER' already exists.");
    let set = fx
        .ws
        .write(&Actor::User, |w| {
            w.delete_tag("plans").map(|_| w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    assert_eq!(found("tag:plans"), 0);
    assert_eq!(
        fx.ws
            .write(&Actor::User, |w| w.delete_tag("plans"))
            .unwrap_err()
            .to_string(),
        "Tag not found"
    );
    fx.ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap();
    assert_eq!(found("tag:plans"), 1, "deleting a tag is undoable");
}

#[test]
fn a_revision_can_be_restored() {
    let fx = Fixture::new();
    fx.ws
        .write(&mcp(), |w| w.update_note(&fx.plain, body("overwritten by a model")))
        .unwrap();
    let revision = fx.ws.read(&Actor::User, |r| r.revisions(&fx.plain)).unwrap()[0].id;
    let restored = fx.ws.write(&Actor::User, |w| w.restore_revision(revision)).unwrap();
    assert_eq!(
        restored.body,
        "# Roadmap\n\nShip search in March.\n\n## Risks\n\nScope creep.\n"
    );
    let err = fx.ws.write(&Actor::User, |w| w.restore_revision(9999)).unwrap_err();
    assert_eq!(err.to_string(), "Revision not found");
}

#[test]
fn a_version_3_workspace_keeps_its_chats_and_drops_them_from_the_change_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.quire");
    {
        // A workspace as version 3 wrote it: a chat's messages in one JSON array, its rows in the change log.
        let conn = rusqlite::Connection::open(&path).unwrap();
        for sql in [
            include_str!("../../src/migrations/001_initial.sql"),
            include_str!("../../src/migrations/002_semantic.sql"),
            include_str!("../../src/migrations/003_vector_store.sql"),
        ] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "PRAGMA user_version = 3; PRAGMA application_id = 1364543826;
             INSERT INTO chats (id, title, note_id, messages, created, updated) VALUES
               ('c1', 'Trip', NULL, '[{\"role\":\"user\",\"content\":{\"role\":\"user\",\"content\":\"hi\"}},
                                    {\"role\":\"assistant\",\"content\":\"hello\"}]', 1, 2);
             INSERT INTO change_sets (id, actor, actor_key, created, reverted) VALUES ('s1', '{\"kind\":\"user\"}', NULL, 1, NULL);
             INSERT INTO changes (change_set_id, entity, entity_id, operation, actor, before, after_hash, at)
               VALUES ('s1', 'chat', 'c1', 'create', '{\"kind\":\"user\"}', NULL, 'x', 1);",
        )
        .unwrap();
    }
    let ws = Workspace::open(&path).unwrap();
    let chat = ws.read(&Actor::User, |r| r.chat("c1")).unwrap();
    let messages: Vec<(&str, &serde_json::Value)> =
        chat.messages.iter().map(|m| (m.role.as_str(), &m.content)).collect();
    assert_eq!(
        messages,
        [
            ("user", &serde_json::json!({"role": "user", "content": "hi"})),
            ("assistant", &serde_json::json!("hello"))
        ]
    );
    let changes = ws.read(&Actor::User, |r| r.changes(None, Page::default())).unwrap();
    assert_eq!(changes.total, 0, "chat rows left the change log");
    assert!(
        ws.read(&Actor::User, |r| r.change_set("s1")).is_err(),
        "the emptied change set is gone"
    );
    assert!(ws.check_integrity().unwrap().is_empty());
}

/// History reads as words (ux finding 25): what was done ("trashed", "renamed", "moved") and to what, named by
/// titles, never by ids where a name exists; a protected note's attributes and attachments stay unnamed to a model.
#[test]
fn history_describes_changes_in_words() {
    let fx = Fixture::new();
    let ws = &fx.ws;
    let id = testing::note("Draft", "text").create_in(ws).unwrap();
    ws.write(&Actor::User, |w| {
        w.update_note(
            &id,
            NoteUpdate {
                title: Some("Plan".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    ws.write(&Actor::User, |w| w.move_note(&id, &fx.projects)).unwrap();
    ws.write(&Actor::User, |w| w.trash_note(&id)).unwrap();
    ws.write(&Actor::User, |w| w.restore_note(&id)).unwrap();
    ws.write(&Actor::User, |w| {
        w.set_attribute(&id, AttributeKind::Label, "status", "draft")
    })
    .unwrap();
    ws.write(&Actor::User, |w| {
        w.add_attachment(
            &id,
            NewAttachment {
                title: "plan.pdf".into(),
                mime: "application/pdf".into(),
                data: vec![1],
                text: None,
            },
        )
    })
    .unwrap();
    let spare = ws.write(&Actor::User, |w| testing::notebook(w, "Spare")).unwrap();
    ws.write(&Actor::User, |w| w.delete_notebook(&spare)).unwrap();
    ws.write(&Actor::User, |w| {
        w.set_attribute(&fx.secret, AttributeKind::Label, "diagnosis", "x")
    })
    .unwrap();
    let boxed = ws.write(&Actor::User, |w| testing::notebook(w, "Box")).unwrap();
    ws.write(&Actor::User, |w| w.rename_notebook(&boxed, "Crate")).unwrap();
    ws.write(&Actor::User, |w| w.move_notebook(&boxed, &fx.work)).unwrap();
    ws.write(&Actor::User, |w| w.add_tag(&id, "launch")).unwrap();
    ws.write(&Actor::User, |w| w.remove_tag(&id, "launch")).unwrap();
    ws.write(&Actor::User, |w| w.set_note_protected(&id, true)).unwrap();
    let lines = |actor: &Actor| {
        ws.read(actor, |r| {
            let page = quire_core::changes::change_set_views(r, None, Page::first(30))?;
            Ok::<_, Error>(
                page.sets
                    .iter()
                    .rev()
                    .flat_map(|s| s.changes.iter().map(|(_, d)| format!("{} {}", d.verb, d.what)))
                    .collect::<Vec<_>>(),
            )
        })
        .unwrap()
    };
    let user = lines(&Actor::User);
    let newest: Vec<&str> = user[user.len().saturating_sub(17)..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        newest,
        [
            "created note \"Plan\"",
            "renamed note \"Draft\" to \"Plan\"",
            "moved note \"Plan\" to \"Work/Projects\"",
            "trashed note \"Plan\"",
            "restored note \"Plan\"",
            "created label \"status\" of \"Plan\"",
            "created attachment \"plan.pdf\" of \"Plan\"",
            "created notebook \"Spare\"",
            "removed notebook \"Spare\"",
            "created label \"diagnosis\" of \"Diary\"",
            "created notebook \"Box\"",
            "renamed notebook \"Box\" to \"Crate\"",
            "moved notebook \"Crate\" to \"Work\"",
            "created tag #launch",
            "tagged \"Plan\" with #launch",
            "untagged \"Plan\" (#launch)",
            "protected note \"Plan\"",
        ]
    );
    let model = lines(&mcp());
    assert!(
        model.iter().any(|l| l == "created an attribute of \"Diary\""),
        "{model:?}"
    );
    assert!(!model.iter().any(|l| l.contains("diagnosis")), "{model:?}");
}

/// A typing session saves many times into one change set: history says "changed note" once (ux finding 25).
#[test]
fn a_change_set_says_each_thing_once() {
    let fx = Fixture::new();
    let set = fx
        .ws
        .write(&Actor::User, |w| {
            w.update_note(&fx.plain, body("one"))?;
            Ok::<_, Error>(w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    for text in ["one two", "one two three"] {
        fx.ws
            .write(&Actor::User, |w| {
                w.join_change_set(&set)?;
                w.update_note(&fx.plain, body(text))
            })
            .unwrap();
    }
    let lines = fx
        .ws
        .read(&Actor::User, |r| {
            let page = quire_core::changes::change_set_views(r, Some(&fx.plain), Page::first(1))?;
            Ok::<_, Error>(
                page.sets[0]
                    .changes
                    .iter()
                    .map(|(_, d)| format!("{} {}", d.verb, d.what))
                    .collect::<Vec<_>>(),
            )
        })
        .unwrap();
    assert_eq!(lines, ["changed note \"Roadmap\""]);
}

#[test]
fn an_undo_says_what_it_undid() {
    let fx = Fixture::new();
    let ws = &fx.ws;
    let id = testing::note("Meeting", "notes").create_in(ws).unwrap();
    let client = Actor::Mcp {
        client: "Claude Desktop".into(),
    };
    let renamed = ws
        .write(&client, |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    title: Some("Meeting (renamed by client)".into()),
                    ..Default::default()
                },
            )?;
            Ok::<_, Error>(w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    let undo = ws
        .write(&Actor::User, |w| w.revert_change_set(&renamed))
        .unwrap()
        .change_set_id
        .unwrap();
    let sets = ws
        .read(&Actor::User, |r| {
            quire_core::changes::change_set_views(r, None, Page::first(5))
        })
        .unwrap()
        .sets;
    let view = sets.iter().find(|v| v.set.id == undo).unwrap();
    let undone = view.undoes.as_ref().expect("the undo names what it undid");
    assert_eq!(undone.change_set_id, renamed);
    assert_eq!(undone.by, "mcp client Claude Desktop");
    assert!(
        undone
            .words()
            .starts_with("undo of mcp client Claude Desktop's change of "),
        "{}",
        undone.words()
    );
    assert_eq!(view.to_json()["undoes"]["change_set_id"], renamed.as_str());
    // The original is marked undone and names nothing; neither does an ordinary change.
    let original = sets.iter().find(|v| v.set.id == renamed).unwrap();
    assert!(original.set.reverted.is_some() && original.undoes.is_none());
}
