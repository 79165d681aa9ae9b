//! Who may call a server on loopback (the `Host` and `Origin` rules), and the random secrets that open it.
//!
//! A web page elsewhere can make the browser send requests to a server on this machine in two ways: by naming it
//! (a cross-site request, which carries the page's `Origin`), or by pointing a domain of its own at 127.0.0.1 (DNS
//! rebinding, which carries that domain in `Host`). A server that accepts only loopback names in `Host` and only
//! its own origin, or none, in `Origin` refuses both. Browsers send `Origin` with every request a page makes other
//! than a plain `GET`; programs such as MCP clients send none.

use std::fmt;

/// The names of this machine a `Host` header may carry, as browsers and HTTP clients write them (lower case, an IPv6
/// address in brackets).
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Whether a `Host` header names this machine: `localhost`, `127.0.0.1` or `[::1]`, alone or with a port
/// (`127.0.0.1:8848`). Anything else is refused: another name (DNS rebinding), the same name with a trailing dot or
/// in capitals, an empty header, a port that is not a number, an IPv6 address without brackets or written longhand.
pub fn host_allowed(host: &str) -> bool {
    LOOPBACK_NAMES.iter().any(|name| {
        host.strip_prefix(name).is_some_and(|rest| {
            rest.is_empty()
                || rest
                    .strip_prefix(':')
                    .is_some_and(|port| port.parse::<u16>().is_ok() && port.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

/// Whether a request's `Origin` may call the server it was sent to (`host`, its `Host` header): no `Origin` at all
/// (a program rather than a web page), or exactly the server's own origin, `http://` and `host` (its own page).
/// Another port, another scheme, another name and `null` (a sandboxed or local file's page) are refused.
pub fn origin_allowed(origin: Option<&str>, host: &str) -> bool {
    match origin {
        None => true,
        Some(origin) => !host.is_empty() && origin.strip_prefix("http://") == Some(host),
    }
}

/// A new secret: 256 random bits from the system, as 64 lower-case hex digits (a session id, a session's secret, an
/// event stream's capability, a page's nonce).
pub fn new_secret() -> Result<String, NoRandomness> {
    Ok(new_key()?.iter().map(|b| format!("{b:02x}")).collect())
}

/// A new key: 256 random bits from the system, as bytes (what sealing a client's state takes).
pub fn new_key() -> Result<[u8; 32], NoRandomness> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| NoRandomness(e.to_string()))?;
    Ok(bytes)
}

/// The system's random source failed, so no secret could be made.
#[derive(Debug)]
pub struct NoRandomness(String);

impl fmt::Display for NoRandomness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the system's random source is unavailable: {}", self.0)
    }
}

impl std::error::Error for NoRandomness {}

#[cfg(test)]
mod tests {
    use super::{host_allowed, new_secret, origin_allowed};

    /// Each `Host` (allowed or not), then each `Origin` sent to a `Host` (allowed or not), then a secret.
    #[test]
    fn hosts_origins_and_secrets() {
        for (host, allowed) in [
            ("localhost", true),
            ("localhost:8848", true),
            ("127.0.0.1", true),
            ("127.0.0.1:8848", true),
            ("[::1]", true),
            ("[::1]:8848", true),
            // DNS rebinding: names of the attacker's that resolve to 127.0.0.1.
            ("evil.example", false),
            ("evil.example:8848", false),
            ("127.0.0.1.evil.example:80", false),
            ("localhost.evil.example", false),
            ("localhost.", false),
            ("LOCALHOST:8848", false),
            ("127.0.0.2", false),
            ("", false),
            // Ports: digits, and at most 65535.
            ("localhost:", false),
            ("localhost:http", false),
            ("localhost:+80", false),
            ("localhost:99999", false),
            ("localhost:8848:1", false),
            // IPv6: only the short form, in brackets.
            ("::1", false),
            ("::1:8848", false),
            ("[::1]junk", false),
            ("[::1]:", false),
            ("[0:0:0:0:0:0:0:1]", false),
            ("[::ffff:127.0.0.1]", false),
        ] {
            assert_eq!(host_allowed(host), allowed, "Host {host:?}");
        }
        for (origin, host, allowed) in [
            // A program (an MCP client, curl) sends no Origin.
            (None, "127.0.0.1:8848", true),
            (None, "[::1]:8848", true),
            // The server's own page.
            (Some("http://127.0.0.1:8848"), "127.0.0.1:8848", true),
            (Some("http://localhost:8848"), "localhost:8848", true),
            (Some("http://[::1]:8848"), "[::1]:8848", true),
            (Some("http://localhost"), "localhost", true),
            // Another port, another loopback name, another scheme.
            (Some("http://127.0.0.1:5173"), "127.0.0.1:8848", false),
            (Some("http://localhost:8848"), "127.0.0.1:8848", false),
            (Some("http://[::1]:5173"), "[::1]:8848", false),
            (Some("https://127.0.0.1:8848"), "127.0.0.1:8848", false),
            (Some("http://127.0.0.1:8848/"), "127.0.0.1:8848", false),
            // A sandboxed page or a local file, another site, and nothing to compare with.
            (Some("null"), "127.0.0.1:8848", false),
            (Some("http://evil.example"), "127.0.0.1:8848", false),
            (Some(""), "127.0.0.1:8848", false),
            (Some("http://"), "", false),
        ] {
            assert_eq!(
                origin_allowed(origin, host),
                allowed,
                "Origin {origin:?} to Host {host:?}"
            );
        }
        let (a, b) = (new_secret().unwrap(), new_secret().unwrap());
        assert!(
            a.len() == 64 && a.bytes().all(|c| c.is_ascii_hexdigit()) && a != b,
            "{a} {b}"
        );
    }
}
