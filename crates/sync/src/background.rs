//! Sync in the background while `quire serve` or `quire mcp` runs: soon after a change here (checked every
//! [`TICK`]), every `[sync] interval` (30 s by default) for what other devices changed, and at once when the web
//! page asks ([`SyncState::sync_soon`]). It runs on a thread of its own, so a long apply never holds up the web
//! server's workers. Its state ([`SyncView`]: synced, syncing, offline, error, with the reason) is what the web page
//! shows; quire-host starts it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use quire_core::{Timestamp, Workspace};

use crate::{Device, SyncError, TargetError};

/// How often the loop looks for changes made here.
pub const TICK: Duration = Duration::from_secs(2);

/// Where sync stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SyncPhase {
    /// This workspace does not sync.
    Off,
    /// The last sync went through and nothing waits.
    Synced,
    /// A sync is running, or changes made here wait for the next one.
    Syncing,
    /// The target cannot be reached (a folder not mounted, a network down); sync tries again.
    Offline,
    /// The last sync failed, or refused a file; `reason` says why.
    Error,
}

/// Where the background sync stands, as the web page shows it in its top bar.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct SyncView {
    /// The state.
    pub phase: SyncPhase,
    /// When the last sync ended (RFC 3339), if one did.
    pub last_sync: Option<String>,
    /// Why it is offline or failed.
    pub reason: Option<String>,
    /// Changes made here and not sent yet.
    pub waiting: u64,
    /// The target (a folder).
    pub target: Option<String>,
}

impl SyncView {
    /// The state of a workspace that does not sync.
    pub fn off() -> SyncView {
        SyncView {
            phase: SyncPhase::Off,
            last_sync: None,
            reason: None,
            waiting: 0,
            target: None,
        }
    }
}

/// The loop's state, shared with the web page.
#[derive(Debug)]
pub struct SyncState {
    view: Mutex<SyncView>,
    wake: Mutex<bool>,
    woken: Condvar,
    stop: AtomicBool,
}

impl SyncState {
    /// The state now.
    pub fn view(&self) -> SyncView {
        self.view.lock().map_or_else(|_| SyncView::off(), |v| v.clone())
    }

    /// Sync as soon as possible (returns at once).
    pub fn sync_soon(&self) {
        if let Ok(mut wake) = self.wake.lock() {
            *wake = true;
            self.woken.notify_all();
        }
    }

    fn set(&self, change: impl FnOnce(&mut SyncView)) {
        if let Ok(mut view) = self.view.lock() {
            change(&mut view);
        }
    }

    /// Waits up to `timeout`, or until woken; returns whether it was woken.
    fn wait(&self, timeout: Duration) -> bool {
        let Ok(guard) = self.wake.lock() else {
            return false;
        };
        let Ok((mut guard, _)) = self.woken.wait_timeout_while(guard, timeout, |woken| !*woken) else {
            return false;
        };
        std::mem::take(&mut *guard)
    }
}

/// The running loop; dropping it stops the loop (after the sync in progress, if any).
pub struct BackgroundSync {
    shared: Arc<SyncState>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundSync {
    /// The state and the "sync now" of the loop, for the web page.
    pub fn control(&self) -> Arc<SyncState> {
        self.shared.clone()
    }
}

impl Drop for BackgroundSync {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.sync_soon();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Starts the loop, whether the workspace syncs yet or not: one set up later (`quire sync init` in a terminal, or
/// from the web page's Settings) is taken up at the loop's next tick, and one left stops (ux-2 #3: a server started
/// before `sync init` never synced). `None` only when the loop cannot start (said on standard error).
pub fn start(ws: &Workspace, interval: Duration) -> Option<BackgroundSync> {
    let view = match Device::status(ws) {
        Ok(Some(status)) => SyncView {
            phase: SyncPhase::Syncing,
            last_sync: status.last_sync.map(|at| Timestamp(at).to_rfc3339()),
            reason: None,
            waiting: (status.changed + status.unsent) as u64,
            target: Some(status.target.clone()),
        },
        Ok(None) => SyncView::off(),
        Err(e) => {
            tracing::warn!("sync does not run in the background: {e}");
            return None;
        }
    };
    let shared = Arc::new(SyncState {
        view: Mutex::new(view),
        wake: Mutex::new(true),
        woken: Condvar::new(),
        stop: AtomicBool::new(false),
    });
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::warn!("sync does not run in the background: {e}");
            return None;
        }
    };
    let looping = shared.clone();
    let ws = ws.clone();
    let thread = std::thread::Builder::new()
        .name("quire-sync".into())
        .spawn(move || run(&runtime, &ws, &looping, interval))
        .ok()?;
    Some(BackgroundSync {
        shared,
        thread: Some(thread),
    })
}

fn run(runtime: &tokio::runtime::Runtime, ws: &Workspace, shared: &SyncState, interval: Duration) {
    let mut device: Option<Device> = None;
    // The first round syncs at once (`wake` starts set).
    let mut last_try: Option<Instant> = None;
    let mut failing = false;
    let mut waiting_before = 0;
    loop {
        let woken = shared.wait(TICK);
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let waiting = match Device::status(ws) {
            Ok(Some(status)) => {
                // Left and joined again (perhaps elsewhere) meanwhile: the device is opened afresh.
                if device.as_ref().is_some_and(|d| d.id() != status.device) {
                    device = None;
                }
                (status.changed + status.unsent) as u64
            }
            // `quire sync leave` ran meanwhile.
            Ok(None) => {
                shared.set(|v| *v = SyncView::off());
                device = None;
                continue;
            }
            Err(_) => 0,
        };
        shared.set(|v| v.waiting = waiting);
        let interval_over = last_try.is_none_or(|at| at.elapsed() >= interval);
        // Changes here go once they stop coming for a tick (typing makes a batch per pause, not one per tick); after
        // a failure they wait for the interval too (no retry every tick against a broken target).
        let settled = waiting > 0 && waiting == waiting_before;
        waiting_before = waiting;
        let due = woken || interval_over || (settled && !failing);
        if !due {
            continue;
        }
        last_try = Some(Instant::now());
        shared.set(|v| v.phase = SyncPhase::Syncing);
        let outcome = runtime.block_on(async {
            if device.is_none() {
                // While the target is away, a note sealed here still leaves the unsent batches at once.
                Device::scrub_outbox(ws)?;
                device = Device::open(ws.clone()).await?;
            }
            match &device {
                Some(device) => device.sync().await.map(Some),
                None => Ok(None),
            }
        });
        match outcome {
            Ok(Some(report)) if report.refused.is_empty() => {
                failing = false;
                // Synced, but another device's changes may wait for a file that is not on the target: said.
                let reason = report.gaps.iter().map(|g| format!("Waiting: {g}.")).collect::<Vec<_>>();
                shared.set(|v| {
                    v.phase = SyncPhase::Synced;
                    v.reason = (!reason.is_empty()).then(|| reason.join("\n"));
                    v.last_sync = Some(Timestamp::now().to_rfc3339());
                    v.waiting = 0;
                });
            }
            Ok(Some(report)) => {
                failing = true;
                waiting_before = 0;
                shared.set(|v| {
                    v.phase = SyncPhase::Error;
                    v.reason = Some(report.refused.join("\n"));
                    v.last_sync = Some(Timestamp::now().to_rfc3339());
                });
            }
            Ok(None) => shared.set(|v| *v = SyncView::off()),
            Err(error) => {
                failing = true;
                // Offline: the place cannot be reached or is not there now. Anything else is a problem to fix.
                let offline = !error.is_refused()
                    && matches!(
                        error,
                        SyncError::Target(
                            TargetError::Storage { .. }
                                | TargetError::NoFolder(_)
                                | TargetError::NotAFolder(_)
                                | TargetError::Folder { .. }
                                | TargetError::NotATarget(_)
                        )
                    );
                if offline {
                    // Opened again next time: the folder may come back (a disk mounted again).
                    device = None;
                }
                shared.set(|v| {
                    v.phase = if offline { SyncPhase::Offline } else { SyncPhase::Error };
                    v.reason = Some(error.to_string());
                });
            }
        }
    }
}
