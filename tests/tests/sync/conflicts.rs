//! Conflicts end to end: the same lines changed on two devices, keeping both, the merge by words, and a note sealed
//! on a device that had not seen the others' edits.

use quire_tests::{files_below, files_holding, workspace_files};
use serde_json::Value;

use super::{PASSPHRASE, Quire, add, body, edit, sync, two_devices, with_passphrase};

/// sync.md #1 and #2 (ux-2 #1, #2): the same line changed on two devices before either synced. Both versions stay
/// whole in the note on both devices (no `Brown eggs x12 (desk) (laptop)`), the lines around it stay, each device
/// says so and lists the conflict, and keeping one version on one device settles it on the other.
#[test]
fn the_same_line_changed_on_two_devices_keeps_both_versions_until_the_person_chooses() {
    let target = tempfile::tempdir().unwrap();
    let (a, b, _, _) = two_devices(target.path());
    let note = add(&a, "Shopping", "Milk (2 liters)\nEggs\nBread\nButter", "Home");
    sync(&a);
    sync(&b);
    edit(&a, &note, "Milk (2 liters)\nEggs x12 (desk)\nBread\nButter");
    edit(&b, &note, "Milk (2 liters)\nBrown eggs (laptop)\nBread\nButter");
    sync(&a);
    let at_b = b.run(&["sync"]);
    assert!(at_b.stdout.contains("1 conflict"), "{at_b:?}");
    assert_eq!(sync(&a)["conflicts"], 1);
    for q in [&a, &b] {
        let lines: Vec<String> = body(q, &note).lines().map(str::to_owned).collect();
        assert_eq!(lines.len(), 5, "{lines:?}");
        for line in [
            "Milk (2 liters)",
            "Eggs x12 (desk)",
            "Brown eggs (laptop)",
            "Bread",
            "Butter",
        ] {
            assert!(
                lines.iter().any(|l| l == line),
                "{line:?} is not a whole line of {lines:?}"
            );
        }
        assert_eq!(q.run(&["--json", "sync", "status"]).json()["conflicts"], 1);
    }
    let listed = b.run(&["--json", "sync", "conflicts"]).json();
    assert_eq!(listed[0]["mine"], "Brown eggs (laptop)\n", "{listed}");
    assert_eq!(listed[0]["theirs"], "Eggs x12 (desk)\n");
    assert_eq!(listed[0]["device"], "laptop", "the other device by its name");
    assert_eq!(
        listed[0]["merged"],
        Value::Null,
        "the same words changed: no merge by words"
    );
    let id = listed[0]["id"].to_string();
    let no_merge = b.run(&["sync", "resolve", &id, "--keep", "merged"]);
    assert_ne!(no_merge.code, 0, "{no_merge:?}");
    assert!(no_merge.stderr.contains("same words"), "{no_merge:?}");
    let kept = b.run(&["sync", "resolve", &id, "--keep", "theirs"]);
    assert_eq!(kept.code, 0, "{kept:?}");
    assert!(kept.stdout.contains("Kept laptop's version"), "{kept:?}");
    let expected = "Milk (2 liters)\nEggs x12 (desk)\nBread\nButter";
    assert_eq!(body(&b, &note), expected);
    assert_eq!(b.run(&["--json", "sync", "conflicts"]).json(), serde_json::json!([]));
    sync(&b);
    sync(&a);
    assert_eq!(body(&a, &note), expected);
    assert!(
        a.run(&["sync", "conflicts"]).stdout.contains("No conflicts"),
        "settled on a too"
    );
    assert_eq!(a.run(&["--json", "sync", "status"]).json()["conflicts"], 0);
}

/// Keeping both versions on one device changes no text; the other device learns the choice at its next sync and
/// stops asking (found in use: "keep both" settled the conflict on the device that chose only).
#[test]
fn keeping_both_versions_on_one_device_settles_the_conflict_on_the_other() {
    let target = tempfile::tempdir().unwrap();
    let (a, b, _, _) = two_devices(target.path());
    let note = add(&a, "Shopping", "Milk\nEggs\nBread", "Home");
    sync(&a);
    sync(&b);
    edit(&a, &note, "Milk\nEggs x12 (desk)\nBread");
    edit(&b, &note, "Milk\nBrown eggs (laptop)\nBread");
    sync(&a);
    sync(&b);
    sync(&a);
    let both = body(&a, &note);
    assert!(a.run(&["note", "show", &note]).stdout.contains("waits for a choice"));
    let listed = b.run(&["--json", "sync", "conflicts"]).json();
    let kept = b.run(&["sync", "resolve", &listed[0]["id"].to_string(), "--keep", "both"]);
    assert_eq!(kept.code, 0, "{kept:?}");
    assert_eq!(b.run(&["--json", "sync", "conflicts"]).json(), serde_json::json!([]));
    assert_eq!(sync(&b)["conflicts"], 0);
    let at_a = sync(&a);
    assert_eq!(at_a["conflicts"], 0, "{at_a}");
    assert!(
        !a.run(&["note", "show", &note]).stdout.contains("waits"),
        "settled on a too"
    );
    assert_eq!(a.run(&["--json", "sync", "status"]).json()["conflicts"], 0);
    for q in [&a, &b] {
        assert_eq!(body(q, &note), both, "both versions stay, as they were");
    }
    // A later edit on either device brings nothing back.
    edit(&a, &note, &format!("{both}\nButter"));
    sync(&a);
    sync(&b);
    assert_eq!(b.run(&["--json", "sync", "status"]).json()["conflicts"], 0);
}

/// Different words of one line changed on two devices: both lines are kept and the merge by words is offered.
#[test]
fn different_words_of_one_line_offer_the_merge_by_words() {
    let target = tempfile::tempdir().unwrap();
    let (a, b, _, _) = two_devices(target.path());
    let note = add(&a, "Eggs", "Brown eggs x12\nBread", "Home");
    sync(&a);
    sync(&b);
    edit(&a, &note, "White eggs x12\nBread");
    edit(&b, &note, "Brown eggs x6\nBread");
    sync(&a);
    sync(&b);
    let listed = b.run(&["--json", "sync", "conflicts"]).json();
    assert_eq!(listed[0]["merged"], "White eggs x6\n", "{listed}");
    let kept = b.run(&[
        "--json",
        "sync",
        "resolve",
        &listed[0]["id"].to_string(),
        "--keep",
        "merged",
    ]);
    assert_eq!(kept.code, 0, "{kept:?}");
    assert_eq!(body(&b, &note), "White eggs x6\nBread");
    let undone = b.run(&["undo", kept.json()["change_set_id"].as_str().unwrap()]);
    assert_eq!(undone.code, 0, "{undone:?}");
    assert!(body(&b, &note).contains("White eggs x12\n"), "undo puts both back");
}

/// sync.md #3: a note protected (sealed) on a device that had not synced since it joined. The edit the other two
/// had already exchanged stays in the note on every device, sealed, instead of surviving only as a revision.
#[test]
fn protecting_on_a_device_that_is_behind_keeps_what_the_others_wrote_first() {
    let target = tempfile::tempdir().unwrap();
    let (a, b, _, _) = two_devices(target.path());
    let note = add(&a, "Plan", "line one", "Home");
    sync(&a);
    sync(&b);
    let c = Quire::new();
    let joined = with_passphrase(
        &c,
        &["--json", "sync", "join", target.path().to_str().unwrap()],
        PASSPHRASE,
    );
    assert_eq!(joined.code, 0, "{joined:?}");
    let append = serde_json::json!({"note_id": note, "append": "\nline two from C"}).to_string();
    assert_eq!(c.run(&["tools", "call", "update_note", &append]).code, 0);
    sync(&c);
    sync(&a);
    assert_eq!(body(&a, &note), "line one\nline two from C");
    // b never heard of C's line.
    let protect = with_passphrase(&b, &["note", "protect", &note], PASSPHRASE);
    assert_eq!(protect.code, 0, "{protect:?}");
    for _ in 0..2 {
        for q in [&b, &a, &c] {
            sync(q);
        }
    }
    for q in [&a, &b, &c] {
        assert_eq!(body(q, &note), "line one\nline two from C", "on every device");
        let shown = with_passphrase(q, &["--json", "note", "show", &note], PASSPHRASE).json();
        assert_eq!(shown["is_protected"], true, "{shown}");
    }
    let stored = files_below(target.path());
    assert!(
        files_holding(&stored, "line two from C").is_empty(),
        "the target holds it sealed only"
    );
}

/// Issue 46, "protection never rolls back", through the CLI: the desk changes a note and seals it before the
/// laptop's edit of another line reaches it. The laptop's sync says its edit waits beside the sealed note; nothing
/// of it is plain in the laptop's files; `quire sync conflicts` without the passphrase names the note only, and with
/// it merges the edit in (different lines: no question), which then reaches the desk.
#[test]
fn an_edit_the_sealing_device_never_saw_is_merged_when_the_conflicts_are_opened_with_the_passphrase() {
    let target = tempfile::tempdir().unwrap();
    let (a, b, _, _) = two_devices(target.path());
    let note = add(&a, "Shopping", "Eggs\nMilk\nBread", "Home");
    sync(&a);
    sync(&b);
    edit(&a, &note, "Eggs x12 (desk)\nMilk\nBread");
    let protect = with_passphrase(&a, &["note", "protect", &note], PASSPHRASE);
    assert_eq!(protect.code, 0, "{protect:?}");
    edit(&b, &note, "Eggs\nMilk\nRye bread indigo-tapir-58");
    sync(&a);
    let at_b = b.run(&["sync"]);
    assert_eq!(at_b.code, 0, "{at_b:?}");
    assert!(at_b.stdout.contains("1 note was sealed on another device"), "{at_b:?}");
    assert!(files_holding(&workspace_files(&b.workspace()), "indigo-tapir-58").is_empty());
    // Counted by `sync status` (which read the sealed note as sync and failed once).
    assert_eq!(b.run(&["--json", "sync", "status"]).json()["conflicts"], 1);
    let locked = b.run(&["--json", "sync", "conflicts"]).json();
    assert_eq!(locked.as_array().unwrap().len(), 1, "{locked}");
    assert_eq!(
        (&locked[0]["sealed"], &locked[0]["edits_beside_note"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    assert_eq!(locked[0]["mine"], "");
    let said = b.run(&["sync", "conflicts"]);
    assert!(
        said.stdout.contains("edits made here wait beside “Shopping”"),
        "{said:?}"
    );
    let refused = b.run(&["sync", "resolve", &locked[0]["id"].to_string(), "--keep", "mine"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stderr.contains("is sealed"), "{refused:?}");

    let opened = with_passphrase(&b, &["--json", "sync", "conflicts"], PASSPHRASE);
    assert_eq!(opened.code, 0, "{opened:?}");
    assert_eq!(
        opened.json(),
        serde_json::json!([]),
        "different lines: merged without a question"
    );
    let merged = "Eggs x12 (desk)\nMilk\nRye bread indigo-tapir-58";
    assert_eq!(body(&b, &note), merged);
    sync(&b);
    sync(&a);
    assert_eq!(body(&a, &note), merged);
    assert!(files_holding(&files_below(target.path()), "indigo-tapir-58").is_empty());
}
