//! Links in note bodies: extracted on every write, resolved by title, alias or path, re-resolved when notes appear,
//! change title, move to the trash or come back; backlinks with snippets that never show a protected note's body.

use quire_core::{Actor, AttributeKind, Error, NewNote, NoteUpdate, Workspace, testing};

use crate::fixture::{agent, mcp};

/// A note made by the user in the top notebook; its id.
fn add(ws: &Workspace, title: &str, body: &str) -> String {
    testing::note(title, body).create_in(ws).unwrap()
}

fn backlinks(ws: &Workspace, actor: &Actor, id: &str) -> Vec<(String, Option<String>)> {
    ws.read(actor, |r| r.body_backlinks(id))
        .unwrap()
        .into_iter()
        .map(|b| (b.source.title, b.snippet))
        .collect()
}

fn unresolved(ws: &Workspace, id: &str) -> Vec<(String, usize)> {
    ws.read(&Actor::User, |r| r.unresolved_links(id))
        .unwrap()
        .into_iter()
        .map(|u| (u.target, u.candidates.len()))
        .collect()
}

#[test]
fn a_link_by_title_resolves_when_its_note_appears_and_follows_renames_and_the_trash() {
    let ws = Workspace::open_in_memory().unwrap();
    let source = add(&ws, "Journal", "Today I worked on [[Garden plan]] and [[Nowhere]].");
    assert_eq!(
        unresolved(&ws, &source),
        [("Garden plan".to_owned(), 0), ("Nowhere".to_owned(), 0)]
    );
    let garden = add(&ws, "Garden Plan", "Tomatoes.");
    assert_eq!(
        unresolved(&ws, &source),
        [("Nowhere".to_owned(), 0)],
        "case does not matter"
    );
    let links = backlinks(&ws, &Actor::User, &garden);
    assert_eq!(links.len(), 1);
    assert_eq!(links[0].0, "Journal");
    assert!(
        links[0].1.as_deref().unwrap().contains("worked on [[Garden plan]]"),
        "{links:?}"
    );

    ws.write(&Actor::User, |w| w.trash_note(&garden)).unwrap();
    assert_eq!(unresolved(&ws, &source).len(), 2, "a note in the trash is not a target");
    ws.write(&Actor::User, |w| w.restore_note(&garden)).unwrap();
    assert_eq!(backlinks(&ws, &Actor::User, &garden).len(), 1);

    ws.write(&Actor::User, |w| {
        w.update_note(
            &garden,
            NoteUpdate {
                title: Some("Vegetable beds".into()),
                ..Default::default()
            },
        )
    })
    .unwrap();
    assert!(
        backlinks(&ws, &Actor::User, &garden).is_empty(),
        "the old title no longer names it"
    );
    ws.write(&Actor::User, |w| {
        w.set_attribute(&garden, AttributeKind::Label, "aliases", "Garden plan, Beds")
    })
    .unwrap();
    assert_eq!(
        backlinks(&ws, &Actor::User, &garden).len(),
        1,
        "an alias names it again"
    );
}

#[test]
fn a_shared_title_lists_candidates_and_a_path_picks_one() {
    let ws = Workspace::open_in_memory().unwrap();
    let (work, home) = ws
        .write(&Actor::User, |w| {
            Ok::<_, Error>((testing::notebook(w, "Work")?, testing::notebook(w, "Home")?))
        })
        .unwrap();
    let at_work = testing::note("Ideas", "work ideas")
        .notebook(&work)
        .create_in(&ws)
        .unwrap();
    let source = add(&ws, "Index", "See [[Ideas]] and [[Home/Ideas#Garden|home ones]].");
    assert_eq!(
        unresolved(&ws, &source),
        [("Home/Ideas".to_owned(), 0)],
        "one note called Ideas so far, and it is not at Home"
    );
    let at_home = testing::note("Ideas", "home ideas")
        .notebook(&home)
        .create_in(&ws)
        .unwrap();
    assert_eq!(
        unresolved(&ws, &source),
        [("Ideas".to_owned(), 2)],
        "now ambiguous, with both candidates; the path resolves"
    );
    assert!(backlinks(&ws, &Actor::User, &at_work).is_empty());
    assert_eq!(
        backlinks(&ws, &Actor::User, &at_home).len(),
        1,
        "the path picks the one at Home"
    );
    ws.write(&Actor::User, |w| w.purge_note(&at_home)).unwrap();
    assert!(
        unresolved(&ws, &source).iter().all(|(t, _)| t != "Ideas"),
        "unique again after the purge"
    );
    assert_eq!(backlinks(&ws, &Actor::User, &at_work).len(), 1);
}

#[test]
fn markdown_links_to_quire_addresses_and_embeds_resolve() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "Target", "x");
    let source = add(
        &ws,
        "Source",
        &format!("[the target](quire://note/{target}) and ![[photo.png]]"),
    );
    assert_eq!(backlinks(&ws, &Actor::User, &target).len(), 1);
    assert_eq!(unresolved(&ws, &source), [("photo.png".to_owned(), 0)]);
    ws.write(&Actor::User, |w| {
        w.add_attachment(
            &source,
            quire_core::NewAttachment {
                title: "photo.png".into(),
                mime: "image/png".into(),
                data: vec![1, 2],
                text: None,
            },
        )
    })
    .unwrap();
    assert!(
        unresolved(&ws, &source).is_empty(),
        "the embed found the attachment added afterwards"
    );
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&source)).unwrap();
    assert_eq!(links.len(), 2);
    assert_eq!(links[0].note_id.as_deref(), Some(target.as_str()));
    assert!(links[1].attachment_id.is_some());
}

#[test]
fn a_protected_linking_note_shows_its_title_only_to_tools() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "Salary review", "numbers");
    let diary = add(&ws, "Diary", "My secret thoughts about [[Salary review]] and more.");
    add(&ws, "Public", "Agenda: [[Salary review]]");
    ws.write(&Actor::User, |w| w.set_note_protected(&diary, true)).unwrap();
    let for_user = backlinks(&ws, &Actor::User, &target);
    assert!(
        for_user.iter().all(|(_, s)| s.is_some()),
        "the user sees every snippet: {for_user:?}"
    );
    for actor in [agent(), mcp()] {
        let seen = backlinks(&ws, &actor, &target);
        assert_eq!(seen.len(), 2);
        let diary_link = seen.iter().find(|(t, _)| t == "Diary").unwrap();
        assert_eq!(diary_link.1, None, "no snippet of a protected note");
        assert!(!format!("{seen:?}").contains("secret"), "{seen:?}");
    }
}

#[test]
fn renaming_updates_the_links_in_labels_too() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "B", "x");
    let only_labels = add(&ws, "A", "No link in the text.");
    ws.write(&Actor::User, |w| {
        w.set_attribute(&only_labels, AttributeKind::Label, "related", "[[B]]")?;
        w.set_json_label(
            &only_labels,
            "up",
            r#"{"n": 1.10, "l": ["[[B]]", "[[B|the b]]", "[[Other]]"]}"#,
        )
    })
    .unwrap();
    let (_, report) = ws
        .write(&agent(), |w| {
            w.update_note_relinking(
                &target,
                NoteUpdate {
                    title: Some("Bee".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert_eq!(report.updated, std::slice::from_ref(&only_labels), "{report:?}");
    let labels = ws.read(&Actor::User, |r| r.attributes(&only_labels)).unwrap();
    let value = |name: &str| labels.iter().find(|a| a.name == name).unwrap().value.clone();
    assert_eq!(value("related"), "[[Bee]]");
    // Numbers as written and the order of keys stay; only the links change.
    assert_eq!(
        value("up"),
        r#"{"n": 1.10, "l": ["[[Bee]]", "[[Bee|the b]]", "[[Other]]"]}"#
    );
    assert_eq!(
        backlinks(&ws, &Actor::User, &target).len(),
        1,
        "one note links to it, from two labels"
    );
}

#[test]
fn renaming_can_update_the_links_that_name_the_note_in_one_change_set() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "Old name", "x");
    let a = add(
        &ws,
        "A",
        "See [[Old name]], ![[old name#Part|shown]] and `[[Old name]]` in code.",
    );
    let b = add(&ws, "B", "Also [[Old name|the thing]].");
    let protected = add(&ws, "C", "Private [[Old name]].");
    ws.write(&Actor::User, |w| w.set_note_protected(&protected, true))
        .unwrap();
    let (_, report) = ws
        .write(&agent(), |w| {
            w.update_note_relinking(
                &target,
                NoteUpdate {
                    title: Some("New name".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert_eq!(report.updated.len(), 2);
    assert_eq!(report.skipped.len(), 1, "the protected note is not changed by an agent");
    let body = |id: &str| ws.read(&Actor::User, |r| r.note(id)).unwrap().body;
    assert_eq!(
        body(&a),
        "See [[New name]], ![[New name#Part|shown]] and `[[Old name]]` in code."
    );
    assert_eq!(body(&b), "Also [[New name|the thing]].");
    assert_eq!(body(&protected), "Private [[Old name]].");
    assert_eq!(backlinks(&ws, &Actor::User, &target).len(), 2);
    // One change set: undoing it takes the rename and the rewritten links back together.
    let sets = ws
        .read(&Actor::User, |r| {
            r.change_sets(quire_core::Page { offset: 0, limit: 10 })
        })
        .unwrap();
    let newest = sets.items[0].id.clone();
    ws.write(&Actor::User, |w| w.revert_change_set(&newest)).unwrap();
    assert_eq!(
        body(&a),
        "See [[Old name]], ![[old name#Part|shown]] and `[[Old name]]` in code."
    );
    assert_eq!(backlinks(&ws, &Actor::User, &target).len(), 3);
}

#[test]
fn renaming_a_note_with_a_non_ascii_title_updates_its_links_and_refuses_titles_links_cannot_carry() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "Äpfel", "x");
    let source = add(&ws, "Liste", "Kaufen: [[äpfel]] und [[Äpfel#Sorten]].");
    let (_, report) = ws
        .write(&Actor::User, |w| {
            w.update_note_relinking(
                &target,
                NoteUpdate {
                    title: Some("Birnen".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert_eq!(report.updated, std::slice::from_ref(&source));
    let body = ws.read(&Actor::User, |r| r.note(&source)).unwrap().body;
    assert_eq!(body, "Kaufen: [[Birnen]] und [[Birnen#Sorten]].");
    let (_, report) = ws
        .write(&Actor::User, |w| {
            w.update_note_relinking(
                &target,
                NoteUpdate {
                    title: Some("C# notes".into()),
                    ..Default::default()
                },
            )
        })
        .unwrap();
    assert!(report.updated.is_empty());
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    let body = ws.read(&Actor::User, |r| r.note(&source)).unwrap().body;
    assert_eq!(body, "Kaufen: [[Birnen]] und [[Birnen#Sorten]].", "left as it was");
}

#[test]
fn notes_and_attachments_created_with_reserved_ids_resolve_the_links_written_before_them() {
    let ws = Workspace::open_in_memory().unwrap();
    let (first, later, picture) = ws
        .write(&Actor::User, |w| {
            let later = w.reserve_id()?;
            let picture = w.reserve_id()?;
            assert_ne!(later, picture);
            let first = testing::note(
                "First",
                format!("see [later](quire://note/{later}) and ![p](quire://attachment/{picture})"),
            )
            .create(w)?;
            assert_eq!(
                w.outgoing_links(&first)?.iter().filter(|l| l.note_id.is_some()).count(),
                0
            );
            w.create_note_as(&later, NewNote::new("Later", "body"))?;
            w.add_attachment_as(
                &picture,
                &first,
                quire_core::NewAttachment {
                    title: "p.png".into(),
                    mime: "image/png".into(),
                    data: vec![1, 2, 3],
                    text: None,
                },
            )?;
            // An id in use, or not one quire makes, is refused.
            for bad in [
                later.as_str(),
                picture.as_str(),
                "not-an-id",
                "ABCDEF0123456789ABCDEF0123456789",
            ] {
                let err = w.create_note_as(bad, NewNote::new("Again", "")).unwrap_err();
                assert!(matches!(err, Error::Invalid(_)), "{bad}: {err:?}");
            }
            Ok::<_, Error>((first, later, picture))
        })
        .unwrap();
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&first)).unwrap();
    assert_eq!(links[0].note_id.as_deref(), Some(later.as_str()));
    assert_eq!(links[1].attachment_id.as_deref(), Some(picture.as_str()));
    assert_eq!(backlinks(&ws, &Actor::User, &later).len(), 1);
}

#[test]
fn undoing_a_purge_relinks_the_links_to_the_note_it_brings_back() {
    let ws = Workspace::open_in_memory().unwrap();
    let target = add(&ws, "Target", "here");
    let source = add(&ws, "Source", &format!("see [t](quire://note/{target})"));
    let purge = ws
        .write(&Actor::User, |w| {
            w.trash_note(&target)?;
            w.purge_note(&target)?;
            Ok::<_, Error>(w.change_set_id().unwrap().to_owned())
        })
        .unwrap();
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&source)).unwrap();
    assert_eq!(links[0].note_id, None);
    ws.write(&Actor::User, |w| w.revert_change_set(&purge)).unwrap();
    let links = ws.read(&Actor::User, |r| r.outgoing_links(&source)).unwrap();
    assert_eq!(
        links[0].note_id.as_deref(),
        Some(target.as_str()),
        "the link resolves again"
    );
}

/// The same writes with the links resolved at each write, or all at once before the commit (as an import does):
/// the same links, resolved to the same notes and attachments, including links to notes written later, an
/// alias, a shared title told apart by its notebook, an embed of an attachment, a link to a reserved id, and a note
/// from before the write whose link by title finds a note it brings.
#[test]
fn links_resolved_at_once_before_the_commit_match_the_ones_resolved_at_each_write() {
    let links = |defer: bool| {
        let ws = Workspace::open_in_memory().unwrap();
        let older = add(&ws, "Older", "waits for [[Newcomer]] and [[Nobody]]");
        let written = ws
            .write(&Actor::User, |w| {
                if defer {
                    w.defer_search_index();
                }
                let work = testing::notebook(w, "Work")?;
                let reserved = w.reserve_id()?;
                let first = testing::note(
                    "First",
                    format!(
                        "[[Second]], [[Nick]], [[Work/Twin]], [[Twin]], ![[photo.png]], [[First#Top]], \
                         [it](quire://note/{reserved})"
                    ),
                )
                .create(w)?;
                let second = testing::note("Second", "back to [[first]]")
                    .label("aliases", "Nick, Other name")
                    .create(w)?;
                testing::note("Twin", "one").create(w)?;
                testing::note("Twin", "two").notebook(&work).create(w)?;
                w.create_note_as(&reserved, NewNote::new("Reserved", "[[Other name]]"))?;
                w.add_attachment(
                    &first,
                    quire_core::NewAttachment {
                        title: "photo.png".into(),
                        mime: "image/png".into(),
                        data: vec![1, 2, 3],
                        text: None,
                    },
                )?;
                testing::note("Newcomer", "").create(w)?;
                Ok::<_, Error>(vec![older.clone(), first, second, reserved])
            })
            .unwrap();
        ws.read(&Actor::User, |r| {
            let title = |id: &Option<String>| id.as_ref().map(|id| r.note_summary(id).map(|n| n.title));
            let mut out = Vec::new();
            for id in &written {
                for link in r.outgoing_links(id)? {
                    // A reserved id differs from run to run.
                    let target = if link.target.len() == 32 {
                        "<id>".to_owned()
                    } else {
                        link.target
                    };
                    out.push((
                        r.note_summary(id)?.title,
                        target,
                        title(&link.note_id).transpose()?,
                        link.attachment_id.is_some(),
                    ));
                }
            }
            Ok::<_, Error>(out)
        })
        .unwrap()
    };
    let at_once = links(true);
    assert_eq!(at_once, links(false));
    // What each link found.
    let found: Vec<String> = at_once
        .iter()
        .map(|(source, target, note, attachment)| {
            let to = match (note, attachment) {
                (Some(note), _) => note.as_str(),
                (None, true) => "an attachment",
                (None, false) => "-",
            };
            format!("{source}: {target} -> {to}")
        })
        .collect();
    assert_eq!(
        found,
        [
            "Older: Newcomer -> Newcomer",
            "Older: Nobody -> -",
            "First: Second -> Second",
            "First: Nick -> Second",
            "First: Work/Twin -> Twin",
            // Two notes called Twin: the one beside the linking note (Obsidian's choice among files of one name).
            "First: Twin -> Twin",
            "First: photo.png -> an attachment",
            "First: First -> First",
            "First: <id> -> Reserved",
            "Second: first -> First",
            "Reserved: Other name -> Second",
        ]
    );
}

#[test]
fn every_markdown_links_address_is_found_where_it_is_written() {
    // Each body, and the addresses found in it as written (what an importer would replace).
    fn check(body: &str, expected: &[&str]) {
        let (links, found) = quire_core::links::extract_with_addresses(body);
        assert_eq!(links, quire_core::links::extract(body), "the same links as extract");
        let written: Vec<&str> = found.iter().map(|a| &body[a.byte..a.byte + a.len]).collect();
        assert_eq!(written, expected, "{body:?}");
        for address in &found {
            let as_written = &body[address.byte..address.byte + address.len];
            assert_eq!(as_written.trim_start_matches('<').trim_end_matches('>'), address.url);
        }
    }
    check(
        "[plan](Projects/Plan%20A.md#Goals) and ![pic](pic.png)",
        &["Projects/Plan%20A.md#Goals", "pic.png"],
    );
    check(
        "[a]( <My%20file.pdf> \"title\") [web](https://example.org) [n](quire://note/abc)",
        &["<My%20file.pdf>", "https://example.org", "quire://note/abc"],
    );
    check("[a](b.md \"a title\")", &["b.md"]);
    check("[old](:/0123) then [[Wiki]] and ![[embed.png]]", &[":/0123"]);
    check("`[code](x.md)` but [this](y.md)", &["y.md"]);
    check("```\n[fenced](x.md)\n```\n[after](z.md)", &["z.md"]);
    check("[see [this](x.md)] and [empty]()", &["x.md", ""]);
    check("café [é](é.md)\n\n[second line](../up.md)", &["é.md", "../up.md"]);
    check("no link] (x.md) [unclosed](x.md", &[]);
}
