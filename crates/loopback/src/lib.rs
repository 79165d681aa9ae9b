//! quire-loopback: what quire's two HTTP servers on loopback (the web app in quire-web, MCP in quire-mcp) share, so
//! that each rule has one home: connections that send nothing for a while are closed ([`IdleListener`]), a request
//! keeps its connection open while it is handled and while its answer streams ([`Activity::busy`], [`hold_busy`]),
//! a request is taken only from this machine and from no other site ([`host_allowed`], [`origin_allowed`]), and
//! secrets are made ([`new_secret`]), kept in files only the user reads ([`write_private`]) and compared in constant
//! time ([`constant_time_eq`]).
//!
//! It depends on no other quire crate and knows nothing about notes, tools or MCP.

mod connection;
mod files;
mod security;
mod tls;

pub use connection::{Activity, Busy, IdleListener, hold_busy};
pub use files::{create_private, write_private};
pub use security::{NoRandomness, host_allowed, new_key, new_secret, origin_allowed};
pub use tls::{Tls, TlsListener};

/// Whether two secrets are equal, taking the same time wherever they differ (a token, a session secret, an event id's
/// secret): a caller cannot find one byte at a time by timing the answers.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::constant_time_eq;

    #[test]
    fn equal_secrets_only() {
        for (a, b, equal) in [
            ("abc", "abc", true),
            ("abc", "abd", false),
            ("ab", "abc", false),
            ("", "", true),
            ("", "a", false),
        ] {
            assert_eq!(constant_time_eq(a.as_bytes(), b.as_bytes()), equal, "{a:?} {b:?}");
        }
    }
}
