//! The unlock period: the workspace key the person unlocked with the passphrase, held in memory while it is used, and
//! dropped (its bytes zeroed by `Unlocked`'s own drop) once no request has used it for the timeout. Unlock attempts
//! run one at a time, and a wrong passphrase answers only after a delay that doubles with each wrong one in a row.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use quire_core::seal::Unlocked;

/// How long the first wrong passphrase in a row waits before it is answered; each next one waits twice as long.
const WRONG_DELAY: Duration = Duration::from_millis(500);
/// The longest such wait.
const MAX_WRONG_DELAY: Duration = Duration::from_secs(8);

/// The key, when the workspace is unlocked.
struct Held {
    key: Arc<Unlocked>,
    /// When a request last used it: wall-clock time, so that a machine asleep (a laptop's lid closed) counts as
    /// time unused; a clock set back counts as the period over.
    used: SystemTime,
    /// Which unlock this is: the expiry task of an earlier one leaves a later one alone.
    generation: u64,
}

#[derive(Default)]
struct Slot {
    held: Option<Held>,
    generations: u64,
}

impl Slot {
    /// Drops the key when its period ran out.
    fn expire(&mut self, timeout: Duration) {
        if self.held.as_ref().is_some_and(|h| idle(h.used) >= timeout) {
            self.held = None;
            tracing::info!("the unlock period ended; sealed notes are locked again");
        }
    }
}

/// The unlock state of one web app.
pub(crate) struct Lock {
    timeout: Duration,
    slot: Arc<Mutex<Slot>>,
    /// One unlock attempt at a time; the number of wrong passphrases in a row.
    attempts: tokio::sync::Mutex<u32>,
    /// A passphrase is set on the workspace (once it is, it stays set: only then is this remembered).
    initialized: AtomicBool,
}

impl Lock {
    pub(crate) fn new(timeout: Duration) -> Lock {
        Lock {
            timeout,
            slot: Arc::new(Mutex::new(Slot::default())),
            attempts: tokio::sync::Mutex::new(0),
            initialized: AtomicBool::new(false),
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The period of inactivity after which the key is dropped.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The key, for a request that reads or writes note content: using it starts the period again. `None` when
    /// locked (or the period ran out: the key is dropped now).
    pub(crate) fn key(&self) -> Option<Arc<Unlocked>> {
        let mut slot = self.slot();
        slot.expire(self.timeout);
        let held = slot.held.as_mut()?;
        held.used = SystemTime::now();
        Some(held.key.clone())
    }

    /// How long the key stays if nothing uses it; `None` when locked. Looking does not count as using it.
    pub(crate) fn time_left(&self) -> Option<Duration> {
        let mut slot = self.slot();
        slot.expire(self.timeout);
        slot.held.as_ref().map(|h| self.timeout.saturating_sub(idle(h.used)))
    }

    /// Holds `key` from now on (replacing any key held), and drops it once unused for the timeout.
    pub(crate) fn hold(&self, key: Unlocked) {
        let generation = {
            let mut slot = self.slot();
            slot.generations += 1;
            let generation = slot.generations;
            slot.held = Some(Held {
                key: Arc::new(key),
                used: SystemTime::now(),
                generation,
            });
            generation
        };
        self.initialized.store(true, Ordering::Relaxed);
        tokio::spawn(expire_later(Arc::downgrade(&self.slot), self.timeout, generation));
    }

    /// Drops the key now (the Lock button). Requests in flight that took it finish with it.
    pub(crate) fn drop_key(&self) {
        self.slot().held = None;
    }

    /// Whether a passphrase is known to be set (remembered once seen).
    pub(crate) fn known_initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }

    pub(crate) fn remember_initialized(&self) {
        self.initialized.store(true, Ordering::Relaxed);
    }

    /// Waits for the other attempts, then gives the count of wrong passphrases in a row to update.
    pub(crate) async fn attempt(&self) -> tokio::sync::MutexGuard<'_, u32> {
        self.attempts.lock().await
    }
}

/// How long the answer to the `wrong`th wrong passphrase in a row waits.
pub(crate) fn wrong_delay(wrong: u32) -> Duration {
    let doubled = WRONG_DELAY.saturating_mul(1u32 << wrong.saturating_sub(1).min(8));
    doubled.min(MAX_WRONG_DELAY)
}

/// Drops the key of unlock `generation` once its period runs out, so it does not stay in memory until the next
/// request; ends early when it was locked or replaced.
async fn expire_later(slot: Weak<Mutex<Slot>>, timeout: Duration, generation: u64) {
    let mut wait = timeout;
    loop {
        tokio::time::sleep(wait).await;
        let Some(slot) = slot.upgrade() else { return };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        match &slot.held {
            Some(held) if held.generation == generation => {}
            _ => return,
        }
        slot.expire(timeout);
        match &slot.held {
            Some(held) => wait = timeout.saturating_sub(idle(held.used)) + Duration::from_millis(5),
            None => return,
        }
    }
}

/// How long since `used`; a clock set back before it counts as forever.
fn idle(used: SystemTime) -> Duration {
    used.elapsed().unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn wrong_passphrases_wait_longer_each_time_up_to_a_limit() {
        assert_eq!(super::wrong_delay(1), Duration::from_millis(500));
        assert_eq!(super::wrong_delay(2), Duration::from_secs(1));
        assert_eq!(super::wrong_delay(3), Duration::from_secs(2));
        assert_eq!(super::wrong_delay(30), Duration::from_secs(8));
    }
}
