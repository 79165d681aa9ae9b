//! The security layer: Host and Origin checks, the session cookie, and the headers every response carries.

use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use crate::WebApp;

/// The name of the session cookie (HttpOnly, SameSite=Strict), set by opening the URL `quire serve` prints.
pub const SESSION_COOKIE: &str = "quire_session";

const INDEX: &str = include_str!("../assets/index.html");
const SCRIPT: &str = include_str!("../assets/app.js");
const STYLESHEET: &str = include_str!("../assets/app.css");

/// No inline script or style, nothing from elsewhere, no framing.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The page's policy: [`CSP`], except that the editor may add its own stylesheet, marked with this response's nonce
/// (CodeMirror writes its base theme into a `<style>` element; no script is allowed inline either way).
fn page_csp(nonce: &str) -> String {
    CSP.replace("style-src 'self';", &format!("style-src 'self' 'nonce-{nonce}';"))
}

const NO_SESSION: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>quire</title></head>\
<body><main><h1>quire</h1><p>Open the address that <code>quire serve</code> printed in your terminal: it holds the \
key that starts a session in this browser.</p></main></body></html>";

/// Refuses a foreign `Host` (DNS rebinding) or `Origin` (cross-site requests) with 403, and an API call without a
/// session with 401; puts the security headers on every response.
pub(crate) async fn guard(State(app): State<Arc<WebApp>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if !app.options.allow_remote && !is_loopback_host(&host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "This server answers only on this computer (loopback).",
        );
    }
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let same = origin.to_str().is_ok_and(|o| o == format!("http://{host}"));
        if !same {
            return refuse(StatusCode::FORBIDDEN, "Requests from other sites are refused.");
        }
    }
    if request.uri().path().starts_with("/api/") && !has_session(&app, request.headers()) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "No session: open the address that `quire serve` printed.",
        );
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

/// `localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.to_owned())
}

fn has_session(app: &WebApp, headers: &HeaderMap) -> bool {
    session_of(headers).is_some_and(|id| app.sessions.lock().unwrap_or_else(|e| e.into_inner()).contains(&id))
}

/// Compares without stopping at the first difference, so the time taken says nothing about the token.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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
    headers: HeaderMap,
) -> Response {
    if let Some(token) = opening.token {
        if !same_secret(&token, &app.options.token) {
            return (StatusCode::UNAUTHORIZED, Html(NO_SESSION)).into_response();
        }
        let id = match new_session_id() {
            Ok(id) => id,
            Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
        app.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone());
        let cookie = format!("{SESSION_COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/");
        return (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, "/".to_owned()), (header::SET_COOKIE, cookie)],
        )
            .into_response();
    }
    if has_session(&app, &headers) {
        let nonce = match new_session_id() {
            Ok(random) => random[..32].to_owned(),
            Err(e) => return refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
        let policy = HeaderValue::from_str(&page_csp(&nonce)).unwrap_or(HeaderValue::from_static(CSP));
        (
            [(header::CONTENT_SECURITY_POLICY, policy)],
            Html(INDEX.replace("__CSP_NONCE__", &nonce)),
        )
            .into_response()
    } else {
        (StatusCode::UNAUTHORIZED, Html(NO_SESSION)).into_response()
    }
}

pub(crate) async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub(crate) async fn stylesheet() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLESHEET).into_response()
}

fn new_session_id() -> Result<String, crate::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| crate::Error::Random(e.to_string()))?;
    Ok(quire_core::hex(&bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_hosts_and_secrets() {
        for (host, expected) in [
            ("localhost:8080", true),
            ("127.0.0.1", true),
            ("[::1]:3000", true),
            ("evil.example", false),
            ("127.0.0.1.evil.example:80", false),
            ("", false),
        ] {
            assert_eq!(super::is_loopback_host(host), expected, "{host}");
        }
        assert!(super::same_secret("abc", "abc"));
        assert!(!super::same_secret("abc", "abd") && !super::same_secret("abc", "abcd"));
    }
}
