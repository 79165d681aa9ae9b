//! A paired device's passkeys: the device adds one once it is paired (`/api/passkeys`, from its own session), and
//! signs in again with it when its cookie is gone (`/pair/passkey`, no session: the passkey is the credential), with
//! no new code. The checks are [`crate::webauthn`]'s; the keys live with the device in `devices.json`, so ending
//! the device ends its passkeys.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::WebApp;
use crate::access::{Access, Peer};
use crate::devices::{Device, Passkey};
use crate::error::{ApiError, ErrorKind};
use crate::pairing::{device_error, device_session, store};
use crate::webauthn::{self, Party, Purpose, Refused, b64, unb64};

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> ApiError {
        ApiError::new(ErrorKind::Invalid, refused.0)
    }
}

/// How long the browser may take to make or use a passkey (its own prompt included), in milliseconds: half a minute
/// less than the challenge lives, so that an answer at the prompt's last moment still finds its challenge.
const PROMPT_MS: u128 = webauthn::Challenges::LIFE.as_millis() - 30_000;

fn challenges(app: &WebApp) -> Result<&webauthn::Challenges, ApiError> {
    app.challenges.as_ref().ok_or_else(|| {
        ApiError::new(
            ErrorKind::Internal,
            "This server has no randomness for passkeys: the device signs in with its pairing.",
        )
    })
}

fn party(headers: &HeaderMap) -> Result<Party, ApiError> {
    Ok(Party::of(headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()))?)
}

/// The device this request is, or why a passkey is not for it.
fn this_device() -> Result<Device, ApiError> {
    match Access::current() {
        Access::Device(device) => Ok((*device).clone()),
        _ => Err(ApiError::new(
            ErrorKind::Invalid,
            "A passkey belongs to a paired device; this computer opens quire with the key `quire serve` prints.",
        )),
    }
}

/// The device's passkeys, as its pairing page shows them.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PasskeyStatus {
    /// The device's name; `None`: this session is the computer's own, not a device's.
    pub device: Option<String>,
    /// How many passkeys it has.
    pub passkeys: usize,
}

/// `GET /api/passkeys`.
pub(crate) async fn status() -> Json<PasskeyStatus> {
    let device = Access::current().device().cloned();
    Json(PasskeyStatus {
        passkeys: device.as_ref().map_or(0, |d| d.passkeys.len()),
        device: device.map(|d| d.name),
    })
}

/// `POST /api/passkeys/options`: what the page passes to `navigator.credentials.create` (binary fields in
/// base64url). A discoverable passkey, so that signing in needs no name; the device's own passkeys are excluded.
pub(crate) async fn add_options(State(app): State<Arc<WebApp>>, headers: HeaderMap) -> Result<Json<Value>, ApiError> {
    let device = this_device()?;
    let party = party(&headers)?;
    let challenge = challenges(&app)?.make(&Purpose::Add(device.id.clone()))?;
    let exclude: Vec<Value> = device
        .passkeys
        .iter()
        .map(|p| json!({ "type": "public-key", "id": p.id }))
        .collect();
    Ok(Json(json!({
        "challenge": challenge,
        "rp": { "id": party.rp_id, "name": "quire" },
        "user": { "id": b64(device.id.as_bytes()), "name": device.name, "displayName": format!("quire on {}", device.name) },
        "pubKeyCredParams": [
            { "type": "public-key", "alg": -7 },
            { "type": "public-key", "alg": -8 },
            { "type": "public-key", "alg": -257 },
        ],
        "authenticatorSelection": { "residentKey": "required", "requireResidentKey": true, "userVerification": "required" },
        "excludeCredentials": exclude,
        "attestation": "none",
        "timeout": PROMPT_MS,
    })))
}

/// The answer of `navigator.credentials.create`, binary fields in base64url.
#[derive(Deserialize)]
pub(crate) struct NewCredential {
    id: String,
    client_data_json: String,
    attestation_object: String,
}

/// `POST /api/passkeys`: keeps the passkey the device just made.
pub(crate) async fn add(
    State(app): State<Arc<WebApp>>,
    headers: HeaderMap,
    Json(answer): Json<NewCredential>,
) -> Result<Json<PasskeyStatus>, ApiError> {
    let device = this_device()?;
    let party = party(&headers)?;
    let made = webauthn::registration(
        &party,
        challenges(&app)?,
        &Purpose::Add(device.id.clone()),
        &unb64(&answer.id, "id")?,
        &unb64(&answer.client_data_json, "client data")?,
        &unb64(&answer.attestation_object, "attestation")?,
    )?;
    let passkey = Passkey {
        id: b64(&made.id),
        key: made.key,
        sign_count: made.sign_count,
        origin: party.origin.clone(),
        added: jiff::Timestamp::now().as_millisecond(),
    };
    let worker = app.clone();
    let id = device.id.clone();
    let count =
        tokio::task::spawn_blocking(move || store(&worker)?.add_passkey(&id, passkey).map_err(device_error)).await??;
    tracing::info!(device = %device.name, "a passkey was added");
    Ok(Json(PasskeyStatus {
        device: Some(device.name),
        passkeys: count,
    }))
}

/// `POST /pair/passkey/options`: what the page passes to `navigator.credentials.get` (any passkey of this site:
/// the person picks one). Refused while sign-ins are refused (too many failed).
pub(crate) async fn sign_in_options(
    State(app): State<Arc<WebApp>>,
    axum::Extension(Peer(from)): axum::Extension<Peer>,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    app.attempts.check(from)?;
    store(&app)?;
    let party = party(&headers)?;
    let challenge = challenges(&app)?.make(&Purpose::SignIn)?;
    Ok(Json(json!({
        "challenge": challenge,
        "rpId": party.rp_id,
        "userVerification": "required",
        "timeout": PROMPT_MS,
    })))
}

/// The answer of `navigator.credentials.get`, binary fields in base64url.
#[derive(Deserialize)]
pub(crate) struct Assertion {
    id: String,
    client_data_json: String,
    authenticator_data: String,
    signature: String,
}

/// `POST /pair/passkey`: a device signs in with its passkey, and gets a cookie and its page's secret as at pairing.
/// A failure counts as a failed sign-in.
pub(crate) async fn sign_in(
    State(app): State<Arc<WebApp>>,
    axum::Extension(Peer(from)): axum::Extension<Peer>,
    headers: HeaderMap,
    Json(answer): Json<Assertion>,
) -> Result<Response, ApiError> {
    app.attempts.begin(from)?;
    let party = party(&headers)?;
    let worker = app.clone();
    let paired = tokio::task::spawn_blocking(move || {
        let store = store(&worker)?;
        let (device, passkey) = store.passkey(&answer.id).ok_or_else(|| {
            ApiError::new(
                ErrorKind::Invalid,
                "This passkey's device is no longer paired with quire: pair it again with a new code.",
            )
        })?;
        if !device.limits.reaches(&worker.workspace) {
            return Err(ApiError::new(
                ErrorKind::Invalid,
                "This passkey's device was paired for another workspace.",
            ));
        }
        let count = webauthn::assertion(
            &party,
            challenges(&worker)?,
            &passkey,
            &unb64(&answer.client_data_json, "client data")?,
            &unb64(&answer.authenticator_data, "authenticator data")?,
            &unb64(&answer.signature, "signature")?,
        )?;
        store.signed_in_with_passkey(&answer.id, count).map_err(device_error)
    })
    .await??;
    app.attempts.succeeded(from);
    tracing::info!(device = %paired.device.name, "a device signed in with its passkey");
    Ok(device_session(&app, &paired))
}
