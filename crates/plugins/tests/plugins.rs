//! The plugin host with a real plugin: `tests/plugins/probe_plugin.py`, written with the official MCP SDK for Python,
//! started by `PluginHost` and called through the registry. `cargo xtask ci` installs the SDK
//! (`QUIRE_PLUGIN_RUNTIMES`), which makes these tests mandatory; elsewhere they skip and say so.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_core::Workspace;
use quire_plugins::{PluginHost, PluginSpec, PluginTransport};
use quire_tools::{ToolActor, ToolRegistry};
use serde_json::json;

fn probe(dir: &Path) -> Option<PluginSpec> {
    let Ok(runtimes) = std::env::var("QUIRE_PLUGIN_RUNTIMES") else {
        eprintln!("skipped: QUIRE_PLUGIN_RUNTIMES is not set (`cargo xtask ci` installs the plugin runtimes)");
        return None;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let transport = PluginTransport::Stdio {
        command: PathBuf::from(runtimes).join("bin/python").display().to_string(),
        args: vec![root.join("tests/plugins/probe_plugin.py").display().to_string()],
        env: Default::default(),
        cwd: dir.join("probe"),
    };
    Some(PluginSpec::new("probe", transport))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_whose_tools_change_is_followed_and_removal_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let Some(spec) = probe(dir.path()) else { return };
    let ws = Workspace::open_in_memory().unwrap();
    let registry = Arc::new(ToolRegistry::builtin());
    let host = PluginHost::new(None);
    let status = host.add(spec, &registry).await.unwrap();
    assert_eq!(status.state, "running");
    assert!(registry.get("probe__say_hello").is_none());
    let actor = ToolActor::agent("chat", 1);
    let learned = registry
        .call_async(&ws, &actor, "probe__learn", json!({"word": "hello"}))
        .await
        .unwrap();
    assert_eq!(learned.value["text"], "learned hello");
    // The plugin said its tools changed: the new one joins the registry.
    let mut changes = registry.subscribe();
    for _ in 0..100 {
        if registry.get("probe__say_hello").is_some() {
            break;
        }
        let _ = tokio::time::timeout(std::time::Duration::from_millis(100), changes.changed()).await;
    }
    let said = registry
        .call_async(&ws, &actor, "probe__say_hello", json!({}))
        .await
        .unwrap();
    assert_eq!(said.value["text"], "hello", "{said:?}");
    assert!(registry.get("probe__shout").is_some(), "the other tools stay");
    // Removed: its tools leave the registry, and a call of one is an unknown tool.
    assert!(host.remove("probe", &registry).await);
    assert!(registry.names().iter().all(|n| !n.starts_with("probe__")));
    assert!(
        registry
            .call_async(&ws, &actor, "probe__shout", json!({"text": "x"}))
            .await
            .is_err()
    );
}
