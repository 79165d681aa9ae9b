//! What a plugin tells while a call runs, passed on to whoever called: its progress reports (matched to the call by
//! the progress token quire sends with it) and its log messages (to every call of it in flight), through the
//! caller's [`CallContext`] (the sidebar's agent, an MCP client).

use std::sync::{Arc, Mutex};

use quire_tools::{CallContext, LogLevel, Progress};

/// The calls in flight of one plugin, by progress token.
#[derive(Default)]
pub(crate) struct Relay {
    calls: Mutex<Vec<(String, Arc<dyn CallContext>)>>,
    /// Reports that came before their call was opened (the token is known once the request is sent), the latest few.
    early: Mutex<Vec<(String, Progress)>>,
}

/// How many early reports are kept.
const EARLY: usize = 16;

/// A call's place in the relay; dropping it ends the call's reports.
pub(crate) struct Open {
    relay: Arc<Relay>,
    pub(crate) token: String,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.relay
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(token, _)| *token != self.token);
    }
}

impl Relay {
    /// Opens a call: what the plugin reports under `token` (the request's progress token) goes to `context`.
    pub(crate) fn open(self: &Arc<Self>, token: String, context: Arc<dyn CallContext>) -> Open {
        let early: Vec<Progress> = {
            let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
            let (mine, others): (Vec<_>, Vec<_>) = early.drain(..).partition(|(t, _)| *t == token);
            *early = others;
            mine.into_iter().map(|(_, report)| report).collect()
        };
        for report in early {
            context.progress(report);
        }
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((token.clone(), context));
        Open {
            relay: self.clone(),
            token,
        }
    }

    fn contexts(&self) -> Vec<(String, Arc<dyn CallContext>)> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// A progress report under `token`; one for no call open yet is kept a moment for it.
    pub(crate) fn progress(&self, token: &str, report: Progress) {
        match self.contexts().into_iter().find(|(t, _)| t == token) {
            Some((_, context)) => context.progress(report),
            None => {
                let mut early = self.early.lock().unwrap_or_else(|e| e.into_inner());
                if early.len() == EARLY {
                    early.remove(0);
                }
                early.push((token.to_owned(), report));
            }
        }
    }

    /// A log message of the plugin: every call of it in flight hears it.
    pub(crate) fn log(&self, level: LogLevel, message: &str) {
        for (_, context) in self.contexts() {
            context.log(level, message);
        }
    }
}
