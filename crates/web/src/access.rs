//! Who a request is and what it may reach: the computer's own session (opened with the key `quire serve` prints),
//! or a paired device ([`crate::devices`]) with its limits. The guard decides it once per request and every
//! handler reaches the workspace through [`workspace`], which is the device's notebooks only when the device is
//! limited to some: core then enforces the limit on every read and write (see [`quire_core::Scope`]).
//!
//! The decision travels with the request as a task-local value set by the guard around the handler. A handler
//! that ran outside the guard finds none and is refused: nothing reaches the workspace unlimited by mistake.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::Method;
use quire_core::Workspace;

use crate::WebApp;
use crate::devices::Device;
use crate::error::{ApiError, ErrorKind};

tokio::task_local! {
    static ACCESS: Access;
}

/// Who a request is.
#[derive(Debug, Clone)]
pub(crate) enum Access {
    /// The session opened on this computer with the key: everything.
    Computer,
    /// A paired device, with its limits.
    Device(Arc<Device>),
    /// No session: only the pages and assets that need none.
    Nobody,
}

impl Access {
    /// Runs `work` (the rest of the request) as this access.
    pub(crate) async fn run<F: std::future::Future>(self, work: F) -> F::Output {
        ACCESS.scope(self, work).await
    }

    /// The request's access, as the guard decided it.
    pub(crate) fn current() -> Access {
        ACCESS.try_with(Access::clone).unwrap_or(Access::Nobody)
    }

    /// The device this is, if it is one.
    pub(crate) fn device(&self) -> Option<&Device> {
        match self {
            Access::Device(device) => Some(device),
            _ => None,
        }
    }
}

/// The workspace as the current request may reach it: all of it for the computer's session, a device's notebooks
/// for a device limited to some. Refused outside a request the guard let through, and on a blocking thread (the
/// access is the request task's): take it before `spawn_blocking`.
pub(crate) fn workspace(app: &WebApp) -> Result<Workspace, ApiError> {
    match Access::current() {
        Access::Computer => Ok(app.workspace.clone()),
        Access::Device(device) if device.limits.notebooks.is_empty() => Ok(app.workspace.clone()),
        Access::Device(device) => Ok(app.workspace.scoped(quire_core::Scope::notebooks(
            device.limits.notebooks.iter().map(|n| n.id.clone()),
        ))),
        Access::Nobody => Err(ApiError::new(ErrorKind::NoSession, "No session.")),
    }
}

/// Whether the request is a device limited to some notebooks: the lists that span the whole workspace (the chats,
/// they name any note; the review inbox) answer it empty.
pub(crate) fn limited() -> bool {
    Access::current()
        .device()
        .is_some_and(|d| !d.limits.notebooks.is_empty())
}

/// Why a device may not make this API call, if it may not. What is refused, and why:
/// - pairing and ending devices: only on the computer that runs quire, so a lost phone cannot make new ones;
/// - a limited device (some notebooks, or reading only) does not change the server's settings (sync, models,
///   plugins, sentence models, the passphrase); one limited to some notebooks neither uses nor decides what spans
///   the whole workspace (the assistant and its chats, the review inbox): their lists answer it empty;
/// - a device that only reads makes no write (a query, a search and the unlock period are reads).
pub(crate) fn refusal(device: &Device, method: &Method, path: &str) -> Option<&'static str> {
    let under = |prefix: &str| path == prefix || path.starts_with(&format!("{prefix}/"));
    if under("/api/devices") {
        return Some("Devices are paired and ended on the computer that runs quire.");
    }
    // No device changes the server itself: a plugin is a command run on the computer, sync sends the workspace
    // elsewhere, a model gets a key. A lost phone must not be able to do any of it.
    let settings = under("/api/sync/setup")
        || under("/api/sync/leave")
        || under("/api/models")
        || under("/api/automations")
        || under("/api/agents")
        || under("/api/lock/init")
        || (under("/api/plugins") && method != Method::GET)
        || (under("/api/semantic") && method != Method::GET);
    if settings {
        return Some("The server's settings are changed on the computer that runs quire, not from another device.");
    }
    if device.limits.is_full() {
        return None;
    }
    // Their lists answer empty to such a device (see `limited`); anything else of them (a chat, a review set, a
    // turn) is refused: they name and quote notes of every notebook.
    let lists = method == Method::GET && matches!(path, "/api/chats" | "/api/reviews");
    let whole = under("/api/chats") || under("/api/turns") || under("/api/reviews");
    if whole && !device.limits.notebooks.is_empty() && !lists {
        return Some("This device reaches some notebooks only: the assistant and the review inbox span them all.");
    }
    // A device's own passkey changes nothing of the workspace.
    let reads = under("/api/passkeys")
        || method == Method::GET
        || method == Method::HEAD
        || (method == Method::POST && matches!(path, "/api/query" | "/api/lock/unlock" | "/api/lock/lock"));
    if device.limits.read_only && !reads {
        return Some("This device only reads: make changes on a device that may write.");
    }
    None
}

/// Sign-in attempts that failed (a wrong key, a wrong pairing code), counted per address and in all, over a window:
/// past [`Attempts::PER_ADDRESS`] from one address, or [`Attempts::IN_ALL`] from all (a proxy in front makes every
/// attempt one address), further attempts are refused until the window ends, right or wrong.
#[derive(Debug, Default)]
pub(crate) struct Attempts {
    failed: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    started: Option<Instant>,
    by_address: HashMap<IpAddr, u32>,
    all: u32,
}

impl Attempts {
    const WINDOW: Duration = Duration::from_secs(15 * 60);
    const PER_ADDRESS: u32 = 10;
    const IN_ALL: u32 = 50;

    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        let mut window = self.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if window
            .started
            .is_none_or(|started| started.elapsed() >= Attempts::WINDOW)
        {
            *window = Window {
                started: Some(Instant::now()),
                ..Window::default()
            };
        }
        window
    }

    /// Refused, with the seconds to wait, when too many attempts failed lately.
    pub(crate) fn check(&self, from: Option<IpAddr>) -> Result<(), ApiError> {
        let window = self.window();
        let mine = from.and_then(|ip| window.by_address.get(&ip).copied()).unwrap_or(0);
        if mine >= Attempts::PER_ADDRESS || window.all >= Attempts::IN_ALL {
            let left = window
                .started
                .map_or(Attempts::WINDOW, |s| Attempts::WINDOW.saturating_sub(s.elapsed()));
            return Err(ApiError::new(
                ErrorKind::TooManyAttempts,
                format!(
                    "Too many sign-in attempts failed: try again in {} minutes.",
                    left.as_secs().div_ceil(60)
                ),
            ));
        }
        Ok(())
    }

    /// Counts a failed attempt.
    pub(crate) fn failed(&self, from: Option<IpAddr>) {
        let mut window = self.window();
        window.all += 1;
        if let Some(ip) = from {
            *window.by_address.entry(ip).or_default() += 1;
        }
    }

    /// Refused as [`Attempts::check`] is; else the attempt counts as failed until [`Attempts::succeeded`] gives it
    /// back, so that many attempts at once cannot all pass the check before any of them failed.
    pub(crate) fn begin(&self, from: Option<IpAddr>) -> Result<(), ApiError> {
        self.check(from)?;
        self.failed(from);
        Ok(())
    }

    /// An attempt begun with [`Attempts::begin`] succeeded: it does not count.
    pub(crate) fn succeeded(&self, from: Option<IpAddr>) {
        let mut window = self.window();
        window.all = window.all.saturating_sub(1);
        if let Some(count) = from.and_then(|ip| window.by_address.get_mut(&ip)) {
            *count = count.saturating_sub(1);
        }
    }
}

/// The address a request comes from (a proxy's, behind one), when the server knows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer(pub(crate) Option<std::net::IpAddr>);

/// The name of a device's cookie: `ID.TOKEN`, HttpOnly, SameSite=Strict, kept for 400 days (browsers keep a cookie
/// no longer).
pub const DEVICE_COOKIE: &str = "quire_device";

/// The secret a device's page sends with every API call: derived from its token, so the server keeps nothing more.
pub(crate) fn device_secret(token: &str, id: &str) -> String {
    derived(token, "device secret", id)
}

/// A session's credential, derived from the web key with HKDF-SHA256: `label` is "cookie" (the tag after the id in
/// the cookie) or "secret" (what the page sends with every API call). Nothing is kept on the server: a restarted
/// server with the same key knows every session again (ux-2 #9: a restart logged the browser out), and a new key
/// (`--rotate-key`) ends them all. Without the key, neither can be made for a chosen id.
pub(crate) fn derived(key: &str, label: &str, id: &str) -> String {
    let hkdf = hkdf::Hkdf::<sha2::Sha256>::new(Some(b"quire web session v1"), key.as_bytes());
    let mut out = [0u8; 32];
    let info = [label.as_bytes(), b"\0", id.as_bytes()].concat();
    // 32 bytes is within HKDF-SHA256's limit of 8160: this cannot fail.
    let _ = hkdf.expand(&info, &mut out);
    quire_core::hex(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::DeviceLimits;

    fn device(limits: DeviceLimits) -> Device {
        Device {
            name: "phone".into(),
            id: "1".into(),
            token_hash: String::new(),
            paired: 0,
            last_seen: None,
            limits,
            passkeys: Vec::new(),
            more_tokens: Vec::new(),
        }
    }

    #[test]
    fn a_limited_device_reaches_less() {
        let full = device(DeviceLimits::default());
        let reader = device(DeviceLimits {
            read_only: true,
            ..DeviceLimits::default()
        });
        let home = device(DeviceLimits {
            notebooks: vec![crate::devices::NotebookLimit {
                id: "n1".into(),
                path: "Home".into(),
            }],
            ..DeviceLimits::default()
        });
        assert!(refusal(&full, &Method::PUT, "/api/notes/x").is_none());
        assert!(refusal(&full, &Method::GET, "/api/devices").is_some());
        for (method, path) in [
            (Method::POST, "/api/plugins"),
            (Method::POST, "/api/sync/setup"),
            (Method::POST, "/api/models"),
            (Method::POST, "/api/lock/init"),
        ] {
            assert!(
                refusal(&full, &method, path).is_some(),
                "no device changes the server: {path}"
            );
        }
        assert!(refusal(&home, &Method::GET, "/api/reviews").is_none(), "an empty list");
        assert!(refusal(&home, &Method::GET, "/api/reviews/1").is_some());
        assert!(refusal(&home, &Method::GET, "/api/chats/abc").is_some());
        assert!(refusal(&home, &Method::POST, "/api/turns").is_some());
        assert!(
            refusal(&home, &Method::PUT, "/api/notes/x").is_none(),
            "core's scope decides"
        );
        assert!(refusal(&reader, &Method::GET, "/api/notes/x").is_none());
        assert!(refusal(&reader, &Method::POST, "/api/query").is_none());
        assert!(refusal(&reader, &Method::PUT, "/api/notes/x").is_some());
        assert!(refusal(&reader, &Method::POST, "/api/sync/setup").is_some());
    }

    #[test]
    fn failed_attempts_are_limited_per_address_and_in_all() {
        let attempts = Attempts::default();
        let one: IpAddr = [192, 168, 1, 9].into();
        for _ in 0..Attempts::PER_ADDRESS {
            attempts.check(Some(one)).ok();
            attempts.failed(Some(one));
        }
        assert!(attempts.check(Some(one)).is_err());
        assert!(attempts.check(Some([192, 168, 1, 10].into())).is_ok());
    }
}
