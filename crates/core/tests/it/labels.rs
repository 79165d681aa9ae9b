//! Labels that hold structured values (JSON) beside text ones, through undo and redo and from workspaces written
//! before they existed; links in label values, which count as links of their note.

use quire_core::{Actor, AttributeKind, Error, NewAttachment, ValueType, Workspace, testing};

/// A note made by the user in the top notebook; its id.
fn add(ws: &Workspace, title: &str, body: &str) -> String {
    testing::note(title, body).create_in(ws).unwrap()
}

/// A note's labels as `name=value (type)`.
fn labels(ws: &Workspace, id: &str) -> Vec<String> {
    ws.read(&Actor::User, |r| r.attributes(id))
        .unwrap()
        .into_iter()
        .map(|a| format!("{}={} ({:?})", a.name, a.value, a.value_type))
        .collect()
}

#[test]
fn a_structured_label_keeps_its_type_through_undo_and_redo() {
    let ws = Workspace::open_in_memory().unwrap();
    let id = add(&ws, "Trip", "");
    let (set, attribute) = ws
        .write(&Actor::User, |w| {
            let a = w.set_json_label(&id, "cast", r#" ["Mark", "Carrie"] "#)?;
            Ok::<_, Error>((w.change_set_id().unwrap().to_owned(), a))
        })
        .unwrap();
    assert_eq!(attribute.value, r#"["Mark", "Carrie"]"#, "kept as written, trimmed");
    assert_eq!(attribute.json(), Some(serde_json::json!(["Mark", "Carrie"])));
    ws.write(&Actor::User, |w| w.set_json_label(&id, "publish", "true"))
        .unwrap();
    assert_eq!(
        labels(&ws, &id),
        [r#"cast=["Mark", "Carrie"] (Json)"#, "publish=true (Json)"]
    );

    // A text label of the same name replaces it, and undoing that brings the structured value back.
    let replaced = ws
        .write(&Actor::User, |w| {
            let a = w.set_attribute(&id, AttributeKind::Label, "publish", "true")?;
            assert_eq!((a.value_type, a.json()), (ValueType::Text, None));
            Ok::<_, Error>(w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    assert_eq!(labels(&ws, &id)[1], "publish=true (Text)");
    let undo = ws.write(&Actor::User, |w| w.revert_change_set(&replaced)).unwrap();
    assert_eq!(labels(&ws, &id)[1], "publish=true (Json)");
    // Redo: undoing the undo.
    ws.write(&Actor::User, |w| {
        w.revert_change_set(undo.change_set_id.as_deref().unwrap())
    })
    .unwrap();
    assert_eq!(labels(&ws, &id)[1], "publish=true (Text)");
    ws.write(&Actor::User, |w| w.revert_change_set(&set)).unwrap();
    assert_eq!(labels(&ws, &id), ["publish=true (Text)"], "undoing its set removes it");

    // Not JSON: refused.
    let err = ws
        .write(&Actor::User, |w| w.set_json_label(&id, "broken", "[1, 2"))
        .unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
    assert!(labels(&ws, &id).iter().all(|l| !l.starts_with("broken")));
}

/// FNV-1a over a row's JSON text, as the change log fingerprints rows.
fn fingerprint(row: &serde_json::Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in row.to_string().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[test]
fn a_version_9_workspace_keeps_its_labels_undoable_and_gets_their_links() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v9.quire");
    {
        // A workspace as version 9 wrote it: a label set in a change set, its row fingerprinted without a type.
        let conn = rusqlite::Connection::open(&path).unwrap();
        for sql in [
            include_str!("../../src/migrations/001_initial.sql"),
            include_str!("../../src/migrations/002_semantic.sql"),
            include_str!("../../src/migrations/003_vector_store.sql"),
            include_str!("../../src/migrations/004_chat_messages.sql"),
            include_str!("../../src/migrations/005_note_list_orders.sql"),
            include_str!("../../src/migrations/006_links.sql"),
            include_str!("../../src/migrations/007_lookups.sql"),
            include_str!("../../src/migrations/008_search_log.sql"),
            include_str!("../../src/migrations/009_visible_notes.sql"),
        ] {
            conn.execute_batch(sql).unwrap();
        }
        let row = serde_json::json!({
            "id": "a1", "note_id": "n1", "kind": "label", "name": "related", "value": "[[Target]]",
            "target_note_id": null, "created": 1, "updated": 1
        });
        conn.execute_batch(
            "PRAGMA user_version = 9; PRAGMA application_id = 1364543826;
             INSERT INTO notes (id, notebook_id, title, body, created, updated) VALUES
               ('n1', '_root', 'Source', 'no links here', 1, 1),
               ('n2', '_root', 'Target', '', 1, 1);
             INSERT INTO attributes (id, note_id, kind, name, value, target_note_id, created, updated)
               VALUES ('a1', 'n1', 'label', 'related', '[[Target]]', NULL, 1, 1);
             INSERT INTO change_sets (id, actor, actor_key, created, reverted) VALUES ('s1', '{\"kind\":\"user\"}', NULL, 1, NULL);",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO changes (change_set_id, entity, entity_id, operation, actor, before, after_hash, at) \
             VALUES ('s1', 'attribute', 'a1', 'create', '{\"kind\":\"user\"}', NULL, ?1, 1)",
            [fingerprint(&row)],
        )
        .unwrap();
    }
    let ws = Workspace::open(&path).unwrap();
    assert_eq!(labels(&ws, "n1"), ["related=[[Target]] (Text)"]);
    let backlinks = ws.read(&Actor::User, |r| r.body_backlinks("n2")).unwrap();
    assert_eq!(
        backlinks
            .iter()
            .map(|b| (b.source.title.as_str(), b.label.as_deref()))
            .collect::<Vec<_>>(),
        [("Source", Some("related"))],
        "the links of labels written before are built when the workspace is opened"
    );
    ws.write(&Actor::User, |w| w.revert_change_set("s1"))
        .expect("a change logged before labels had types is still undone");
    assert!(labels(&ws, "n1").is_empty());
    assert!(ws.check_integrity().unwrap().is_empty());
}

#[test]
fn links_in_labels_are_links_of_the_note() {
    let ws = Workspace::open_in_memory().unwrap();
    let a = add(&ws, "Alpha", "");
    let b = add(&ws, "Beta", "");
    let source = testing::note("Source", "The body links [[Alpha]].")
        .label("related", "[[Beta]]")
        .create_in(&ws)
        .unwrap();
    ws.write(&Actor::User, |w| {
        w.set_json_label(
            &source,
            "up",
            r#"["[[Alpha]]", "[[Gamma]]", {"deep": "[b](quire://note/x)"}]"#,
        )?;
        w.add_attachment(
            &source,
            NewAttachment {
                title: "photo.jpg".into(),
                mime: "image/jpeg".into(),
                data: vec![1],
                text: None,
            },
        )?;
        w.set_attribute(&source, AttributeKind::Label, "cover", "[[photo.jpg]]")
    })
    .unwrap();
    let outgoing = ws.read(&Actor::User, |r| r.outgoing_links(&source)).unwrap();
    let shown: Vec<(Option<&str>, &str, bool, bool)> = outgoing
        .iter()
        .map(|l| {
            (
                l.label.as_deref(),
                l.target.as_str(),
                l.note_id.is_some(),
                l.attachment_id.is_some(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (None, "Alpha", true, false),
            (Some("cover"), "photo.jpg", false, true),
            (Some("related"), "Beta", true, false),
            (Some("up"), "Alpha", true, false),
            (Some("up"), "Gamma", false, false),
            (Some("up"), "x", false, false),
        ],
        "the body's links, then each label's, by name; strings inside a JSON value too"
    );
    let backlinks = |id: &str| {
        ws.read(&Actor::User, |r| r.body_backlinks(id))
            .unwrap()
            .into_iter()
            .map(|b| (b.source.title, b.label, b.snippet.unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        backlinks(&b),
        [(
            "Source".to_owned(),
            Some("related".to_owned()),
            "related: [[Beta]]".to_owned()
        )]
    );
    assert_eq!(
        backlinks(&a)[0].1,
        None,
        "a note linking from its body and a label is shown by its body"
    );
    let unresolved = ws.read(&Actor::User, |r| r.unresolved_links(&source)).unwrap();
    assert_eq!(
        unresolved.iter().map(|u| u.target.as_str()).collect::<Vec<_>>(),
        ["Gamma"]
    );

    // A label changed or removed changes the links.
    let gamma = add(&ws, "Gamma", "");
    assert_eq!(backlinks(&gamma).len(), 1, "resolves when its note appears");
    let related = ws
        .read(&Actor::User, |r| r.attributes(&source))
        .unwrap()
        .into_iter()
        .find(|a| a.name == "related")
        .unwrap();
    ws.write(&Actor::User, |w| w.delete_attribute(&source, &related.id))
        .unwrap();
    assert!(backlinks(&b).is_empty());

    // A protected note's labels are its content: another actor sees that it links, not through which label.
    ws.write(&Actor::User, |w| w.set_note_protected(&source, true)).unwrap();
    let seen = ws.read(&crate::fixture::mcp(), |r| r.body_backlinks(&gamma)).unwrap();
    assert_eq!(
        seen.iter()
            .map(|b| (b.source.title.as_str(), b.label.as_deref(), b.snippet.as_deref()))
            .collect::<Vec<_>>(),
        [("Source", None, None)]
    );
}

#[test]
fn a_shared_title_resolves_as_obsidian_picks_among_files_of_one_name() {
    let ws = Workspace::open_in_memory().unwrap();
    let (work, deep, home) = ws
        .write(&Actor::User, |w| {
            Ok::<_, Error>((
                testing::notebook(w, "Work")?,
                testing::notebook(w, "Work/Deep")?,
                testing::notebook(w, "Home")?,
            ))
        })
        .unwrap();
    let note =
        |title: &str, notebook: &str, body: &str| testing::note(title, body).notebook(notebook).create_in(&ws).unwrap();
    let resolved = |id: &str| {
        ws.read(&Actor::User, |r| r.outgoing_links(id))
            .unwrap()
            .into_iter()
            .map(|l| {
                l.note_id
                    .map(|n| ws.read(&Actor::User, |r| r.note_summary(&n)).unwrap().notebook_id)
            })
            .collect::<Vec<_>>()
    };
    let plan_work = note("Plan", &work, "");
    let plan_deep = note("Plan", &deep, "");
    // Beside the linking note first; otherwise the shortest path.
    let in_deep = note("Deep index", &deep, "[[Plan]]");
    let at_home = note("Home index", &home, "[[Plan]]");
    assert_eq!(resolved(&in_deep), [Some(deep.clone())]);
    assert_eq!(resolved(&at_home), [Some(work.clone())]);
    // A tie is no choice: two at the same depth.
    let plan_home = note("Plan", &home, "");
    let elsewhere = ws.write(&Actor::User, |w| testing::notebook(w, "Other")).unwrap();
    let other = note("Other index", &elsewhere, "[[Plan]]");
    assert_eq!(resolved(&other), [None]);
    // A note titled so before one that has the name as an alias, even deeper down.
    let goals = note("Goals", &deep, "");
    testing::note("Roadmap", "")
        .label("aliases", "Goals, Aims")
        .create_in(&ws)
        .unwrap();
    let top = add(
        &ws,
        "Top index",
        "[[goals]] [[#Local heading]] [[Goals\\|the goals]] [[Plan]]",
    );
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&top)).unwrap();
    let found: Vec<Option<&str>> = links.iter().map(|l| l.note_id.as_deref()).collect();
    assert_eq!(
        found,
        [Some(goals.as_str()), Some(top.as_str()), Some(goals.as_str()), None],
        "by title, not alias; a heading of the note itself; an escaped pipe as a plain one; a tie"
    );
    let _ = (plan_work, plan_deep, plan_home);
}

/// Found in review (issue 46): a note new on this device whose tags, as another device's document holds them, are
/// two spellings of one tag ("Work" and "work ", written on two devices at once) is linked to that tag once, not
/// refused (two links of one tag).
#[test]
fn a_synced_new_note_with_two_spellings_of_one_tag_is_tagged_once() {
    let ws = quire_core::Workspace::open_in_memory().unwrap();
    let sync = quire_core::Actor::Sync {
        device: "laptop".into(),
    };
    let note = quire_core::replica::SyncedNote {
        id: "0123456789abcdef0123456789abcdef".into(),
        notebook_id: quire_core::ROOT_NOTEBOOK_ID.into(),
        title: "Plan".into(),
        body: "text".into(),
        created: 1,
        updated: 1,
        tags: ["Work".to_owned(), "work ".to_owned()].into(),
        ..Default::default()
    };
    ws.write(&sync, |w| w.apply_synced_note(&note)).unwrap();
    let tags = ws
        .read(&quire_core::Actor::User, |r| r.note(&note.id))
        .unwrap()
        .summary
        .tags;
    assert_eq!(tags.len(), 1, "{tags:?}");
}
