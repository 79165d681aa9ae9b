//! Streamable HTTP: the server on loopback behind a bearer token, with `Origin`/`Host` checks and a body limit.

use std::net::SocketAddr;
use std::sync::Arc;

use futures::StreamExt as _;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use quire_loopback::{Activity, IdleListener, constant_time_eq};

use crate::{Error, QuireServer};

/// The largest request body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

pub use crate::tokens::{ENDPOINT, NamedToken, NamedTokens, token_hash};

/// How to serve over HTTP.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The bearer token every request must carry; `None` serves without one (only for local test harnesses
    /// such as the MCP conformance suite, which cannot send headers).
    pub token: Option<String>,
    /// More tokens, each known by its hash ([`token_hash`]) and granting less: a scope, read-only, hidden tools.
    /// Shared so the caller can change the list while serving (a token added or revoked counts at once).
    pub named_tokens: NamedTokens,
    /// Accept requests whose `Host` is not a loopback name (the caller binds a non-loopback address on purpose).
    pub allow_remote: bool,
    /// Close the event stream of a call still running after this long (SSE polling): the client reconnects with
    /// `Last-Event-ID` and gets the rest, so a long call holds no connection open (for proxies that cut long
    /// requests). `None` keeps streams open until the call ends.
    pub close_streams_after: Option<std::time::Duration>,
    /// How long a connection that sends nothing, with no request being handled or answer streaming, stays open
    /// (also the most a request's header may take); `None` is [`IDLE_CONNECTION`].
    pub idle_timeout: Option<std::time::Duration>,
    /// MCP authorization for hosted assistants behind a tunnel ([`crate::oauth`]): this server is then also its own
    /// authorization server, at its public address.
    pub oauth: Option<crate::oauth::OAuthOptions>,
}

impl HttpOptions {
    /// The public address's host (with its port) and origin, when OAuth gives one.
    fn public(&self) -> Option<(String, String)> {
        let url = url::Url::parse(&self.oauth.as_ref()?.public_url).ok()?;
        let host = url.host_str()?.to_owned();
        let host = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        };
        Some((host, url.origin().ascii_serialization()))
    }
}

/// Serves `server` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    server: QuireServer,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let idle = options.idle_timeout.unwrap_or(IDLE_CONNECTION);
    let app = router(server, options);
    // A connection that sends nothing while no request of it is handled is closed (also one that never finishes
    // its header); a request's stream keeps it open while the stream lasts.
    let listener = IdleListener { inner: listener, idle };
    axum::serve(listener, app.into_make_service_with_connect_info::<Activity>())
        .with_graceful_shutdown(shutdown)
        .await?;
    Ok(())
}

/// The MCP endpoint (and, with OAuth, the authorization server's paths) as a router, each path behind its own checks,
/// for [`serve`] or to merge into another server on the same port (`quire serve --public-url`). The server it is
/// merged into must be served with `ConnectInfo<quire_loopback::Activity>`.
pub fn router(server: QuireServer, options: HttpOptions) -> axum::Router {
    let public = options.public();
    let mut origins: Vec<String> = LOOPBACK_ORIGINS.iter().map(|o| (*o).to_owned()).collect();
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"].map(str::to_owned).to_vec();
    if let Some((host, origin)) = &public {
        // Behind a tunnel or proxy, requests name the public address.
        origins.push(origin.clone());
        hosts.push(host.clone());
        hosts.push(host.split(':').next().unwrap_or(host).to_owned());
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    config = if options.allow_remote {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts(hosts)
    };
    let auth_server = options.oauth.clone().map(|oauth| {
        crate::oauth::AuthServer::new(
            oauth,
            options.named_tokens.clone(),
            server.workspace.clone(),
            server.tools.clone(),
        )
    });
    let sessions = Sessions {
        inner: LocalSessionManager::default().with_event_store(Arc::new(crate::events::MemoryEventStore::new())),
        close_after: options.close_streams_after,
    };
    let service = StreamableHttpService::new(move || Ok(server.for_new_session()), Arc::new(sessions), config);
    let guard = Arc::new(Guard {
        options,
        bindings: SessionBindings::default(),
    });
    let mut app = axum::Router::new()
        .nest_service(ENDPOINT, service)
        .layer(middleware::from_fn_with_state(guard.clone(), check_request));
    if let Some(auth_server) = auth_server {
        // The authorization server's endpoints need no token; only the Host is checked (DNS rebinding).
        app = app.merge(crate::oauth::routes(auth_server).layer(middleware::from_fn_with_state(guard, check_host)));
    }
    app
}

/// How long a connection that sends nothing, with no request being handled, stays open.
pub const IDLE_CONNECTION: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a client waits before reconnecting to a stream the server closed.
const RECONNECT_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

/// rmcp's in-memory sessions with quire's event store, so a client that lost a stream (a dropped connection, or one
/// closed on purpose by `close_streams_after`) resumes it with `Last-Event-ID`.
struct Sessions {
    inner: LocalSessionManager,
    close_after: Option<std::time::Duration>,
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let Some(close_after) = self.close_after else {
            return Ok(self.inner.create_stream(id, message).await?.left_stream());
        };
        let handle = self
            .inner
            .sessions
            .read()
            .await
            .get(id)
            .cloned()
            .ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))?;
        let receiver = handle.establish_request_wise_channel().await?;
        let http_request_id = receiver.http_request_id;
        handle.push_message(message, http_request_id).await?;
        let answered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        if let Some(http_request_id) = http_request_id {
            let answered = answered.clone();
            tokio::spawn(async move {
                tokio::time::sleep(close_after).await;
                if !answered.load(std::sync::atomic::Ordering::Acquire) {
                    let _ = handle.close_sse_stream(http_request_id, Some(RECONNECT_AFTER)).await;
                }
            });
        }
        let stream = tokio_stream::wrappers::ReceiverStream::new(receiver.inner).inspect(move |event| {
            let is_answer = event
                .message
                .as_deref()
                .is_some_and(|m| matches!(m, ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)));
            if is_answer {
                answered.store(true, std::sync::atomic::Ordering::Release);
            }
        });
        Ok(stream.right_stream())
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl futures::Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// What the request check holds: the options, and which credential opened each session.
struct Guard {
    options: HttpOptions,
    bindings: SessionBindings,
}

/// The header that names a session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How long a session's binding is kept after its last request: rmcp closes a session idle for 5 minutes
/// (`SessionConfig::keep_alive`), so a binding older than that names a session that no longer exists.
const BINDING_KEPT: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Each session's credential: the hash of the named token that opened it, or "" for the server's own token. A
/// request naming a session opened with another credential is answered as if the session did not exist, so a
/// scoped token that learns another client's session id can neither read its stream nor replay its events.
#[derive(Default)]
struct SessionBindings(std::sync::Mutex<std::collections::HashMap<String, (String, std::time::Instant)>>);

impl SessionBindings {
    /// Whether `credential` may use `session` (a session this server never bound is left to rmcp, which knows
    /// whether it exists); marks the session used.
    fn allows(&self, session: &str, credential: &str) -> bool {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(session) {
            Some((owner, used)) if constant_time_eq(owner.as_bytes(), credential.as_bytes()) => {
                *used = std::time::Instant::now();
                true
            }
            Some(_) => false,
            None => true,
        }
    }

    fn bind(&self, session: &str, credential: &str) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        map.retain(|_, (_, used)| now.duration_since(*used) < BINDING_KEPT);
        map.insert(session.to_owned(), (credential.to_owned(), now));
    }

    fn forget(&self, session: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(session);
    }
}

/// Refuses, before anything else runs: a foreign `Origin` or `Host` (403, DNS rebinding), then a missing or wrong
/// bearer token (401), then a session opened with another credential (404, as for a session that does not exist).
async fn check_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // The connection is busy while the request is handled and its answer streams.
    let activity = request
        .extensions()
        .get::<axum::extract::ConnectInfo<Activity>>()
        .map(|info| info.0.clone());
    let handling = activity.as_ref().map(Activity::busy);
    let response = checked(&guard, request, next).await;
    let response = match &activity {
        Some(activity) => quire_loopback::hold_busy(activity, response),
        None => response,
    };
    drop(handling);
    response
}

/// The authorization server's endpoints: the `Host` must name this machine or the public address.
async fn check_host(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let public = guard.options.public().map(|(host, _)| host);
    if !guard.options.allow_remote && !quire_loopback::host_allowed(host) && public.as_deref() != Some(host) {
        return refusal(
            &guard.options,
            StatusCode::FORBIDDEN,
            &format!("Host '{host}' is not allowed"),
        );
    }
    next.run(request).await
}

async fn checked(guard: &Guard, request: Request, next: Next) -> Response {
    let options = &guard.options;
    let headers = request.headers();
    if let Some(problem) = foreign_origin_or_host(headers, options.allow_remote, options.public()) {
        tracing::warn!(%problem, "refused an HTTP request");
        return refusal(options, StatusCode::FORBIDDEN, &problem);
    }
    let Some(expected) = &options.token else {
        return answer(request, next, &guard.bindings, "").await;
    };
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let named = presented.and_then(|token| {
        let hash = token_hash(token);
        options
            .named_tokens
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|named| constant_time_eq(named.hash.as_bytes(), hash.as_bytes()))
            .cloned()
    });
    match presented {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => {
            answer(request, next, &guard.bindings, "").await
        }
        Some(_) if named.is_some() => {
            let mut request = request;
            let Some(named) = named else {
                unreachable!("matched as present")
            };
            if named.expires.is_some_and(|at| at <= std::time::SystemTime::now()) {
                return refusal(
                    options,
                    StatusCode::UNAUTHORIZED,
                    "The access token expired; refresh it.",
                );
            }
            let resource = options.oauth.as_ref().map(crate::oauth::OAuthOptions::resource);
            if named.resource.is_some() && named.resource != resource {
                return refusal(
                    options,
                    StatusCode::UNAUTHORIZED,
                    "The access token was issued for another server.",
                );
            }
            request.extensions_mut().insert(named.grant.clone());
            // An OAuth grant's access token changes at every refresh: its sessions belong to the grant.
            let credential = match named.expires {
                Some(_) => format!("grant:{}", named.grant.name),
                None => named.hash.clone(),
            };
            answer(request, next, &guard.bindings, &credential).await
        }
        Some(_) => refusal(
            options,
            StatusCode::UNAUTHORIZED,
            "The bearer token is not valid; `quire mcp token` prints the current one.",
        ),
        None => refusal(
            options,
            StatusCode::UNAUTHORIZED,
            "Authorization: Bearer <token> is required; `quire mcp token` prints the token.",
        ),
    }
}

/// Runs the request of a client that presented `credential`, within the sessions that credential opened. A `DELETE`
/// that ended a session answers 200: the specification allows it, and clients such as the Python SDK take the
/// transport's 202 for a failed termination.
async fn answer(request: Request, next: Next, bindings: &SessionBindings, credential: &str) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(session) = &session
        && !bindings.allows(session, credential)
    {
        tracing::warn!("refused a request for a session opened with another token");
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(r#"{"error":"Session not found"}"#))
            .unwrap_or_default();
    }
    let mut response = next.run(request).await;
    match &session {
        None => {
            let opened = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
            if let Some(opened) = opened {
                bindings.bind(opened, credential);
            }
        }
        Some(session) if delete && response.status().is_success() => bindings.forget(session),
        Some(_) => {}
    }
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Why a request is refused for where it comes from, if it is: an `Origin` other than the server's own (a web page
/// elsewhere; MCP clients send none), or a `Host` that does not name this machine (DNS rebinding). The rules are
/// quire-loopback's, shared with the web app.
fn foreign_origin_or_host(headers: &HeaderMap, allow_remote: bool, public: Option<(String, String)>) -> Option<String> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let (public_host, public_origin) = public.unzip();
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !quire_loopback::origin_allowed(Some(origin), host) && public_origin.as_deref() != Some(origin) {
            return Some(format!("Origin '{origin}' is not allowed"));
        }
    }
    if !allow_remote && !quire_loopback::host_allowed(host) && public_host.as_deref() != Some(host) {
        return Some(format!("Host '{host}' is not allowed"));
    }
    None
}

/// A refusal; a 401 says how to get a token (with OAuth, where the resource's metadata is: RFC 9728).
fn refusal(options: &HttpOptions, status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut response = (status, Body::from(body)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    if status == StatusCode::UNAUTHORIZED {
        let challenge = match &options.oauth {
            Some(oauth) => format!(
                "Bearer realm=\"quire\", error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource{}\", scope=\"notes\"",
                oauth.public_url, ENDPOINT
            ),
            None => "Bearer realm=\"quire\"".to_owned(),
        };
        if let Ok(value) = header::HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
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

    /// The MCP server's use of quire-loopback's rules (the rules themselves are tested there): the Origin is
    /// checked first, each refusal names what it refused, and `allow_remote` lifts the Host rule only.
    #[test]
    fn refusals_name_the_origin_or_host() {
        for (origin, host, allow_remote, expected) in [
            (None, "127.0.0.1:8848", false, None),
            (Some("http://127.0.0.1:8848"), "127.0.0.1:8848", false, None),
            (
                Some("http://evil.example"),
                "127.0.0.1:8848",
                false,
                Some("Origin 'http://evil.example' is not allowed"),
            ),
            // A rebound name's page is its own origin: the Host rule refuses it.
            (
                Some("http://evil.example"),
                "evil.example",
                false,
                Some("Host 'evil.example' is not allowed"),
            ),
            (None, "evil.example", false, Some("Host 'evil.example' is not allowed")),
            (None, "192.168.1.5:8848", true, None),
            (
                Some("http://localhost:5173"),
                "192.168.1.5:8848",
                true,
                Some("Origin 'http://localhost:5173' is not allowed"),
            ),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_static(host));
            if let Some(origin) = origin {
                headers.insert(header::ORIGIN, HeaderValue::from_static(origin));
            }
            let refused = super::foreign_origin_or_host(&headers, allow_remote, None);
            assert_eq!(refused.as_deref(), expected, "{origin:?} {host}");
        }
    }
}
