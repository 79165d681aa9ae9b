//! Tokens the HTTP server accepts besides its own: named tokens (and OAuth grants, which are named tokens with an
//! expiry and an audience), known by their SHA-256; and the path they open. Below both `http` and `oauth`.

use std::sync::Arc;

use crate::Grant;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";
/// A named token: the SHA-256 of the token (hex, [`token_hash`]) and what it grants.
#[derive(Debug, Clone)]
pub struct NamedToken {
    /// `token_hash` of the token; the token itself is never stored.
    pub hash: String,
    /// What a request with it may reach.
    pub grant: Grant,
    /// When it stops working (an OAuth access token); `None`: when revoked.
    pub expires: Option<std::time::SystemTime>,
    /// The resource it was issued for (an OAuth access token's audience): refused by a server that is another one.
    pub resource: Option<String>,
}

/// The named tokens a server accepts, changeable while it serves.
pub type NamedTokens = Arc<std::sync::RwLock<Vec<NamedToken>>>;

/// The SHA-256 of a token, in lowercase hex: how named tokens are stored and recognised.
pub fn token_hash(token: &str) -> String {
    use sha2::Digest as _;
    quire_core::hex(&sha2::Sha256::digest(token.trim().as_bytes()))
}
