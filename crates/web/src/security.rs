//! The security layer: Host and Origin checks, the session (a cookie and a secret the page sends), and the headers
//! every response carries.

use std::sync::Arc;

use axum::extract::{ConnectInfo, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use crate::WebApp;
use crate::access::Access;
use crate::error::{ApiError, ErrorKind};
use quire_loopback::Activity;

/// The name of the session cookie (HttpOnly, SameSite=Strict), set by opening the URL `quire serve` prints.
pub const SESSION_COOKIE: &str = "quire_session";

/// The header every API call carries the session's secret in, beside the cookie. Opening the URL `quire serve`
/// prints redirects to `/#session=SECRET`; the page keeps the secret and sends it.
pub const SESSION_HEADER: &str = "x-quire-session";

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
/// The same, brotli-compressed by the UI's build (`ui/build.mjs`, which checks that it unpacks to the script).
const SCRIPT_BR: &[u8] = include_bytes!("../assets/app.js.br");
/// Temml, which the page loads the first time a text holds a formula.
const MATH_SCRIPT: &str = include_str!("../assets/math.js");
const MATH_SCRIPT_BR: &[u8] = include_bytes!("../assets/math.js.br");
const STYLESHEET: &str = include_str!("../assets/app.css");

/// No inline script or style, nothing from elsewhere, no framing.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   media-src data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page's policy: [`CSP`], except that the editor may add its own stylesheet, marked with this response's nonce
/// (CodeMirror writes its base theme into a `<style>` element; no script is allowed inline either way).
fn page_csp(nonce: &str) -> String {
    CSP.replace("style-src 'self';", &format!("style-src 'self' 'nonce-{nonce}';"))
}

const NO_SESSION: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" \
content=\"width=device-width, initial-scale=1\"><title>quire</title></head>\
<body><main><h1>quire</h1><p>Open the address that <code>quire serve</code> printed in your terminal: it holds the \
key that starts a session in this browser.</p><p>On another device (a phone, a tablet), <a href=\"/pair\">pair it</a> \
with the code that <code>quire device pair</code> or Settings shows.</p></main></body></html>";

/// Refuses a foreign `Host` (DNS rebinding) or `Origin` (cross-site requests) with 403, and an API call without a
/// session with 401; puts the security headers on every response, refusals included.
pub(crate) async fn guard(State(app): State<Arc<WebApp>>, mut request: Request, next: Next) -> Response {
    // The connection is busy until the answer is ready (it is not closed as idle meanwhile).
    let activity = request.extensions().get::<ConnectInfo<Activity>>().map(|c| c.0.clone());
    let _busy = activity.as_ref().map(Activity::busy);
    let peer = crate::access::Peer(activity.map(|a| a.peer().ip()));
    request.extensions_mut().insert(peer);
    let gzip = accepts_gzip(request.headers());
    let mut response = match check(&app, &request) {
        Err(refusal) => refusal.into_response(),
        Ok(access) => access.run(next.run(request)).await,
    };
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // A plugin's page (`/plugin-ui/...`) may be framed by quire's own page, and says so itself.
    if !headers.contains_key(header::X_FRAME_OPTIONS) {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if gzip { gzip_json(response).await } else { response }
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    accepts(headers, "gzip")
}

/// Whether the request's `Accept-Encoding` names `encoding` (without `;q=0`).
fn accepts(headers: &HeaderMap, encoding: &str) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|e| {
            let mut parts = e.split(';').map(str::trim);
            parts.next() == Some(encoding) && !parts.any(|p| p.replace(' ', "") == "q=0")
        })
}

/// A JSON answer of more than a packet, gzipped (quickly): a note list or a note is mostly text, and a phone on a
/// slow network waits for every byte of it. Streams (the change stream, a turn's events) are never JSON here.
async fn gzip_json(response: Response) -> Response {
    use std::io::Write as _;
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if !json || response.headers().contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return refuse(ErrorKind::Internal, "The answer could not be read.");
    };
    if bytes.len() < 1400 {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 4), flate2::Compression::fast());
    let gzipped = encoder.write_all(&bytes).and_then(|()| encoder.finish());
    match gzipped {
        Ok(gzipped) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            parts
                .headers
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            parts
                .headers
                .insert(header::VARY, HeaderValue::from_static("accept-encoding"));
            Response::from_parts(parts, axum::body::Body::from(gzipped))
        }
        Err(_) => Response::from_parts(parts, axum::body::Body::from(bytes)),
    }
}

/// Who the request is, or its refusal.
fn check(app: &WebApp, request: &Request) -> Result<Access, ApiError> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    // Behind a proxy or a tunnel that keeps the original `Host`, the public address's host is this server's too.
    let public_host = app
        .options
        .device_url
        .as_deref()
        .map(origin_of)
        .and_then(|o| o.split("://").nth(1));
    if !app.options.allow_remote && !quire_loopback::host_allowed(host) && public_host != Some(host) {
        return Err(ApiError::new(
            ErrorKind::Forbidden,
            "This server answers only on this computer (loopback).",
        ));
    }
    let origin = request.headers().get(header::ORIGIN).map(|o| o.to_str().unwrap_or(""));
    // Over TLS (quire's own, or a proxy's in front of it), the page's origin is https:// and its host, or the
    // public address the server was given.
    let https = origin.is_some_and(|o| {
        let secure = app.options.secure_cookies;
        let public = app.options.device_url.as_deref().map(origin_of);
        (secure && o.strip_prefix("https://") == Some(host)) || public == Some(o)
    });
    if !(https || quire_loopback::origin_allowed(origin, host)) {
        return Err(ApiError::new(
            ErrorKind::Forbidden,
            "Requests from other sites are refused.",
        ));
    }
    let path = request.uri().path();
    if !path.starts_with("/api/") {
        return Ok(Access::Nobody);
    }
    let access = api_access(app, request);
    match &access {
        Access::Nobody => Err(ApiError::new(
            ErrorKind::NoSession,
            "No session: open the address that `quire serve` printed, or pair this device (`quire device pair`).",
        )),
        Access::Device(device) => match crate::access::refusal(device, request.method(), path) {
            Some(why) => Err(ApiError::new(ErrorKind::Forbidden, why)),
            None => {
                if let Some(store) = &app.devices {
                    store.seen(device);
                }
                Ok(access)
            }
        },
        Access::Computer => Ok(access),
    }
}

/// The origin of an address: its scheme, host and port, without the path.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(slash) => &url[..after_scheme + slash],
        None => url,
    }
}

fn refuse(kind: ErrorKind, message: &str) -> Response {
    ApiError::new(kind, message).into_response()
}

/// The value of the cookie `name`.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value.to_owned())
}

/// The id of the session the request's cookie names, when its tag is the key's for that id.
fn session_id(app: &WebApp, headers: &HeaderMap) -> Option<String> {
    let cookie = cookie(headers, SESSION_COOKIE)?;
    let (id, tag) = cookie.split_once('.')?;
    same_secret(tag, &crate::access::derived(&app.known_key(), "cookie", id)).then(|| id.to_owned())
}

/// The paired device whose cookie the request carries, with its token.
fn device_of(app: &WebApp, headers: &HeaderMap) -> Option<(crate::devices::Device, String)> {
    let value = cookie(headers, crate::access::DEVICE_COOKIE)?;
    let device = app.devices.as_ref()?.device(&value)?;
    // A device paired for another workspace is not this server's.
    if !device.limits.reaches(&app.workspace) {
        return None;
    }
    let token = value.split_once('.')?.1.to_owned();
    Some((device, token))
}

/// Whether the request's cookie names a session or a paired device (enough for the page, not for the API).
pub(crate) fn has_session(app: &WebApp, headers: &HeaderMap) -> bool {
    session_id(app, headers).is_some() || device_of(app, headers).is_some()
}

/// Whether an API call carries both credentials of an open session: the cookie, and the session's secret in the
/// `X-Quire-Session` header.
///
/// The cookie alone is not enough: browsers send cookies to every port of 127.0.0.1, so any other local server the
/// browser visits receives it. The secret travels only in the fragment of the address the session was opened with
/// (`/#session=...`, which browsers send to no server) and lives in the page's storage, which is per origin (and so
/// per port): only quire's own page can read it. The browser loads an attachment's image by itself, without the
/// header, so a `GET` of `/api/attachments/...` may carry the secret as `?session=` instead.
///
/// A paired device's page does the same with its own secret, derived from the token its cookie holds
/// ([`crate::access::device_secret`]).
fn api_access(app: &WebApp, request: &Request) -> Access {
    let headers = request.headers();
    let (secret, access) = if let Some(id) = session_id(app, headers) {
        (
            crate::access::derived(&app.known_key(), "secret", &id),
            Access::Computer,
        )
    } else if let Some((device, token)) = device_of(app, headers) {
        (
            crate::access::device_secret(&token, &device.id),
            Access::Device(std::sync::Arc::new(device)),
        )
    } else {
        return Access::Nobody;
    };
    let from_header = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let given = from_header.or_else(|| {
        let image =
            request.method() == axum::http::Method::GET && request.uri().path().starts_with("/api/attachments/");
        image
            .then(|| session_in_query(request.uri().query().unwrap_or("")))
            .flatten()
    });
    if given.is_some_and(|given| same_secret(&given, &secret)) {
        access
    } else {
        Access::Nobody
    }
}

/// The `session` parameter of a query string.
fn session_in_query(query: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "session")
        .map(|(_, value)| value.to_owned())
}

/// Compares without stopping at the first difference, so the time taken says nothing about the token.
fn same_secret(a: &str, b: &str) -> bool {
    !b.is_empty() && quire_loopback::constant_time_eq(a.as_bytes(), b.as_bytes())
}

#[derive(Deserialize)]
pub(crate) struct Opening {
    token: Option<String>,
}

/// `/?token=...` opens a session and redirects to `/`; `/` with a session is the app; without, a page that says how
/// to get one.
pub(crate) async fn index(
    State(app): State<Arc<WebApp>>,
    Query(opening): Query<Opening>,
    axum::Extension(crate::access::Peer(from)): axum::Extension<crate::access::Peer>,
    headers: HeaderMap,
) -> Response {
    if let Some(token) = opening.token {
        // The right key always opens (256 bits cannot be guessed, and the person must not be locked out by
        // someone else's wrong attempts); a wrong one counts, and past the limit is not even compared.
        if !same_secret(&token, &app.current_key()) {
            if let Err(refusal) = app.attempts.check(from) {
                return refusal.into_response();
            }
            app.attempts.failed(from);
            return (StatusCode::UNAUTHORIZED, Html(NO_SESSION)).into_response();
        }
        let id = match new_session_id() {
            Ok(id) => id,
            Err(e) => return refuse(ErrorKind::Internal, &e.to_string()),
        };
        let key = app.known_key();
        let (tag, secret) = (
            crate::access::derived(&key, "cookie", &id),
            crate::access::derived(&key, "secret", &id),
        );
        let cookie = format!("{SESSION_COOKIE}={id}.{tag}; HttpOnly; SameSite=Strict; Path=/");
        // The secret goes in the fragment: the browser keeps it for the page and sends it to no server.
        return (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, format!("/#session={secret}")),
                (header::SET_COOKIE, cookie),
            ],
        )
            .into_response();
    }
    // A page load takes a key replaced on disk (`--rotate-key` while this server runs): it ends the sessions of
    // the old one. API calls check against the key as last read.
    let _ = app.current_key();
    if has_session(&app, &headers) {
        let nonce = match new_session_id() {
            Ok(random) => random[..32].to_owned(),
            Err(e) => return refuse(ErrorKind::Internal, &e.to_string()),
        };
        let policy = HeaderValue::from_str(&page_csp(&nonce)).unwrap_or(HeaderValue::from_static(CSP));
        // A paired device's page knows from its first byte what the device may do: one that only reads shows no
        // editing, one limited to notebooks no assistant (`data-device` on the body, read by app.css and the page).
        let device = match (session_id(&app, &headers), device_of(&app, &headers)) {
            (None, Some((device, _))) => {
                let mut marks = vec!["device"];
                if device.limits.read_only {
                    marks.push("read-only");
                }
                if !device.limits.notebooks.is_empty() {
                    marks.push("limited");
                }
                format!("<body data-device=\"{}\">", marks.join(" "))
            }
            _ => "<body>".to_owned(),
        };
        let page = INDEX.replace("__CSP_NONCE__", &nonce).replacen("<body>", &device, 1);
        ([(header::CONTENT_SECURITY_POLICY, policy)], Html(page)).into_response()
    } else {
        (StatusCode::UNAUTHORIZED, Html(NO_SESSION)).into_response()
    }
}

pub(crate) async fn script(headers: HeaderMap) -> Response {
    static GZIPPED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    asset(
        &headers,
        "text/javascript; charset=utf-8",
        (SCRIPT, Some(SCRIPT_BR)),
        &GZIPPED,
    )
}

/// The page's first requests, sent while the app's script loads (`assets/boot.js`).
pub(crate) async fn boot_script() -> Response {
    const BOOT: &str = include_str!("../assets/boot.js");
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], BOOT).into_response()
}

pub(crate) async fn math_script(headers: HeaderMap) -> Response {
    static GZIPPED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    asset(
        &headers,
        "text/javascript; charset=utf-8",
        (MATH_SCRIPT, Some(MATH_SCRIPT_BR)),
        &GZIPPED,
    )
}

pub(crate) async fn stylesheet(headers: HeaderMap) -> Response {
    static GZIPPED: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    asset(&headers, "text/css; charset=utf-8", (STYLESHEET, None), &GZIPPED)
}

/// An asset of the page (its text, and the same brotli-compressed when the build made it), compressed for a browser
/// that accepts it: brotli, else gzip (made once, then kept). The script is about 570 KB, 160 KB in brotli, which is
/// what a phone on a slow network waits for.
fn asset(
    headers: &HeaderMap,
    kind: &'static str,
    (text, brotli): (&'static str, Option<&'static [u8]>),
    gzipped: &'static std::sync::OnceLock<Vec<u8>>,
) -> Response {
    if let Some(brotli) = brotli.filter(|_| accepts(headers, "br")) {
        return (
            [
                (header::CONTENT_TYPE, kind),
                (header::CONTENT_ENCODING, "br"),
                (header::VARY, "accept-encoding"),
            ],
            brotli,
        )
            .into_response();
    }
    if !accepts_gzip(headers) {
        return ([(header::CONTENT_TYPE, kind), (header::VARY, "accept-encoding")], text).into_response();
    }
    let body = gzipped.get_or_init(|| {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(text.as_bytes());
        encoder.finish().unwrap_or_default()
    });
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_ENCODING, "gzip"),
            (header::VARY, "accept-encoding"),
        ],
        body.as_slice(),
    )
        .into_response()
}

fn new_session_id() -> Result<String, crate::Error> {
    quire_loopback::new_secret().map_err(|e| crate::Error::Random(e.to_string()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_empty_secret_opens_nothing() {
        assert!(super::same_secret("abc", "abc"));
        assert!(!super::same_secret("abc", "abd") && !super::same_secret("abc", "abcd"));
        assert!(!super::same_secret("", ""));
    }
}
