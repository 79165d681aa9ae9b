//! Calls of a plugin in flight (issue 53). A plugin with a grant may write back into the workspace through quire's MCP
//! server while one of its calls runs, and that server may be another process. The process that calls the plugin
//! records the call here for as long as it runs ([`Workspace::begin_plugin_call`]); the server that gets a write
//! through the plugin's grant finds it ([`Workspace::plugin_call_in_flight`]) and makes the write part of the call
//! ([`Writer::join_plugin_call`]): one change set in the plugin's name, or the calling agent turn's, so that undoing
//! the call (or the turn) takes it back. Schema: `migrations/017_plugin_calls.sql`.
//!
//! The rows are bookkeeping, not workspace content: they are written outside the change log, and a row of a process
//! that is gone (killed while a call ran) is ignored and removed.

use rusqlite::{OptionalExtension, params};

use crate::entity::{Actor, Timestamp};
use crate::error::{Error, Result};
use crate::workspace::Workspace;
use crate::write::Writer;

/// A call in flight, as a server that gets the plugin's writes finds it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginCall {
    /// Its number in this workspace.
    pub id: i64,
    /// The plugin's name.
    pub plugin: String,
    /// The agent turn that called it, if one did: the plugin's writes join the turn's change set.
    pub turn: Option<Actor>,
    /// Whether the caller's writes are staged for review: the plugin's are too.
    pub staged: bool,
}

/// Held while a call runs; dropping it ends the call's record.
#[derive(Debug)]
pub struct PluginCallMark {
    ws: Workspace,
    id: i64,
}

impl PluginCallMark {
    /// The call's number.
    pub fn id(&self) -> i64 {
        self.id
    }
}

impl Drop for PluginCallMark {
    fn drop(&mut self) {
        if let Ok(conn) = self.ws.pool.get() {
            let _ = conn.execute("DELETE FROM plugin_calls WHERE id = ?1", [self.id]);
        }
    }
}

/// How long a row counts at most, whatever its process: longer than any plugin call's time limit.
const AT_MOST_MS: i64 = 24 * 3600 * 1000;

impl Workspace {
    /// Records that `caller` is calling `plugin` (its writes staged when `staged`), until the mark is dropped.
    pub fn begin_plugin_call(&self, plugin: &str, caller: &Actor, staged: bool) -> Result<PluginCallMark> {
        let conn = self.pool.get()?;
        let (turn_chat, turn) = match caller {
            Actor::Agent { chat, turn } => (Some(chat.as_str()), Some(*turn)),
            _ => (None, None),
        };
        let now = Timestamp::now().0;
        // Rows of processes that are gone, and old ones, go first.
        conn.execute("DELETE FROM plugin_calls WHERE started <= ?1", [now - AT_MOST_MS])?;
        let rows: Vec<(i64, i64, Option<i64>)> = {
            let mut stmt = conn.prepare_cached("SELECT id, pid, pid_start FROM plugin_calls")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        for (id, pid, pid_start) in rows {
            if !alive(pid, pid_start) {
                conn.execute("DELETE FROM plugin_calls WHERE id = ?1", [id])?;
            }
        }
        let pid = std::process::id();
        conn.execute(
            "INSERT INTO plugin_calls (plugin, pid, pid_start, started, turn_chat, turn, staged) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![plugin, pid, process_start(i64::from(pid)), now, turn_chat, turn, staged],
        )?;
        Ok(PluginCallMark {
            ws: self.clone(),
            id: conn.last_insert_rowid(),
        })
    }

    /// The call of `plugin` in flight, of a process that still runs: a staged one first (two calls at once cannot
    /// be told apart, since the plugin's requests do not say which call they serve: its writes then wait for review
    /// rather than risk skipping it), else the newest.
    pub fn plugin_call_in_flight(&self, plugin: &str) -> Result<Option<PluginCall>> {
        let conn = self.pool.get()?;
        let mut stmt = conn.prepare_cached(
            "SELECT id, pid, pid_start, turn_chat, turn, staged FROM plugin_calls WHERE plugin = ?1 AND started > ?2 \
             ORDER BY staged DESC, started DESC, id DESC",
        )?;
        let since = Timestamp::now().0 - AT_MOST_MS;
        let rows = stmt.query_map(params![plugin, since], |r| {
            let turn = match (r.get::<_, Option<String>>(3)?, r.get::<_, Option<u32>>(4)?) {
                (Some(chat), Some(turn)) => Some(Actor::Agent { chat, turn }),
                _ => None,
            };
            Ok((
                (r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?),
                PluginCall {
                    id: r.get(0)?,
                    plugin: plugin.to_owned(),
                    turn,
                    staged: r.get(5)?,
                },
            ))
        })?;
        for row in rows {
            let ((pid, pid_start), call) = row?;
            if alive(pid, pid_start) {
                return Ok(Some(call));
            }
        }
        Ok(None)
    }
}

impl Writer<'_> {
    /// Makes the rest of this transaction part of `call`: the calling turn's change set, or the call's own (its
    /// first write makes it; [`Writer::keep_plugin_call`] records it for the next). Only the plugin writes so; a call
    /// that ended meanwhile is joined no more (the write then stands alone).
    pub fn join_plugin_call(&mut self, call: &PluginCall) -> Result<()> {
        if *self.actor
            != (Actor::Plugin {
                id: call.plugin.clone(),
            })
        {
            return Err(Error::UserOnly("write as part of another actor's plugin call"));
        }
        let row: Option<Option<String>> = self
            .conn
            .query_row("SELECT change_set FROM plugin_calls WHERE id = ?1", [call.id], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(set) = row else { return Ok(()) };
        if let Some(turn) = &call.turn {
            self.join_turn(turn)?;
            return Ok(());
        }
        match set {
            Some(set) => self.join_change_set(&set),
            None => Ok(()),
        }
    }

    /// Records the change set this transaction wrote in as `call`'s, for its later writes (after the call's first).
    pub fn keep_plugin_call(&mut self, call: &PluginCall) -> Result<()> {
        if let Some(set) = self.change_set_id().map(str::to_owned) {
            self.conn.execute(
                "UPDATE plugin_calls SET change_set = ?2 WHERE id = ?1 AND change_set IS NULL",
                params![call.id, set],
            )?;
        }
        Ok(())
    }
}

/// Whether process `pid`, started at `start`, still runs (where `/proc` tells; elsewhere every process counts as
/// running, and the age limit alone ends a row).
pub(crate) fn alive(pid: i64, start: Option<i64>) -> bool {
    if !std::path::Path::new("/proc/self/stat").exists() {
        return true;
    }
    match (process_start(pid), start) {
        (Some(now), Some(then)) => now == then,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// When process `pid` started (in clock ticks since boot: `/proc/PID/stat`'s 22nd field), where `/proc` tells.
pub(crate) fn process_start(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command (field 2) is in parentheses and may hold spaces: count from the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NewNote;

    #[test]
    fn a_plugins_writes_during_a_call_are_one_change_set_in_its_name_and_the_call_ends_with_its_mark() {
        let ws = Workspace::open_in_memory().unwrap();
        let caller = Actor::Mcp {
            client: "Claude".into(),
        };
        let mark = ws.begin_plugin_call("weather", &caller, false).unwrap();
        let call = ws.plugin_call_in_flight("weather").unwrap().unwrap();
        assert_eq!((call.id, call.staged, call.turn.clone()), (mark.id(), false, None));
        assert_eq!(ws.plugin_call_in_flight("mail").unwrap(), None);
        let plugin = Actor::Plugin { id: "weather".into() };
        let mut sets = Vec::new();
        for title in ["Lyon", "Paris"] {
            let set = ws
                .write(&plugin, |w| {
                    w.join_plugin_call(&call)?;
                    w.create_note(NewNote::new(title, "rain"))?;
                    w.keep_plugin_call(&call)?;
                    Ok::<_, Error>(w.change_set_id().map(str::to_owned))
                })
                .unwrap();
            sets.push(set.unwrap());
        }
        assert_eq!(sets[0], sets[1], "one change set for the call");
        // Another actor cannot write as part of the call.
        let other = ws.write(&Actor::Mcp { client: "x".into() }, |w| w.join_plugin_call(&call));
        assert!(matches!(other, Err(Error::UserOnly(_))), "{other:?}");
        drop(mark);
        assert_eq!(ws.plugin_call_in_flight("weather").unwrap(), None);
    }

    #[test]
    fn a_staged_call_comes_first_and_a_write_after_the_call_ended_stands_alone() {
        let ws = Workspace::open_in_memory().unwrap();
        let staged = ws
            .begin_plugin_call("weather", &Actor::Mcp { client: "a".into() }, true)
            .unwrap();
        let _newer = ws
            .begin_plugin_call("weather", &Actor::Mcp { client: "b".into() }, false)
            .unwrap();
        let call = ws.plugin_call_in_flight("weather").unwrap().unwrap();
        assert_eq!(
            (call.id, call.staged),
            (staged.id(), true),
            "staged wins: review is never skipped"
        );
        drop(staged);
        let plugin = Actor::Plugin { id: "weather".into() };
        let ended = PluginCall { id: 999, ..call };
        let set = ws
            .write(&plugin, |w| {
                w.join_plugin_call(&ended)?;
                w.create_note(NewNote::new("Alone", ""))?;
                Ok::<_, Error>(w.change_set_id().map(str::to_owned))
            })
            .unwrap();
        assert!(set.is_some(), "the write stands alone in a change set of its own");
    }

    /// A call of the plugin `weather` recorded by process `pid` (started at `start`).
    fn recorded_by(ws: &Workspace, pid: i64, start: Option<i64>) {
        let conn = ws.pool.get().unwrap();
        conn.execute(
            "INSERT INTO plugin_calls (plugin, pid, pid_start, started, staged) VALUES ('weather', ?1, ?2, ?3, 0)",
            params![pid, start, Timestamp::now().0],
        )
        .unwrap();
    }

    #[test]
    fn a_number_given_to_another_process_does_not_keep_a_call() {
        let ws = Workspace::open_in_memory().unwrap();
        // This process's pid, with another start time: the caller is gone and its number was reused.
        recorded_by(&ws, i64::from(std::process::id()), Some(-1));
        assert_eq!(ws.plugin_call_in_flight("weather").unwrap(), None);
    }

    #[test]
    fn a_call_of_a_process_that_is_gone_is_not_in_flight() {
        let ws = Workspace::open_in_memory().unwrap();
        // A pid no process has (above the kernel's maximum).
        recorded_by(&ws, 4_194_305, None);
        assert_eq!(ws.plugin_call_in_flight("weather").unwrap(), None);
        let _mark = ws.begin_plugin_call("mail", &Actor::User, true).unwrap();
        let left: i64 = ws
            .pool
            .get()
            .unwrap()
            .query_row("SELECT count(*) FROM plugin_calls WHERE plugin = 'weather'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(left, 0, "a new call removes the rows of processes that are gone");
    }
}
