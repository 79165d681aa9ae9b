//! Sync in the background while `quire serve` or `quire mcp` runs: soon after a change here (checked every
//! [`TICK`]), every `[sync] interval` (30 s by default) for what other devices changed, and at once when the web
//! page asks. It runs on a thread of its own, so a long apply never holds up the web server's workers. Its state
//! (synced, syncing, offline, error, with the reason) is what the web page shows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use quire_core::{Timestamp, Workspace};
use quire_sync::{Device, SyncError, TargetError};
use quire_web::{SyncControl, SyncPhase, SyncView};

/// How often the loop looks for changes made here.
const TICK: Duration = Duration::from_secs(2);

/// The loop's state, shared with the web page.
#[derive(Debug)]
pub(crate) struct Shared {
    view: Mutex<SyncView>,
    wake: Mutex<bool>,
    woken: Condvar,
    stop: AtomicBool,
}

impl SyncControl for Shared {
    fn view(&self) -> SyncView {
        self.view.lock().map_or_else(|_| SyncView::off(), |v| v.clone())
    }

    fn sync_soon(&self) {
        if let Ok(mut wake) = self.wake.lock() {
            *wake = true;
            self.woken.notify_all();
        }
    }
}

impl Shared {
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
pub(crate) struct BackgroundSync {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundSync {
    /// The state and the "sync now" of the loop, for the web page.
    pub(crate) fn control(&self) -> Arc<Shared> {
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

/// Starts the loop if the workspace syncs; `None` if it does not (or the loop cannot start: said on standard error).
pub(crate) fn start(ws: &Workspace, interval: Duration) -> Option<BackgroundSync> {
    let status = match Device::status(ws) {
        Ok(Some(status)) => status,
        Ok(None) => return None,
        Err(e) => {
            eprintln!("Sync does not run in the background: {e}");
            return None;
        }
    };
    let shared = Arc::new(Shared {
        view: Mutex::new(SyncView {
            phase: SyncPhase::Syncing,
            last_sync: status.last_sync.map(|at| Timestamp(at).to_rfc3339()),
            reason: None,
            waiting: (status.changed + status.unsent) as u64,
            target: Some(status.target.clone()),
        }),
        wake: Mutex::new(true),
        woken: Condvar::new(),
        stop: AtomicBool::new(false),
    });
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("Sync does not run in the background: {e}");
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

fn run(runtime: &tokio::runtime::Runtime, ws: &Workspace, shared: &Shared, interval: Duration) {
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
                shared.set(|v| {
                    v.phase = SyncPhase::Synced;
                    v.reason = None;
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
                let offline = matches!(
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
