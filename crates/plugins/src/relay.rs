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
    /// The plugin's questions waiting for the person now: while one waits, its calls' time limit does not run out.
    asking: std::sync::atomic::AtomicUsize,
    /// Numbers the plugin's questions, so that each has an id of its own in the turn.
    questions: std::sync::atomic::AtomicU64,
}

/// A question of the plugin waiting for the person; dropping it ends the wait.
pub(crate) struct Asking<'a>(&'a Relay);

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0.asking.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// How many early reports are kept.
const EARLY: usize = 16;

/// A call's place in the relay; dropping it ends the call's reports.
pub(crate) struct Open {
    relay: Arc<Relay>,
    pub(crate) token: String,
}

/// How long a call's reports are still passed on after its answer: rmcp hands each notification to a task of its own,
/// so the last reports of a call may be handled just after its answer, though they were sent before it.
const LATE: std::time::Duration = std::time::Duration::from_secs(2);

impl Drop for Open {
    fn drop(&mut self) {
        let (relay, token) = (self.relay.clone(), std::mem::take(&mut self.token));
        let close = move || {
            relay
                .calls
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|(open, _)| *open != token);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(LATE).await;
                    close();
                });
            }
            Err(_) => close(),
        }
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

    /// Who answers a question the plugin asks (MCP elicitation): the latest call of it in flight whose caller can
    /// ask the person. A plugin on stdio does not say which of its calls a question belongs to; one call at a time is
    /// the usual case, and the latest is the one most likely still waiting.
    pub(crate) fn asker(&self) -> Option<Arc<dyn CallContext>> {
        self.contexts()
            .into_iter()
            .rev()
            .map(|(_, context)| context)
            .find(|context| context.supports(quire_tools::ClientKind::Elicitation))
    }

    /// Marks a question of the plugin as waiting for the person until the guard is dropped; with the question's
    /// number, which makes its key.
    pub(crate) fn asking(&self) -> (Asking<'_>, u64) {
        self.asking.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let n = self.questions.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        (Asking(self), n)
    }

    /// Whether a question of the plugin waits for the person.
    pub(crate) fn is_asking(&self) -> bool {
        self.asking.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// A log message of the plugin: every call of it in flight hears it.
    pub(crate) fn log(&self, level: LogLevel, message: &str) {
        for (_, context) in self.contexts() {
            context.log(level, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use quire_tools::{CallContext, LogLevel, Progress};

    use super::Relay;

    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl CallContext for Heard {
        fn progress(&self, report: Progress) {
            self.0.lock().unwrap().push(format!("progress {}", report.progress));
        }

        fn log(&self, _: LogLevel, message: &str) {
            self.0.lock().unwrap().push(format!("log {message}"));
        }
    }

    fn report(progress: f64) -> Progress {
        Progress {
            progress,
            total: None,
            message: None,
        }
    }

    #[tokio::test]
    async fn reports_before_the_call_opens_and_just_after_its_answer_reach_it() {
        let relay = Arc::new(Relay::default());
        let heard = Arc::new(Heard::default());
        // Handled before the request's token was known here: kept for it.
        relay.progress("7", report(1.0));
        relay.progress("8", report(9.0));
        let open = relay.open("7".into(), heard.clone());
        relay.progress("7", report(2.0));
        relay.log(LogLevel::Info, "hello");
        drop(open);
        // Handled just after the answer (rmcp runs each notification in a task of its own): still passed on.
        relay.progress("7", report(3.0));
        tokio::time::sleep(super::LATE + std::time::Duration::from_millis(200)).await;
        relay.progress("7", report(4.0));
        assert_eq!(
            *heard.0.lock().unwrap(),
            ["progress 1", "progress 2", "log hello", "progress 3"],
            "another call's report and one long after the answer are not this call's"
        );
    }
}
