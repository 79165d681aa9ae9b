//! A stdio plugin as an operating-system process: what quire does so that it cannot reach quire's secrets, cannot
//! grow quire's memory through its standard error, and leaves nothing running when it is stopped.

use std::collections::{BTreeMap, BTreeSet};

use tokio::io::AsyncReadExt;

use super::session::StderrTail;

/// How many of a plugin's last standard-error lines its status keeps.
const STDERR_LINES: usize = 20;
/// The most bytes of one standard-error line kept; the rest, up to the next newline, is dropped unread into memory.
pub(crate) const STDERR_LINE_BYTES: usize = 4096;

/// Makes quire's own process unreadable to other processes of the same user (`PR_SET_DUMPABLE` 0), before it starts
/// a plugin: a plugin could otherwise read quire's environment (`/proc/<quire>/environ`, where an API key or a
/// storage password may be) or its memory (`/proc/<quire>/mem`). It also turns off core dumps, which would write
/// those secrets to disk. A process with the system's debugging privilege (root) still can.
pub(crate) fn harden() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if let Err(e) = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable) {
                tracing::warn!("quire's process could not be made unreadable to its plugins: {e}");
            }
        });
    }
}

/// Cuts a byte stream into lines of at most [`STDERR_LINE_BYTES`], however long a line is (a plugin that writes
/// gigabytes without a newline holds quire to one cut line).
#[derive(Default)]
pub(crate) struct Lines {
    line: Vec<u8>,
    cut: bool,
}

impl Lines {
    /// The lines that `bytes` ends; the start of an unfinished one is kept, up to the limit.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut done = Vec::new();
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let room = STDERR_LINE_BYTES.saturating_sub(self.line.len());
            self.cut |= body.len() > room;
            self.line.extend_from_slice(&body[..body.len().min(room)]);
            if ends {
                done.push(self.take());
            }
        }
        done
    }

    /// The unfinished line, if any (the stream ended without a newline).
    pub(crate) fn rest(&mut self) -> Option<String> {
        (!self.line.is_empty() || self.cut).then(|| self.take())
    }

    fn take(&mut self) -> String {
        let mut text = String::from_utf8_lossy(&self.line).into_owned();
        if std::mem::take(&mut self.cut) {
            text.push_str(" … (cut: the line was longer than 4 KiB)");
        }
        self.line.clear();
        text
    }

    /// Bytes held for the unfinished line.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.line.capacity()
    }
}

/// Copies a plugin's standard error to the log, line by line, keeping the last lines for its status.
pub(crate) async fn log_stderr(name: String, mut stderr: tokio::process::ChildStderr, tail: StderrTail) {
    let mut lines = Lines::default();
    let mut chunk = vec![0u8; 8192];
    loop {
        let read = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for line in lines.feed(&chunk[..read]) {
            keep(&name, &tail, line);
        }
    }
    if let Some(line) = lines.rest() {
        keep(&name, &tail, line);
    }
}

fn keep(name: &str, tail: &StderrTail, line: String) {
    tracing::info!(target: "quire::plugin", plugin = %name, "{line}");
    let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
    if tail.len() == STDERR_LINES {
        tail.pop_front();
    }
    tail.push_back(line.chars().take(500).collect());
}

/// Kills a plugin: its process group, and every process descended from its leader, also those that left the group
/// (`setsid`), which a group kill misses. A process whose parent ended before this look was handed to the system
/// and is not found (README "Plugins" says so).
pub(crate) fn kill_tree(leader: Option<u32>) {
    #[cfg(unix)]
    if let Some(leader) = leader.and_then(|id| i32::try_from(id).ok()) {
        let below = descendants(leader, &parents());
        if let Some(pid) = rustix::process::Pid::from_raw(leader) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        for pid in below.into_iter().filter_map(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Each running process's parent, from `/proc` (empty where there is none).
fn parents() -> BTreeMap<i32, i32> {
    let mut parents = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return parents;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(parent) = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .as_deref()
            .and_then(parent_in_stat)
        {
            parents.insert(pid, parent);
        }
    }
    parents
}

/// The parent's pid in a `/proc/<pid>/stat` line: the fourth field, counted after the command's closing
/// parenthesis (a command name may hold spaces and parentheses).
fn parent_in_stat(stat: &str) -> Option<i32> {
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Every process below `root` in `parents`.
fn descendants(root: i32, parents: &BTreeMap<i32, i32>) -> BTreeSet<i32> {
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (&pid, _) in parents.iter().filter(|(_, p)| **p == parent) {
            if found.insert(pid) {
                frontier.push(pid);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Security finding 2-#6: 1,200 MB of standard error without a newline took quire to 1,229 MiB. The line is
    /// cut at 4 KiB and what follows is dropped until the newline.
    #[test]
    fn a_line_without_end_holds_no_more_than_its_limit() {
        let mut lines = Lines::default();
        let megabyte = vec![b'E'; 1 << 20];
        for _ in 0..64 {
            assert!(lines.feed(&megabyte).is_empty());
            assert!(lines.held() <= 2 * STDERR_LINE_BYTES, "{}", lines.held());
        }
        let done = lines.feed(b"EEE\nnext line\nstart of ");
        assert_eq!(done.len(), 2);
        assert!(
            done[0].starts_with(&"E".repeat(STDERR_LINE_BYTES)),
            "{}",
            &done[0][..20]
        );
        assert!(done[0].ends_with("(cut: the line was longer than 4 KiB)"));
        assert!(done[0].len() < STDERR_LINE_BYTES + 100);
        assert_eq!(done[1], "next line");
        assert_eq!(lines.feed(b"a line\n"), vec!["start of a line"]);
        assert_eq!(lines.rest(), None);
        lines.feed(b"unfinished");
        assert_eq!(lines.rest().as_deref(), Some("unfinished"));
    }

    #[test]
    fn a_process_tree_is_found_from_proc_stat_lines() {
        assert_eq!(parent_in_stat("12 (sleep) S 7 12 12 0"), Some(7));
        assert_eq!(parent_in_stat("13 (a (b) c) S 9 13"), Some(9));
        assert_eq!(parent_in_stat("garbage"), None);
        let parents = BTreeMap::from([(2, 1), (3, 2), (4, 3), (5, 1), (6, 4)]);
        assert_eq!(descendants(2, &parents), BTreeSet::from([3, 4, 6]));
        assert!(descendants(6, &parents).is_empty());
    }

    /// A child that left the group with `setsid` is found and killed with its plugin.
    #[test]
    fn a_detached_child_is_killed_with_its_plugin() {
        use std::os::unix::process::CommandExt;
        let mut plugin = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 300 & sleep 300 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let leader = plugin.id() as i32;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let children = loop {
            let found = descendants(leader, &parents());
            if found.len() >= 2 || std::time::Instant::now() > until {
                break found;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(children.len(), 2, "{children:?}");
        kill_tree(Some(plugin.id()));
        let _ = plugin.wait();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while children.iter().any(|pid| alive(*pid)) {
            assert!(std::time::Instant::now() < until, "a child was left running");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Running, as opposed to gone or a zombie waiting for its parent.
    fn alive(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(')')
                    .map(|(_, after)| after.trim_start().starts_with('Z'))
            })
            .is_some_and(|zombie| !zombie)
    }
}
