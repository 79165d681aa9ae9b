//! End to end: sealed notes with the real binary. `quire lock init` seals a protected note so that no trace of its
//! text is left in the workspace's files; a command that needs it asks for the passphrase (on a terminal, without
//! echo, or from `--passphrase-stdin`), a wrong one changes nothing, and passwd, recover, export and unprotect
//! behave as a person expects.
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::path::{Path, PathBuf};

use quire_tests::{Quire, Run, files_below, files_holding, workspace_files};
use serde_json::Value;

const MARKER: &str = "ultramarine-quokka-47";
const PASSPHRASE: &str = "correct horse battery";
/// The cheapest key derivation, so that every unlock in these tests is quick.
const CHEAP: [&str; 4] = ["--kdf-memory-kib", "8", "--kdf-passes", "1"];

/// `quire --workspace <tmp> args...` with `stdin` on standard input (none: an empty, closed one, not a terminal).
fn run(q: &Quire, args: &[&str], stdin: Option<&str>) -> Run {
    let workspace = q.workspace();
    let mut full = vec!["--workspace", workspace.to_str().unwrap()];
    full.extend_from_slice(args);
    q.run_raw(&full, stdin)
}

/// `args` with the passphrase on standard input.
fn with_passphrase(q: &Quire, args: &[&str], passphrase: &str) -> Run {
    let mut full = vec!["--passphrase-stdin"];
    full.extend_from_slice(args);
    run(q, &full, Some(&format!("{passphrase}\n")))
}

fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Sets [`PASSPHRASE`] with cheap parameters; returns the recovery key.
fn init(q: &Quire) -> String {
    let mut args = vec!["--json", "lock", "init", "--passphrase-stdin"];
    args.extend_from_slice(&CHEAP);
    let done = run(q, &args, Some(&format!("{PASSPHRASE}\n"))).json();
    done["recovery_key"].as_str().unwrap().to_owned()
}

fn add(q: &Quire, title: &str, body: &str, notebook: Option<&str>) -> String {
    let mut args = vec!["--json", "note", "add", "--title", title, "--body", body];
    if let Some(notebook) = notebook {
        args.extend_from_slice(&["--notebook", notebook]);
    }
    let added = q.run(&args).json();
    added["note_id"].as_str().unwrap().to_owned()
}

fn status(q: &Quire) -> Value {
    q.run(&["--json", "lock", "status"]).json()
}

/// A note with the marker in its body, in a revision (an AI's edit) and in an attachment, indexed for word search;
/// a plain note beside it. Returns (the sealed-to-be note, the plain one).
fn fixture(q: &Quire) -> (String, String) {
    let vault = q.dir().join("vault");
    write(&vault, ".obsidian/app.json", b"{}");
    write(
        &vault,
        "Bank.md",
        format!("PIN is {MARKER} first\n![[card.jpg]]\n").as_bytes(),
    );
    write(&vault, "card.jpg", format!("\u{ff} card {MARKER}").as_bytes());
    let imported = q.run(&["--json", "import", vault.to_str().unwrap()]).json();
    assert_eq!(imported["attachments"], 1, "{imported}");
    std::fs::remove_dir_all(&vault).unwrap();
    let hits = q.run(&["--json", "search", "Bank"]).json();
    let bank = hits["results"][0]["note_id"].as_str().unwrap().to_owned();
    let edit = serde_json::json!({ "note_id": bank, "body": format!("PIN is {MARKER} second\n![[card.jpg]]\n") });
    let edited = q.run(&["tools", "call", "update_note", &edit.to_string()]);
    assert_eq!(edited.code, 0, "{edited:?}");
    let plain = add(q, "Groceries", "milk and eggs", None);
    assert_eq!(q.run(&["index", "rebuild"]).code, 0);
    assert_eq!(q.run(&["--json", "search", MARKER]).json()["total"], 1);
    assert!(!files_holding(&workspace_files(&q.workspace()), MARKER).is_empty());
    (bank, plain)
}

#[test]
fn init_seals_every_trace_and_only_the_passphrase_opens_the_note() {
    let q = Quire::new();
    let (bank, plain) = fixture(&q);

    // Before a passphrase: protection is from AI only, and says so.
    let protected = q.run(&["note", "protect", &bank]);
    assert!(
        protected.stdout.contains("is protected: AI tools see its title only")
            && protected
                .stdout
                .contains("not encrypted until a passphrase is set: `quire lock init`"),
        "{protected:?}"
    );
    let before = status(&q);
    assert_eq!(
        (
            &before["initialized"],
            &before["sealed_notes"],
            &before["protected_unsealed"]
        ),
        (&Value::Bool(false), &Value::from(0), &Value::from(1))
    );
    assert!(
        q.run(&["lock", "status"])
            .stdout
            .contains("1 protected note is hidden from AI, but its text is stored unencrypted")
    );

    let mut args = vec!["lock", "init", "--passphrase-stdin"];
    args.extend_from_slice(&CHEAP);
    let init = run(&q, &args, Some(&format!("{PASSPHRASE}\n")));
    assert_eq!(init.code, 0, "{init:?}");
    assert!(init.stderr.contains("the sealed notes are gone for good"), "{init:?}");
    assert!(
        init.stdout.contains("Passphrase set for") && init.stdout.contains("(Argon2id, 8 KiB, 1 pass)"),
        "{init:?}"
    );
    assert!(
        init.stdout
            .contains("Sealed 1 protected note with 1 revision, 1 attachment and "),
        "{init:?}"
    );
    assert!(init.stdout.contains("shown this once. Write it down"), "{init:?}");
    let key_line = init.stdout.lines().find(|l| l.starts_with("    ")).unwrap().trim();
    assert_eq!((key_line.len(), key_line.matches('-').count()), (71, 7), "{key_line}");

    // Nothing of the note's text is left in the file, its WAL or the word index.
    assert_eq!(
        files_holding(&workspace_files(&q.workspace()), MARKER),
        Vec::<PathBuf>::new()
    );
    let after = status(&q);
    assert_eq!(
        (
            &after["initialized"],
            &after["sealed_notes"],
            &after["protected_unsealed"]
        ),
        (&Value::Bool(true), &Value::from(1), &Value::from(0))
    );
    assert_eq!(after["kdf"]["memory_kib"], 8);
    assert!(q.run(&["lock", "status"]).stdout.contains("Sealed notes: 1"));

    // Not a terminal and no --passphrase-stdin: a clear refusal, nothing printed of the note.
    let locked = q.run(&["note", "show", &bank]);
    assert_eq!(locked.code, 2, "{locked:?}");
    assert!(locked.stdout.is_empty(), "{locked:?}");
    assert_eq!(
        locked.stderr.trim(),
        "error: note 'Bank' is sealed; run in a terminal to type the passphrase, or pass --passphrase-stdin"
    );
    // A wrong passphrase: exit code 2, said plainly.
    let wrong = with_passphrase(&q, &["note", "show", &bank], "not the passphrase");
    assert_eq!((wrong.code, wrong.stdout.as_str()), (2, ""), "{wrong:?}");
    assert_eq!(wrong.stderr.trim(), "error: Wrong passphrase. Nothing changed.");
    // The passphrase opens it, in text and in JSON; its revision too.
    let shown = with_passphrase(&q, &["note", "show", &bank], PASSPHRASE);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert!(shown.stdout.contains(&format!("PIN is {MARKER} second")), "{shown:?}");
    let json = with_passphrase(&q, &["--json", "note", "show", &bank], PASSPHRASE).json();
    assert_eq!(json["body"], format!("PIN is {MARKER} second\n![[card.jpg]]\n"));
    assert_eq!(q.run(&["note", "revisions", &bank]).code, 2);
    let revisions = with_passphrase(&q, &["note", "revisions", &bank], PASSPHRASE);
    assert!(
        revisions
            .stdout
            .contains("before a change by mcp client quire cli: \"Bank\""),
        "{revisions:?}"
    );
    // Everything else works without it: other notes, lists, search by title (not by the sealed text).
    assert!(q.run(&["note", "show", &plain]).stdout.contains("milk and eggs"));
    assert!(q.run(&["note", "list"]).stdout.contains("Bank [protected]"));
    assert_eq!(q.run(&["--json", "search", MARKER]).json()["total"], 0);
    assert_eq!(q.run(&["--json", "search", "title:Bank"]).json()["total"], 1);
    assert_eq!(q.run(&["history"]).code, 0);
    // Reading changed nothing: still no trace.
    assert_eq!(
        files_holding(&workspace_files(&q.workspace()), MARKER),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn a_wrong_passphrase_changes_nothing_and_unprotecting_needs_the_right_one() {
    let q = Quire::new();
    let bank = add(&q, "Bank", &format!("PIN {MARKER}"), None);
    assert_eq!(q.run(&["note", "protect", &bank]).code, 0);
    init(&q);
    let sealed = q.run(&["note", "protect", &bank]);
    assert!(
        sealed.stdout.contains(
            "is protected and sealed: AI tools see its title only, and its text opens only with the passphrase"
        ),
        "{sealed:?}"
    );

    for (args, stdin) in [
        (vec!["note", "unprotect", &bank], None),
        (
            vec!["--passphrase-stdin", "note", "unprotect", &bank],
            Some("wrong passphrase\n"),
        ),
        (vec!["--passphrase-stdin", "note", "unprotect", &bank], Some("")),
    ] {
        let refused = run(&q, &args, stdin);
        assert_eq!(refused.code, 2, "{args:?}: {refused:?}");
        assert!(refused.stdout.is_empty(), "{refused:?}");
        assert_eq!(status(&q)["sealed_notes"], 1, "{args:?} changed nothing");
    }
    let empty = run(&q, &["--passphrase-stdin", "note", "unprotect", &bank], Some(""));
    assert!(empty.stderr.contains("No passphrase on standard input"), "{empty:?}");
    assert!(q.run(&["note", "list"]).stdout.contains("Bank [protected]"));
    assert_eq!(
        files_holding(&workspace_files(&q.workspace()), MARKER),
        Vec::<PathBuf>::new()
    );

    let unprotected = with_passphrase(&q, &["note", "unprotect", &bank], PASSPHRASE);
    assert_eq!(unprotected.code, 0, "{unprotected:?}");
    assert!(
        unprotected.stdout.contains("\"Bank\" is not protected."),
        "{unprotected:?}"
    );
    assert_eq!(status(&q)["sealed_notes"], 0);
    assert!(q.run(&["note", "show", &bank]).stdout.contains(MARKER));
    // Protecting again seals it again, without the passphrase.
    let again = q.run(&["--json", "note", "protect", &bank]).json();
    assert_eq!(
        (&again["locked"], &again["is_protected"]),
        (&Value::Bool(true), &Value::Bool(true))
    );
    assert!(again.get("body").is_none(), "{again}");
    assert_eq!(status(&q)["sealed_notes"], 1);
}

#[test]
fn passwd_recover_and_a_new_recovery_key() {
    let q = Quire::new();
    let bank = add(&q, "Bank", &format!("PIN {MARKER}"), None);
    q.run(&["note", "protect", &bank]);

    // Refused before anything is set: too short; and the two lock commands that need a passphrase.
    let mut args = vec!["lock", "init", "--passphrase-stdin"];
    args.extend_from_slice(&CHEAP);
    let short = run(&q, &args, Some("short\n"));
    assert_eq!(short.code, 2, "{short:?}");
    assert!(short.stderr.contains("at least 8 characters"), "{short:?}");
    assert_eq!(status(&q)["initialized"], false);
    let no_lock = q.run(&["lock", "passwd"]);
    assert_eq!(no_lock.code, 1);
    assert!(
        no_lock.stderr.contains("no passphrase is set on this workspace"),
        "{no_lock:?}"
    );
    let no_terminal = run(&q, &["lock", "init"], None);
    assert_eq!(no_terminal.code, 2, "{no_terminal:?}");
    assert!(
        no_terminal.stderr.contains("pass it with --passphrase-stdin"),
        "{no_terminal:?}"
    );

    let recovery = init(&q);
    let again = run(&q, &args, Some(&format!("{PASSPHRASE}\n")));
    assert_eq!(again.code, 1);
    assert!(again.stderr.contains("a passphrase is set already"), "{again:?}");
    let shows = |passphrase: &str| with_passphrase(&q, &["note", "show", &bank], passphrase).code;

    // passwd: the current passphrase, then the new one (one per line).
    let mut passwd = vec!["--passphrase-stdin", "lock", "passwd"];
    passwd.extend_from_slice(&CHEAP);
    let wrong = run(&q, &passwd, Some("not it at all\nsecond passphrase\n"));
    assert_eq!(wrong.code, 2, "{wrong:?}");
    assert_eq!(shows(PASSPHRASE), 0, "a wrong current passphrase changed nothing");
    let changed = run(&q, &passwd, Some(&format!("{PASSPHRASE}\nsecond passphrase\n")));
    assert_eq!(changed.code, 0, "{changed:?}");
    assert!(
        changed.stdout.contains("the old one no longer opens this workspace"),
        "{changed:?}"
    );
    assert_eq!((shows(PASSPHRASE), shows("second passphrase")), (2, 0));

    // recover: the recovery key, then a new passphrase.
    let mut recover = vec!["--passphrase-stdin", "lock", "recover"];
    recover.extend_from_slice(&CHEAP);
    let wrong_key = run(&q, &recover, Some(&format!("{}\nthird passphrase\n", "0".repeat(64))));
    assert_eq!(wrong_key.code, 2, "{wrong_key:?}");
    assert!(
        wrong_key
            .stderr
            .contains("That recovery key does not open this workspace"),
        "{wrong_key:?}"
    );
    let not_a_key = run(&q, &recover, Some("my dog's name\nthird passphrase\n"));
    assert_eq!(not_a_key.code, 2, "{not_a_key:?}");
    assert!(not_a_key.stderr.contains("64 hex digits"), "{not_a_key:?}");
    let recovered = run(&q, &recover, Some(&format!("{recovery}\nthird passphrase\n")));
    assert_eq!(recovered.code, 0, "{recovered:?}");
    assert!(
        recovered
            .stdout
            .contains("the old passphrase no longer opens this workspace file"),
        "{recovered:?}"
    );
    assert_eq!((shows("second passphrase"), shows("third passphrase")), (2, 0));

    // A new recovery key: the old one stops working, the new one works.
    let fresh = with_passphrase(&q, &["--json", "lock", "new-recovery-key"], "third passphrase").json();
    let fresh = fresh["recovery_key"].as_str().unwrap().to_owned();
    assert_ne!(fresh, recovery);
    let old = run(&q, &recover, Some(&format!("{recovery}\nfourth passphrase\n")));
    assert_eq!(old.code, 2, "{old:?}");
    let new = run(&q, &recover, Some(&format!("{fresh}\nfourth passphrase\n")));
    assert_eq!(new.code, 0, "{new:?}");
    assert_eq!(shows("fourth passphrase"), 0);
}

#[test]
fn export_writes_sealed_text_only_when_asked_and_unlocked() {
    let q = Quire::new();
    let (bank, _) = fixture(&q);
    q.run(&["note", "protect", &bank]);
    init(&q);
    let holding = |dir: &Path| files_holding(&files_below(dir), MARKER);

    let plain = q.dir().join("plain");
    let left_out = q.run(&["export", plain.to_str().unwrap()]);
    assert_eq!(left_out.code, 0, "{left_out:?}");
    assert!(
        left_out.stdout.contains("1 protected note was left out"),
        "{left_out:?}"
    );
    assert_eq!(holding(&plain), Vec::<PathBuf>::new());

    let asked = q.dir().join("asked");
    let refused = q.run(&["export", asked.to_str().unwrap(), "--include-protected"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("note 'Bank' is sealed"), "{refused:?}");
    assert_eq!(holding(&asked), Vec::<PathBuf>::new());

    let full = with_passphrase(
        &q,
        &["export", asked.to_str().unwrap(), "--include-protected"],
        PASSPHRASE,
    );
    assert_eq!(full.code, 0, "{full:?}");
    let mut written: Vec<String> = holding(&asked)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, ["Bank.md", "card.jpg"]);
    let bank_file = std::fs::read_to_string(asked.join("Bank.md")).unwrap();
    assert!(bank_file.contains("protected: true"), "{bank_file}");
}

#[test]
fn notebooks_moves_and_undo_ask_for_the_passphrase_only_to_unseal() {
    let q = Quire::new();
    let inside = add(&q, "Salary", &format!("pay {MARKER}"), Some("Vault"));
    let outside = add(&q, "Letter", &format!("dear {MARKER}"), None);
    init(&q);

    // Protecting a notebook seals what is in it, without the passphrase.
    let protect = q.run(&["notebook", "protect", "Vault"]);
    assert_eq!(protect.code, 0, "{protect:?}");
    assert!(
        protect
            .stdout
            .contains("Protected notebook Vault and everything in it (1 note now)")
            && protect.stdout.contains("their text is sealed"),
        "{protect:?}"
    );
    assert_eq!(status(&q)["sealed_notes"], 1);
    // A note added there, or moved in, is sealed at once; --json prints it without its text.
    let added = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Bonus",
            "--body",
            MARKER,
            "--notebook",
            "Vault",
        ])
        .json();
    assert_eq!((&added["locked"], added.get("body")), (&Value::Bool(true), None));
    let moved_in = q.run(&["note", "move", &outside, "--to", "Vault"]);
    assert_eq!(moved_in.code, 0, "{moved_in:?}");
    assert_eq!(status(&q)["sealed_notes"], 3);
    assert_eq!(
        files_holding(&workspace_files(&q.workspace()), MARKER),
        Vec::<PathBuf>::new()
    );

    // Moving one out unseals it: that needs the passphrase.
    let out = q.run(&["note", "move", &outside, "--top-level"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("note 'Letter' is sealed"), "{out:?}");
    let out = with_passphrase(&q, &["note", "move", &outside, "--top-level"], PASSPHRASE);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(status(&q)["sealed_notes"], 2);
    let change_set = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("to take it back: quire undo "))
        .unwrap();
    // Undoing the move seals it again: no passphrase.
    let undone = q.run(&["undo", change_set]);
    assert_eq!(undone.code, 0, "{undone:?}");
    assert_eq!(status(&q)["sealed_notes"], 3);

    // A notebook inside moved out of the protected one unseals its notes: that asks for the passphrase too.
    add(&q, "Payslip", &format!("slip {MARKER}"), Some("Vault/Pay"));
    assert_eq!(status(&q)["sealed_notes"], 4);
    let out = q.run(&["notebook", "move", "Vault/Pay", "--top-level"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("note 'Payslip' is sealed"), "{out:?}");
    let out = with_passphrase(&q, &["notebook", "move", "Vault/Pay", "--top-level"], PASSPHRASE);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(status(&q)["sealed_notes"], 3);
    let back = with_passphrase(&q, &["notebook", "move", "Pay", "--to", "Vault"], PASSPHRASE);
    assert_eq!(back.code, 0, "{back:?}");
    assert_eq!(status(&q)["sealed_notes"], 4);

    // Unprotecting the notebook needs the passphrase; undoing the unprotect does not, undoing the protect does.
    assert_eq!(q.run(&["notebook", "unprotect", "Vault"]).code, 2);
    assert_eq!(status(&q)["sealed_notes"], 4);
    let unprotected = with_passphrase(&q, &["notebook", "unprotect", "Vault"], PASSPHRASE);
    assert_eq!(unprotected.code, 0, "{unprotected:?}");
    assert!(
        unprotected
            .stdout
            .contains("Notebook Vault (4 notes) is not protected any more."),
        "{unprotected:?}"
    );
    assert_eq!(status(&q)["sealed_notes"], 0);
    assert!(q.run(&["note", "show", &inside]).stdout.contains(MARKER));
    let change_set = unprotected
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("to take it back: quire undo "))
        .unwrap();
    assert_eq!(q.run(&["undo", change_set]).code, 0);
    assert_eq!(status(&q)["sealed_notes"], 4);
    let protect_set = protect
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("to take it back: quire undo "))
        .unwrap();
    let refused = q.run(&["undo", protect_set, "--with-later"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert_eq!(status(&q)["sealed_notes"], 4, "a refused undo changed nothing");
}

/// On a terminal, the command asks for the passphrase on standard error and what is typed is not echoed.
#[cfg(unix)]
#[test]
fn on_a_terminal_the_passphrase_is_asked_without_echo() {
    use std::io::{Read, Write};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::Duration;

    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    use rustix::termios::{LocalModes, tcgetattr};

    let q = Quire::new();
    let bank = add(&q, "Bank", &format!("PIN {MARKER}"), None);
    q.run(&["note", "protect", &bank]);
    init(&q);

    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let slave_path = PathBuf::from(ptsname(&master, Vec::new()).unwrap().to_str().unwrap());
    let open_slave = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&slave_path)
            .unwrap()
    };
    let mut master = std::fs::File::from(master);
    let slave = open_slave();
    assert!(
        tcgetattr(&slave).unwrap().local_modes.contains(LocalModes::ECHO),
        "a terminal echoes by default"
    );

    let mut command = q.command();
    command
        .arg("--workspace")
        .arg(q.workspace())
        .args(["note", "show", &bank])
        .stdin(open_slave())
        .stdout(Stdio::piped())
        .stderr(open_slave());
    let mut child = command.spawn().unwrap();
    drop(command);
    // What the terminal shows, as it comes.
    let (seen_tx, seen) = mpsc::channel::<Vec<u8>>();
    let mut reader = master.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if seen_tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut shown = String::new();
    while !shown.contains("Passphrase for ") {
        let bytes = seen.recv_timeout(Duration::from_secs(60));
        assert!(bytes.is_ok(), "no prompt on the terminal: {shown:?}");
        shown.push_str(&String::from_utf8_lossy(&bytes.unwrap()));
    }
    assert!(
        shown.contains(&format!("Passphrase for {}: ", q.workspace().display())),
        "{shown}"
    );
    // Typed only once the terminal stopped echoing (the prompt is written just before).
    while tcgetattr(&slave).unwrap().local_modes.contains(LocalModes::ECHO) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "quire ended without reading: {shown:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    master.write_all(format!("{PASSPHRASE}\r").as_bytes()).unwrap();
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}: {shown}");
    assert!(stdout.contains(&format!("PIN {MARKER}")), "{stdout}");
    // The terminal echoes again after the prompt, and showed nothing of the passphrase.
    assert!(tcgetattr(&slave).unwrap().local_modes.contains(LocalModes::ECHO));
    drop(slave);
    while let Ok(bytes) = seen.recv_timeout(Duration::from_millis(200)) {
        shown.push_str(&String::from_utf8_lossy(&bytes));
    }
    assert!(!shown.contains("horse"), "the passphrase was echoed: {shown:?}");
}
