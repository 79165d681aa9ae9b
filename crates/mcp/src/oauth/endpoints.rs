//! The authorization server's endpoints but the consent page: metadata, registration, tokens, revocation.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::Digest as _;

use super::clients::{ClientMetadata, client_from};
use super::{AuthServer, OAuthError, OAuthGrant, now_ms, random};
use crate::tokens::token_hash;

/// The paths the authorization server answers, beside the MCP endpoint.
pub(crate) fn routes(server: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(resource_metadata))
        .route("/.well-known/oauth-protected-resource/mcp", get(resource_metadata))
        .route("/.well-known/oauth-authorization-server", get(server_metadata))
        .route("/.well-known/openid-configuration", get(server_metadata))
        .route("/oauth/register", post(register))
        .route(
            "/oauth/authorize",
            get(super::consent::show).post(super::consent::decide),
        )
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        // Registrations, forms and consents are small; nothing here reads more (a client cannot fill the disk).
        .layer(axum::extract::DefaultBodyLimit::max(REQUEST_LIMIT))
        .with_state(server)
}

/// The largest request any of these endpoints reads.
const REQUEST_LIMIT: usize = 16 * 1024;
/// The most clients kept: past it, the oldest that was never granted anything makes room.
const MOST_CLIENTS: usize = 200;
/// How long after a rotation the previous refresh token is only refused, not taken as stolen: a client that lost
/// the answer to its refresh and tries again.
const RETRY_GRACE_MS: i64 = 60_000;

/// An OAuth error answer: `{"error", "error_description"}`, never cached.
pub(crate) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    no_store((status, Json(json!({"error": error, "error_description": description}))).into_response())
}

fn no_store(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// RFC 9728: what this resource is and who issues its tokens.
async fn resource_metadata(State(server): State<Arc<AuthServer>>) -> Json<Value> {
    Json(json!({
        "resource": server.options.resource(),
        "authorization_servers": [server.options.public_url],
        "scopes_supported": ["notes"],
        "bearer_methods_supported": ["header"],
        "resource_name": "quire notes",
    }))
}

/// RFC 8414: where to authorize, get and revoke tokens, and register.
async fn server_metadata(State(server): State<Arc<AuthServer>>) -> Json<Value> {
    let base = &server.options.public_url;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/token"),
        "registration_endpoint": format!("{base}/oauth/register"),
        "revocation_endpoint": format!("{base}/oauth/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["notes"],
        "client_id_metadata_document_supported": server.options.fetch.is_some(),
        "authorization_response_iss_parameter_supported": true,
    }))
}

/// RFC 7591: a client registers its name and redirect URIs and gets an id (public clients: no secret).
async fn register(State(server): State<Arc<AuthServer>>, body: axum::body::Bytes) -> Response {
    let metadata: ClientMetadata = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(e) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_client_metadata", &e.to_string()),
    };
    let id = match random() {
        Ok(id) => id[..32].to_owned(),
        Err(e) => return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e.to_string()),
    };
    let client = match client_from(metadata, id) {
        Ok(client) => client,
        Err(why) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", &why.to_string()),
    };
    if let Err(e) = make_room(&server).and_then(|()| server.options.store.add_client(&client)) {
        return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e.to_string());
    }
    tracing::info!(client = %client.client_name, "an OAuth client registered");
    no_store(
        (
            StatusCode::CREATED,
            Json(json!({
                "client_id": client.client_id,
                "client_id_issued_at": client.created,
                "client_name": client.client_name,
                "redirect_uris": client.redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            })),
        )
            .into_response(),
    )
}

/// Past [`MOST_CLIENTS`], forgets the oldest clients that hold no grant (anyone may register).
fn make_room(server: &AuthServer) -> Result<(), OAuthError> {
    let clients = server.options.store.clients()?;
    if clients.len() < MOST_CLIENTS {
        return Ok(());
    }
    let granted: Vec<String> = server
        .options
        .store
        .grants()?
        .into_iter()
        .map(|g| g.client_id)
        .collect();
    let mut idle: Vec<_> = clients.iter().filter(|c| !granted.contains(&c.client_id)).collect();
    idle.sort_by_key(|c| c.created);
    for client in idle.iter().take(clients.len() + 1 - MOST_CLIENTS) {
        server.options.store.remove_client(&client.client_id)?;
    }
    Ok(())
}

/// The token endpoint's form.
#[derive(Debug, Deserialize)]
pub(crate) struct TokenRequest {
    grant_type: String,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
}

/// Whether a PKCE verifier matches its S256 challenge.
pub(crate) fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    well_formed && quire_loopback::constant_time_eq(computed.as_bytes(), challenge.as_bytes())
}

/// The token endpoint: a code (with its PKCE verifier) or a refresh token for a new access token and a new refresh
/// token. A code works once; presented again, the grant it gave is revoked.
async fn token(State(server): State<Arc<AuthServer>>, Form(request): Form<TokenRequest>) -> Response {
    if let Some(resource) = &request.resource
        && resource.trim_end_matches('/') != server.options.resource()
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            &format!("this server issues tokens for {} only", server.options.resource()),
        );
    }
    match request.grant_type.as_str() {
        "authorization_code" => exchange_code(&server, &request),
        "refresh_token" => refresh(&server, &request),
        other => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("'{other}' is not supported: authorization_code or refresh_token"),
        ),
    }
}

fn invalid_grant(why: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", why)
}

fn exchange_code(server: &AuthServer, request: &TokenRequest) -> Response {
    let Some(code) = request.code.as_deref() else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "code is required");
    };
    let key = token_hash(code);
    let mut codes = server.codes.lock().unwrap_or_else(|e| e.into_inner());
    codes.retain(|_, c| c.expires > std::time::Instant::now() || c.exchanged.is_some());
    let Some(entry) = codes.get_mut(&key) else {
        return invalid_grant("the code is unknown or expired");
    };
    if let Some(grant) = entry.exchanged.clone() {
        drop(codes);
        // A code used twice: someone else has it. What it gave is taken back.
        let _ = server.revoke(&grant);
        tracing::warn!(%grant, "an authorization code was presented twice: its grant is revoked");
        return invalid_grant("the code was used already; the grant it gave is revoked");
    }
    if entry.expires <= std::time::Instant::now() {
        return invalid_grant("the code expired");
    }
    if request.client_id.as_deref() != Some(entry.client_id.as_str()) {
        return invalid_grant("the code was issued to another client");
    }
    if request.redirect_uri.as_deref() != Some(entry.redirect_uri.as_str()) {
        return invalid_grant("redirect_uri is not the one the code was issued for");
    }
    match request.code_verifier.as_deref() {
        Some(verifier) if pkce_matches(verifier, &entry.challenge) => {}
        Some(_) => return invalid_grant("the code_verifier does not match the code_challenge"),
        None => return invalid_grant("code_verifier is required (PKCE)"),
    }
    let entry = entry.clone();
    let client_name = entry.client_name.clone();
    let _one = server.grants_lock.lock().unwrap_or_else(|e| e.into_inner());
    let grants = server.options.store.grants().unwrap_or_default();
    // Grants whose refresh token expired are of no use to anyone: they leave the list.
    for expired in grants.iter().filter(|g| g.refresh_expires <= now_ms()) {
        let _ = server.revoke(&expired.name);
    }
    // A client that asks again replaces what it had (the person just chose anew); otherwise a new name.
    let taken: Vec<String> = grants.iter().map(|g| g.name.clone()).collect();
    let name = grants
        .iter()
        .find(|g| g.client_id == entry.client_id && g.refresh_expires > now_ms())
        .map(|g| g.name.clone())
        .unwrap_or_else(|| grant_name(&client_name, &taken));
    let mut grant = OAuthGrant {
        name: name.clone(),
        client_id: entry.client_id.clone(),
        client_name,
        notebooks: entry.choices.notebooks.clone(),
        read_only: entry.choices.read_only,
        review: entry.choices.review,
        plugins: entry.choices.plugins.clone(),
        resource: server.options.resource(),
        access_hash: String::new(),
        access_expires: 0,
        refresh_hash: String::new(),
        refresh_expires: 0,
        previous_refresh_hash: None,
        rotated_at: 0,
        created: now_ms() / 1000,
    };
    let answer = issue(server, &mut grant, &entry.scope, false);
    if answer.status().is_success()
        && let Some(entry) = codes.get_mut(&key)
    {
        entry.exchanged = Some(name);
    }
    answer
}

/// `oauth-` and the client's name in lower case letters and digits, numbered when taken.
fn grant_name(client: &str, taken: &[String]) -> String {
    let slug: String = client
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let slug: String = slug.chars().take(40).collect();
    let base = if slug.is_empty() {
        "oauth-client".to_owned()
    } else {
        format!("oauth-{slug}")
    };
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}-{n}");
        n += 1;
    }
    name
}

/// New tokens for a grant (its old ones stop working), stored, and the answer that carries them. `refreshed`: the
/// same grant goes on (its streams too).
fn issue(server: &AuthServer, grant: &mut OAuthGrant, scope: &str, refreshed: bool) -> Response {
    let (Ok(access), Ok(refresh)) = (random(), random()) else {
        return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "no random bytes");
    };
    let now = now_ms();
    grant.access_hash = token_hash(&access);
    grant.access_expires = now + server.options.access_ttl.as_millis() as i64;
    if refreshed {
        grant.previous_refresh_hash = Some(grant.refresh_hash.clone());
        grant.rotated_at = now;
    }
    grant.refresh_hash = token_hash(&refresh);
    grant.refresh_expires = now + server.options.refresh_ttl.as_millis() as i64;
    if let Err(e) = server.put_grant(grant, refreshed) {
        return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e.to_string());
    }
    no_store(
        Json(json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": server.options.access_ttl.as_secs(),
            "refresh_token": refresh,
            "scope": scope,
        }))
        .into_response(),
    )
}

fn refresh(server: &AuthServer, request: &TokenRequest) -> Response {
    let Some(token) = request.refresh_token.as_deref() else {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_request", "refresh_token is required");
    };
    let hash = token_hash(token);
    let _one = server.grants_lock.lock().unwrap_or_else(|e| e.into_inner());
    let grants = server.options.store.grants().unwrap_or_default();
    if let Some(stolen) = grants
        .iter()
        .find(|g| g.previous_refresh_hash.as_deref() == Some(hash.as_str()))
    {
        if now_ms() - stolen.rotated_at < RETRY_GRACE_MS {
            // Most likely the same client retrying a refresh whose answer it lost: refused, not punished.
            return invalid_grant("the refresh token was just used; use the tokens it gave");
        }
        // A refresh token used after it was rotated: two parties hold it. The grant is revoked.
        let _ = server.revoke(&stolen.name);
        tracing::warn!(grant = %stolen.name, "a rotated refresh token was presented again: its grant is revoked");
        return invalid_grant("the refresh token was used already; the grant is revoked");
    }
    let Some(mut grant) = grants.into_iter().find(|g| g.refresh_hash == hash) else {
        return invalid_grant("the refresh token is unknown, revoked or expired");
    };
    if grant.refresh_expires <= now_ms() {
        return invalid_grant("the refresh token expired");
    }
    if request.client_id.as_deref() != Some(grant.client_id.as_str()) {
        return invalid_grant("the refresh token was issued to another client");
    }
    if grant.resource != server.options.resource() {
        // The public address changed (a tunnel started anew): its tokens would be refused; sign in again.
        return invalid_grant("the grant is for another address of this server; sign in again");
    }
    issue(server, &mut grant, "notes", true)
}

/// RFC 7009's form.
#[derive(Debug, Deserialize)]
pub(crate) struct RevokeRequest {
    token: String,
}

/// Revocation: an access or refresh token's grant ends (both its tokens stop working). Unknown tokens are no error.
async fn revoke(State(server): State<Arc<AuthServer>>, Form(request): Form<RevokeRequest>) -> Response {
    let hash = token_hash(&request.token);
    let _one = server.grants_lock.lock().unwrap_or_else(|e| e.into_inner());
    let grants = server.options.store.grants().unwrap_or_default();
    if let Some(grant) = grants.iter().find(|g| g.access_hash == hash || g.refresh_hash == hash)
        && let Err(e) = server.revoke(&grant.name)
    {
        return oauth_error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", &e.to_string());
    }
    no_store(StatusCode::OK.into_response())
}

#[cfg(test)]
mod tests {
    use super::{grant_name, pkce_matches};

    #[test]
    fn pkce_s256_and_grant_names() {
        // RFC 7636's example.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!pkce_matches(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cX"));
        assert!(!pkce_matches("short", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert_eq!(grant_name("Claude", &[]), "oauth-claude");
        assert_eq!(grant_name("Claude", &["oauth-claude".into()]), "oauth-claude-2");
        assert_eq!(grant_name("ChatGPT (web) ✓", &[]), "oauth-chatgpt-web");
        assert_eq!(grant_name("✓", &[]), "oauth-client");
    }
}
