//! The crate layering rules (ARCHITECTURE.md), checked against `cargo metadata`: which crate may depend on which.

use std::path::Path;

use anyhow::Context;
use serde_json::Value;

/// The workspace crates each crate may depend on (any dependency kind). Arrows point down only.
const ALLOWED_INTERNAL: &[(&str, &[&str])] = &[
    ("quire-core", &[]),
    ("quire-tools", &["quire-core"]),
    // embed sits on core beside tools; the agent uses its HTTP plumbing (shared with the HTTP embedder).
    ("quire-embed", &["quire-core"]),
    (
        "quire-agent",
        &["quire-tools", "quire-embed", "quire-core", "quire-test-support"],
    ),
    // What the two HTTP servers share (idle connections, constant-time comparison) sits below both, on nothing.
    ("quire-loopback", &[]),
    // mcp's tests connect their MCP client through quire-test-support, and read OAuth metadata documents with
    // embed's HTTP client as the binary does (dev-dependencies).
    (
        "quire-mcp",
        &[
            "quire-tools",
            "quire-loopback",
            "quire-core",
            "quire-embed",
            "quire-test-support",
        ],
    ),
    // Plugins: the MCP client of out-of-process servers and its policy, on tools (the registry their tools join); core
    // only for its tests' workspaces.
    ("quire-plugins", &["quire-tools", "quire-loopback", "quire-core"]),
    // Import and export sit on core beside tools: files in, files out, through core's Writer.
    ("quire-import", &["quire-core"]),
    // Sync sits on core beside tools: the sealed files on a storage target (issue 33).
    ("quire-sync", &["quire-core"]),
    // The text of attachments (PDF pages, OCR): on core only; host runs its job, the app its commands.
    ("quire-capture", &["quire-core"]),
    // What the binary does that is not the command line (settings, secrets, tokens, background components, the web
    // app assembled): above every library it wires, below the app; the servers (web, mcp) do not depend on it.
    (
        "quire-host",
        &[
            "quire-web",
            "quire-plugins",
            "quire-mcp",
            "quire-agent",
            "quire-sync",
            "quire-capture",
            "quire-embed",
            "quire-loopback",
            "quire-tools",
            "quire-core",
        ],
    ),
    // The web app sits beside mcp and may use everything below it; only the app depends on it.
    (
        "quire-web",
        &[
            "quire-agent",
            "quire-plugins",
            "quire-sync",
            "quire-embed",
            "quire-loopback",
            "quire-tools",
            "quire-core",
        ],
    ),
    (
        "quire",
        &[
            "quire-host",
            "quire-plugins",
            "quire-web",
            "quire-agent",
            "quire-mcp",
            "quire-loopback",
            "quire-embed",
            "quire-import",
            "quire-sync",
            "quire-capture",
            "quire-tools",
            "quire-core",
        ],
    ),
    // xtask links no quire crate (CI builds the workspace once, and xtask is built before it); quire-devtools measures
    // the crates it benchmarks (quire-host's automations' scheduler too) and generates the UI's types from quire-web's
    // schemas; the end-to-end tests drive the binary only.
    ("xtask", &[]),
    (
        "quire-devtools",
        &[
            "quire-host",
            "quire-core",
            "quire-tools",
            "quire-agent",
            "quire-embed",
            "quire-mcp",
            "quire-web",
            "quire-import",
            "quire-sync",
            "quire-capture",
        ],
    ),
    ("quire-tests", &["quire-test-support"]),
    // Shared test helpers link no quire crate; only dev-dependencies point at them.
    ("quire-test-support", &[]),
];

/// External crates confined to some workspace crates.
const CONFINED: &[(&str, &[&str])] = &[
    // Storage stays in core. quire-devtools uses rusqlite directly as the baseline its benchmarks compare against.
    ("rusqlite", &["quire-core", "quire-devtools"]),
    ("r2d2", &["quire-core"]),
    ("r2d2_sqlite", &["quire-core"]),
    ("rusqlite_migration", &["quire-core"]),
    // Mock servers for tests stay in the test crates.
    (
        "wiremock",
        &["quire-test-support", "quire-agent", "quire-embed", "quire-tests"],
    ),
    // The MCP SDK stays in mcp (the server) and plugins (the client); the end-to-end tests use its client to talk to
    // the binary, connected by the shared test helpers.
    (
        "rmcp",
        &["quire-mcp", "quire-plugins", "quire-tests", "quire-test-support"],
    ),
    // HTTP clients live in embed (the HTTP embedder and the shared plumbing), the agent (model clients), plugins
    // (Streamable HTTP, with the client the host hands in), host and the app; mcp's and web's tests and the web
    // benchmark call a real server with one.
    (
        "reqwest",
        &[
            "quire-embed",
            "quire-plugins",
            "quire-host",
            "quire-mcp",
            "quire-agent",
            "quire",
            "quire-tests",
            "quire-web",
            "quire-sync",
            "quire-devtools",
        ],
    ),
    // The local model's runtime stays in embed (behind its `candle` feature).
    ("candle-core", &["quire-embed"]),
    ("candle-nn", &["quire-embed"]),
    ("tokenizers", &["quire-embed"]),
    // Storage targets (a folder, WebDAV, S3) stay in sync.
    ("opendal", &["quire-sync"]),
    ("opendal-http-transport-reqwest", &["quire-sync"]),
    // The CRDT library stays in sync: nothing else reads or writes its documents.
    ("loro", &["quire-sync"]),
    // The PDF readers stay in capture.
    ("pdf-extract", &["quire-capture"]),
    ("lopdf", &["quire-capture"]),
    // HTTP servers live in mcp, web and the app (and host, which hands the web app MCP's router); what they share
    // about connections in loopback.
    (
        "axum",
        &[
            "quire-mcp",
            "quire-web",
            "quire-loopback",
            "quire-host",
            "quire",
            "quire-tests",
        ],
    ),
];

/// Libraries a crate's own code (not its tests) must not use, or not with a feature: what keeps a server a server.
const NOT_IN_CODE: &[(&str, &str, Option<&str>, &str)] = &[
    (
        "quire-mcp",
        "reqwest",
        None,
        "mcp makes no HTTP request of its own (OAuth's metadata fetch is handed in)",
    ),
    (
        "quire-mcp",
        "rmcp",
        Some("client"),
        "mcp is a server; the MCP client of plugins is quire-plugins'",
    ),
    (
        "quire-web",
        "rmcp",
        None,
        "the web app reaches plugins through quire-plugins",
    ),
];

/// The crates whose code runs for actors other than the user (AI actors, MCP clients, plugins, imports), and the
/// names of the unlocked workspace key and what takes it: none of these crates may name them, so the key can never be
/// passed to those paths (issue 32: the key is a capability only the user's paths hold).
/// Sync is handed a key derived for it, never the workspace key itself.
const KEYLESS_CRATES: &[&str] = &[
    "tools", "agent", "mcp", "plugins", "import", "embed", "loopback", "sync",
];
const KEY_NAMES: &[&str] = &[
    "Unlocked",
    "read_unlocked",
    "write_unlocked",
    "unlock",
    "unlock_with_recovery",
    "init_lock",
    "change_passphrase",
    "new_recovery_key",
    "join_lock",
];

/// The places in the keyless crates' sources that name the key.
fn key_mentions(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    for krate in KEYLESS_CRATES {
        let mut stack = vec![root.join("crates").join(krate)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
                let path = entry?.path();
                if path.is_dir() {
                    if !path.ends_with("node_modules") && !path.ends_with("target") {
                        stack.push(path);
                    }
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path)?;
                for (number, line) in text.lines().enumerate() {
                    for name in names_in(line) {
                        problems.push(format!(
                            "{}:{}: names `{name}`: the unlocked key must never reach crates/{krate} (issue 32)",
                            path.strip_prefix(root).unwrap_or(&path).display(),
                            number + 1
                        ));
                    }
                }
            }
        }
    }
    Ok(problems)
}

/// The key names that appear in a line as whole identifiers.
fn names_in(line: &str) -> Vec<&'static str> {
    let words: Vec<&str> = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    KEY_NAMES.iter().copied().filter(|name| words.contains(name)).collect()
}

/// Returns one line per rule broken.
pub(crate) fn check(root: &Path) -> anyhow::Result<Vec<String>> {
    let output = crate::cargo()
        .args(["metadata", "--format-version", "1", "--no-deps", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .context("cannot run cargo metadata")?;
    anyhow::ensure!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout)?;
    let mut found = problems(&metadata);
    found.extend(key_mentions(root)?);
    Ok(found)
}

fn problems(metadata: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let members: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    for package in &packages {
        let name = package["name"].as_str().unwrap_or_default();
        let Some((_, allowed)) = ALLOWED_INTERNAL.iter().find(|(n, _)| *n == name) else {
            problems.push(format!("{name}: a workspace crate the layering rules do not know; add it to xtask/src/layering.rs and ARCHITECTURE.md"));
            continue;
        };
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or_default();
            let kind = dep["kind"].as_str().unwrap_or("normal");
            // A crate's dev-dependency on itself only turns on its own test features (quire-core's `testing` for its
            // integration tests): no arrow between crates.
            let is_itself = dep_name == name;
            if members.contains(&dep_name) && !allowed.contains(&dep_name) && !is_itself {
                problems.push(format!(
                    "{name} depends on {dep_name} ({kind}): arrows point down only (ARCHITECTURE.md, \"Bird's eye view\")"
                ));
            }
            let features: Vec<&str> = dep["features"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (krate, banned, feature, why) in NOT_IN_CODE {
                let hit = *krate == name
                    && *banned == dep_name
                    && kind == "normal"
                    && feature.is_none_or(|f| features.iter().any(|x| *x == f || x.starts_with(&format!("{f}-"))));
                if hit {
                    let with = feature.map(|f| format!(" with `{f}`")).unwrap_or_default();
                    problems.push(format!("{name} uses {dep_name}{with}: {why}"));
                }
            }
            if let Some((_, homes)) = CONFINED.iter().find(|(ext, _)| *ext == dep_name)
                && !homes.contains(&name)
            {
                problems.push(format!(
                    "{name} depends on {dep_name} ({kind}): it may only be used by {}",
                    homes.join(", ")
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn the_workspace_follows_the_rules() {
        let problems = super::check(&crate::project_root()).unwrap();
        assert!(problems.is_empty(), "layering problems:\n{}", problems.join("\n"));
    }

    #[test]
    fn naming_the_key_is_caught_as_a_whole_word() {
        assert_eq!(
            super::names_in("let k: quire_core::seal::Unlocked = x;"),
            vec!["Unlocked"]
        );
        assert_eq!(
            super::names_in("ws.read_unlocked(&key, |r| r.note(id))"),
            vec!["read_unlocked"]
        );
        assert!(super::names_in("// the unlocked key never reaches this crate; UnlockedLater").is_empty());
    }

    #[test]
    fn upward_sideways_and_confined_edges_are_caught() {
        let dep = |name: &str| json!({ "name": name, "kind": null });
        let dev = |name: &str| json!({ "name": name, "kind": "dev" });
        let metadata = json!({ "packages": [
            { "name": "quire-core", "dependencies": [dep("quire-tools"), dep("rusqlite"), dev("quire-core")] },
            { "name": "quire-mcp", "dependencies": [dep("quire-agent"), dep("rmcp"), json!({ "name": "rmcp", "kind": null, "features": ["server", "client"] }), dep("reqwest"), dev("reqwest")] },
            { "name": "quire-tools", "dependencies": [dep("quire-core"), dep("rusqlite"), dep("reqwest")] },
            { "name": "quire-agent", "dependencies": [dep("axum"), dep("candle-core")] },
            { "name": "quire-tools", "dependencies": [] },
            { "name": "quire-agent", "dependencies": [] },
            { "name": "stray", "dependencies": [] },
        ]});
        assert_eq!(
            super::problems(&metadata),
            vec![
                "quire-core depends on quire-tools (normal): arrows point down only (ARCHITECTURE.md, \"Bird's eye view\")",
                "quire-mcp depends on quire-agent (normal): arrows point down only (ARCHITECTURE.md, \"Bird's eye view\")",
                "quire-mcp uses rmcp with `client`: mcp is a server; the MCP client of plugins is quire-plugins'",
                "quire-mcp uses reqwest: mcp makes no HTTP request of its own (OAuth's metadata fetch is handed in)",
                "quire-tools depends on rusqlite (normal): it may only be used by quire-core, quire-devtools",
                "quire-tools depends on reqwest (normal): it may only be used by quire-embed, quire-plugins, quire-host, quire-mcp, quire-agent, quire, quire-tests, quire-web, quire-sync, quire-devtools",
                "quire-agent depends on axum (normal): it may only be used by quire-mcp, quire-web, quire-loopback, quire-host, quire, quire-tests",
                "quire-agent depends on candle-core (normal): it may only be used by quire-embed",
                "stray: a workspace crate the layering rules do not know; add it to xtask/src/layering.rs and ARCHITECTURE.md",
            ]
        );
    }
}
