//! Sync as the page shows and sets it up: the state of the background sync (`GET /api/sync`) and a sync now
//! (`POST /api/sync`); in Settings, where it stands (`GET /api/sync/settings`), starting it with a new target or
//! joining one (`POST /api/sync/setup`), and stopping (`POST /api/sync/leave`); the conflicts sync found in a note
//! (`GET /api/sync/conflicts?note=ID`) and the person's choice of one (`POST /api/sync/conflicts/{id}`). The background loop is quire-sync's,
//! started by quire-host; it takes up a sync set up here (or in a terminal) at its next tick.
//!
//! A passphrase to join travels in the request's body only, and is never logged. A WebDAV password or S3 keys typed
//! in Settings travel the same way and are kept in quire-sync's credentials file (configuration directory, readable
//! by the user alone), where `quire sync` finds them too; the environment still comes first. They are never sent
//! back to the page.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use quire_core::Actor;
use quire_sync::background::SyncView;
use quire_sync::conflicts::{self, Keep};
use quire_sync::credentials::{self, Credentials};
use quire_sync::{Address, Device, SyncKey, SyncReport};
use serde::{Deserialize, Serialize};
use zeroize::Zeroize;

use super::blocking;
use crate::WebApp;
use crate::error::{ApiError, ErrorKind};

fn view(app: &WebApp) -> SyncView {
    app.options.sync.as_ref().map_or_else(SyncView::off, |sync| sync.view())
}

/// `GET /api/sync`.
pub(super) async fn state(State(app): State<Arc<WebApp>>) -> Json<SyncView> {
    Json(view(&app))
}

/// `POST /api/sync`: sync soon; answers with the state (usually `syncing`).
pub(super) async fn now(State(app): State<Arc<WebApp>>) -> Json<SyncView> {
    if let Some(sync) = &app.options.sync {
        sync.sync_soon();
    }
    Json(view(&app))
}

/// Sync as Settings shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SyncSettings {
    /// Whether this workspace syncs.
    pub syncing: bool,
    /// This device's name.
    pub name: Option<String>,
    /// The target: a folder, or a WebDAV or S3 address.
    pub target: Option<String>,
    /// The other devices seen on the target, by name.
    pub devices: Vec<String>,
    /// What the last sync said went wrong, if it did.
    pub last_error: Option<String>,
    /// Whether a passphrase is set (starting sync needs one; joining sets the other device's).
    pub passphrase_set: bool,
    /// This computer's name, which a device is called unless given another.
    pub host_name: String,
    /// What the last setup did, in words (only in the answer to a setup).
    pub done: Option<String>,
}

/// Starting sync with a new target, or joining the one another device syncs with.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SetupRequest {
    /// "init" (a new target) or "join".
    action: String,
    /// A folder, or `webdav+https://...`, `s3://bucket/prefix`.
    target: String,
    /// This device's name (the computer's when empty).
    #[serde(default)]
    name: String,
    /// To join from a workspace without a passphrase: the synced workspace's. Wiped once used.
    #[serde(default)]
    passphrase: String,
    /// A remote target's password or keys, kept for it when given (see the module's comment). Wiped once used.
    #[serde(default)]
    credentials: Credentials,
}

impl Drop for SetupRequest {
    fn drop(&mut self) {
        self.passphrase.zeroize();
        for secret in [
            &mut self.credentials.webdav_password,
            &mut self.credentials.s3_secret_access_key,
        ]
        .into_iter()
        .flatten()
        {
            secret.zeroize();
        }
    }
}

async fn settings_of(app: &Arc<WebApp>, done: Option<String>) -> Result<SyncSettings, ApiError> {
    let (status, passphrase_set) = blocking(app, |ws| {
        let status = Device::status(ws).map_err(|e| quire_core::Error::Invalid(e.to_string()))?;
        Ok((status, ws.lock_is_set()?))
    })
    .await?;
    Ok(SyncSettings {
        syncing: status.is_some(),
        name: status.as_ref().map(|s| s.name.clone()),
        target: status.as_ref().map(|s| s.target.clone()),
        devices: status
            .as_ref()
            .map(|s| {
                s.devices
                    .iter()
                    .filter(|d| d.forgotten.is_none())
                    .map(|d| d.name.clone())
                    .collect()
            })
            .unwrap_or_default(),
        last_error: status.and_then(|s| s.last_error),
        passphrase_set,
        host_name: Device::name_or_host(None),
        done,
    })
}

/// `GET /api/sync/settings`.
pub(super) async fn settings(State(app): State<Arc<WebApp>>) -> Result<Json<SyncSettings>, ApiError> {
    Ok(Json(settings_of(&app, None).await?))
}

/// `POST /api/sync/setup`: makes the target a new one for this workspace and sends everything (`init`), or joins
/// the target another device set up and takes in its notes (`join`), as `quire sync init` and `join` do. Starting
/// needs the passphrase set and the workspace unlocked; joining from a workspace without one takes the other
/// device's passphrase. Refused, changing nothing, with a wrong passphrase or a target that is not one.
pub(super) async fn setup(
    State(app): State<Arc<WebApp>>,
    Json(mut request): Json<SetupRequest>,
) -> Result<Json<SyncSettings>, ApiError> {
    let target = request.target.trim().to_owned();
    if target.is_empty() {
        return Err(ApiError::invalid(
            "Give the target: a folder, or a WebDAV or S3 address.",
        ));
    }
    // The page cannot know the server's working folder: a folder is given whole. And a folder is made here only when
    // the one it goes in exists, so a typo in a path is said, not synced to (both found in use).
    let url = target.contains("://");
    if !url && !std::path::Path::new(&target).is_absolute() {
        return Err(ApiError::invalid(format!(
            "Give the folder's whole path (starting with /), not “{target}”: the page cannot tell which folder it is \
             relative to."
        )));
    }
    if !url && std::path::Path::new(&target).is_file() {
        return Err(ApiError::invalid(format!("{target} is a file: give a folder.")));
    }
    if !url
        && request.action == "init"
        && let Some(parent) = std::path::Path::new(&target).parent()
        && !parent.is_dir()
    {
        return Err(ApiError::invalid(format!(
            "{} does not exist: make it first, or check the path.",
            parent.display()
        )));
    }
    let address = Address::parse_here(&target).map_err(|e| ApiError::invalid(e.to_string()))?;
    let name = Device::name_or_host(Some(request.name.as_str()));
    let join = match request.action.as_str() {
        "init" => false,
        "join" => true,
        other => return Err(ApiError::invalid(format!("Unknown action '{other}': init or join."))),
    };
    let passphrase = std::mem::take(&mut request.passphrase);
    // Kept before the target is opened (opening reads them); put back as they were when the set-up fails before
    // this workspace syncs there (a refused password is not kept; a first sync that failed after the set-up was
    // saved keeps them, since the workspace now syncs with that target). Blank fields are not given.
    let given = std::mem::take(&mut request.credentials).cleaned();
    let before = match (&address, given.is_empty()) {
        (_, true) => None,
        (Address::Folder(_), false) => {
            return Err(ApiError::invalid(
                "A folder needs no password or keys: leave them empty, or give a WebDAV or S3 address.",
            ));
        }
        (_, false) => Some(
            credentials::save(&address, given)
                .map_err(|e| ApiError::internal(format!("cannot keep the credentials: {e}")))?,
        ),
    };
    let ws = crate::access::workspace(&app)?;
    let key = app.lock.key();
    let worker = app.clone();
    let target = address.clone();
    // All of it in the blocking task, the putting back too: it runs to its end even when the page goes away.
    let outcome = tokio::task::spawn_blocking(move || -> Result<(String, SyncReport), ApiError> {
        let address = target;
        let mut passphrase = passphrase;
        let done = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| ApiError::internal(e.to_string()))
            .and_then(|runtime| runtime.block_on(set_up(&worker, &ws, key, &address, &name, join, &passphrase)));
        passphrase.zeroize();
        if done.is_err()
            && let Some(before) = before
            && !Device::status(&ws).is_ok_and(|status| status.is_some())
            && let Err(e) = credentials::save(&address, before.unwrap_or_default())
        {
            tracing::warn!(
                "the credentials given for {} could not be put back: {e}",
                address.shown()
            );
        }
        done
    })
    .await??;
    if let Some(sync) = &app.options.sync {
        sync.sync_soon();
    }
    let (headline, report) = outcome;
    let received = if report.applied_notes > 0 {
        format!(", received {} note change(s)", report.applied_notes)
    } else {
        String::new()
    };
    let done = format!("{headline}: sent {} change(s){received}.", report.sent_docs);
    Ok(Json(settings_of(&app, Some(done)).await?))
}

async fn set_up(
    app: &Arc<WebApp>,
    ws: &quire_core::Workspace,
    key: Option<Arc<quire_core::seal::Unlocked>>,
    address: &Address,
    name: &str,
    join: bool,
    passphrase: &str,
) -> Result<(String, SyncReport), ApiError> {
    let refused = |e: quire_sync::SyncError| ApiError::invalid(e.to_string());
    if Device::status(ws).map_err(refused)?.is_some() {
        return Err(ApiError::invalid("This workspace syncs already: stop syncing first."));
    }
    if !join {
        if !ws.lock_is_set()? {
            return Err(ApiError::invalid(
                "Sync needs a passphrase first: everything it writes to the target is encrypted with a key derived from \
                 it, and another device joins with it. Set one above, then start syncing.",
            ));
        }
        let key =
            key.ok_or_else(|| ApiError::new(ErrorKind::Locked, "Starting sync needs the workspace's passphrase."))?;
        let sync_key = SyncKey::from_bytes(*key.sync_key()?);
        let lock = ws.lock_material()?;
        let (device, report) = Device::set_up(ws.clone(), address, sync_key, &lock, name)
            .await
            .map_err(refused)?;
        return Ok((format!("Syncing with {}", device.target_root()), report));
    }
    let locks = Device::locks_to_join(address).await.map_err(refused)?;
    let (key, lock) = if ws.lock_is_set()? {
        let key = key.ok_or_else(|| ApiError::new(ErrorKind::Locked, "Joining needs the workspace's passphrase."))?;
        (key, ws.lock_material()?)
    } else {
        if passphrase.is_empty() {
            return Err(ApiError::invalid(
                "Type the passphrase of the workspace that syncs there.",
            ));
        }
        let (key, lock) = ws.join_any_lock(&locks, passphrase)?;
        app.lock.remember_initialized();
        app.lock.hold(key);
        let key = app
            .lock
            .key()
            .ok_or_else(|| ApiError::internal("the key was not kept"))?;
        (key, lock)
    };
    let sync_key = SyncKey::from_bytes(*key.sync_key()?);
    let (device, report) = Device::join_and_catch_up(ws.clone(), address, sync_key, &lock, name)
        .await
        .map_err(refused)?;
    Ok((format!("Joined {}", device.target_root()), report))
}

/// `POST /api/sync/leave`: stops syncing, as `quire sync leave` does; notes stay as they are.
pub(super) async fn leave(State(app): State<Arc<WebApp>>) -> Result<Json<SyncSettings>, ApiError> {
    blocking(&app, |ws| {
        Device::leave(ws).map_err(|e| quire_core::Error::Invalid(e.to_string()))
    })
    .await?;
    Ok(Json(
        settings_of(&app, Some("Stopped syncing; the notes stay as they are.".to_owned())).await?,
    ))
}

/// A place in a note that another device changed at the same time as this one: both versions are in the note until
/// the person chooses.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SyncConflictView {
    /// Its number, to resolve it.
    pub id: i64,
    /// The note.
    pub note_id: String,
    /// The other device's name.
    pub device: String,
    /// The lines both started from.
    pub base: String,
    /// This device's version of them ("" when they were removed here).
    pub mine: String,
    /// The other device's version ("" when it removed them).
    pub theirs: String,
    /// The two merged by words, when they changed different words.
    pub merged: Option<String>,
    /// The note is sealed and the workspace locked: the texts are empty, and choosing opens once it is unlocked.
    pub sealed: bool,
    /// Edits made on this device that the note lacks: `device` sealed it before they arrived. Unlocking merges them
    /// in (the places both changed become conflicts of their own).
    pub aside: bool,
}

/// The person with the unlocked key, for sync's conflicts of sealed notes (quire-sync never holds the key).
struct WithKey<'a> {
    ws: &'a quire_core::Workspace,
    key: &'a quire_core::seal::Unlocked,
}

impl conflicts::Person for WithKey<'_> {
    fn read<T>(&self, f: &mut dyn FnMut(&quire_core::Reader<'_>) -> quire_core::Result<T>) -> quire_core::Result<T> {
        self.ws.read_unlocked(self.key, |r| f(r))
    }

    fn write<T>(
        &self,
        f: &mut dyn FnMut(&mut quire_core::Writer<'_>) -> Result<T, conflicts::ConflictError>,
    ) -> Result<T, conflicts::ConflictError> {
        self.ws.write_unlocked(self.key, |w| f(w))
    }
}

#[derive(Deserialize)]
pub(super) struct ConflictsQuery {
    note: Option<String>,
}

/// `GET /api/sync/conflicts?note=ID`: the conflicts still open (of one note when given).
pub(super) async fn conflicts(
    State(app): State<Arc<WebApp>>,
    Query(query): Query<ConflictsQuery>,
) -> Result<Json<Vec<SyncConflictView>>, ApiError> {
    // Unlocked, a sealed note's conflicts open (and edits kept beside sealed notes are merged in).
    let key = app.lock.key();
    let open = blocking(&app, move |ws| {
        Ok(match &key {
            Some(key) => conflicts::open_as(ws, &WithKey { ws, key }, query.note.as_deref()),
            None => conflicts::open(ws, &Actor::User, query.note.as_deref()),
        })
    })
    .await?
    .map_err(api_error)?;
    Ok(Json(
        open.into_iter()
            .map(|c| SyncConflictView {
                id: c.id,
                note_id: c.note_id,
                device: c.device,
                base: c.base,
                mine: c.ours,
                theirs: c.theirs,
                merged: c.merged,
                sealed: c.locked,
                aside: c.aside,
            })
            .collect(),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResolveRequest {
    /// "mine", "theirs", "both" or "merged".
    keep: String,
}

/// What a choice did.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ConflictResolved {
    /// The note, changed (unless both were kept).
    pub note_id: String,
    /// The change set that undoes it, when the note changed.
    pub change_set_id: Option<String>,
}

/// `POST /api/sync/conflicts/{id}`: keeps what the person chose, as `quire sync resolve` does.
pub(super) async fn resolve(
    State(app): State<Arc<WebApp>>,
    Path(id): Path<i64>,
    Json(request): Json<ResolveRequest>,
) -> Result<Json<ConflictResolved>, ApiError> {
    let keep = match request.keep.as_str() {
        "mine" => Keep::Ours,
        "theirs" => Keep::Theirs,
        "both" => Keep::Both,
        "merged" => Keep::Merged,
        other => {
            return Err(ApiError::invalid(format!(
                "Unknown choice '{other}': mine, theirs, both or merged."
            )));
        }
    };
    let key = app.lock.key();
    let (conflict, change_set_id) = blocking(&app, move |ws| {
        Ok(match &key {
            Some(key) => conflicts::resolve_as(ws, &WithKey { ws, key }, id, keep),
            None => conflicts::resolve(ws, &Actor::User, id, keep),
        })
    })
    .await?
    .map_err(api_error)?;
    Ok(Json(ConflictResolved {
        note_id: conflict.note_id,
        change_set_id,
    }))
}

/// A conflict's refusal by its kind: one not there is not found, a merge that is not there is invalid.
fn api_error(error: conflicts::ConflictError) -> ApiError {
    match error {
        conflicts::ConflictError::Core(e) => e.into(),
        conflicts::ConflictError::NotFound(_) => ApiError::new(ErrorKind::NotFound, error.to_string()),
        conflicts::ConflictError::NoMerge => ApiError::invalid(error.to_string()),
        conflicts::ConflictError::Locked { .. } => ApiError::new(ErrorKind::Locked, error.to_string()),
        conflicts::ConflictError::Merge(..) => ApiError::new(ErrorKind::Internal, error.to_string()),
    }
}
