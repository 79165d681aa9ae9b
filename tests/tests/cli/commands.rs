//! Every command path a user can type, found by walking `--help`, has help and an end-to-end run with its exit code
//! and words.

use quire_tests::Quire;

use super::add;

/// The subcommands `quire ... --help` lists under "Commands:", without `help`.
fn subcommands(q: &Quire, path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let run = q.run_raw(&args, None);
    assert_eq!(run.code, 0, "quire {} --help failed: {run:?}", path.join(" "));
    assert!(run.stdout.contains("Usage: quire"), "{run:?}");
    let Some(start) = run.stdout.find("Commands:\n") else {
        return Vec::new();
    };
    run.stdout[start + "Commands:\n".len()..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command path a user can type, found by walking `--help` (each level's help must work).
fn every_command(q: &Quire) -> Vec<String> {
    let mut found = Vec::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = queue.pop() {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let children = subcommands(q, &refs);
        if children.is_empty() && !path.is_empty() {
            found.push(path.join(" "));
        }
        // `quire mcp` serves by itself and `quire mcp token` prints the token, and both have subcommands too.
        let runs_by_itself = (path == ["mcp"] && children.iter().any(|c| c == "token"))
            || (path == ["mcp", "token"] && children.iter().any(|c| c == "add"));
        if runs_by_itself {
            found.push(path.join(" "));
        }
        for child in children {
            let mut next = path.clone();
            next.push(child);
            queue.push(next);
        }
    }
    found.sort();
    found
}

#[test]
fn every_subcommand_has_help_and_an_end_to_end_run() {
    let q = Quire::new();
    let id = add(
        &q,
        &[
            "--title",
            "Groceries",
            "--body",
            "- milk",
            "--notebook",
            "Home",
            "--tag",
            "shop",
        ],
    )["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ws = q.workspace();
    let ws = ws.to_str().unwrap();
    // Each command with arguments that work on this workspace, and the exit code and output it must give.
    let opening = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
        r#""capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        "\n"
    );
    let export_dir = q.dir().join("exported");
    let memo = q.dir().join("memo.txt");
    std::fs::write(&memo, "bring the ladder").unwrap();
    let memo = memo.to_str().unwrap();
    let runs: Vec<(&str, Vec<&str>, i32, &str)> = vec![
        ("note add", vec!["note", "add", "--title", "Eggs"], 0, "Added note"),
        ("note list", vec!["note", "list", "--notebook", "Home"], 0, "Groceries"),
        ("note show", vec!["note", "show", &id], 0, "- milk"),
        ("note protect", vec!["note", "protect", &id], 0, "is protected"),
        ("note unprotect", vec!["note", "unprotect", &id], 0, "is not protected"),
        ("note revisions", vec!["note", "revisions", &id], 0, "No revisions"),
        ("note restore", vec!["note", "restore", &id, "99"], 1, ""),
        ("notebook list", vec!["notebook", "list"], 0, "Home: 1 note "),
        (
            "notebook add",
            vec!["notebook", "add", "Work/Projects"],
            0,
            "Added notebook Work/Projects",
        ),
        (
            "notebook rename",
            vec!["notebook", "rename", "Work/Projects", "Clients"],
            0,
            "Renamed notebook Work/Projects to Work/Clients",
        ),
        (
            "notebook move",
            vec!["notebook", "move", "Work/Clients", "--top-level"],
            0,
            "Moved notebook Work/Clients to the top level",
        ),
        (
            "note move",
            vec!["note", "move", &id, "--to", "Clients"],
            0,
            "from Home to Clients",
        ),
        (
            "notebook delete",
            vec!["notebook", "delete", "Work"],
            0,
            "Deleted notebook Work",
        ),
        ("search", vec!["search", "milk"], 0, "Groceries"),
        ("query", vec!["query", "LIST FROM #shop"], 0, "- Groceries"),
        // "- milk" is no task: the refusal says what the line is (transfer.rs completes real ones).
        ("tasks done", vec!["tasks", "done", &id, "0"], 1, ""),
        // Made in a Daily notebook: the export below counts it.
        ("today", vec!["today", "2026-12-01"], 0, "# 2026-12-01"),
        ("tools list", vec!["tools", "list"], 0, "search_notes"),
        ("tools call", vec!["tools", "call", "list_tags"], 0, "shop"),
        ("mcp", vec!["mcp"], 0, r#""serverInfo""#),
        ("mcp token", vec!["mcp", "token"], 0, ""),
        (
            "mcp token add",
            vec!["mcp", "token", "add", "phone", "--notebook", "Home"],
            0,
            "",
        ),
        ("mcp token list", vec!["mcp", "token", "list"], 0, "phone  reaches Home"),
        (
            "mcp token revoke",
            vec!["mcp", "token", "revoke", "phone"],
            0,
            "Revoked 'phone'",
        ),
        // The server itself runs in web.rs; here, the refusal of a non-loopback address.
        ("serve", vec!["serve", "--addr", "0.0.0.0:0"], 1, ""),
        ("chat", vec!["chat", "--message", "hi"], 2, ""),
        ("index status", vec!["index", "status"], 0, "indexed notes"),
        ("index rebuild", vec!["index", "rebuild"], 0, "word search index: "),
        ("model list", vec!["model", "list"], 0, "all-MiniLM-L6-v2"),
        // The install itself runs in model.rs; here, a folder without the model's files.
        (
            "model install",
            vec!["model", "install", "--from", "/nonexistent"],
            1,
            "",
        ),
        ("model use", vec!["model", "use", "builtin"], 0, "built-in fallback"),
        (
            "model remove",
            vec!["model", "remove", "all-MiniLM-L6-v2"],
            0,
            "was not installed",
        ),
        // Import and export run in transfer.rs; here, a source that does not exist, and an export.
        ("import", vec!["import", "/nonexistent/vault"], 2, ""),
        (
            "export",
            vec!["export", export_dir.to_str().unwrap()],
            0,
            "exported 3 notes",
        ),
        ("history", vec!["history"], 0, "created note \"Groceries\""),
        ("ledger", vec!["ledger"], 0, "Nothing was read by AI yet"),
        ("agent list", vec!["agent", "list"], 0, "No agent yet"),
        ("agent add", vec!["agent", "add", "x", "--", "true"], 0, "Added x"),
        ("agent test", vec!["agent", "test", "x"], 1, ""),
        ("agent remove", vec!["agent", "remove", "x"], 0, "Removed x."),
        // Automations run in cost/automations.rs with a mock model; here, one run by hand without a model.
        ("automation list", vec!["automation", "list"], 0, "No automation yet"),
        ("automation add", vec!["automation", "add", "a", "--prompt", "x"], 1, ""),
        ("automation run", vec!["automation", "run", "a"], 1, ""),
        ("automation log", vec!["automation", "log"], 0, "No run yet."),
        ("automation pause", vec!["automation", "pause", "a"], 1, ""),
        ("automation resume", vec!["automation", "resume", "a"], 1, ""),
        ("automation remove", vec!["automation", "remove", "a"], 1, ""),
        ("undo", vec!["undo", "nope"], 1, ""),
        // Sealed notes run in lock.rs; here, protecting a notebook, and lock's refusals without a terminal or passphrase.
        (
            "notebook protect",
            vec!["notebook", "protect", "Home"],
            0,
            "Protected notebook Home",
        ),
        (
            "notebook unprotect",
            vec!["notebook", "unprotect", "Home"],
            0,
            "is not protected any more",
        ),
        ("lock status", vec!["lock", "status"], 0, "No passphrase is set"),
        ("lock init", vec!["lock", "init"], 2, ""),
        ("lock passwd", vec!["lock", "passwd"], 1, ""),
        ("lock recover", vec!["lock", "recover"], 1, ""),
        ("lock new-recovery-key", vec!["lock", "new-recovery-key"], 1, ""),
        ("sync status", vec!["sync", "status"], 0, "does not sync"),
        ("sync init", vec!["sync", "init", "nowhere/target"], 1, ""),
        ("sync join", vec!["sync", "join", "nowhere/target"], 1, ""),
        ("sync forget", vec!["sync", "forget", "laptop"], 1, ""),
        ("sync leave", vec!["sync", "leave"], 1, ""),
        ("sync compact", vec!["sync", "compact"], 1, ""),
        ("sync conflicts", vec!["sync", "conflicts"], 0, "No conflicts"),
        ("sync resolve", vec!["sync", "resolve", "1", "--keep", "mine"], 1, ""),
        // A plugin whose program does not exist: added, reported as not working (tests/tests/plugins.rs runs real ones).
        (
            "plugin add",
            vec!["plugin", "add", "ghost", "--", "/nonexistent/ghost-server"],
            1,
            "problem: cannot start",
        ),
        ("plugin list", vec!["plugin", "list"], 0, "ghost  failed"),
        ("plugin test", vec!["plugin", "test", "ghost"], 1, "cannot start"),
        (
            "plugin remove",
            vec!["plugin", "remove", "ghost"],
            0,
            "Removed the plugin",
        ),
        ("device pair", vec!["device", "pair", "tab"], 0, "Pairing code for"),
        ("device list", vec!["device", "list"], 0, "tab  all notebooks  code not"),
        ("device revoke", vec!["device", "revoke", "tab"], 0, "tab is ended"),
        // PDFs, scans and OCR run in cli/capture.rs; here, a text file.
        ("note attach", vec!["note", "attach", &id, memo], 0, "Attached memo.txt"),
        (
            "note detach",
            vec!["note", "detach", &id, "memo.txt"],
            0,
            "Removed memo.txt",
        ),
        ("capture", vec!["capture", "--text", "call the plumber"], 0, "in Inbox"),
        ("attachments read", vec!["attachments", "read"], 0, "Nothing waits"),
        // Nothing staged yet (tests/tests/review.rs stages with a real MCP client).
        ("review list", vec!["review", "list"], 0, "Nothing waits for review."),
        ("review show", vec!["review", "show", "1"], 1, ""),
        ("review accept", vec!["review", "accept", "1"], 1, ""),
        ("review reject", vec!["review", "reject", "1"], 1, ""),
    ];
    let mut covered: Vec<String> = runs.iter().map(|(name, ..)| (*name).to_owned()).collect();
    covered.sort();
    assert_eq!(
        every_command(&q),
        covered,
        "a command without an end-to-end run here (or one that no longer exists)"
    );
    for (name, args, code, expected) in runs {
        let mut full = vec!["--workspace", ws];
        full.extend(args);
        let run = q.run_raw(&full, (name == "mcp").then_some(opening));
        assert_eq!(run.code, code, "quire {name}: {run:?}");
        assert!(run.stdout.contains(expected), "quire {name} printed: {run:?}");
        if code != 0 {
            assert!(run.stderr.starts_with("error: "), "quire {name} says why: {run:?}");
        }
    }
}
