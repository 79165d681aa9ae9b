//! End to end (issue 49): automations with the real binary, a local mock of an OpenAI-compatible model, and the
//! scheduler inside the real `quire mcp --http`. A run by hand stages its writes under the automation's name and logs
//! what it did, its tokens and cost; a schedule runs once at its time, in one process of two; a note created in the
//! automation's notebook starts it (not one elsewhere, not its own); a run never overlaps itself; a failing or killed
//! run is logged as such, and the next one runs.
use std::time::{Duration, Instant};

use quire_test_support::{mock_openai, sse, text, tool_calls};
use quire_tests::{McpHttp, Quire};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A workspace with an Inbox and a Work notebook, and `[chat]` pointing at `server` with prices.
fn with_model(server: &MockServer) -> Quire {
    let q = Quire::new();
    for notebook in ["Inbox", "Work"] {
        assert_eq!(q.run(&["notebook", "add", notebook]).code, 0);
    }
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[chat]\nmodel = \"openai-compatible:test\"\nbase_url = \"{}/v1\"\nprice_in = 3.0\nprice_out = 15.0\n",
            server.uri()
        ),
    )
    .unwrap();
    q
}

fn add(q: &Quire, args: &[&str]) {
    let mut full = vec!["automation", "add"];
    full.extend_from_slice(args);
    let added = q.run(&full);
    assert_eq!(added.code, 0, "{added:?}");
}

/// The runs of the log, newest first.
fn log(q: &Quire) -> Vec<Value> {
    q.run(&["--json", "automation", "log"])
        .json()
        .as_array()
        .unwrap()
        .clone()
}

/// Waits (at most a minute) until the log holds `n` runs that ended; panics with it otherwise.
fn wait_for_runs(q: &Quire, n: usize) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let runs = log(q);
        if runs.iter().filter(|r| r["status"] != "running").count() >= n {
            return runs;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{n} runs never ended: {runs:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The text of the requests the model got.
async fn prompts(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect()
}

/// Runs the binary on a blocking thread, so the mock server keeps answering on this runtime.
async fn run(q: &Quire, args: &[&str]) -> quire_tests::Run {
    let q = Quire::at(q.dir().to_path_buf());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || q.run(&args.iter().map(String::as_str).collect::<Vec<_>>()))
        .await
        .unwrap()
}

async fn wait(q: &Quire, n: usize) -> Vec<Value> {
    let q = Quire::at(q.dir().to_path_buf());
    tokio::task::spawn_blocking(move || wait_for_runs(&q, n)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_by_hand_stages_its_writes_under_its_name_and_logs_what_it_did() {
    let server = mock_openai(vec![
        tool_calls(&[(
            "create_note",
            json!({"title": "Morning summary", "body": "Two notes came in."}),
        )]),
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"content": "Wrote the morning summary."}, "finish_reason": "stop"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}),
        ]),
    ])
    .await;
    let q = with_model(&server);
    add(
        &q,
        &[
            "morning",
            "--prompt",
            "Summarise the new notes.",
            "--schedule",
            "daily 07:30",
        ],
    );
    let listed = run(&q, &["automation", "list"]).await.stdout;
    assert!(
        listed.contains("morning  daily at 07:30  by the default model  (all notebooks; writes staged for review)")
            && listed.contains("next: "),
        "{listed}"
    );

    let ran = run(&q, &["--json", "automation", "run", "morning"]).await.json();
    assert_eq!(ran["status"], "done", "{ran:#}");
    assert_eq!(ran["summary"], "Wrote the morning summary.");
    assert_eq!(ran["reason"], "run by hand");
    assert_eq!(ran["output_tokens"], 100);
    // 1000 tokens at $3 and 100 at $15 per million.
    assert!((ran["cost"].as_f64().unwrap() - 0.0045).abs() < 1e-9, "{ran:#}");
    let steps = &ran["steps"];
    assert_eq!(steps[0]["name"], "create_note", "{steps:#}");
    let review = ran["review_set"].as_i64().expect("its write was staged");

    // The write waits for review under the automation's name; the note is not there yet.
    let inbox = run(&q, &["review", "list"]).await.stdout;
    assert!(inbox.contains("morning (automation)"), "{inbox}");
    let notes = run(&q, &["note", "list"]).await.stdout;
    assert!(!notes.contains("Morning summary"), "{notes}");
    let accepted = run(&q, &["review", "accept", &review.to_string()]).await;
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert!(run(&q, &["note", "list"]).await.stdout.contains("Morning summary"));

    // The model was told which automation runs, why, and that its changes wait for review.
    let sent = prompts(&server).await;
    assert!(
        sent[0].contains("Summarise the new notes.")
            && sent[0].contains("This is the automation “morning”, run by hand.")
            && sent[0].contains("Your changes wait for the person's review."),
        "{}",
        sent[0]
    );
    let logged = run(&q, &["automation", "log", "morning"]).await.stdout;
    assert!(
        logged.contains("morning  done (run by hand): Wrote the morning summary.")
            && logged.contains(&format!("review {review}"))
            && logged.contains("1100 tokens"),
        "{logged}"
    );

    // Paused, it still runs by hand; removed, its log goes with it.
    assert_eq!(run(&q, &["automation", "pause", "morning"]).await.code, 0);
    assert!(
        run(&q, &["automation", "list"])
            .await
            .stdout
            .contains("paused (daily at 07:30)")
    );
    assert_eq!(run(&q, &["automation", "remove", "morning"]).await.code, 0);
    assert!(log(&q).is_empty());
}

#[test]
fn wrong_entries_are_refused_with_what_to_write() {
    let q = Quire::new();
    let cases: [(&[&str], &str); 5] = [
        (&["a", "--prompt", "x", "--schedule", "sometimes"], "is not a schedule"),
        (&["a", "--prompt", "x", "--trigger", "note deleted"], "is not a trigger"),
        (&["a", "--prompt", " ", "--schedule", "daily 07:30"], "has no prompt"),
        (
            &["a", "--prompt", "x", "-n", "Nowhere"],
            "no notebook is named \"Nowhere\"",
        ),
        (
            &["a", "--prompt", "x", "--agent", "ghost"],
            "no agent is named \"ghost\"",
        ),
    ];
    for (args, said) in cases {
        let mut full = vec!["automation", "add"];
        full.extend_from_slice(args);
        let run = q.run(&full);
        assert_eq!(run.code, 1, "{args:?}: {run:?}");
        assert!(run.stderr.contains(said), "{args:?}: {}", run.stderr);
    }
    let run = q.run(&["automation", "add", "a", "--prompt", "x"]);
    assert!(run.stderr.contains("no chat model is configured"), "{run:?}");
    let run = q.run(&[
        "automation",
        "add",
        "a",
        "--prompt",
        "x",
        "--schedule",
        "daily 07:30",
        "--wait",
        "5",
    ]);
    assert!(run.stderr.contains("a wait is for a trigger on notes"), "{run:?}");
    let run = q.run(&["automation", "log", "nosuch"]);
    assert!(run.stderr.contains("no automation is named \"nosuch\""), "{run:?}");
    // An entry written wrong by hand: the others are listed, and what is wrong is said.
    let config = q.dir().join("home/.config/quire");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[[automations]]\nname = \"good\"\nprompt = \"x\"\n\n[[automations]]\nname = \"bad\"\nprompt = \"x\"\nschedule = \"dialy 07:00\"\n",
    )
    .unwrap();
    let run = q.run(&["automation", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("good  by hand only"), "{run:?}");
    assert!(run.stderr.contains("\"dialy 07:00\" is not a schedule"), "{run:?}");
    let run = q.run(&["automation", "run", "nothing"]);
    assert!(run.stderr.contains("no automation is named \"nothing\""), "{run:?}");
}

/// The local time `seconds` from now, as a schedule takes it (`HH:MM:SS`), after midnight's turn if it is near.
fn soon(seconds: u64) -> String {
    loop {
        let now = std::process::Command::new("date").arg("+%H:%M:%S").output().unwrap();
        let now = String::from_utf8(now.stdout).unwrap();
        if now.trim() < "23:59:30" {
            break;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    let at = std::process::Command::new("date")
        .args(["+%H:%M:%S", "-d", &format!("+{seconds} seconds")])
        .output()
        .unwrap();
    String::from_utf8(at.stdout).unwrap().trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_runs_once_at_its_time_with_two_servers_running() {
    let server = mock_openai(vec![text("Nothing new today."), text("again")]).await;
    let q = with_model(&server);
    let q2 = Quire::at(q.dir().to_path_buf());
    let (first, second) = tokio::task::spawn_blocking(move || (McpHttp::start(&q2), McpHttp::start(&q2)))
        .await
        .unwrap();
    let at = soon(3);
    add(
        &q,
        &["daily", "--prompt", "Say hello.", "--schedule", &format!("daily {at}")],
    );
    let runs = wait(&q, 1).await;
    assert_eq!(runs[0]["status"], "done", "{runs:#?}");
    assert!(
        runs[0]["reason"].as_str().unwrap().starts_with("scheduled for"),
        "{runs:#?}"
    );
    // A while later, still one run: the slot ran once, in one of the two servers.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(log(&q).len(), 1, "{:#?}", log(&q));
    assert_eq!(prompts(&server).await.len(), 1);
    drop((first, second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_created_in_its_notebook_starts_it_and_its_own_note_does_not() {
    let server = mock_openai(vec![
        tool_calls(&[("create_note", json!({"title": "Triage list", "body": "- plumber"}))]),
        text("Triaged."),
    ])
    .await;
    let q = with_model(&server);
    add(
        &q,
        &[
            "triage",
            "--prompt",
            "Triage what came in.",
            "--trigger",
            "note created",
            "-n",
            "Inbox",
            "--wait",
            "1",
            "--apply-writes",
        ],
    );
    let q2 = Quire::at(q.dir().to_path_buf());
    let mcp = tokio::task::spawn_blocking(move || McpHttp::start(&q2)).await.unwrap();
    // The server has read its automations before the news it watches.
    counted(&mcp, 1).await;
    assert_eq!(
        run(
            &q,
            &["note", "add", "--title", "Budget", "--body", "numbers", "-n", "Work"]
        )
        .await
        .code,
        0
    );
    assert_eq!(
        run(
            &q,
            &[
                "note",
                "add",
                "--title",
                "Call the plumber",
                "--body",
                "leak",
                "-n",
                "Inbox"
            ]
        )
        .await
        .code,
        0
    );
    let runs = wait(&q, 1).await;
    assert_eq!(runs[0]["status"], "done", "{runs:#?}");
    assert_eq!(runs[0]["summary"], "Triaged.");
    let sent = prompts(&server).await;
    assert!(
        sent[0].contains("Call the plumber") && !sent[0].contains("Budget"),
        "{}",
        sent[0]
    );
    // It applied its note (in its own notebook, the Inbox at the top of its scope); that note started nothing.
    let notes = run(&q, &["--json", "note", "list", "-n", "Inbox"]).await.json();
    assert!(notes.to_string().contains("Triage list"), "{notes:#} {runs:#?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(log(&q).len(), 1, "{:#?}", log(&q));
    drop(mcp);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_never_overlaps_itself_and_a_failed_or_killed_run_is_logged() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(text("slowly done").set_delay(Duration::from_secs(4)))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string("the model is down"))
        .mount(&server)
        .await;
    let q = with_model(&server);
    add(&q, &["slow", "--prompt", "Take your time."]);
    let q2 = Quire::at(q.dir().to_path_buf());
    let first = tokio::task::spawn_blocking(move || q2.run(&["automation", "run", "slow"]));
    let start = Instant::now();
    while log(&q).first().is_none_or(|r| r["status"] != "running") {
        assert!(start.elapsed() < Duration::from_secs(30));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let second = run(&q, &["automation", "run", "slow"]).await;
    assert_eq!(second.code, 1, "{second:?}");
    assert!(second.stderr.contains("slow runs now"), "{second:?}");
    let first = first.await.unwrap();
    assert_eq!(first.code, 0, "{first:?}");

    // The model fails: the run is logged as failed, with why, and quire says so.
    let failed = run(&q, &["automation", "run", "slow"]).await;
    assert_eq!(failed.code, 1, "{failed:?}");
    let runs = log(&q);
    assert_eq!(runs[0]["status"], "failed", "{runs:#?}");
    assert!(runs[0]["summary"].as_str().unwrap().contains("500"), "{runs:#?}");
    assert!(failed.stdout.contains("FAILED"), "{failed:?}");

    // Killed while it runs: the next look says abandoned, and the next run begins.
    let mut child = q.command();
    child
        .arg("--workspace")
        .arg(q.workspace())
        .args(["automation", "run", "slow"]);
    server.reset().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(text("never").set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;
    let mut child = child.spawn().unwrap();
    let start = Instant::now();
    while log(&q).first().is_none_or(|r| r["status"] != "running") {
        assert!(start.elapsed() < Duration::from_secs(30));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(log(&q)[0]["status"], "abandoned");
    server.reset().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(text("back"))
        .mount(&server)
        .await;
    let again = run(&q, &["--json", "automation", "run", "slow"]).await.json();
    assert_eq!(again["status"], "done", "{again:#}");
    let statuses: Vec<Value> = log(&q).iter().map(|r| r["status"].clone()).collect();
    assert_eq!(
        statuses,
        [json!("done"), json!("abandoned"), json!("failed"), json!("done")]
    );
}

/// Today's date on this computer, as tasks write it.
fn today() -> String {
    let out = std::process::Command::new("date").arg("+%Y-%m-%d").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_added_and_tasks_due_start_theirs_and_a_sealed_note_stays_out() {
    let server = mock_openai(vec![
        // The tagger searches for the sealed note's words and title: it finds its title only.
        tool_calls(&[("search_notes", json!({"query": "diary"}))]),
        text("Filed it."),
        text("Two things are due today."),
    ])
    .await;
    let q = with_model(&server);
    // A sealed note whose words must reach no model, log, ledger or file.
    let secret = q
        .run(&[
            "--json",
            "note",
            "add",
            "--title",
            "Diary",
            "--body",
            "quokkamarker tomatoes",
        ])
        .json()["note_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(q.run(&["note", "protect", &secret]).code, 0);
    let init = q.run_raw(
        &[
            "--workspace",
            q.workspace().to_str().unwrap(),
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
    add(
        &q,
        &[
            "tagger",
            "--prompt",
            "File what is tagged.",
            "--trigger",
            "tag added #inbox",
            "--wait",
            "1",
        ],
    );
    let q2 = Quire::at(q.dir().to_path_buf());
    let mcp = tokio::task::spawn_blocking(move || McpHttp::start(&q2)).await.unwrap();
    counted(&mcp, 1).await;
    let day = today();
    for (title, tag, body) in [
        ("Untagged", "other", "nothing due"),
        ("Call back", "inbox", "- [ ] call the bank"),
        (
            "Chores",
            "home",
            &format!("- [ ] pay rent 📅 {day}\n- [ ] water plants 📅 {day}\n- [x] done 📅 {day}"),
        ),
    ] {
        let added = run(&q, &["note", "add", "--title", title, "--body", body, "--tag", tag]).await;
        assert_eq!(added.code, 0, "{added:?}");
    }
    // Added while the server runs (it reads config.toml again), due a few seconds from now.
    let due = soon(3);
    add(
        &q,
        &[
            "tasks",
            "--prompt",
            "Say what is due.",
            "--trigger",
            &format!("task due at {due}"),
        ],
    );
    let runs = wait(&q, 2).await;
    let by = |name: &str| runs.iter().find(|r| r["automation"] == name).cloned().unwrap();
    assert_eq!(by("tagger")["status"], "done", "{runs:#?}");
    assert_eq!(
        by("tagger")["reason"],
        "the note “Call back” (id {}) was tagged #inbox".replace("{}", &by_title(&q, "Call back"))
    );
    assert_eq!(by("tasks")["status"], "done", "{runs:#?}");
    assert_eq!(by("tasks")["reason"], "2 open task(s) due today");
    let sent = prompts(&server).await.join("\n");
    assert!(sent.contains("Call back") && !sent.contains("Untagged"), "{sent}");
    assert!(
        sent.contains("pay rent") && sent.contains("water plants") && !sent.contains("- done"),
        "{sent}"
    );
    // Once only: a while later, still two runs.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(log(&q).len(), 2, "{:#?}", log(&q));
    drop(mcp);
    // The sealed note: its title was found, its words went nowhere.
    assert!(!sent.contains("quokkamarker"), "{sent}");
    let ledger = q.run(&["--json", "ledger", "--note", &secret]).json();
    for entry in ledger["entries"].as_array().unwrap() {
        assert_eq!(entry["part"], "title only", "{entry}");
    }
    let mut files = quire_tests::workspace_files(&q.workspace());
    files.extend(quire_tests::files_below(&q.dir().join("home")));
    assert_eq!(
        quire_tests::files_holding(&files, "quokkamarker"),
        Vec::<std::path::PathBuf>::new()
    );
}

fn by_title(q: &Quire, title: &str) -> String {
    let hits = q.run(&["--json", "search", title]).json();
    hits["results"][0]["note_id"].as_str().unwrap().to_owned()
}

/// Two automations that apply their writes where the other watches: each runs once for the person's note, and the
/// notes they write start neither (they would start each other without end). Paused and resumed just before the note
/// is written, they still see it. What a run applied is in its log, and `quire undo` takes it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automations_that_write_where_others_watch_do_not_start_each_other() {
    let mut script = Vec::new();
    for i in 0..4 {
        script.push(tool_calls(&[(
            "create_note",
            json!({"title": format!("Filed {i}"), "body": "x"}),
        )]));
        script.push(text("Filed."));
    }
    let server = mock_openai(script).await;
    let q = with_model(&server);
    for name in ["first", "second"] {
        add(
            &q,
            &[
                name,
                "--prompt",
                "File it.",
                "--trigger",
                "note created",
                "-n",
                "Inbox",
                "--wait",
                "1",
                "--apply-writes",
            ],
        );
    }
    let q2 = Quire::at(q.dir().to_path_buf());
    let mcp = tokio::task::spawn_blocking(move || McpHttp::start(&q2)).await.unwrap();
    counted(&mcp, 2).await;
    for verb in ["pause", "resume"] {
        for name in ["first", "second"] {
            assert_eq!(run(&q, &["automation", verb, name]).await.code, 0);
        }
    }
    let added = run(
        &q,
        &["note", "add", "--title", "Invoice", "--body", "pay", "-n", "Inbox"],
    )
    .await;
    assert_eq!(added.code, 0, "{added:?}");
    let runs = wait(&q, 2).await;
    assert!(runs.iter().all(|r| r["status"] == "done"), "{runs:#?}");
    // A while later: still two runs, though they wrote notes into the Inbox both watch.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(log(&q).len(), 2, "{:#?}", log(&q));
    drop(mcp);
    let applied: Vec<&str> = runs
        .iter()
        .filter_map(|r| r["change_set"].as_str())
        .flat_map(|sets| sets.split(' '))
        .collect();
    assert!(!applied.is_empty(), "{runs:#?}");
    let logged = run(&q, &["automation", "log"]).await.stdout;
    assert!(logged.contains("`quire undo ID` takes one back"), "{logged}");
    let undone = run(&q, &["undo", applied[0]]).await;
    assert_eq!(undone.code, 0, "{undone:?}");
}

/// Waits until the server says it runs `n` automations on a schedule or trigger (it has read them).
async fn counted(mcp: &McpHttp, n: usize) {
    let start = Instant::now();
    while !mcp
        .stderr()
        .contains(&format!("automations ({n} on a schedule or trigger)"))
    {
        assert!(start.elapsed() < Duration::from_secs(30), "{}", mcp.stderr());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
