//! Streamable HTTP: the server on loopback behind a bearer token, with `Origin`/`Host` checks and a body limit.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::{Error, QuireServer};

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";
/// The largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The bearer token every request must carry; `None` serves without one (only for local test harnesses
    /// such as the MCP conformance suite, which cannot send headers).
    pub token: Option<String>,
    /// Accept requests whose `Host` is not a loopback name (the caller binds a non-loopback address on purpose).
    pub allow_remote: bool,
}

/// Serves `server` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: QuireServer,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    config = if options.allow_remote {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"])
    };
    let service = StreamableHttpService::new(
        move || Ok(server.for_new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guard = Arc::new(options);
    let app = axum::Router::new()
        .nest_service(ENDPOINT, service)
        .layer(middleware::from_fn_with_state(guard, check_request));
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await?;
    Ok(())
}

const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Refuses, before anything else runs: a foreign `Origin` or `Host` (403, DNS rebinding), then a missing or wrong
/// bearer token (401).
async fn check_request(State(options): State<Arc<HttpOptions>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if let Some(problem) = foreign_origin_or_host(headers, options.allow_remote) {
        tracing::warn!(%problem, "refused an HTTP request");
        return refusal(StatusCode::FORBIDDEN, &problem);
    }
    let Some(expected) = &options.token else {
        return answer(request, next).await;
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => answer(request, next).await,
        Some(_) => refusal(
            StatusCode::UNAUTHORIZED,
            "The bearer token is not valid; `quire mcp token` prints the current one.",
        ),
        None => refusal(
            StatusCode::UNAUTHORIZED,
            "Authorization: Bearer <token> is required; `quire mcp token` prints the token.",
        ),
    }
}

/// Runs the request. A `DELETE` that ended a session answers 200: the specification allows it, and clients such as
/// the Python SDK take the transport's 202 for a failed termination.
async fn answer(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

fn foreign_origin_or_host(headers: &HeaderMap, allow_remote: bool) -> Option<String> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = origin.strip_prefix("http://").map(host_without_port);
        if !host.is_some_and(is_loopback_name) {
            return Some(format!("Origin '{origin}' is not allowed"));
        }
    }
    if !allow_remote {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !is_loopback_name(host_without_port(host)) {
            return Some(format!("Host '{host}' is not allowed"));
        }
    }
    None
}

fn host_without_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.rsplit_once(':').map_or(authority, |(host, _)| host)
}

fn is_loopback_name(host: &str) -> bool {
    matches!(host.to_ascii_lowercase().as_str(), "localhost" | "127.0.0.1" | "::1")
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refusal(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = (status, Body::from(body)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"quire\""),
        );
    }
    response
}

/// Whether an address is on this machine only.
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    fn check(origin: Option<&str>, host: &str, allow_remote: bool) -> Option<String> {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        super::foreign_origin_or_host(&headers, allow_remote)
    }

    #[test]
    fn origins_and_hosts() {
        assert_eq!(check(None, "127.0.0.1:8848", false), None);
        assert_eq!(check(Some("http://localhost:3000"), "localhost:8848", false), None);
        assert_eq!(check(Some("http://[::1]:9"), "[::1]:8848", false), None);
        assert_eq!(
            check(Some("http://evil.example.com"), "127.0.0.1:8848", false).unwrap(),
            "Origin 'http://evil.example.com' is not allowed"
        );
        assert_eq!(
            check(Some("https://localhost"), "127.0.0.1", false).unwrap(),
            "Origin 'https://localhost' is not allowed"
        );
        assert_eq!(
            check(Some("null"), "127.0.0.1", false).unwrap(),
            "Origin 'null' is not allowed"
        );
        assert_eq!(
            check(None, "evil.example.com", false).unwrap(),
            "Host 'evil.example.com' is not allowed"
        );
        assert_eq!(check(None, "192.168.1.5:8848", true), None);
        assert!(
            super::constant_time_eq(b"abc", b"abc")
                && !super::constant_time_eq(b"abc", b"abd")
                && !super::constant_time_eq(b"ab", b"abc")
        );
    }
}
