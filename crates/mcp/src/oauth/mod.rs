//! MCP authorization (2025-11-25) for quire's HTTP server, so that hosted assistants (Claude.ai connectors, ChatGPT)
//! reach quire through a tunnel: quire is both the protected resource and its own authorization server.
//!
//! - `endpoints.rs`: protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414), dynamic
//!   client registration (RFC 7591), the token endpoint (authorization code with PKCE S256, refresh tokens rotated at
//!   each use, resource indicators of RFC 8707 checked against this server) and revocation (RFC 7009).
//! - `consent.rs`: the authorization endpoint, a page where the person who owns quire (they type quire's key, or
//!   already did in this browser) names the notebooks, read-only and review, or refuses.
//! - `clients.rs`: clients, registered or known by a client ID metadata document (an HTTPS URL whose JSON names the
//!   client and its redirect URIs).
//!
//! Tokens are opaque random strings; only their SHA-256 is kept. A grant is a named token ([`NamedToken`]) with an
//! expiry and an audience, so the HTTP layer checks it where it checks every token, and `quire mcp token list`
//! shows and revokes it. The app keeps grants and clients in its token file through [`OAuthStore`].

mod clients;
mod consent;
mod endpoints;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use quire_core::{Scope, Workspace};
use serde::{Deserialize, Serialize};

use crate::server::Grant;
use crate::tokens::{NamedToken, NamedTokens};

pub(crate) use endpoints::routes;

/// How long an access token lasts.
pub const ACCESS_TTL: Duration = Duration::from_secs(60 * 60);
/// How long a refresh token lasts (each use gives a new one).
pub const REFRESH_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// How long an authorization code lasts.
const CODE_TTL: Duration = Duration::from_secs(60);
/// How long the consent page's sign-in (quire's key typed once) lasts in that browser.
const OWNER_TTL: Duration = Duration::from_secs(12 * 60 * 60);

/// How to authorize clients.
#[derive(Clone)]
pub struct OAuthOptions {
    /// The address clients reach this server at (`https://notes.example.com`, no trailing slash): the issuer, and,
    /// with `/mcp`, the protected resource.
    pub public_url: String,
    /// What the person types on the consent page to show it is them: the server's own token (`quire mcp token`).
    pub owner_key: String,
    /// Where clients and grants are kept.
    pub store: Arc<dyn OAuthStore>,
    /// How long access tokens last.
    pub access_ttl: Duration,
    /// How long refresh tokens last.
    pub refresh_ttl: Duration,
    /// What reads client ID metadata documents (`None`: such clients are refused).
    pub fetch: Option<Arc<dyn MetadataFetch>>,
}

/// A boxed future that can move between threads.
pub type FetchFuture<'a> =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<u8>, FetchError>> + Send + 'a>>;

/// Reads client ID metadata documents: the one thing the authorization server needs from the network, handed in by
/// whoever sets up HTTP (quire-host). The server resolves the document's host and checks every address first.
pub trait MetadataFetch: Send + Sync {
    /// The body of a `GET` of `url`, connecting only to `addresses` (those the server checked: never a second lookup
    /// of the name, which a rebinding name would answer differently), following no redirect, within 5 seconds and
    /// `max_bytes`.
    fn fetch<'a>(&'a self, url: &'a str, addresses: &'a [std::net::SocketAddr], max_bytes: usize) -> FetchFuture<'a>;
}

/// Why a document could not be read (logged, never told to the client).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("public_url", &self.public_url)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// Options for `public_url` (https, or http to this machine; the origin only), with the usual lifetimes; client
    /// metadata documents are read with `fetch` when given.
    pub fn new(
        public_url: &str,
        owner_key: String,
        store: Arc<dyn OAuthStore>,
        fetch: Option<Arc<dyn MetadataFetch>>,
    ) -> Result<OAuthOptions, OAuthError> {
        let parsed =
            url::Url::parse(public_url).map_err(|e| OAuthError::Address(format!("{public_url} is not a URL ({e})")))?;
        let local = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
        if parsed.scheme() != "https" && !(parsed.scheme() == "http" && local) {
            return Err(OAuthError::Address(format!(
                "{public_url} must be https:// (the tunnel or proxy in front terminates TLS); http:// only for this machine"
            )));
        }
        if parsed.path() != "/" || parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(OAuthError::Address(format!(
                "{public_url} must be an origin only, such as https://notes.example.com"
            )));
        }
        Ok(OAuthOptions {
            public_url: parsed.origin().ascii_serialization(),
            owner_key,
            store,
            access_ttl: ACCESS_TTL,
            refresh_ttl: REFRESH_TTL,
            fetch,
        })
    }

    /// The protected resource: the MCP endpoint at the public address.
    pub fn resource(&self) -> String {
        format!("{}{}", self.public_url, crate::tokens::ENDPOINT)
    }
}

/// A client that registered (or named itself by a metadata document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClient {
    /// Its id (random, or the URL of its metadata document).
    pub client_id: String,
    /// Its name as it gave it.
    pub client_name: String,
    /// Where it may be sent back with a code: exact matches only.
    pub redirect_uris: Vec<String>,
    /// When it registered (Unix seconds).
    pub created: i64,
}

/// What the person allowed a client: a named grant with its current tokens (their hashes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthGrant {
    /// Its name, as `quire mcp token list` shows it (`oauth-claude`).
    pub name: String,
    /// The client.
    pub client_id: String,
    /// The client's name.
    pub client_name: String,
    /// The notebooks it reaches (ids); empty for the whole workspace.
    pub notebooks: Vec<String>,
    /// Only read-only tools.
    pub read_only: bool,
    /// Its writes are staged for review.
    pub review: bool,
    /// The plugins whose tools it may call; `None` (and a grant made before plugins were offered over MCP): every
    /// plugin the server offers, including ones added later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugins: Option<Vec<String>>,
    /// The resource its tokens are for.
    pub resource: String,
    /// The access token's hash and when it expires (Unix milliseconds).
    pub access_hash: String,
    /// See `access_hash`.
    pub access_expires: i64,
    /// The refresh token's hash and when it expires (Unix milliseconds).
    pub refresh_hash: String,
    /// See `refresh_hash`.
    pub refresh_expires: i64,
    /// The refresh token it replaced: presented again, it means a stolen token, and the grant is revoked (unless
    /// within a minute of the rotation: a client retrying a refresh whose answer it lost).
    #[serde(default)]
    pub previous_refresh_hash: Option<String>,
    /// When the refresh token was last rotated (Unix milliseconds).
    #[serde(default)]
    pub rotated_at: i64,
    /// When it was granted (Unix seconds).
    pub created: i64,
}

impl OAuthGrant {
    /// The named token its access token is, as the HTTP layer checks it.
    pub fn named_token(&self) -> NamedToken {
        NamedToken {
            hash: self.access_hash.clone(),
            grant: Grant {
                name: self.name.clone(),
                scope: (!self.notebooks.is_empty()).then(|| Scope::notebooks(self.notebooks.iter().cloned())),
                read_only: self.read_only,
                stage: self.review,
                plugins: self.plugins.as_ref().map(|p| p.iter().cloned().collect()),
                ..Grant::default()
            },
            expires: Some(SystemTime::UNIX_EPOCH + Duration::from_millis(self.access_expires.max(0) as u64)),
            resource: Some(self.resource.clone()),
        }
    }
}

/// Why an OAuth step failed. A refusal's text is said to the client (it never holds a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The store of clients and grants failed ([`OAuthStore`]).
    #[error("the store of clients and grants failed: {0}")]
    Store(String),
    /// A client, a registration or a metadata document that cannot be used, and why.
    #[error("{0}")]
    Refused(String),
    /// The public address cannot be served with OAuth, and what to give instead.
    #[error("{0}")]
    Address(String),
    /// The operating system gave no random bytes for a token.
    #[error("no random bytes for a token")]
    NoRandomness,
}

/// Where clients and grants live between runs (the app: its token file). Every method is quick and synchronous.
pub trait OAuthStore: Send + Sync {
    /// Every client.
    fn clients(&self) -> Result<Vec<OAuthClient>, OAuthError>;
    /// Adds a client.
    fn add_client(&self, client: &OAuthClient) -> Result<(), OAuthError>;
    /// Every grant.
    fn grants(&self) -> Result<Vec<OAuthGrant>, OAuthError>;
    /// Adds a grant, or replaces the one of its name.
    fn put_grant(&self, grant: &OAuthGrant) -> Result<(), OAuthError>;
    /// Removes a grant (its tokens stop working).
    fn remove_grant(&self, name: &str) -> Result<(), OAuthError>;
    /// Removes a client (one registered and never granted anything, to make room).
    fn remove_client(&self, client_id: &str) -> Result<(), OAuthError>;
}

/// An [`OAuthStore`] in memory, for tests and embedders that keep nothing.
#[derive(Default)]
pub struct MemoryStore(Mutex<(Vec<OAuthClient>, Vec<OAuthGrant>)>);

impl OAuthStore for MemoryStore {
    fn clients(&self) -> Result<Vec<OAuthClient>, OAuthError> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).0.clone())
    }

    fn add_client(&self, client: &OAuthClient) -> Result<(), OAuthError> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).0.push(client.clone());
        Ok(())
    }

    fn grants(&self) -> Result<Vec<OAuthGrant>, OAuthError> {
        Ok(self.0.lock().unwrap_or_else(|e| e.into_inner()).1.clone())
    }

    fn put_grant(&self, grant: &OAuthGrant) -> Result<(), OAuthError> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.1.retain(|g| g.name != grant.name);
        all.1.push(grant.clone());
        Ok(())
    }

    fn remove_grant(&self, name: &str) -> Result<(), OAuthError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .1
            .retain(|g| g.name != name);
        Ok(())
    }

    fn remove_client(&self, client_id: &str) -> Result<(), OAuthError> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .retain(|c| c.client_id != client_id);
        Ok(())
    }
}

/// What the person chose on the consent page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Choices {
    pub(crate) notebooks: Vec<String>,
    pub(crate) read_only: bool,
    pub(crate) review: bool,
    /// The plugins ticked, or `None` for every plugin (those added later too).
    pub(crate) plugins: Option<Vec<String>>,
}

/// An authorization request waiting for the person's answer on the consent page.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) client: OAuthClient,
    pub(crate) redirect_uri: String,
    pub(crate) state: Option<String>,
    pub(crate) challenge: String,
    pub(crate) scope: String,
    pub(crate) expires: std::time::Instant,
}

/// A code handed out, until it is exchanged (once).
#[derive(Debug, Clone)]
pub(crate) struct Code {
    pub(crate) client_id: String,
    pub(crate) client_name: String,
    pub(crate) redirect_uri: String,
    pub(crate) challenge: String,
    pub(crate) scope: String,
    pub(crate) choices: Choices,
    pub(crate) expires: std::time::Instant,
    /// Set once exchanged: the grant it gave, revoked if the code comes again.
    pub(crate) exchanged: Option<String>,
}

/// The authorization server's state: options, and what lives only in memory (codes, pending consents, signed-in
/// browsers).
pub(crate) struct AuthServer {
    pub(crate) options: OAuthOptions,
    pub(crate) named_tokens: NamedTokens,
    pub(crate) workspace: Workspace,
    /// The server's tools, for the plugins the consent page lists.
    pub(crate) tools: Arc<quire_tools::ToolRegistry>,
    pub(crate) pending: Mutex<HashMap<String, Pending>>,
    pub(crate) codes: Mutex<HashMap<String, Code>>,
    pub(crate) owners: Mutex<HashMap<String, std::time::Instant>>,
    pub(crate) metadata_cache: Mutex<HashMap<String, (OAuthClient, std::time::Instant)>>,
    /// One change of grants at a time in this process (an exchange, a refresh, a revocation), so that a refresh
    /// never brings back a grant revoked while it ran.
    pub(crate) grants_lock: Mutex<()>,
}

impl AuthServer {
    pub(crate) fn new(
        options: OAuthOptions,
        named_tokens: NamedTokens,
        workspace: Workspace,
        tools: Arc<quire_tools::ToolRegistry>,
    ) -> Arc<AuthServer> {
        Arc::new(AuthServer {
            options,
            named_tokens,
            workspace,
            tools,
            pending: Mutex::default(),
            codes: Mutex::default(),
            owners: Mutex::default(),
            metadata_cache: Mutex::default(),
            grants_lock: Mutex::default(),
        })
    }

    /// Stores a grant and makes its access token count at once (the app's reload of its file follows). A refresh
    /// (`same_grant`) keeps the streams opened with the grant's earlier token; a new consent ends them.
    pub(crate) fn put_grant(&self, grant: &OAuthGrant, same_grant: bool) -> Result<(), OAuthError> {
        self.options.store.put_grant(grant)?;
        let mut tokens = self.named_tokens.write().unwrap_or_else(|e| e.into_inner());
        let mut token = grant.named_token();
        for old in tokens.iter().filter(|t| t.grant.name == grant.name) {
            if same_grant {
                token.grant.revoked = old.grant.revoked.clone();
            } else {
                old.grant.revoked.store(true, std::sync::atomic::Ordering::Release);
            }
        }
        tokens.retain(|t| t.grant.name != grant.name);
        tokens.push(token);
        Ok(())
    }

    /// Revokes a grant: its tokens stop working at once.
    pub(crate) fn revoke(&self, name: &str) -> Result<(), OAuthError> {
        self.options.store.remove_grant(name)?;
        let mut tokens = self.named_tokens.write().unwrap_or_else(|e| e.into_inner());
        for token in tokens.iter().filter(|t| t.grant.name == name) {
            token.grant.revoked.store(true, std::sync::atomic::Ordering::Release);
        }
        tokens.retain(|t| t.grant.name != name);
        Ok(())
    }
}

/// Now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A fresh random token (256 bits, hex).
pub(crate) fn random() -> Result<String, OAuthError> {
    quire_loopback::new_secret().map_err(|_| OAuthError::NoRandomness)
}
