//! Clients: registered (RFC 7591), or named by a client ID metadata document (the client id is an HTTPS URL whose JSON
//! names the client and its redirect URIs; read once and kept for ten minutes).

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{AuthServer, OAuthClient, OAuthError};

/// How long a client ID metadata document is trusted before it is read again.
const METADATA_KEPT: Duration = Duration::from_secs(10 * 60);
/// The largest metadata document read.
const METADATA_MAX_BYTES: usize = 64 * 1024;

/// What a client sends to register, or what its metadata document holds.
#[derive(Debug, Deserialize)]
pub(crate) struct ClientMetadata {
    #[serde(default)]
    pub(crate) client_id: Option<String>,
    #[serde(default)]
    pub(crate) client_name: Option<String>,
    #[serde(default)]
    pub(crate) redirect_uris: Vec<String>,
    #[serde(default)]
    pub(crate) grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) response_types: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_method: Option<String>,
}

/// Whether a redirect URI may receive codes: HTTPS, or HTTP to this machine (a desktop client's loopback listener).
/// No fragment; a custom scheme is refused (no app of ours uses one).
pub(crate) fn redirect_allowed(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else { return false };
    if url.fragment().is_some() {
        return false;
    }
    match url.scheme() {
        "https" => url.host_str().is_some(),
        "http" => matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")),
        _ => false,
    }
}

/// Checks a registration or a metadata document and makes the client it describes.
pub(crate) fn client_from(metadata: ClientMetadata, client_id: String) -> Result<OAuthClient, OAuthError> {
    if metadata.redirect_uris.is_empty() {
        return Err(OAuthError::Refused("redirect_uris: at least one is required".into()));
    }
    if metadata.redirect_uris.len() > 10 || metadata.redirect_uris.iter().any(|u| u.len() > 2048) {
        return Err(OAuthError::Refused(
            "redirect_uris: at most 10, each at most 2048 characters".into(),
        ));
    }
    if let Some(bad) = metadata.redirect_uris.iter().find(|u| !redirect_allowed(u)) {
        return Err(OAuthError::Refused(format!(
            "redirect_uris: '{bad}' is neither https nor http to localhost (and may have no fragment)"
        )));
    }
    if let Some(types) = &metadata.grant_types
        && types.iter().any(|t| t != "authorization_code" && t != "refresh_token")
    {
        return Err(OAuthError::Refused(
            "grant_types: only authorization_code and refresh_token are supported".into(),
        ));
    }
    if let Some(types) = &metadata.response_types
        && types.iter().any(|t| t != "code")
    {
        return Err(OAuthError::Refused("response_types: only code is supported".into()));
    }
    if let Some(method) = &metadata.token_endpoint_auth_method
        && method != "none"
    {
        return Err(OAuthError::Refused(format!(
            "token_endpoint_auth_method: '{method}' is not supported; quire's clients are public (none), with PKCE"
        )));
    }
    let name = metadata
        .client_name
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "an MCP client".to_owned());
    Ok(OAuthClient {
        client_id,
        client_name: name.chars().take(100).collect(),
        redirect_uris: metadata.redirect_uris,
        created: super::now_ms() / 1000,
    })
}

/// Whether a client id is the URL of a metadata document: HTTPS, or (only when quire itself is served on this
/// machine over HTTP, for local testing) HTTP to this machine.
fn metadata_url(server: &AuthServer, client_id: &str) -> bool {
    let Ok(url) = url::Url::parse(client_id) else {
        return false;
    };
    match url.scheme() {
        "https" => url.host_str().is_some() && url.path() != "/",
        "http" => {
            let local = |u: &url::Url| matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
            local(&url) && url::Url::parse(&server.options.public_url).is_ok_and(|p| p.scheme() == "http" && local(&p))
        }
        _ => false,
    }
}

impl AuthServer {
    /// The client with this id: registered, or read from its metadata document.
    pub(crate) async fn client(&self, client_id: &str) -> Result<OAuthClient, OAuthError> {
        if let Some(client) = self
            .options
            .store
            .clients()?
            .into_iter()
            .find(|c| c.client_id == client_id)
        {
            return Ok(client);
        }
        if !metadata_url(self, client_id) {
            return Err(OAuthError::Refused(format!(
                "unknown client_id '{client_id}': register first"
            )));
        }
        if let Some((client, read)) = self
            .metadata_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(client_id)
            .cloned()
            && read.elapsed() < METADATA_KEPT
        {
            return Ok(client);
        }
        let client = self.read_metadata(client_id).await?;
        self.metadata_cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(client_id.to_owned(), (client.clone(), Instant::now()));
        Ok(client)
    }

    async fn read_metadata(&self, url: &str) -> Result<OAuthClient, OAuthError> {
        let Some(fetch) = &self.options.fetch else {
            return Err(OAuthError::Refused(
                "this server does not read client metadata documents: register instead".into(),
            ));
        };
        // What went wrong is logged, not told: whoever names a document learns only that it was not used (the
        // answer must not map what this machine reaches).
        let refused = |why: String| {
            tracing::warn!(%url, %why, "a client metadata document was not used");
            OAuthError::Refused(format!("the client metadata document at {url} could not be used"))
        };
        let Some(addresses) = self.fetchable(url).await else {
            return Err(refused("it is not on the public internet".into()));
        };
        let bytes = fetch
            .fetch(url, &addresses, METADATA_MAX_BYTES)
            .await
            .map_err(|e| refused(e.to_string()))?;
        let metadata: ClientMetadata = serde_json::from_slice(&bytes).map_err(|e| refused(e.to_string()))?;
        if metadata.client_id.as_deref() != Some(url) {
            return Err(refused("its client_id is not its own URL".into()));
        }
        client_from(metadata, url.to_owned()).map_err(|e| refused(e.to_string()))
    }
}

impl AuthServer {
    /// The addresses quire may fetch `url` from: every address its host has, when all are on the public internet
    /// (never this machine or its networks), but for a quire that is itself served on this machine over HTTP (local
    /// testing). The fetch connects to these and no others: a name that answers a public address to this check and a
    /// private one to a second lookup (DNS rebinding) is never looked up twice.
    async fn fetchable(&self, url: &str) -> Option<Vec<std::net::SocketAddr>> {
        let parsed = url::Url::parse(url).ok()?;
        let local = parsed.scheme() == "http";
        if local && !metadata_url(self, url) {
            return None;
        }
        let (host, port) = (parsed.host_str()?, parsed.port_or_known_default()?);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let addresses: Vec<_> = tokio::net::lookup_host((host, port)).await.ok()?.collect();
        let allowed = !addresses.is_empty() && (local || addresses.iter().all(|a| is_public(a.ip())));
        allowed.then_some(addresses)
    }
}

/// Whether an address is on the public internet.
fn is_public(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        std::net::IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(std::net::IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_public, redirect_allowed};

    #[test]
    fn only_public_addresses_are_fetched() {
        for (ip, public) in [
            ("93.184.216.34", true),
            ("2606:4700::1111", true),
            ("127.0.0.1", false),
            ("10.1.2.3", false),
            ("172.16.0.1", false),
            ("192.168.1.1", false),
            ("169.254.169.254", false),
            ("100.64.0.1", false),
            ("0.0.0.0", false),
            ("::1", false),
            ("fd00::1", false),
            ("fe80::1", false),
            ("::ffff:10.0.0.1", false),
        ] {
            assert_eq!(is_public(ip.parse().unwrap()), public, "{ip}");
        }
    }

    #[test]
    fn redirect_uris_are_https_or_loopback_http_without_a_fragment() {
        for (uri, allowed) in [
            ("https://claude.ai/api/mcp/auth_callback", true),
            ("http://127.0.0.1:33418/callback", true),
            ("http://localhost/callback", true),
            ("http://evil.example/callback", false),
            ("https://app.example/cb#x", false),
            ("javascript:alert(1)", false),
            ("myapp://callback", false),
            ("not a url", false),
        ] {
            assert_eq!(redirect_allowed(uri), allowed, "{uri}");
        }
    }
}
