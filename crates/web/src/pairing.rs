//! Pairing a device and the devices' API: `/pair` (the page a device opens with its one-time code, and the trade of
//! the code for the device's cookie) and `/api/devices` (Settings lists, pairs and ends devices, from the computer's
//! own session only; see [`crate::access::refusal`]).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::WebApp;
use crate::access::{DEVICE_COOKIE, Peer, device_secret};
use crate::devices::{DeviceError, DeviceLimits, DeviceStore, NotebookLimit, PAIRING_MINUTES, Paired};
use crate::error::{ApiError, ErrorKind};

const DEVICE_COOKIE_SECONDS: u64 = 400 * 24 * 60 * 60;

const PAGE: &str = include_str!("../assets/pair.html");
const SCRIPT: &str = include_str!("../assets/pair.js");

/// `GET /pair`: the page a device opens (its code in the address's fragment, or typed).
pub(crate) async fn page() -> Response {
    Html(PAGE).into_response()
}

pub(crate) async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

#[derive(Deserialize)]
pub(crate) struct Redeem {
    code: String,
}

/// What a device gets for its code, beside its cookie.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DevicePaired {
    /// The device's name.
    pub name: String,
    /// The secret the page sends with every API call (derived from the device's token, which the page never sees).
    pub secret: String,
}

pub(crate) fn store(app: &WebApp) -> Result<&DeviceStore, ApiError> {
    app.devices
        .as_ref()
        .ok_or_else(|| ApiError::new(ErrorKind::Invalid, "This server pairs no devices."))
}

/// `POST /pair`: trades a one-time code for the device's cookie and its page's secret. Rate limited: wrong codes
/// count as failed sign-ins.
pub(crate) async fn redeem(
    State(app): State<Arc<WebApp>>,
    axum::Extension(Peer(from)): axum::Extension<Peer>,
    Json(request): Json<Redeem>,
) -> Result<Response, ApiError> {
    app.attempts.begin(from)?;
    let worker = app.clone();
    let paired = tokio::task::spawn_blocking(move || {
        let workspace = DeviceLimits::workspace_of(&worker.workspace);
        store(&worker)?
            .redeem(&request.code, workspace.as_deref())
            .map_err(device_error)
    })
    .await??;
    app.attempts.succeeded(from);
    tracing::info!(device = %paired.device.name, "a device was paired");
    Ok(device_session(&app, &paired))
}

/// The answer that signs a device in: its cookie (the device's id and token) and its page's secret.
pub(crate) fn device_session(app: &WebApp, paired: &Paired) -> Response {
    let secure = if app.options.secure_cookies { "; Secure" } else { "" };
    let cookie = format!(
        "{DEVICE_COOKIE}={}.{}; HttpOnly; SameSite=Strict; Path=/; Max-Age={DEVICE_COOKIE_SECONDS}{secure}",
        paired.device.id, paired.token
    );
    let body = DevicePaired {
        name: paired.device.name.clone(),
        secret: device_secret(&paired.token, &paired.device.id),
    };
    let mut response = Json(body).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

pub(crate) fn device_error(e: DeviceError) -> ApiError {
    let kind = match &e {
        DeviceError::Invalid(_) | DeviceError::BadCode | DeviceError::Passkey(_) => ErrorKind::Invalid,
        DeviceError::NoSuchDevice(_) => ErrorKind::NotFound,
        _ => ErrorKind::Internal,
    };
    ApiError::new(kind, e.to_string())
}

/// A paired device or a code not yet used, as Settings shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeviceView {
    /// Its name.
    pub name: String,
    /// Paired (`false`: a code waiting to be used).
    pub paired: bool,
    /// When it was paired, or when its code stops working (milliseconds since the epoch).
    pub at: i64,
    /// When it was last seen, to within an hour.
    pub last_seen: Option<i64>,
    /// What it may do.
    pub limits: DeviceLimits,
    /// How many passkeys it signs in with (besides its cookie).
    pub passkeys: usize,
}

/// The devices.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DeviceList {
    /// Paired devices, then codes not yet used.
    pub devices: Vec<DeviceView>,
    /// The address devices pair at, when the server knows one that other devices reach.
    pub address: Option<String>,
}

/// `GET /api/devices`.
pub(crate) async fn list(State(app): State<Arc<WebApp>>) -> Result<Json<DeviceList>, ApiError> {
    let file = store(&app)?.current();
    let now = jiff::Timestamp::now().as_millisecond();
    let mut devices: Vec<DeviceView> = file
        .devices
        .into_iter()
        .map(|d| DeviceView {
            name: d.name,
            paired: true,
            at: d.paired,
            last_seen: d.last_seen,
            passkeys: d.passkeys.len(),
            limits: d.limits,
        })
        .collect();
    devices.extend(
        file.pairings
            .into_iter()
            .filter(|p| p.expires > now)
            .map(|p| DeviceView {
                name: p.name,
                paired: false,
                at: p.expires,
                last_seen: None,
                limits: p.limits,
                passkeys: 0,
            }),
    );
    Ok(Json(DeviceList {
        devices,
        address: app.options.device_url.clone(),
    }))
}

/// What Settings asks for when it pairs a device.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct PairRequest {
    /// The device's name.
    pub name: String,
    /// The notebooks (ids) it reaches; none: all of them.
    #[serde(default)]
    pub notebooks: Vec<String>,
    /// It only reads.
    #[serde(default)]
    pub read_only: bool,
}

/// A code just made, to show once.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PairingCode {
    /// The code, `XXXXX-XXXXX`.
    pub code: String,
    /// The address that pairs with it (`…/pair#code=…`), for the QR code.
    pub link: String,
    /// The QR code of the link, as an SVG image.
    pub qr_svg: String,
    /// When it stops working (milliseconds since the epoch).
    pub expires: i64,
    /// Said beside it when the address is this computer's own (another device cannot open it).
    pub warning: Option<String>,
}

/// `POST /api/devices`: a pairing code for a new device, with the address to open and its QR code.
pub(crate) async fn pair(
    State(app): State<Arc<WebApp>>,
    headers: HeaderMap,
    Json(request): Json<PairRequest>,
) -> Result<Json<PairingCode>, ApiError> {
    let worker = app.clone();
    // Taken here: the request's access is not known on the blocking thread.
    let ws = crate::access::workspace(&app)?;
    let code = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
        let notebooks = notebook_limits(&ws, &request.notebooks)?;
        let limits = DeviceLimits {
            workspace: DeviceLimits::workspace_of(&ws),
            notebooks,
            read_only: request.read_only,
        };
        store(&worker)?
            .pair(&request.name, limits, PAIRING_MINUTES)
            .map_err(device_error)
    })
    .await??;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let (base, warning) = match &app.options.device_url {
        Some(url) => (url.trim_end_matches('/').to_owned(), None),
        None => (
            format!("http://{host}"),
            Some(
                "This server answers only on this computer, so another device cannot open this address: start it \
                 with `quire serve --listen ADDR` (see README, “Your notes on your phone”)."
                    .to_owned(),
            ),
        ),
    };
    let link = pairing_link(&base, &code.code);
    Ok(Json(PairingCode {
        qr_svg: qr_svg(&link),
        link,
        code: code.code,
        expires: code.expires,
        warning,
    }))
}

/// The notebooks of `ids` with their paths, each one checked to exist.
fn notebook_limits(ws: &quire_core::Workspace, ids: &[String]) -> Result<Vec<NotebookLimit>, ApiError> {
    let limits = ws.read(&quire_core::Actor::User, |r| {
        ids.iter()
            .map(|id| {
                let path = r.notebook_path_text(id)?;
                Ok(NotebookLimit { id: id.clone(), path })
            })
            .collect::<quire_core::Result<Vec<_>>>()
    })?;
    Ok(limits)
}

/// The address a device opens to pair with `code`.
pub fn pairing_link(base: &str, code: &str) -> String {
    format!("{}/pair#code={code}", base.trim_end_matches('/'))
}

/// `link` as a QR code in SVG.
pub fn qr_svg(link: &str) -> String {
    match qrcode::QrCode::new(link.as_bytes()) {
        Ok(code) => code
            .render::<qrcode::render::svg::Color<'_>>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
        Err(_) => String::new(),
    }
}

/// `link` as a QR code drawn with block characters, for a terminal.
pub fn qr_text(link: &str) -> String {
    match qrcode::QrCode::new(link.as_bytes()) {
        Ok(code) => code
            .render::<qrcode::render::unicode::Dense1x2>()
            .dark_color(qrcode::render::unicode::Dense1x2::Light)
            .light_color(qrcode::render::unicode::Dense1x2::Dark)
            .quiet_zone(true)
            .build(),
        Err(_) => String::new(),
    }
}

/// `DELETE /api/devices/{name}`: ends the device (or its code) at once.
pub(crate) async fn revoke(State(app): State<Arc<WebApp>>, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    let worker = app.clone();
    tokio::task::spawn_blocking(move || store(&worker)?.revoke(&name).map_err(device_error)).await??;
    Ok(StatusCode::NO_CONTENT)
}
