//! Clients: registered (RFC 7591), or named by a client ID metadata document (the client id is an HTTPS URL whose JSON
//! names the client and its redirect URIs; read once and kept for ten minutes).

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{AuthServer, OAuthClient};

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
pub(crate) fn client_from(metadata: ClientMetadata, client_id: String) -> Result<OAuthClient, String> {
    if metadata.redirect_uris.is_empty() {
        return Err("redirect_uris: at least one is required".into());
    }
    if let Some(bad) = metadata.redirect_uris.iter().find(|u| !redirect_allowed(u)) {
        return Err(format!(
            "redirect_uris: '{bad}' is neither https nor http to localhost (and may have no fragment)"
        ));
    }
    if let Some(types) = &metadata.grant_types
        && types.iter().any(|t| t != "authorization_code" && t != "refresh_token")
    {
        return Err("grant_types: only authorization_code and refresh_token are supported".into());
    }
    if let Some(types) = &metadata.response_types
        && types.iter().any(|t| t != "code")
    {
        return Err("response_types: only code is supported".into());
    }
    if let Some(method) = &metadata.token_endpoint_auth_method
        && method != "none"
    {
        return Err(format!(
            "token_endpoint_auth_method: '{method}' is not supported; quire's clients are public (none), with PKCE"
        ));
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
    pub(crate) async fn client(&self, client_id: &str) -> Result<OAuthClient, String> {
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
            return Err(format!("unknown client_id '{client_id}': register first"));
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

    async fn read_metadata(&self, url: &str) -> Result<OAuthClient, String> {
        let Some(http) = &self.options.http else {
            return Err("this server does not read client metadata documents: register instead".into());
        };
        let refused = |why: String| format!("the client metadata document at {url} could not be used: {why}");
        let response = http
            .get(url)
            .header("accept", "application/json")
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .map_err(|e| refused(e.to_string()))?;
        if !response.status().is_success() {
            return Err(refused(format!("HTTP {}", response.status())));
        }
        if response
            .content_length()
            .is_some_and(|n| n as usize > METADATA_MAX_BYTES)
        {
            return Err(refused("it is too large".into()));
        }
        let bytes = response.bytes().await.map_err(|e| refused(e.to_string()))?;
        if bytes.len() > METADATA_MAX_BYTES {
            return Err(refused("it is too large".into()));
        }
        let metadata: ClientMetadata = serde_json::from_slice(&bytes).map_err(|e| refused(e.to_string()))?;
        if metadata.client_id.as_deref() != Some(url) {
            return Err(refused("its client_id is not its own URL".into()));
        }
        client_from(metadata, url.to_owned()).map_err(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::redirect_allowed;

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
