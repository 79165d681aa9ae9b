//! End to end: `quire import` and `quire export` with the real binary on a vault the test builds, including a
//! broken file, undo of the whole import, a dry run, and an export imported into a second workspace.

use quire_tests::Quire;
use serde_json::Value;

#[expect(clippy::unwrap_used, reason = "a test helper stops the test where it failed")]
fn write(root: &std::path::Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn import_a_vault_undo_it_and_carry_it_to_another_workspace() {
    let q = Quire::new();
    let vault = q.dir().join("vault");
    write(&vault, ".obsidian/app.json", b"{}");
    write(
        &vault,
        "Trips/Lisbon.md",
        b"---\ntags: [travel]\n---\nPasteis de nata. See [[Packing list]].\n![[tram.jpg]]\n",
    );
    write(&vault, "Trips/tram.jpg", b"\xff\xd8 fake jpeg");
    write(
        &vault,
        "Packing list.md",
        b"- passport\n- [the trip](Trips/Lisbon.md)\n",
    );
    write(&vault, "broken.md", b"\xff\xfe not text");

    let dry = q.run(&["--json", "import", vault.to_str().unwrap(), "--dry-run"]);
    assert_eq!(dry.code, 1, "a broken file makes the exit code 1: {dry:#?}");
    let dry: Value = serde_json::from_str(&dry.stdout).unwrap();
    assert_eq!(
        (dry["imported"].as_u64(), dry["dry_run"].as_bool()),
        (Some(2), Some(true))
    );
    assert_eq!(
        q.run(&["--json", "search", "nata"]).json()["results"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    let run = q.run(&["import", vault.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stdout.contains("2 imported") && run.stdout.contains("failed: broken.md: not UTF-8"),
        "{run:#?}"
    );
    let undo_line = run.stdout.lines().find(|l| l.contains("quire undo")).unwrap();
    let change_set = undo_line.rsplit(' ').next().unwrap().to_owned();
    let hits = q.run(&["--json", "search", "nata"]).json();
    assert_eq!(hits["results"][0]["title"], "Lisbon");
    assert_eq!(hits["results"][0]["notebook_path"], "Trips");

    let undone = q.run(&["undo", &change_set]);
    assert_eq!(undone.code, 0, "{undone:#?}");
    assert_eq!(
        q.run(&["--json", "search", "nata"]).json()["results"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    std::fs::remove_file(vault.join("broken.md")).unwrap();
    let again = q.run(&["--json", "import", vault.to_str().unwrap()]).json();
    assert_eq!(
        (again["imported"].as_u64(), again["attachments"].as_u64()),
        (Some(2), Some(1))
    );
    let unchanged = q.run(&["--json", "import", vault.to_str().unwrap()]).json();
    assert_eq!(
        unchanged["unchanged"].as_u64(),
        Some(2),
        "importing again changes nothing"
    );

    let out = q.dir().join("export");
    let exported = q.run(&["export", out.to_str().unwrap(), "--format", "obsidian"]);
    assert!(
        exported.stdout.contains("exported 2 notes, 1 attachments"),
        "{exported:#?}"
    );
    let lisbon = std::fs::read_to_string(out.join("Trips/Lisbon.md")).unwrap();
    assert!(
        lisbon.contains("tags:\n  - travel") && lisbon.contains("[[Packing list]]"),
        "{lisbon}"
    );
    assert_eq!(
        std::fs::read(out.join("Trips/tram.jpg")).unwrap(),
        b"\xff\xd8 fake jpeg"
    );

    let other = Quire::new();
    let copied = other.run(&["--json", "import", out.to_str().unwrap()]).json();
    assert_eq!(
        (copied["imported"].as_u64(), copied["failed"].as_u64()),
        (Some(2), Some(0))
    );
    let packing = other.run(&["--json", "search", "passport"]).json();
    let id = packing["results"][0]["note_id"].as_str().unwrap().to_owned();
    let links = other
        .run(&["tools", "call", "get_backlinks", &format!(r#"{{"note_id": "{id}"}}"#)])
        .json();
    assert_eq!(links["backlinks"][0]["title"], "Lisbon", "{links}");
}
