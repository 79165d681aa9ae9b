//! End to end (issue 53): plugins' tools through `quire mcp`, with the official Python MCP SDK as the client
//! (`tests/plugins/mcp_client.py`) over stdio and HTTP. The Python probe plugin and the reference "everything" server
//! are added with `quire plugin add`; the client sees and calls their tools beside the built-in ones, is asked before
//! a destructive one (or refused where it cannot ask), reads a tool's page under quire's address, gets images and
//! sounds byte for byte as the plugin gave them, hears the list change when a plugin is removed in a terminal, and a
//! token limited to one plugin reaches no other.
//!
//! `cargo xtask ci` installs the SDK and the everything server (`QUIRE_PLUGIN_RUNTIMES`), which makes these tests
//! mandatory; elsewhere they skip and say so.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::runtimes;
use std::process::{Command, Stdio};

use quire_tests::Quire;
use serde_json::{Value, json};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins").join(name)
}

/// A workspace with the probe plugin (`extra` given to its `plugin add`) and the everything server.
fn with_plugins(runtimes: &Path, extra: &[&str]) -> Quire {
    let q = Quire::new();
    let python = runtimes.join("bin/python");
    let probe = script("probe_plugin.py");
    let mut add = vec!["plugin", "add", "probe"];
    add.extend_from_slice(extra);
    add.extend_from_slice(&["--", python.to_str().unwrap(), probe.to_str().unwrap()]);
    let run = q.run(&add);
    assert_eq!(run.code, 0, "{run:?}");
    let everything = runtimes.join("node_modules/.bin/mcp-server-everything");
    let run = q.run(&["plugin", "add", "everything", "--", everything.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    q
}

/// The Python client in the test's environment, its arguments `transport` (and `--elicit` …), running `steps`.
fn client_command(q: &Quire, runtimes: &Path, transport: &[&str], steps: &Value) -> Command {
    let mut command = Command::new(runtimes.join("bin/python"));
    for (key, value) in q.command().get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command
        .arg(script("mcp_client.py"))
        .arg("--steps")
        .arg(steps.to_string())
        .args(transport);
    command
}

/// Runs the client to its end; one answer per step.
fn client(q: &Quire, runtimes: &Path, transport: &[&str], steps: Value) -> Vec<Value> {
    let out = client_command(q, runtimes, transport, &steps).output().unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `quire mcp` over stdio, as the client starts it.
fn stdio(q: &Quire) -> Vec<String> {
    vec![
        "--stdio".into(),
        quire_tests::binary().display().to_string(),
        "--workspace".into(),
        q.workspace().display().to_string(),
        "mcp".into(),
    ]
}

fn strings(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn tool<'a>(listed: &'a Value, name: &str) -> &'a Value {
    let found = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == name);
    assert!(found.is_some(), "{name} is not listed: {listed}");
    found.unwrap()
}

fn text(answer: &Value) -> String {
    assert!(answer["content"].is_array(), "no content: {answer}");
    answer["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_client_over_stdio_sees_and_calls_plugin_tools_and_is_asked_before_a_destructive_one() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &[]);
    let steps = json!([
        {"list": true},
        {"call": "probe__shout", "args": {"text": "quiet please"}},
        {"call": "probe__forget_everything", "args": {"reason": "spring cleaning"}},
        {"read": "ui://quire/tool/probe__dashboard"},
        {"call": "probe__chart", "args": {}},
        {"call": "probe__beep", "args": {}},
        {"call": "everything__get-tiny-image", "args": {}},
        {"call": "everything__get-structured-content", "args": {"location": "New York"}},
        {"call": "probe__ask_city", "args": {}},
    ]);
    let mut transport = strings(&stdio(&q)).into_iter().map(str::to_owned).collect::<Vec<_>>();
    transport.splice(0..0, ["--elicit".to_owned(), "accept".to_owned()]);
    let answers = client(&q, &runtimes, &strings(&transport), steps.clone());
    let listed = &answers[0];
    let all = names(listed);
    // Beside the built-in tools, both plugins' tools, with the sidebar's names, titles and annotations.
    assert!(all.contains(&"search_notes".to_owned()), "{all:?}");
    assert!(all.contains(&"everything__echo".to_owned()), "{all:?}");
    let shout = tool(listed, "probe__shout");
    assert_eq!(shout["title"], "shout (probe)");
    assert_eq!(shout["annotations"]["read_only_hint"], true);
    assert_eq!(shout["annotations"]["open_world_hint"], true);
    assert_eq!(
        tool(listed, "probe__forget_everything")["annotations"]["destructive_hint"],
        true
    );
    assert_eq!(
        tool(listed, "probe__dashboard")["meta"]["ui"]["resourceUri"],
        "ui://quire/tool/probe__dashboard"
    );
    assert_eq!(text(&answers[1]), "QUIET PLEASE");
    assert_eq!(answers[1]["is_error"], false);
    // The destructive call was asked about first, naming the plugin's tool, and ran once accepted.
    let asked = answers[2]["questions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{}", answers[2]);
    assert!(
        asked[0].as_str().unwrap().contains("forget_everything (probe)"),
        "{asked:?}"
    );
    assert_eq!(text(&answers[2]), "forgot everything because spring cleaning");
    // The page, read from the plugin under quire's address.
    assert!(
        answers[3]["text"].as_str().unwrap().contains("Probe dashboard"),
        "{}",
        answers[3]
    );
    assert_eq!(answers[3]["mime_type"], "text/html;profile=mcp-app");
    // Media and structured content as the plugin gives them to a client that calls it directly.
    let python = runtimes.join("bin/python").display().to_string();
    let probe = script("probe_plugin.py").display().to_string();
    let direct_probe = client(
        &q,
        &runtimes,
        &["--stdio", &python, &probe],
        json!([{"call": "chart", "args": {}}, {"call": "beep", "args": {}}]),
    );
    assert_eq!(answers[4]["content"], direct_probe[0]["content"]);
    assert_eq!(answers[5]["content"], direct_probe[1]["content"]);
    assert_eq!(answers[5]["content"][0]["type"], "audio", "{}", answers[5]);
    let everything = runtimes
        .join("node_modules/.bin/mcp-server-everything")
        .display()
        .to_string();
    let direct = client(
        &q,
        &runtimes,
        &["--stdio", &everything],
        json!([
            {"call": "get-tiny-image", "args": {}},
            {"call": "get-structured-content", "args": {"location": "New York"}},
        ]),
    );
    assert_eq!(answers[6]["content"], direct[0]["content"]);
    assert_eq!(answers[6]["content"][1]["type"], "image", "{}", answers[6]);
    assert_eq!(answers[7]["structured"], direct[1]["structured"]);
    assert!(answers[7]["structured"].is_object(), "{}", answers[7]);
    // The plugin's own question reaches the client, and its answer the plugin.
    assert_eq!(
        answers[8]["questions"],
        json!(["Which city should the parcel go to?"]),
        "{}",
        answers[8]
    );
    assert_eq!(text(&answers[8]), "sending to Lyon");
}

#[test]
fn a_destructive_plugin_tool_is_refused_to_a_client_that_cannot_ask_and_not_run_when_declined() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &["--ask-before-writes"]);
    let steps = json!([
        {"call": "probe__forget_everything", "args": {"reason": "x"}},
        {"call": "probe__remember", "args": {"text": "tea"}},
        {"call": "probe__shout", "args": {"text": "ok"}},
    ]);
    // No elicitation (as Claude Desktop): refused with the reason, nothing staged, and a read-only tool still runs.
    let answers = client(&q, &runtimes, &strings(&stdio(&q)), steps.clone());
    for refused in &answers[..2] {
        assert_eq!(refused["is_error"], true, "{refused}");
        let said = text(refused);
        assert!(
            said.contains("this client cannot ask") && said.contains("outside quire"),
            "{said}"
        );
    }
    assert_eq!(text(&answers[2]), "OK");
    assert_eq!(q.run(&["review", "list"]).stdout.trim(), "Nothing waits for review.");
    // Declined: it does not run, and the model is told not to retry.
    let mut transport = stdio(&q);
    transport.splice(0..0, ["--elicit".to_owned(), "decline".to_owned()]);
    let answers = client(&q, &runtimes, &strings(&transport), steps);
    for declined in &answers[..2] {
        assert_eq!(declined["questions"].as_array().unwrap().len(), 1, "{declined}");
        assert!(text(declined).contains("The user refused"), "{declined}");
    }
}

#[test]
fn the_client_hears_the_list_change_when_a_plugin_is_removed_in_a_terminal() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &[]);
    let steps = json!([
        {"list": true},
        {"say": "ready"},
        {"wait_gone": "probe__", "seconds": 30},
        {"list": true},
    ]);
    let mut child = client_command(&q, &runtimes, &strings(&stdio(&q)), &steps)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> Value { serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap() };
    let before = next();
    assert!(names(&before).contains(&"probe__shout".to_owned()));
    assert_eq!(next()["said"], "ready");
    // `quire plugin list` names the process that runs it (its record is written within a moment).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let listed = q.run(&["plugin", "list"]);
        if listed.stdout.contains("runs in: quire mcp (pid ") {
            break;
        }
        assert!(std::time::Instant::now() < until, "{listed:?}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let removed = q.run(&["plugin", "remove", "probe"]);
    assert_eq!(removed.code, 0, "{removed:?}");
    let heard = next();
    assert_eq!(heard["gone"], true, "{heard}");
    let after = names(&next());
    assert!(!after.iter().any(|n| n.starts_with("probe__")), "{after:?}");
    assert!(after.contains(&"everything__echo".to_owned()), "{after:?}");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_plugin_set_to_the_sidebar_only_is_not_offered_over_mcp() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &["--sidebar-only"]);
    let config = std::fs::read_to_string(q.dir().join("home/.config/quire/config.toml")).unwrap();
    assert!(config.contains("expose = \"sidebar\""), "{config}");
    let listed = q.run(&["plugin", "list"]).stdout;
    assert!(
        listed.contains("for quire's own agent only (expose = \"sidebar\")"),
        "{listed}"
    );
    let answers = client(
        &q,
        &runtimes,
        &strings(&stdio(&q)),
        json!([{"list": true}, {"call": "probe__shout", "args": {"text": "x"}}, {"read": "ui://quire/tool/probe__dashboard"}]),
    );
    let all = names(&answers[0]);
    assert!(!all.iter().any(|n| n.starts_with("probe__")), "{all:?}");
    assert!(all.contains(&"everything__echo".to_owned()), "{all:?}");
    assert!(
        answers[1]["error"].as_str().unwrap().contains("Unknown tool"),
        "{}",
        answers[1]
    );
    assert!(
        answers[2]["error"].as_str().unwrap().contains("not found"),
        "{}",
        answers[2]
    );
    // quire mcp does not even start it: it would have no use there.
    let _server = quire_tests::McpHttp::start(&q);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let listed = loop {
        let listed = q.run(&["plugin", "list"]).stdout;
        if listed.contains("runs in: quire mcp (pid ") {
            break listed;
        }
        assert!(std::time::Instant::now() < until, "{listed}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let probe = listed.split("\nprobe").nth(1).unwrap_or_default();
    assert!(probe.contains("runs in no quire process now"), "{listed}");
}

#[test]
fn over_http_a_token_limited_to_one_plugin_reaches_no_other() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &[]);
    let limited = q.run(&["mcp", "token", "add", "echo-only", "--plugin", "everything"]);
    assert_eq!(limited.code, 0, "{limited:?}");
    let limited = limited.stdout.trim().to_owned();
    let none = q
        .run(&["mcp", "token", "add", "plain", "--no-plugins"])
        .stdout
        .trim()
        .to_owned();
    let unknown = q.run(&["mcp", "token", "add", "typo", "--plugin", "evrything"]);
    assert_ne!(unknown.code, 0);
    assert!(
        unknown.stderr.contains("--plugin evrything: there is no such plugin"),
        "{unknown:?}"
    );
    let listed = q.run(&["mcp", "token", "list"]).stdout;
    assert!(
        listed.contains("echo-only  reaches the whole workspace, plugins everything"),
        "{listed}"
    );
    assert!(
        listed.contains("plain  reaches the whole workspace, no plugins"),
        "{listed}"
    );
    let full = q.run(&["mcp", "token"]).stdout.trim().to_owned();
    let server = quire_tests::McpHttp::start(&q);
    // What runs beside it counts the plugins configured, not those started so far.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !server.stderr().contains("Beside the server") {
        assert!(std::time::Instant::now() < until, "{}", server.stderr());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let said = server.stderr();
    assert!(said.contains("plugins (2 configured)"), "{said}");
    let steps = json!([
        {"list": true},
        {"call": "probe__shout", "args": {"text": "hello"}},
        {"call": "everything__echo", "args": {"message": "hello"}},
        {"read": "ui://quire/tool/probe__dashboard"},
    ]);
    let answers = client(
        &q,
        &runtimes,
        &["--http", &server.url, "--token", &limited],
        steps.clone(),
    );
    let all = names(&answers[0]);
    assert!(!all.iter().any(|n| n.starts_with("probe__")), "{all:?}");
    assert!(all.contains(&"everything__echo".to_owned()) && all.contains(&"read_note".to_owned()));
    assert!(
        answers[1]["error"].as_str().unwrap().contains("Unknown tool"),
        "{}",
        answers[1]
    );
    assert!(text(&answers[2]).contains("hello"), "{}", answers[2]);
    assert!(answers[3]["error"].is_string(), "{}", answers[3]);
    let answers = client(&q, &runtimes, &["--http", &server.url, "--token", &none], steps.clone());
    assert!(!names(&answers[0]).iter().any(|n| n.contains("__")));
    // The server's own token reaches every plugin.
    let answers = client(&q, &runtimes, &["--http", &server.url, "--token", &full], steps);
    assert_eq!(text(&answers[1]), "HELLO");
    assert!(answers[3]["text"].as_str().unwrap().contains("Probe dashboard"));
}

/// What a plugin writes back through its own grant (quire mcp --http, another process) while one of its calls runs is
/// that call's: one change set in the plugin's name, undone as one; and staged for review when the caller's writes are.
#[test]
fn a_plugins_writes_through_its_grant_during_a_call_are_one_change_set_and_staged_with_a_staged_caller() {
    let Some(runtimes) = runtimes() else { return };
    let port = quire_tests::servers::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let q = with_plugins(&runtimes, &["--grant-url", &url]);
    let mut grants = q.command();
    grants
        .arg("--workspace")
        .arg(q.workspace())
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")]);
    let _grants = quire_tests::servers::start(grants, port);
    // Its token is the plugin's, made again at each start: revoking it by hand is refused, with the way out.
    let revoked = q.run(&["mcp", "token", "revoke", "plugin-probe"]);
    assert_ne!(revoked.code, 0);
    assert!(revoked.stderr.contains("quire plugin remove probe"), "{revoked:?}");
    let answers = client(
        &q,
        &runtimes,
        &strings(&stdio(&q)),
        json!([{"call": "probe__file_twice", "args": {"title": "Trip"}}]),
    );
    assert_eq!(text(&answers[0]), "filed and filed", "{}", answers[0]);
    let history = q.run(&["--json", "history"]).json();
    let newest = &history["change_sets"][0];
    assert_eq!(newest["actor"], "plugin probe", "{history}");
    let created: Vec<&str> = newest["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["entity"] == "note" && c["operation"] == "create")
        .map(|c| c["what"].as_str().unwrap())
        .collect();
    assert_eq!(created.len(), 2, "both notes in one change set: {history}");
    // Undone as one.
    let undone = q.run(&["undo", newest["change_set_id"].as_str().unwrap()]);
    assert_eq!(undone.code, 0, "{undone:?}");
    assert!(!q.run(&["note", "list"]).stdout.contains("Trip"));
    // A staged caller: what the plugin does outside quire cannot wait for review, so a client that cannot ask is
    // refused; one that asks runs it, and the plugin's writes into quire wait for review.
    let mut staged = stdio(&q);
    staged.push("--review".into());
    let step = json!([{"call": "probe__file_twice", "args": {"title": "Plan"}}]);
    let refused = client(&q, &runtimes, &strings(&staged), step.clone());
    let why = text(&refused[0]);
    assert!(
        why.contains("writes wait for the user's review") && why.contains("cannot ask"),
        "{why}"
    );
    staged.splice(0..0, ["--elicit".to_owned(), "accept".to_owned()]);
    let answers = client(&q, &runtimes, &strings(&staged), step);
    assert_eq!(answers[0]["questions"].as_array().unwrap().len(), 1, "{}", answers[0]);
    assert_eq!(text(&answers[0]), "filed and filed", "{}", answers[0]);
    assert!(!q.run(&["note", "list"]).stdout.contains("Plan"));
    let reviews = q.run(&["review", "list"]).stdout;
    assert!(reviews.contains("token plugin-probe"), "{reviews}");
}

/// The plugin's limits hold over MCP as in the sidebar: a call past its time limit is a tool error (and the plugin
/// answers the next call), an answer over the output cap is cut and says so.
#[test]
fn a_plugins_time_limit_and_output_cap_hold_over_mcp() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &["--timeout", "2s"]);
    let config = q.dir().join("home/.config/quire/config.toml");
    let text_of = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text_of.replacen("name = \"probe\"\n", "name = \"probe\"\nmax_output = 65536\n", 1),
    )
    .unwrap();
    let answers = client(
        &q,
        &runtimes,
        &strings(&stdio(&q)),
        json!([
            {"call": "probe__hang", "args": {"seconds": 30}},
            {"call": "probe__shout", "args": {"text": "back"}},
            {"call": "probe__huge", "args": {"megabytes": 1}},
        ]),
    );
    assert_eq!(answers[0]["is_error"], true, "{}", answers[0]);
    assert!(
        text(&answers[0]).contains("did not finish hang within 2 s"),
        "{}",
        answers[0]
    );
    assert_eq!(text(&answers[1]), "BACK");
    let cut = text(&answers[2]);
    assert!(cut.len() < 70_000, "{} bytes", cut.len());
    assert!(
        cut.contains("over the 65536 bytes quire passes on"),
        "{}",
        &cut[cut.len() - 300..]
    );
}

/// `quire serve --public-url` serves MCP beside the web app over the page's own plugins: one plugin process per
/// plugin in that process, which `quire plugin list` names.
#[test]
fn quire_serve_with_a_public_url_offers_the_pages_plugins_over_mcp() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &[]);
    let port = quire_tests::servers::free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut serve = q.command();
    serve.arg("--workspace").arg(q.workspace()).args([
        "serve",
        "--addr",
        &format!("127.0.0.1:{port}"),
        "--public-url",
        &base,
    ]);
    let _server = quire_tests::servers::start(serve, port);
    let token = q.run(&["mcp", "token"]).stdout.trim().to_owned();
    let answers = client(
        &q,
        &runtimes,
        &["--http", &format!("{base}/mcp"), "--token", &token],
        json!([{"list": true}, {"call": "probe__shout", "args": {"text": "served"}}]),
    );
    assert!(
        names(&answers[0]).contains(&"probe__shout".to_owned()),
        "{}",
        answers[0]
    );
    assert_eq!(text(&answers[1]), "SERVED");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let listed = q.run(&["plugin", "list"]).stdout;
        let probe = listed.split("\nprobe").nth(1).unwrap_or_default().to_owned();
        if probe.contains("runs in: quire serve (pid ") {
            assert!(!probe.contains("; quire"), "one process runs it: {listed}");
            break;
        }
        assert!(std::time::Instant::now() < until, "{listed}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// A plugin removed in a terminal while a client's call of it runs: the client is told it was removed (not that it
/// will start again).
#[test]
fn a_call_of_a_plugin_removed_meanwhile_says_so() {
    let Some(runtimes) = runtimes() else { return };
    let q = with_plugins(&runtimes, &[]);
    // The hang starts processes named by this marker: seen, the call is under way.
    let marker = format!("quire-mid-call-{}", std::process::id());
    let steps = json!([{"call": "probe__hang", "args": {"seconds": 60, "leave": marker}}]);
    let child = client_command(&q, &runtimes, &strings(&stdio(&q)), &steps)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let running = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            // The sleepers the hang starts (the client's own command line holds the marker too).
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let has = |needle: &[u8]| c.windows(needle.len()).any(|w| w == needle);
                has(marker.as_bytes()) && has(b"time.sleep(600)")
            })
        })
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !running() {
        assert!(std::time::Instant::now() < until, "the call did not start");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(q.run(&["plugin", "remove", "probe"]).code, 0);
    let out = child.wait_with_output().unwrap();
    let answer: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let _ = Command::new("pkill").args(["-f", &marker]).status();
    assert!(text(&answer).contains("was removed while running hang"), "{answer}");
}
