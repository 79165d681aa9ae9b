//! Which quire processes run which plugins, for `quire plugin list`: a host that announces itself (`quire serve`,
//! `quire mcp`, `quire chat`) keeps a small record in the cache folder, beside the plugins' own folders, rewritten
//! when its plugins change and removed when it stops. A record whose process is gone (killed) is dropped by the
//! next reader.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::PluginHost;

/// How often an announced host looks whether its plugins changed.
const EVERY: Duration = Duration::from_millis(250);

/// One quire process running plugins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostRecord {
    /// Its process.
    pub pid: u32,
    /// What it is: `quire serve`, `quire mcp`, `quire chat`.
    pub role: String,
    /// Its plugins, by name.
    pub plugins: Vec<RunningPlugin>,
}

/// A plugin as one process runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningPlugin {
    /// The plugin's name.
    pub name: String,
    /// `starting`, `running`, `stopped` or `failed`.
    pub state: String,
    /// The plugin's own process, while a stdio plugin runs.
    pub pid: Option<u32>,
}

/// The folder of the records.
fn records_dir() -> PathBuf {
    crate::config::plugin_dir("x")
        .parent()
        .map_or_else(std::env::temp_dir, |plugins| plugins.with_file_name("running"))
}

fn own_record() -> PathBuf {
    records_dir().join(format!("{}.json", std::process::id()))
}

impl PluginHost {
    /// Keeps this process's record up to date while the host lives (call from inside a runtime): `role` says what
    /// the process is, for people.
    pub fn announce(self: &Arc<Self>, role: &str) {
        let (host, role) = (Arc::downgrade(self), role.to_owned());
        tokio::spawn(keep_record(host, role));
    }
}

async fn keep_record(host: Weak<PluginHost>, role: String) {
    let mut written: Option<HostRecord> = None;
    loop {
        let Some(alive) = host.upgrade() else {
            withdraw();
            return;
        };
        let record = HostRecord {
            pid: std::process::id(),
            role: role.clone(),
            plugins: alive
                .statuses()
                .into_iter()
                .map(|s| RunningPlugin {
                    name: s.name,
                    state: s.state.to_owned(),
                    pid: s.pid,
                })
                .collect(),
        };
        drop(alive);
        if record.plugins.is_empty() {
            withdraw();
            written = None;
        } else if written.as_ref() != Some(&record) {
            if let Err(e) = write(&record) {
                tracing::warn!("cannot keep the record of running plugins: {e}");
            }
            written = Some(record);
        }
        tokio::time::sleep(EVERY).await;
    }
}

fn write(record: &HostRecord) -> std::io::Result<()> {
    let dir = records_dir();
    std::fs::create_dir_all(&dir)?;
    let path = own_record();
    let partial = path.with_extension("partial");
    std::fs::write(&partial, serde_json::to_vec(record).unwrap_or_default())?;
    std::fs::rename(partial, path)
}

/// Removes this process's record (its plugins stopped).
pub(crate) fn withdraw() {
    let _ = std::fs::remove_file(own_record());
}

/// The quire processes that run plugins now, by pid; records of processes that are gone are removed.
pub fn running_hosts() -> Vec<HostRecord> {
    let Ok(entries) = std::fs::read_dir(records_dir()) else {
        return Vec::new();
    };
    let mut hosts = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let record = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<HostRecord>(&bytes).ok());
        match record {
            Some(record) if is_quire(record.pid) => hosts.push(record),
            _ => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    hosts.sort_by_key(|h| h.pid);
    hosts
}

/// Whether `pid` is a live quire process (not a number the system gave to another program since).
fn is_quire(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        let program = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        String::from_utf8_lossy(program).contains("quire")
    })
}

/// Where a plugin runs now: each quire process that has it running, with the plugin's own process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunsIn {
    /// The quire process: `quire serve`, `quire mcp`, `quire chat`.
    pub role: String,
    /// Its pid.
    pub pid: u32,
    /// The plugin's state there.
    pub state: String,
    /// The plugin's own process there, while it runs.
    pub plugin_pid: Option<u32>,
}

/// Where `plugin` runs, among `hosts` (this process left out).
pub fn runs_in(hosts: &[HostRecord], plugin: &str) -> Vec<RunsIn> {
    hosts
        .iter()
        .filter(|h| h.pid != std::process::id())
        .flat_map(|h| {
            h.plugins.iter().filter(|p| p.name == plugin).map(|p| RunsIn {
                role: h.role.clone(),
                pid: h.pid,
                state: p.state.clone(),
                plugin_pid: p.pid,
            })
        })
        .collect()
}

/// Where a plugin runs, as a line of `quire plugin list`.
pub fn describe(runs: &[RunsIn]) -> String {
    if runs.is_empty() {
        return "  runs in no quire process now (this listing started it on its own)\n".to_owned();
    }
    let each: Vec<String> = runs
        .iter()
        .map(|r| {
            let own = r.plugin_pid.map(|p| format!(", its process {p}")).unwrap_or_default();
            let state = if r.state == "running" {
                String::new()
            } else {
                format!(", {}", r.state)
            };
            format!("{} (pid {}{own}{state})", r.role, r.pid)
        })
        .collect();
    format!("  runs in: {}\n", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_a_process_that_is_gone_is_dropped() {
        let dir = records_dir();
        std::fs::create_dir_all(&dir).unwrap();
        // A pid no process has (above the kernel's maximum).
        let stale = dir.join("4194305.json");
        let record = HostRecord {
            pid: 4_194_305,
            role: "quire mcp".into(),
            plugins: Vec::new(),
        };
        std::fs::write(&stale, serde_json::to_vec(&record).unwrap()).unwrap();
        assert!(running_hosts().iter().all(|h| h.pid != 4_194_305));
        assert!(!stale.exists());
    }
}
