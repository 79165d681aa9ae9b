//! The lock: whether a passphrase is set and whether sealed notes are open now, unlocking with the passphrase (one
//! attempt at a time, a wrong one answered after a growing delay), and locking again.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use super::blocking;
use crate::WebApp;
use crate::error::ApiError;
use crate::lock::wrong_delay;

/// The lock as the page shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LockState {
    /// A passphrase is set on the workspace (`quire lock init`): protected notes are sealed, encrypted at rest.
    /// Without one, protection keeps notes from AI only.
    pub initialized: bool,
    /// Sealed notes open now: the passphrase was given and the unlock period has not run out.
    pub unlocked: bool,
    /// Seconds until the workspace locks again if nothing uses a note's content meanwhile (absent when locked).
    pub seconds_left: Option<u64>,
    /// The unlock period: how long the workspace stays unlocked without use, in seconds (`[lock] timeout`).
    pub timeout_seconds: u64,
}

/// The passphrase, to unlock with. Its text is wiped from memory once tried.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UnlockRequest {
    passphrase: String,
}

impl Drop for UnlockRequest {
    fn drop(&mut self) {
        self.passphrase.zeroize();
    }
}

async fn state_of(app: &Arc<WebApp>) -> Result<LockState, ApiError> {
    let initialized = app.lock.known_initialized() || blocking(app, |ws| ws.lock_is_set()).await?;
    if initialized {
        app.lock.remember_initialized();
    }
    let left = app.lock.time_left();
    Ok(LockState {
        initialized,
        unlocked: left.is_some(),
        // Rounded up: a period with 0.4 seconds left is still open.
        seconds_left: left.map(|left| left.as_secs() + u64::from(left.subsec_nanos() > 0)),
        timeout_seconds: app.lock.timeout().as_secs(),
    })
}

/// `GET /api/lock`. Asking does not keep the unlock period going.
pub(super) async fn state(State(app): State<Arc<WebApp>>) -> Result<Json<LockState>, ApiError> {
    Ok(Json(state_of(&app).await?))
}

/// `POST /api/lock/unlock`: opens sealed notes for the unlock period. A wrong passphrase is refused (400, "Wrong
/// passphrase. Nothing changed."); after one, the next attempt waits before it is tried, twice as long with each
/// wrong one in a row. Attempts run one at a time, so guessing in parallel is no faster, and the wait comes before
/// the passphrase is tried, so a client that gives up early learns nothing sooner.
pub(super) async fn unlock(
    State(app): State<Arc<WebApp>>,
    Json(mut request): Json<UnlockRequest>,
) -> Result<Json<LockState>, ApiError> {
    if request.passphrase.is_empty() {
        return Err(ApiError::invalid("Type the workspace's passphrase."));
    }
    let mut wrong = app.lock.attempt().await;
    if *wrong > 0 {
        tokio::time::sleep(wrong_delay(*wrong)).await;
    }
    let passphrase = std::mem::take(&mut request.passphrase);
    let worker = app.clone();
    let tried = tokio::task::spawn_blocking(move || {
        let mut passphrase = passphrase;
        let outcome = worker.workspace.unlock(&passphrase);
        passphrase.zeroize();
        outcome
    })
    .await?;
    match tried {
        Ok(key) => {
            *wrong = 0;
            app.lock.hold(key);
            tracing::info!("the workspace was unlocked from the web page");
        }
        Err(quire_core::Error::WrongPassphrase) => {
            *wrong = wrong.saturating_add(1);
            tracing::warn!(in_a_row = *wrong, "a wrong passphrase was given on the web page");
            return Err(quire_core::Error::WrongPassphrase.into());
        }
        Err(e) => return Err(e.into()),
    }
    drop(wrong);
    Ok(Json(state_of(&app).await?))
}

/// `POST /api/lock/lock`: drops the key now; sealed notes are locked until the next unlock.
pub(super) async fn lock(State(app): State<Arc<WebApp>>) -> Result<Json<LockState>, ApiError> {
    app.lock.drop_key();
    tracing::info!("the workspace was locked from the web page");
    Ok(Json(state_of(&app).await?))
}

/// What setting a passphrase from the page gives back, once.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LockInitialized {
    /// The recovery key (8 groups of 8 hex digits): shown this once; it sets a new passphrase if this one is lost.
    pub recovery_key: String,
    /// Protected notes sealed now.
    pub sealed_notes: u64,
    /// Whether the workspace file was rewritten, so no earlier text of those notes stays in its free pages (not when
    /// another program holds it open).
    pub file_rewritten: bool,
    /// The lock now: set, and unlocked.
    pub lock: LockState,
}

/// A new passphrase. Its text is wiped from memory once used.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InitRequest {
    passphrase: String,
}

impl Drop for InitRequest {
    fn drop(&mut self) {
        self.passphrase.zeroize();
    }
}

/// How long deriving the key from the passphrase takes on this machine (as `quire lock init`).
const KDF_TARGET: std::time::Duration = std::time::Duration::from_millis(500);

/// `POST /api/lock/init`: sets the workspace's passphrase, as `quire lock init` does: protected notes are sealed now,
/// and the answer holds the recovery key, which is kept nowhere else. Refused when one is set already, or too short.
/// The workspace is unlocked afterwards.
pub(super) async fn init(
    State(app): State<Arc<WebApp>>,
    Json(mut request): Json<InitRequest>,
) -> Result<Json<LockInitialized>, ApiError> {
    let passphrase = std::mem::take(&mut request.passphrase);
    let ws = crate::access::workspace(&app)?;
    let made = tokio::task::spawn_blocking(move || {
        let mut passphrase = passphrase;
        let outcome = ws.init_lock(&passphrase, &quire_core::seal::KdfParams::tuned(KDF_TARGET));
        passphrase.zeroize();
        outcome
    })
    .await??;
    let (key, recovery, report) = made;
    app.lock.remember_initialized();
    app.lock.hold(key);
    tracing::info!("a passphrase was set from the web page");
    Ok(Json(LockInitialized {
        recovery_key: recovery.as_str().to_owned(),
        sealed_notes: report.notes,
        file_rewritten: report.file_rewritten,
        lock: state_of(&app).await?,
    }))
}
