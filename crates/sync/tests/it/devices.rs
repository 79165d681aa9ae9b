//! Whole workspaces syncing through a folder: what one device writes, the other reads, through core's write path.

use quire_core::{Actor, NewNote, NewNotebook, NoteUpdate, Workspace};
use quire_sync::{Address, Device, SyncKey};

/// Two workspaces in files, and a target folder, in one temporary folder.
pub(crate) struct Pair {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) a: Device,
    pub(crate) wa: Workspace,
    pub(crate) b: Device,
    pub(crate) wb: Workspace,
}

pub(crate) async fn pair() -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let wa = Workspace::open(dir.path().join("a.quire")).unwrap();
    let wb = Workspace::open(dir.path().join("b.quire")).unwrap();
    let a = Device::init(
        wa.clone(),
        &Address::Folder(target.clone()),
        SyncKey::from_bytes([9; 32]),
        b"lock",
        "laptop",
    )
    .await
    .unwrap();
    let b = Device::join(
        wb.clone(),
        &Address::Folder(target.clone()),
        SyncKey::from_bytes([9; 32]),
        b"lock",
        "desktop",
    )
    .await
    .unwrap();
    Pair { dir, a, wa, b, wb }
}

fn titles(ws: &Workspace) -> Vec<(String, String)> {
    let ids = crate::converge::note_ids(ws);
    ws.read(&Actor::User, |r| {
        let mut out = Vec::new();
        for id in ids {
            let note = r.note(&id)?;
            out.push((note.summary.title, note.body));
        }
        out.sort();
        Ok::<_, quire_core::Error>(out)
    })
    .unwrap()
}

#[tokio::test]
async fn a_note_and_its_edits_travel_both_ways() {
    let p = pair().await;
    let note =
        p.wa.write(&Actor::User, |w| {
            let nb = w.create_notebook(NewNotebook {
                title: "Work".into(),
                ..NewNotebook::default()
            })?;
            let mut new = NewNote::new("Plan", "first line\nsecond line\n");
            new.notebook_id = Some(nb.id);
            new.tags = vec!["todo".into()];
            w.create_note(new)
        })
        .unwrap();
    // Each device's first batch is empty (made when it joined): one for it, one for the note.
    let report = p.a.sync().await.unwrap();
    assert_eq!((report.sent_batches, report.sent_docs), (2, 2), "{report:?}");
    let report = p.b.sync().await.unwrap();
    assert_eq!((report.applied_batches, report.applied_notes), (2, 1), "{report:?}");
    assert_eq!(
        titles(&p.wb),
        vec![("Plan".to_owned(), "first line\nsecond line\n".to_owned())]
    );
    let on_b = p.wb.read(&Actor::User, |r| r.note(&note.summary.id)).unwrap();
    assert_eq!(on_b.summary.tags, vec!["todo".to_owned()]);
    let nb =
        p.wb.read(&Actor::User, |r| r.notebook(&on_b.summary.notebook_id))
            .unwrap();
    assert_eq!(nb.title, "Work");

    // Concurrent edits of different lines merge.
    let id = note.summary.id.clone();
    p.wa.write(&Actor::User, |w| {
        w.update_note(
            &id,
            NoteUpdate {
                body: Some("FIRST line\nsecond line\n".into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    p.wb.write(&Actor::User, |w| {
        w.update_note(
            &id,
            NoteUpdate {
                body: Some("first line\nsecond line, longer\n".into()),
                ..NoteUpdate::default()
            },
        )
    })
    .unwrap();
    p.a.sync().await.unwrap();
    p.b.sync().await.unwrap();
    p.a.sync().await.unwrap();
    let expected = vec![("Plan".to_owned(), "FIRST line\nsecond line, longer\n".to_owned())];
    assert_eq!(titles(&p.wa), expected);
    assert_eq!(titles(&p.wb), expected);

    // Nothing left to send either way (once each has read the other's empty batch saying what it applied), and a
    // sync with nothing new sends nothing.
    p.b.sync().await.unwrap();
    let again = p.a.sync().await.unwrap();
    assert_eq!((again.sent_batches, again.applied_batches), (0, 0), "{again:?}");
    let again = p.b.sync().await.unwrap();
    assert_eq!((again.sent_batches, again.applied_batches), (0, 0), "{again:?}");

    // The change shows in B's history as from device laptop.
    let sets =
        p.wb.read(&Actor::User, |r| r.change_sets(quire_core::Page::default()))
            .unwrap();
    assert!(
        sets.items
            .iter()
            .any(|s| matches!(&s.actor, Actor::Sync { device } if device.starts_with("laptop"))),
        "{:?}",
        sets.items
    );
    drop(p.dir);
}

/// The bytes of an attachment as the user reads them, or `None` if it is not there.
fn attachment_bytes(ws: &Workspace, id: &str) -> Option<Vec<u8>> {
    ws.read(&Actor::User, |r| r.attachment_data(id)).ok()
}

#[tokio::test]
async fn attachments_travel_are_replaced_and_deleted_and_concurrent_replacements_agree() {
    let p = pair().await;
    let note =
        p.wa.write(&Actor::User, |w| w.create_note(NewNote::new("Trip", "photo below\n")))
            .unwrap();
    let id = note.summary.id;
    let photo =
        p.wa.write(&Actor::User, |w| {
            w.add_attachment(
                &id,
                quire_core::NewAttachment {
                    title: "beach.png".into(),
                    mime: "image/png".into(),
                    data: vec![7; 50_000],
                    text: Some("sand and sea".into()),
                },
            )
        })
        .unwrap();
    p.a.sync().await.unwrap();
    p.b.sync().await.unwrap();
    assert_eq!(attachment_bytes(&p.wb, &photo.id), Some(vec![7; 50_000]));
    let hits =
        p.wb.read(&Actor::User, |r| r.search("sand", quire_core::SearchOptions::default()))
            .unwrap();
    assert_eq!(hits.total, 1, "the attachment's text is searched on B");

    // Replaced on both at once: every device ends with the same file.
    p.wa.write(&Actor::User, |w| w.replace_attachment_data(&photo.id, vec![1; 10]))
        .unwrap();
    p.wb.write(&Actor::User, |w| w.replace_attachment_data(&photo.id, vec![2; 20]))
        .unwrap();
    for _ in 0..2 {
        p.a.sync().await.unwrap();
        p.b.sync().await.unwrap();
    }
    let on_a = attachment_bytes(&p.wa, &photo.id).unwrap();
    assert_eq!(attachment_bytes(&p.wb, &photo.id).unwrap(), on_a);
    assert!(on_a == vec![1; 10] || on_a == vec![2; 20], "{on_a:?}");

    // Deleted on B: gone on A.
    p.wb.write(&Actor::User, |w| w.delete_attachment(&photo.id)).unwrap();
    p.b.sync().await.unwrap();
    p.a.sync().await.unwrap();
    assert_eq!(attachment_bytes(&p.wa, &photo.id), None);
    let again = p.a.sync().await.unwrap();
    assert_eq!((again.sent_batches, again.applied_batches), (0, 0), "{again:?}");
}

#[tokio::test]
async fn a_device_that_leaves_edits_and_joins_again_keeps_both_sides_edits() {
    let p = pair().await;
    let note =
        p.wa.write(&Actor::User, |w| {
            w.create_note(NewNote::new("Plan", "one\ntwo\nthree\n"))
        })
        .unwrap();
    let id = note.summary.id;
    p.a.sync().await.unwrap();
    p.b.sync().await.unwrap();
    let target = p.b.target_root().to_owned();
    Device::leave(&p.wb).unwrap();
    drop(p.b);
    let edit = |ws: &Workspace, body: &str| {
        ws.write(&Actor::User, |w| {
            w.update_note(
                &id,
                NoteUpdate {
                    body: Some(body.to_owned()),
                    ..NoteUpdate::default()
                },
            )
        })
        .unwrap();
    };
    edit(&p.wb, "one\ntwo, edited while away\nthree\n");
    edit(&p.wa, "ONE\ntwo\nthree\n");
    p.a.sync().await.unwrap();
    // Joining again, as `quire sync join` does: what the target holds first, then a sync.
    let b = Device::join(
        p.wb.clone(),
        &Address::Folder(target.into()),
        SyncKey::from_bytes([9; 32]),
        b"lock",
        "desktop",
    )
    .await
    .unwrap();
    b.receive().await.unwrap();
    b.sync().await.unwrap();
    p.a.sync().await.unwrap();
    let expected = vec![("Plan".to_owned(), "ONE\ntwo, edited while away\nthree\n".to_owned())];
    assert_eq!(titles(&p.wa), expected);
    assert_eq!(titles(&p.wb), expected);
}

/// Security finding 2-#9: a batch missing from the target stopped that device's later changes without a word (exit
/// 0, "received 0", nothing in status). The hole is now reported by the sync and kept in the status, with since
/// when; when the file comes back, the changes are applied and the report is gone.
#[tokio::test]
async fn a_batch_missing_from_the_target_is_reported_until_it_comes() {
    let p = pair().await;
    // Whatever the join wrote is applied first.
    p.b.sync().await.unwrap();
    let a_id = p.a.id();
    for title in ["first", "second"] {
        p.wa.write(&Actor::User, |w| w.create_note(NewNote::new(title, "text\n")))
            .unwrap();
        p.a.sync().await.unwrap();
    }
    let batches = p.dir.path().join(format!("target/quire-sync/v1/d/{a_id}/b"));
    let mut files: Vec<_> = std::fs::read_dir(&batches)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let held = files[files.len() - 2].clone();
    let aside = p.dir.path().join("aside");
    std::fs::rename(&held, &aside).unwrap();

    let report = p.b.sync().await.unwrap();
    assert_eq!(report.gaps.len(), 1, "{report:?}");
    let gap = &report.gaps[0];
    assert_eq!((gap.name.as_str(), gap.later), ("laptop", gap.missing + 1));
    assert!(
        gap.to_string().contains("is not on the target though later ones are"),
        "{gap}"
    );
    assert!(titles(&p.wb).iter().all(|(t, _)| t != "second"));
    let status = Device::status(&p.wb).unwrap().unwrap();
    assert_eq!(status.gaps, report.gaps);
    // Seen again: still the same hole, since the first time.
    let again = p.b.sync().await.unwrap();
    assert_eq!(again.gaps[0].since, gap.since);

    std::fs::rename(&aside, &held).unwrap();
    let report = p.b.sync().await.unwrap();
    assert!(report.gaps.is_empty(), "{report:?}");
    assert!(titles(&p.wb).iter().any(|(t, _)| t == "second"));
    assert!(Device::status(&p.wb).unwrap().unwrap().gaps.is_empty());
}

/// Two devices; the laptop writes "first", "second" and "third", a batch each, and the one with "second" is lost from
/// the target.
async fn pair_with_a_lost_batch() -> Pair {
    let p = pair().await;
    p.b.sync().await.unwrap();
    let a_id = p.a.id();
    for title in ["first", "second", "third"] {
        p.wa.write(&Actor::User, |w| w.create_note(NewNote::new(title, "text\n")))
            .unwrap();
        p.a.sync().await.unwrap();
    }
    let batches = p.dir.path().join(format!("target/quire-sync/v1/d/{a_id}/b"));
    let mut files: Vec<_> = std::fs::read_dir(&batches)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    std::fs::remove_file(&files[files.len() - 2]).unwrap();
    p
}

/// The way out of a hole (security-2 #9, issue 46): the device whose batch is gone notices at its next sync and
/// writes a snapshot that holds it; the device that waited takes what it held from there. Nothing is lost.
#[tokio::test]
async fn a_device_whose_batch_is_lost_puts_it_back_as_a_snapshot_and_the_wait_ends() {
    let p = pair_with_a_lost_batch().await;
    let report = p.b.sync().await.unwrap();
    let gap = &report.gaps[0];
    assert!(gap.to_string().contains("laptop's next sync puts"), "{gap}");
    assert!(titles(&p.wb).iter().all(|(t, _)| t != "second"));

    let healed = p.a.sync().await.unwrap();
    assert!(healed.made_snapshot, "{healed:?}");
    let report = p.b.sync().await.unwrap();
    assert!(report.gaps.is_empty(), "{report:?}");
    assert!(report.applied_snapshots >= 1, "{report:?}");
    let have: Vec<String> = titles(&p.wb).into_iter().map(|(t, _)| t).collect();
    for title in ["first", "second", "third"] {
        assert!(have.iter().any(|t| t == title), "{title} missing: {have:?}");
    }
    assert!(Device::status(&p.wb).unwrap().unwrap().gaps.is_empty());
}

/// The way out when the device whose batch is gone will never sync again (issue 46's "skip the gap"): forgetting it
/// ends the wait and the report; what it wrote from the hole on is not applied, as the report says.
#[tokio::test]
async fn forgetting_a_device_that_will_not_sync_again_ends_the_wait_for_its_lost_batch() {
    let p = pair_with_a_lost_batch().await;
    let report = p.b.sync().await.unwrap();
    let said = report.gaps[0].to_string();
    assert!(said.contains("`quire sync forget laptop` ends the wait"), "{said}");
    Device::forget(&p.wb, "laptop").unwrap();
    let report = p.b.sync().await.unwrap();
    assert!(report.gaps.is_empty() && report.refused.is_empty(), "{report:?}");
    assert!(Device::status(&p.wb).unwrap().unwrap().gaps.is_empty());
    let have: Vec<String> = titles(&p.wb).into_iter().map(|(t, _)| t).collect();
    assert!(
        have.iter().any(|t| t == "first") && !have.iter().any(|t| t == "second"),
        "{have:?}"
    );
}

/// Found in use: a device that left and started syncing with a new folder sent its notes there but none of its
/// attachments (their marks said the earlier target had them), so a device joining the new folder got broken image
/// links. Starting on a target, by init or join, sends every attachment again, as the generation it has.
#[tokio::test]
async fn a_new_target_gets_the_attachments_too() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let wa = Workspace::open(dir.path().join("a.quire")).unwrap();
    let key = || SyncKey::from_bytes([9; 32]);
    let file = wa
        .write(&Actor::User, |w| {
            let note = w.create_note(NewNote::new("Trip", "![map](quire://attachment/x)\n"))?;
            w.add_attachment(
                &note.summary.id,
                quire_core::NewAttachment {
                    title: "map.png".into(),
                    mime: "image/png".into(),
                    data: b"\x89PNG map".to_vec(),
                    text: None,
                },
            )
        })
        .unwrap()
        .id;
    let a = Device::init(wa.clone(), &Address::Folder(first), key(), b"lock", "a")
        .await
        .unwrap();
    a.sync().await.unwrap();
    drop(a);
    Device::leave(&wa).unwrap();
    let a = Device::init(wa.clone(), &Address::Folder(second.clone()), key(), b"lock", "a")
        .await
        .unwrap();
    a.sync().await.unwrap();

    let wc = Workspace::open(dir.path().join("c.quire")).unwrap();
    let c = Device::join(wc.clone(), &Address::Folder(second), key(), b"lock", "c")
        .await
        .unwrap();
    c.sync().await.unwrap();
    let data = wc.read(&Actor::User, |r| r.attachment_data(&file)).unwrap();
    assert_eq!(data, b"\x89PNG map");
    // Sent again as it was: nothing changed for the device that had it, so the next sync sends nothing.
    assert_eq!(a.sync().await.unwrap().sent_batches, 0);
}

/// A note whose second line each device changed before either synced, then synced both ways: a conflict on each.
async fn same_line_changed_on_both(p: &Pair) -> String {
    let note =
        p.wa.write(&Actor::User, |w| {
            w.create_note(NewNote::new("Shopping", "Milk\nEggs\nBread"))
        })
        .unwrap();
    let id = note.summary.id;
    p.a.sync().await.unwrap();
    p.b.sync().await.unwrap();
    crate::compact::edit(&p.wa, &id, "Milk\nEggs x12 (desk)\nBread");
    crate::compact::edit(&p.wb, &id, "Milk\nBrown eggs (laptop)\nBread");
    p.a.sync().await.unwrap();
    p.b.sync().await.unwrap();
    p.a.sync().await.unwrap();
    id
}

fn body_of(ws: &Workspace, id: &str) -> String {
    ws.read(&Actor::User, |r| r.note(id)).unwrap().body
}

/// Found in use: the same conflict resolved on two devices before either synced, each keeping its own version,
/// removed both versions everywhere. Both come back (from one of the two devices) and the choice is asked again.
#[tokio::test]
async fn two_devices_that_choose_opposite_versions_at_once_get_both_back_to_choose_again() {
    use quire_sync::conflicts::{self, Keep};
    let p = pair().await;
    let id = same_line_changed_on_both(&p).await;
    let (on_a, on_b) = (
        conflicts::open(&p.wa, &Actor::User, None).unwrap(),
        conflicts::open(&p.wb, &Actor::User, None).unwrap(),
    );
    assert_eq!((on_a.len(), on_b.len()), (1, 1));
    conflicts::resolve(&p.wa, &Actor::User, on_a[0].id, Keep::Ours).unwrap();
    conflicts::resolve(&p.wb, &Actor::User, on_b[0].id, Keep::Ours).unwrap();
    for _ in 0..3 {
        p.a.sync().await.unwrap();
        p.b.sync().await.unwrap();
    }
    for ws in [&p.wa, &p.wb] {
        let body = body_of(ws, &id);
        assert!(
            body.contains("Eggs x12 (desk)") && body.contains("Brown eggs (laptop)"),
            "{body:?}"
        );
        assert!(body.starts_with("Milk\n") && body.ends_with("\nBread"), "{body:?}");
    }
    assert_eq!(body_of(&p.wa, &id), body_of(&p.wb, &id));
    let asked = (
        conflicts::open(&p.wa, &Actor::User, None).unwrap().len(),
        conflicts::open(&p.wb, &Actor::User, None).unwrap().len(),
    );
    assert_eq!(asked, (1, 1), "the choice is asked again on both devices");

    // A choice the other device saw before making its own change is not undone.
    let open = conflicts::open(&p.wa, &Actor::User, None)
        .unwrap()
        .into_iter()
        .chain(conflicts::open(&p.wb, &Actor::User, None).unwrap())
        .next()
        .unwrap();
    let ws = if conflicts::open(&p.wa, &Actor::User, None).unwrap().is_empty() {
        &p.wb
    } else {
        &p.wa
    };
    conflicts::resolve(ws, &Actor::User, open.id, Keep::Theirs).unwrap();
    for _ in 0..2 {
        p.a.sync().await.unwrap();
        p.b.sync().await.unwrap();
    }
    let kept = body_of(ws, &id);
    assert_eq!(kept.lines().count(), 3, "{kept:?}");
    crate::compact::edit(&p.wa, &id, "Milk\nBread");
    for _ in 0..2 {
        p.a.sync().await.unwrap();
        p.b.sync().await.unwrap();
    }
    assert_eq!(
        body_of(&p.wb, &id),
        "Milk\nBread",
        "a removal made after seeing the choice stays"
    );
}

/// Issue 46: undoing a choice puts both versions back in the note, and the conflict is asked again.
#[tokio::test]
async fn undoing_a_choice_asks_the_conflict_again() {
    use quire_sync::conflicts::{self, Keep};
    let p = pair().await;
    let id = same_line_changed_on_both(&p).await;
    let open = conflicts::open(&p.wa, &Actor::User, None).unwrap();
    assert_eq!(open.len(), 1);
    let both = body_of(&p.wa, &id);
    let (_, change_set) = conflicts::resolve(&p.wa, &Actor::User, open[0].id, Keep::Theirs).unwrap();
    assert_eq!(body_of(&p.wa, &id), "Milk\nBrown eggs (laptop)\nBread");
    assert!(conflicts::open(&p.wa, &Actor::User, None).unwrap().is_empty());
    p.wa.write(&Actor::User, |w| w.revert_change_set(&change_set.unwrap()))
        .unwrap();
    assert_eq!(body_of(&p.wa, &id), both);
    let again = conflicts::open(&p.wa, &Actor::User, Some(&id)).unwrap();
    assert_eq!(again.len(), 1, "asked again");
    assert_eq!(
        (again[0].ours.as_str(), again[0].theirs.as_str()),
        (open[0].ours.as_str(), open[0].theirs.as_str())
    );
    // Chosen again, it stays chosen.
    conflicts::resolve(&p.wa, &Actor::User, again[0].id, Keep::Ours).unwrap();
    assert!(conflicts::open(&p.wa, &Actor::User, None).unwrap().is_empty());
}
