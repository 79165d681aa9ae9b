//! The components that run beside a server (`quire serve`, `quire mcp`): the indexer that keeps search by meaning
//! caught up, the sync loop, and the plugins. They start together and stop when [`Background`] is dropped; each has
//! one status, which says whether it runs and, when it does not, why.

use std::sync::Arc;
use std::time::Duration;

use quire_core::{Indexer, Workspace};
use quire_plugins::PluginHost;
use quire_sync::background::{BackgroundSync, SyncPhase, SyncState};
use quire_tools::ToolRegistry;
use serde::Serialize;

/// How often the indexer looks for notes to embed.
const INDEX_INTERVAL: Duration = Duration::from_millis(500);

/// Whether a component runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Not started: not asked for, or nothing to do (a workspace that does not sync).
    Off,
    /// Running.
    Running,
    /// Running, and its last attempt failed; it tries again.
    Failing,
}

/// One component's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    /// `indexer`, `sync` or `plugins`.
    pub name: &'static str,
    /// Whether it runs.
    pub state: State,
    /// What it does now, or why it is off or failing.
    pub detail: String,
}

/// Which components to start.
#[derive(Debug, Clone, Default)]
pub struct Components {
    /// The indexer.
    pub indexer: bool,
    /// The sync loop, syncing every `interval` (when the workspace syncs).
    pub sync: Option<Duration>,
    /// The configured plugins, whose tools join this registry as each comes up.
    pub plugins: Option<Arc<ToolRegistry>>,
    /// Only the plugins offered to MCP clients (`quire mcp`; not those set to `expose = "sidebar"`).
    pub plugins_for_clients: bool,
    /// The automations' scheduler (their models use the plugins' registry, or the built-in tools).
    pub automations: bool,
    /// The reading of attachments' text (PDF pages, OCR with Tesseract when it is given).
    pub capture: Option<Option<quire_capture::Ocr>>,
}

/// The running components; dropping it stops them.
#[derive(Default)]
pub struct Background {
    indexer: Option<Indexer>,
    sync: Option<BackgroundSync>,
    plugins: Option<Arc<PluginHost>>,
    /// How many plugins were configured at the start (before each is kept by the host).
    plugins_configured: usize,
    automations: Option<crate::automations::scheduler::Scheduler>,
    capture: Option<quire_capture::background::Reading>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background")
            .field("statuses", &self.statuses())
            .finish()
    }
}

impl Background {
    /// Starts `components` for `ws`. Plugins start on `runtime` without being waited for (a server answers at once);
    /// a configuration that cannot be read is an error now.
    pub fn start(
        ws: &Workspace,
        components: Components,
        runtime: &tokio::runtime::Handle,
    ) -> anyhow::Result<Background> {
        let (plugins, plugins_configured) = match &components.plugins {
            Some(registry) => {
                let (host, configured) =
                    crate::plugins::start_in_background(runtime, ws, registry, components.plugins_for_clients)?;
                (Some(host), configured)
            }
            None => (None, 0),
        };
        let automations = components.automations.then(|| {
            let registry = components
                .plugins
                .clone()
                .unwrap_or_else(|| Arc::new(ToolRegistry::builtin()));
            crate::automations::scheduler::Scheduler::start(ws, registry, runtime)
        });
        let capture = match components.capture {
            Some(ocr) => Some(quire_capture::background::Reading::start(ws, ocr)?),
            None => None,
        };
        Ok(Background {
            automations,
            capture,
            indexer: components.indexer.then(|| ws.spawn_indexer(INDEX_INTERVAL)),
            sync: components
                .sync
                .and_then(|interval| quire_sync::background::start(ws, interval)),
            plugins,
            plugins_configured,
        })
    }

    /// The sync loop's state, when it runs.
    pub fn sync(&self) -> Option<Arc<SyncState>> {
        self.sync.as_ref().map(BackgroundSync::control)
    }

    /// The plugins' host, when plugins were started.
    pub fn plugins(&self) -> Option<&Arc<PluginHost>> {
        self.plugins.as_ref()
    }

    /// Each component's status.
    pub fn statuses(&self) -> Vec<Status> {
        self.source().statuses()
    }

    /// Tells a person at the terminal (standard error) what runs beside the server, once now and then whenever a
    /// component starts failing or recovers, so that a sync that went offline or a plugin that crashed is seen
    /// without opening the page. Checked every [`REPORT_EVERY`] on `runtime`, until the returned guard is dropped.
    pub fn report_changes(&self, runtime: tokio::runtime::Handle) -> Reporting {
        let source = self.source();
        Reporting(runtime.spawn(async move {
            let mut told: Vec<(State, String)> = Vec::new();
            loop {
                let statuses = source.statuses();
                let now: Vec<(State, String)> = statuses.iter().map(Status::told).collect();
                if told.is_empty() {
                    let running: Vec<String> = statuses
                        .iter()
                        .filter(|s| s.state != State::Off)
                        .map(|s| format!("{} ({})", s.name, s.detail))
                        .collect();
                    if !running.is_empty() {
                        eprintln!("Beside the server: {}.", running.join("; "));
                    }
                } else {
                    for (status, before) in statuses.iter().zip(&told) {
                        if status.told() != *before {
                            eprintln!("{}", status.sentence());
                        }
                    }
                }
                told = now;
                tokio::time::sleep(REPORT_EVERY).await;
            }
        }))
    }

    fn source(&self) -> Source {
        Source {
            indexer: self.indexer.is_some(),
            sync: self.sync(),
            plugins: self.plugins.clone(),
            plugins_configured: self.plugins_configured,
            automations: self
                .automations
                .as_ref()
                .map(crate::automations::scheduler::Scheduler::shared_view),
            capture: self
                .capture
                .as_ref()
                .map(quire_capture::background::Reading::shared_view),
        }
    }
}

/// How often [`Background::report_changes`] looks.
pub const REPORT_EVERY: Duration = Duration::from_secs(1);

/// Stops [`Background::report_changes`] when dropped.
#[derive(Debug)]
pub struct Reporting(tokio::task::JoinHandle<()>);

impl Drop for Reporting {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Status {
    /// What a change is told for: its state, and why when it fails (a running sync's phase changes every tick).
    fn told(&self) -> (State, String) {
        let why = if self.state == State::Failing {
            self.detail.clone()
        } else {
            String::new()
        };
        (self.state, why)
    }

    /// The status as a line for the terminal.
    pub fn sentence(&self) -> String {
        match self.state {
            State::Off => format!("{} stopped ({}).", self.name, self.detail),
            State::Running => format!("{} runs ({}).", self.name, self.detail),
            State::Failing => format!("{} is failing: {}. It tries again.", self.name, self.detail),
        }
    }
}

/// What the statuses are read from: shared with the reporting task.
struct Source {
    indexer: bool,
    sync: Option<Arc<SyncState>>,
    plugins: Option<Arc<PluginHost>>,
    plugins_configured: usize,
    automations: Option<Arc<std::sync::Mutex<crate::automations::scheduler::SchedulerView>>>,
    capture: Option<Arc<std::sync::Mutex<quire_capture::background::ReadingView>>>,
}

impl Source {
    fn statuses(&self) -> Vec<Status> {
        let indexer = Status {
            name: "indexer",
            state: if self.indexer { State::Running } else { State::Off },
            detail: if self.indexer {
                "keeps search by meaning caught up"
            } else {
                "not started"
            }
            .into(),
        };
        let sync = match &self.sync {
            None => Status {
                name: "sync",
                state: State::Off,
                detail: "this workspace does not sync, or sync was not asked for".into(),
            },
            // The loop runs, for a sync set up later (in a terminal, or in the web page's Settings).
            Some(state) if state.view().phase == SyncPhase::Off => Status {
                name: "sync",
                state: State::Off,
                detail: "this workspace does not sync yet; it starts once set up (quire sync init, or Settings)".into(),
            },
            Some(state) => {
                let view = state.view();
                let failing = matches!(view.phase, SyncPhase::Offline | SyncPhase::Error);
                Status {
                    name: "sync",
                    state: if failing { State::Failing } else { State::Running },
                    detail: view
                        .reason
                        .unwrap_or_else(|| format!("{:?}", view.phase).to_lowercase()),
                }
            }
        };
        let plugins = match &self.plugins {
            None => Status {
                name: "plugins",
                state: State::Off,
                detail: "not started".into(),
            },
            Some(host) => {
                let statuses = host.statuses();
                let failed: Vec<String> = statuses
                    .iter()
                    .filter(|s| s.state == "failed")
                    .map(|s| format!("{}: {}", s.name, s.error.clone().unwrap_or_default()))
                    .collect();
                Status {
                    name: "plugins",
                    state: if failed.is_empty() {
                        State::Running
                    } else {
                        State::Failing
                    },
                    detail: if failed.is_empty() {
                        format!("{} configured", statuses.len().max(self.plugins_configured))
                    } else {
                        failed.join("; ")
                    },
                }
            }
        };
        let automations = match &self.automations {
            None => Status {
                name: "automations",
                state: State::Off,
                detail: "not started".into(),
            },
            Some(view) => {
                let view = view.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let mut problems = view.failing.clone();
                problems.extend(view.config_error.clone());
                Status {
                    name: "automations",
                    state: if problems.is_empty() {
                        State::Running
                    } else {
                        State::Failing
                    },
                    detail: if problems.is_empty() {
                        format!("{} on a schedule or trigger", view.active)
                    } else {
                        problems.join("; ")
                    },
                }
            }
        };
        let capture = match &self.capture {
            None => Status {
                name: "capture",
                state: State::Off,
                detail: "not started".into(),
            },
            Some(view) => capture_status(&view.lock().unwrap_or_else(|e| e.into_inner())),
        };
        vec![indexer, sync, plugins, automations, capture]
    }
}

/// The reading of attachments' text as a status: failing only when the workspace could not be read or written; a
/// missing Tesseract is said, not failed (quire runs without it).
fn capture_status(view: &quire_capture::background::ReadingView) -> Status {
    let (state, detail) = match (&view.error, &view.now) {
        (Some(error), _) => (State::Failing, error.clone()),
        (None, Some((title, done, total))) => (State::Running, format!("reading {title} ({} of {total})", done + 1)),
        (None, None) if view.waiting_for_ocr > 0 && !view.ocr => (
            State::Running,
            format!(
                "{} image(s) or scan(s) wait for Tesseract: install it (`apt-get install tesseract-ocr`) and restart",
                view.waiting_for_ocr
            ),
        ),
        (None, None) => (
            State::Running,
            format!(
                "reads attachments' text{}",
                if view.ocr {
                    ", OCR with Tesseract"
                } else {
                    " (no OCR: Tesseract is not installed)"
                }
            ),
        ),
    };
    Status {
        name: "capture",
        state,
        detail,
    }
}

/// What runs beside `quire mcp`: the indexer, the sync loop and the plugins, whose tools join `tools`; a plugin added
/// or removed in a terminal (`quire plugin add`) reaches the server and its clients while this lives.
pub struct BesideMcp {
    /// The components, with their statuses.
    pub background: Background,
    /// Followed while the server runs.
    managed: Option<Arc<quire_plugins::Plugins>>,
}

impl BesideMcp {
    /// Starts them for `ws` on `runtime`, the automations' scheduler too when `automations` (not for the server an
    /// agent starts for itself).
    pub fn start(
        ws: &Workspace,
        tools: &Arc<ToolRegistry>,
        runtime: &tokio::runtime::Handle,
        automations: bool,
    ) -> anyhow::Result<BesideMcp> {
        let components = Components {
            indexer: true,
            sync: Some(crate::settings::sync_interval()?),
            plugins: Some(tools.clone()),
            plugins_for_clients: true,
            automations,
            capture: Some(crate::settings::capture()?.ocr()),
        };
        let background = Background::start(ws, components, runtime)?;
        let managed = match background.plugins() {
            Some(host) => {
                let _entered = runtime.enter();
                host.announce("quire mcp");
                let managed = Arc::new(crate::plugins::managed(ws, host.clone(), tools.clone())?.for_clients());
                managed.follow_config(Duration::from_secs(2));
                Some(managed)
            }
            None => None,
        };
        Ok(BesideMcp { background, managed })
    }

    /// Stops the plugins (their processes end) and the rest.
    pub async fn stop(self) {
        if let Some(host) = self.background.plugins() {
            host.shutdown().await;
        }
        drop(self.managed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_component_says_whether_it_runs() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ws = Workspace::open_in_memory().unwrap();
        let none = Background::start(&ws, Components::default(), runtime.handle()).unwrap();
        assert!(none.statuses().iter().all(|s| s.state == State::Off), "{none:?}");
        let components = Components {
            indexer: true,
            sync: Some(Duration::from_secs(30)),
            plugins: None,
            plugins_for_clients: false,
            automations: false,
            capture: Some(None),
        };
        let running = Background::start(&ws, components, runtime.handle()).unwrap();
        assert_eq!(
            running.statuses()[0].sentence(),
            "indexer runs (keeps search by meaning caught up)."
        );
        let statuses = running.statuses();
        assert_eq!(statuses[0].state, State::Running, "the indexer runs");
        assert_eq!(
            statuses[1].state,
            State::Off,
            "a workspace that does not sync yet is not told as syncing"
        );
        // Its loop runs all the same, for a sync set up later (ux-2 #3).
        assert!(running.sync().is_some());
        let capture = statuses.iter().find(|s| s.name == "capture").unwrap();
        assert_eq!(capture.state, State::Running);
        assert!(capture.detail.contains("Tesseract is not installed"), "{capture:?}");
    }

    #[test]
    fn a_failure_is_told_with_why_and_a_running_phase_is_not() {
        let failing = Status {
            name: "sync",
            state: State::Failing,
            detail: "the server cannot be reached".into(),
        };
        assert_eq!(
            failing.sentence(),
            "sync is failing: the server cannot be reached. It tries again."
        );
        let idle = Status {
            name: "sync",
            state: State::Running,
            detail: "idle".into(),
        };
        let syncing = Status {
            detail: "syncing".into(),
            ..idle.clone()
        };
        assert_eq!(idle.told(), syncing.told(), "a phase change is not news");
        assert_ne!(idle.told(), failing.told());
    }
}
