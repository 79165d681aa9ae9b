//! End to end (issue 49): external agents over ACP. The test agent (`tests/acp/test-agent.mjs`, built on the official
//! ACP and MCP SDKs for TypeScript) is added with `quire agent add` and run with `quire chat --agent`: it starts
//! quire's own MCP server from the session quire gives it, searches through it, shows a plan and its tool calls, and
//! asks permission before it writes. Its writes wait in the review inbox under its name, its reads are in the ledger,
//! it reaches only the notebooks it was given, and it gets no file system.
//!
//! The SDK comes with the plugin runtimes (`QUIRE_PLUGIN_RUNTIMES`, which `cargo xtask ci` installs); elsewhere these
//! tests skip and say so.

use std::path::{Path, PathBuf};

use quire_tests::Quire;

use super::runtimes;

/// The test agent, copied where the SDKs are installed (a module resolves its packages from its own folder).
fn agent_script(runtimes: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("acp/test-agent.mjs");
    let target = runtimes.join("acp-test-agent.mjs");
    let text = std::fs::read_to_string(&source).unwrap();
    if std::fs::read_to_string(&target).ok().as_deref() != Some(text.as_str()) {
        // Written beside and renamed: tests running at once never see half a file.
        let partial = runtimes.join(format!("acp-test-agent.{}.tmp", std::process::id()));
        std::fs::write(&partial, &text).unwrap();
        std::fs::rename(&partial, &target).unwrap();
    }
    target
}

/// A workspace with notes in Work and at the top, and the test agent added as `tester` with `extra` flags.
fn with_agent(runtimes: &Path, extra: &[&str]) -> Quire {
    let q = Quire::new();
    assert_eq!(q.run(&["notebook", "add", "Work"]).code, 0);
    assert_eq!(
        q.run(&[
            "note",
            "add",
            "--title",
            "Tomato plan",
            "--body",
            "tomatoes in May",
            "-n",
            "Work"
        ])
        .code,
        0
    );
    assert_eq!(
        q.run(&[
            "note",
            "add",
            "--title",
            "Home tomatoes",
            "--body",
            "tomatoes on the balcony"
        ])
        .code,
        0
    );
    let script = agent_script(runtimes);
    let mut add = vec!["agent", "add", "tester"];
    add.extend_from_slice(extra);
    add.extend_from_slice(&["--", "node", script.to_str().unwrap()]);
    let added = q.run(&add);
    assert_eq!(added.code, 0, "{added:?}");
    q
}

fn chat(q: &Quire, message: &str, answers: &str) -> quire_tests::Run {
    let workspace = q.workspace();
    q.run_raw(
        &[
            "--workspace",
            workspace.to_str().unwrap(),
            "chat",
            "--agent",
            "tester",
            "-m",
            message,
        ],
        Some(answers),
    )
}

#[test]
fn an_agent_searches_through_quire_asks_before_writing_and_its_write_waits_for_review() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &[]);
    let listed = q.run(&["agent", "list"]).stdout;
    assert!(
        listed.contains("tester  node")
            && listed.contains("(all notebooks; writes staged for review; no files, no terminal)"),
        "{listed}"
    );
    let tested = q.run(&["agent", "test", "tester"]);
    assert!(
        tested.stdout.contains("tester works: quire-test-agent 1.0.0"),
        "{tested:?}"
    );

    let run = chat(&q, "Find notes about tomatoes", "y\n");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), "Found 2 notes about tomatoes and wrote a summary.");
    for shown in [
        "Plan:",
        "✓ Search the notes for tomatoes",
        "→ Write a summary note",
        "· Search notes for tomatoes (search)",
        "tester asks to run “Create note “Agent summary””",
    ] {
        assert!(run.stderr.contains(shown), "{shown:?} in {}", run.stderr);
    }
    // Its write waits for review, under its name; the note is not there yet.
    let review = q.run(&["review", "list"]).stdout;
    assert!(
        review.contains("tester (ACP agent)  1 waiting: \"Agent summary\""),
        "{review}"
    );
    assert!(!q.run(&["note", "list"]).stdout.contains("Agent summary"));
    // What it read is in the ledger, under its name.
    let ledger = q.run(&["--json", "ledger", "--client", "tester (ACP agent)"]).json();
    let mut read: Vec<String> = ledger["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{}: {}", e["title"].as_str().unwrap(), e["part"].as_str().unwrap()))
        .collect();
    read.sort();
    assert_eq!(read, ["Home tomatoes: search snippet", "Tomato plan: search snippet"]);

    // By its short name too, in any case.
    let short = q.run(&["--json", "ledger", "--client", "TESTER"]).json();
    assert_eq!(short["entries"].as_array().unwrap().len(), 2);

    // Refused: it writes nothing, and says so.
    let refused = chat(&q, "Find notes about balcony", "n\n");
    assert_eq!(
        refused.stdout.trim(),
        "Found 1 note about balcony; I wrote nothing.",
        "{refused:?}"
    );
    assert!(
        refused.stderr.contains("edit failed: Not allowed."),
        "{}",
        refused.stderr
    );
    // Interactive: a message a line, the permission asked between two of them, /quit ends it.
    let workspace = q.workspace();
    let typed = q.run_raw(
        &["--workspace", workspace.to_str().unwrap(), "chat", "--agent", "tester"],
        Some("Find notes about may\nn\n/quit\n"),
    );
    assert_eq!(typed.code, 0, "{typed:?}");
    assert!(
        typed.stdout.contains("Found 1 note about may; I wrote nothing."),
        "{typed:?}"
    );
    assert!(
        q.run(&["review", "list"]).stdout.contains("1 waiting"),
        "nothing more staged"
    );
}

#[test]
fn an_agent_reaches_its_notebooks_only_gets_no_file_system_and_may_apply_its_writes() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &["--notebook", "Work", "--apply-writes"]);
    let run = chat(&q, "Find notes about tomatoes", "y\n");
    assert_eq!(
        run.stdout.trim(),
        "Found 1 note about tomatoes and wrote a summary.",
        "{run:?}"
    );
    let notes = q
        .run(&["--json", "note", "list", "--notebook", "Work"])
        .json()
        .to_string();
    assert!(
        notes.contains("Agent summary"),
        "applied at once, in its notebook: {notes}"
    );
    let files = chat(&q, "Read some files", "");
    assert!(
        files
            .stdout
            .contains("No file system: quire offers this agent no fs/read_text_file"),
        "{files:?}"
    );
}

#[test]
fn an_agent_that_cannot_start_or_stops_is_said_plainly() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &[]);
    let missing = q.run(&["agent", "add", "ghost", "--", "/nonexistent/agent"]);
    assert_eq!(missing.code, 0, "added: it is checked when it starts");
    assert!(
        missing.stderr.contains("/nonexistent/agent is not found here"),
        "{}",
        missing.stderr
    );
    let run = q.run(&["agent", "test", "ghost"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("cannot start the agent ghost (/nonexistent/agent)"),
        "{}",
        run.stderr
    );
    assert_eq!(
        q.run(&[
            "agent",
            "add",
            "quitter",
            "--",
            "node",
            "-e",
            "console.error('no key'); process.exit(3)"
        ])
        .code,
        0
    );
    let quit = q.run(&["chat", "--agent", "quitter", "-m", "hello"]);
    assert_ne!(quit.code, 0);
    assert!(
        quit.stderr.contains("the agent quitter stopped; it said: no key"),
        "{}",
        quit.stderr
    );
    let unknown = q.run(&["chat", "--agent", "nobody", "-m", "hello"]);
    assert!(
        unknown
            .stderr
            .contains("no agent is named \"nobody\"; the agents are tester, ghost, quitter"),
        "{}",
        unknown.stderr
    );
    assert_eq!(q.run(&["agent", "remove", "ghost"]).code, 0);
    assert!(!q.run(&["agent", "list"]).stdout.contains("ghost"));
    assert_ne!(
        q.run(&["agent", "add", "TESTER", "--", "node"]).code,
        0,
        "names are unique, in any case"
    );
    // Limited to a notebook renamed since: said plainly, before anything starts.
    assert_eq!(q.run(&["agent", "add", "worker", "-n", "Work", "--", "node"]).code, 0);
    assert_eq!(q.run(&["notebook", "rename", "Work", "Job"]).code, 0);
    let gone = q.run(&["agent", "test", "worker"]);
    assert!(
        gone.stderr
            .contains("limited to the notebook \"Work\", which does not exist any more"),
        "{}",
        gone.stderr
    );
}

#[test]
fn ctrl_c_cancels_the_agents_turn_and_the_chat_goes_on() {
    use std::io::Write;
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &[]);
    let mut child = q
        .command()
        .args([
            "--workspace",
            q.workspace().to_str().unwrap(),
            "chat",
            "--agent",
            "tester",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    // Read as it comes: the agent's words end with no line break until its turn does.
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        let mut stdout = stdout;
        let mut buffer = [0u8; 1024];
        while let Ok(n) = std::io::Read::read(&mut stdout, &mut buffer) {
            if n == 0 {
                break;
            }
            all.push_str(&String::from_utf8_lossy(&buffer[..n]));
            let _ = said.send(all.clone());
        }
        all
    });
    writeln!(stdin, "please wait").unwrap();
    // It answers "Working" and goes on until told; Ctrl-C (SIGINT to quire alone) tells it.
    let started = std::time::Instant::now();
    while !heard
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_default()
        .contains("Working")
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the agent never started working"
        );
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    writeln!(stdin, "find tomatoes\nn\n/quit").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    let out = reader.join().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status:?} {out} {err}");
    assert!(err.contains("(stopped)"), "{err}");
    assert!(
        out.contains("Found 2 notes about tomatoes; I wrote nothing."),
        "{out} {err}"
    );
}

/// A sealed note's words never reach an agent's turn nor an automation's run: not their answers, not the chat or the
/// run log, not the ledger (the title only), and nowhere in the clear in the workspace's files, the agent's folder or
/// the sync folder after them.
#[test]
fn a_sealed_notes_words_stay_out_of_an_agents_turns_and_the_ledger() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &[]);
    let workspace = q.workspace();
    let secret = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Diary",
            "--body",
            "zanzibarmarker tomatoes",
        ])
        .json()["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(q.run(&["note", "protect", &secret]).code, 0);
    let init = q.run_raw(
        &[
            "--workspace",
            workspace.to_str().unwrap(),
            "lock",
            "init",
            "--passphrase-stdin",
            "--kdf-memory-kib",
            "8",
            "--kdf-passes",
            "1",
        ],
        Some("correct horse battery\n"),
    );
    assert_eq!(init.code, 0, "{init:?}");
    // The workspace syncs to a folder: what it sends is searched too.
    let target = q.dir().join("sync-target");
    let synced = q.run_raw(
        &[
            "--workspace",
            workspace.to_str().unwrap(),
            "--passphrase-stdin",
            "sync",
            "init",
            target.to_str().unwrap(),
            "--name",
            "laptop",
        ],
        Some("correct horse battery\n"),
    );
    assert_eq!(synced.code, 0, "{synced:?}");
    // Searches that would find it by its words (tomatoes) and by its title (diary); its own word never asked for;
    // in chats with the agent, and in automations the agent runs (by hand here, as its scheduler would).
    let added = q.run(&[
        "automation",
        "add",
        "digest",
        "--agent",
        "tester",
        "--prompt",
        "Find notes about diary",
    ]);
    assert_eq!(added.code, 0, "{added:?}");
    for words in ["Find notes about diary", "Find notes about tomatoes"] {
        let run = chat(&q, words, "y\n");
        assert_eq!(run.code, 0, "{run:?}");
        assert!(!run.stdout.contains("zanzibarmarker tomatoes") && !run.stderr.contains("zanzibarmarker tomatoes"));
        let ran = q.run(&["--json", "automation", "run", "digest"]).json();
        assert_eq!(ran["status"], "done", "{ran:#}");
    }
    let synced = q.run(&["sync"]);
    assert_eq!(synced.code, 0, "{synced:?}");
    let ledger = q.run(&["--json", "ledger", "--note", &secret]).json();
    let entries = ledger["entries"].as_array().unwrap();
    assert!(!entries.is_empty(), "found by its title, and recorded so");
    for entry in entries {
        assert_eq!(entry["part"], "title only", "{entry}");
    }
    let mut files = quire_tests::workspace_files(&workspace);
    files.extend(quire_tests::files_below(&q.dir().join("home")));
    files.extend(quire_tests::files_below(&target));
    assert!(
        files.iter().any(|f| f.starts_with(&target)),
        "the sync folder holds files"
    );
    assert_eq!(
        quire_tests::files_holding(&files, "zanzibarmarker"),
        Vec::<PathBuf>::new()
    );
}

/// An automation run by an agent: its prompt goes to the agent, quire's MCP server attached under the automation's
/// name and limits (its notebooks, its writes staged), and its run is logged with the agent's answer and review set.
#[test]
fn an_automation_run_by_an_agent_works_in_its_notebooks_and_stages_under_its_name() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &["--apply-writes"]);
    let added = q.run(&[
        "automation",
        "add",
        "digest",
        "--agent",
        "tester",
        "-n",
        "Work",
        "--prompt",
        "Without asking, find notes about tomatoes",
        "--schedule",
        "weekly friday 17:00",
    ]);
    assert_eq!(added.code, 0, "{added:?}");
    let ran = q.run(&["--json", "automation", "run", "digest"]).json();
    assert_eq!(ran["status"], "done", "{ran:#}");
    assert_eq!(ran["runner"], "agent tester");
    // Only the Work notebook's note: the automation's limit, not the agent's own entry's (all notebooks).
    assert_eq!(ran["summary"], "Found 1 note about tomatoes and wrote a summary.");
    assert!(
        ran["review_set"].is_i64(),
        "staged, though the agent's own entry applies: {ran:#}"
    );
    let review = q.run(&["review", "list"]).stdout;
    assert!(review.contains("digest (automation)"), "{review}");
    // Recorded by the agent's MCP server, which wrote its last reads when its agent ended.
    let ledger = q.run(&["--json", "ledger", "--client", "digest (automation)"]).json();
    assert!(!ledger["entries"].as_array().unwrap().is_empty(), "{ledger:#}");
    // A step it asks permission for: nobody is there to answer, so it is refused, and the run goes on.
    assert_eq!(
        q.run(&[
            "automation",
            "add",
            "asker",
            "--agent",
            "tester",
            "--prompt",
            "Find notes about tomatoes"
        ])
        .code,
        0
    );
    let ran = q.run(&["--json", "automation", "run", "asker"]).json();
    assert_eq!(ran["status"], "done", "{ran:#}");
    assert_eq!(ran["summary"], "Found 2 notes about tomatoes; I wrote nothing.");
}

/// An agent given a folder and a terminal (`--files DIR --terminal`) reads and writes that folder's files and runs
/// commands there, and nothing outside: not another file, not a link that leads out. Without them it gets neither.
#[test]
fn an_agent_given_a_folder_and_a_terminal_reaches_them_and_nothing_else() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_agent(&runtimes, &[]);
    let project = q.dir().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("readme.txt"), "hello project\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", project.join("away")).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let dir = project.to_str().unwrap();
    let script = runtimes.join("acp-test-agent.mjs");
    let added = q.run(&[
        "agent",
        "add",
        "worker",
        "--files",
        dir,
        "--terminal",
        "--",
        "node",
        script.to_str().unwrap(),
    ]);
    assert_eq!(added.code, 0, "{added:?}");
    assert!(
        q.run(&["agent", "list"])
            .stdout
            .contains(&format!("files in {dir} and a terminal")),
        "{:?}",
        q.run(&["agent", "list"])
    );
    let worker = |message: &str| {
        let workspace = q.workspace();
        let run = q.run_raw(
            &[
                "--workspace",
                workspace.to_str().unwrap(),
                "chat",
                "--agent",
                "worker",
                "-m",
                message,
            ],
            None,
        );
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout.trim().to_owned()
    };
    assert_eq!(
        worker(&format!("files {dir}/readme.txt")),
        "I read a file: hello project"
    );
    let outside = worker("files /etc/hostname");
    assert!(
        outside.contains("is outside the folder this agent was given"),
        "{outside}"
    );
    let away = worker(&format!("files {dir}/away"));
    assert!(away.contains("is outside the folder"), "a link out is refused: {away}");
    assert_eq!(worker(&format!("write {dir}/out.txt")), "I wrote a file.");
    assert_eq!(
        std::fs::read_to_string(project.join("out.txt")).unwrap(),
        "written by the agent\n"
    );
    let escape = q.dir().join("escaped.txt");
    let refused = worker(&format!("write {}", escape.display()));
    assert!(refused.starts_with("No file system:"), "{refused}");
    assert!(!escape.exists());
    assert_eq!(
        worker("terminal"),
        format!("The terminal said: hello from {dir} (exit 0)")
    );
    // The agent added without them: neither.
    let tester = chat(&q, "terminal", "");
    assert!(
        tester
            .stdout
            .contains("No terminal: quire offers this agent no terminal/create"),
        "{tester:?}"
    );
}
