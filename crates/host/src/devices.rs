//! The person's other devices: pairing one (a one-time code, the address it opens and its QR code), listing and
//! ending them (`quire device`), the address a server beyond loopback is reached at (kept while it runs, so that a
//! code made in a terminal points at it), and the certificate `quire serve --listen --tls-self-signed` makes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use quire_core::{Actor, Workspace};
use quire_web::devices::{DeviceFile, DeviceLimits, DeviceStore, NotebookLimit, PAIRING_MINUTES};
use serde::{Deserialize, Serialize};

use crate::settings::config_dir;

/// The file a server beyond loopback keeps its address in while it runs.
const SERVING_FILE: &str = "serving.json";

/// The certificate and key `--tls-self-signed` made, kept to be used again (browsers remember the exception the
/// person made for it).
const SELF_SIGNED_CERT: &str = "tls-self-signed.pem";
const SELF_SIGNED_KEY: &str = "tls-self-signed-key.pem";

/// The devices of this configuration.
pub fn store() -> anyhow::Result<DeviceStore> {
    Ok(DeviceStore::in_dir(&config_dir()?))
}

/// A pairing code just made.
#[derive(Debug, Serialize)]
pub struct NewPairing {
    /// The device's name.
    pub name: String,
    /// The code, `XXXXX-XXXXX`.
    pub code: String,
    /// When it stops working (milliseconds since the epoch).
    pub expires: i64,
    /// The address that pairs with it, when the server's address is known.
    pub link: Option<String>,
    /// The SHA-256 fingerprint of the running server's own certificate (`--tls-self-signed`), to compare with the
    /// one the device's browser shows before trusting it.
    pub fingerprint: Option<String>,
    /// The notebooks the device will reach (paths); empty: all.
    pub notebooks: Vec<String>,
    /// It will only read.
    pub read_only: bool,
    /// A code not yet used for the same name was replaced.
    pub replaced: bool,
}

/// An address a device can be sent to: https, or http on this computer only.
fn check_address(address: &str) -> anyhow::Result<()> {
    let rest = address.strip_prefix("https://").or_else(|| {
        address
            .strip_prefix("http://")
            .filter(|r| ["localhost", "127.0.0.1", "[::1]"].iter().any(|h| r.starts_with(h)))
    });
    match rest {
        Some(host) if !host.is_empty() => Ok(()),
        _ => bail!(
            "--url must be the https:// address the device reaches quire at (such as https://192.168.1.5:8443); \
             plain http:// works on this computer only"
        ),
    }
}

/// Makes a pairing code for a device named `name`, limited to the notebooks of `notebooks` (titles or paths) and to
/// reading when `read_only`. `address` is where the device reaches the server (else the running server's, if one
/// listens beyond loopback).
pub fn pair(
    ws: &Workspace,
    name: &str,
    notebooks: &[String],
    read_only: bool,
    address: Option<&str>,
) -> anyhow::Result<NewPairing> {
    let limits = DeviceLimits {
        workspace: DeviceLimits::workspace_of(ws),
        notebooks: notebook_limits(ws, notebooks)?,
        read_only,
    };
    if let Some(address) = address {
        check_address(address)?;
    }
    let paths = limits.notebooks.iter().map(|n| n.path.clone()).collect();
    let made = store()?.pair(name, limits, PAIRING_MINUTES)?;
    let serving = serving()?;
    let fingerprint = serving.as_ref().and_then(|s| s.fingerprint.clone());
    let base = match address {
        Some(address) => Some(address.to_owned()),
        None => serving.map(|s| s.address),
    };
    Ok(NewPairing {
        name: name.trim().to_owned(),
        link: base.map(|base| quire_web::pairing_link(&base, &made.code)),
        fingerprint,
        code: made.code,
        expires: made.expires,
        notebooks: paths,
        read_only,
        replaced: made.replaced,
    })
}

fn notebook_limits(ws: &Workspace, names: &[String]) -> anyhow::Result<Vec<NotebookLimit>> {
    ws.read(&Actor::User, |r| {
        names
            .iter()
            .map(|name| {
                let Some(notebook) = r.find_notebook(name)? else {
                    return Ok(Err(name.clone()));
                };
                let path = r.notebook_path_text(&notebook.id)?;
                Ok(Ok(NotebookLimit { id: notebook.id, path }))
            })
            .collect::<quire_core::Result<Vec<_>>>()
    })?
    .into_iter()
    .map(|found| found.map_err(|name| anyhow::anyhow!("no notebook is named {name:?} (`quire notebook list`)")))
    .collect()
}

/// The devices and the codes not yet used.
pub fn list() -> anyhow::Result<DeviceFile> {
    let file = store()?.current();
    Ok(file)
}

/// Ends the device (or its code) named `name`: its next request is refused.
pub fn revoke(name: &str) -> anyhow::Result<()> {
    Ok(store()?.revoke(name)?)
}

#[derive(Serialize, Deserialize)]
struct Serving {
    address: String,
    pid: u32,
    #[serde(default)]
    fingerprint: Option<String>,
}

/// The running server beyond loopback: its address and its own certificate's fingerprint, if one runs.
fn serving() -> anyhow::Result<Option<Serving>> {
    let path = config_dir()?.join(SERVING_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let Ok(serving) = serde_json::from_str::<Serving>(&text) else {
        return Ok(None);
    };
    // A server that stopped without removing its file (killed) is not running.
    let alive = Path::new("/proc").join(serving.pid.to_string()).exists() || !Path::new("/proc/self").exists();
    Ok(alive.then_some(serving))
}

/// Keeps `address` (and the fingerprint of the certificate quire made, when it serves with one) as the running
/// server's until the returned value is dropped.
pub fn announce_serving(address: &str, fingerprint: Option<&str>) -> anyhow::Result<ServingFile> {
    let path = config_dir()?.join(SERVING_FILE);
    let text = serde_json::to_string(&Serving {
        address: address.to_owned(),
        pid: std::process::id(),
        fingerprint: fingerprint.map(str::to_owned),
    })?;
    quire_loopback::write_private(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(ServingFile(path))
}

/// The running server's address file, removed when dropped.
pub struct ServingFile(PathBuf);

impl Drop for ServingFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// How a server beyond loopback does TLS.
#[derive(Debug, Clone)]
pub enum TlsChoice {
    /// A certificate chain and its key, PEM files the person gives.
    Files {
        /// The chain.
        certificate: PathBuf,
        /// The key.
        key: PathBuf,
    },
    /// A certificate quire makes (once, kept in the configuration directory) for the names given.
    SelfSigned,
}

/// The TLS of `choice` for a server listening at `listen` (and reached at `public`, when given).
pub fn tls(choice: &TlsChoice, listen: SocketAddr, public: Option<&str>) -> anyhow::Result<quire_loopback::Tls> {
    match choice {
        TlsChoice::Files { certificate, key } => Ok(quire_loopback::Tls::from_pem_files(certificate, key)?),
        TlsChoice::SelfSigned => self_signed(&config_dir()?, listen, public),
    }
}

fn self_signed(dir: &Path, listen: SocketAddr, public: Option<&str>) -> anyhow::Result<quire_loopback::Tls> {
    let (cert_path, key_path) = (dir.join(SELF_SIGNED_CERT), dir.join(SELF_SIGNED_KEY));
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    if !listen.ip().is_unspecified() {
        names.push(listen.ip().to_string());
    }
    if let Some(host) = public
        .and_then(|p| p.split("://").nth(1))
        .and_then(|rest| rest.split(['/', ':']).next())
    {
        names.push(host.to_owned());
    }
    if let (Ok(cert), Ok(key)) = (std::fs::read_to_string(&cert_path), std::fs::read_to_string(&key_path))
        && names.iter().all(|name| covers(&cert, name))
    {
        return Ok(quire_loopback::Tls::from_pem(&cert, &key)?);
    }
    let made = rcgen::generate_simple_self_signed(names.clone()).context("cannot make a certificate")?;
    let (cert, key) = (made.cert.pem(), made.signing_key.serialize_pem());
    // The names it was made for go beside it, to know when a new one is needed.
    let kept = format!(
        "{}{cert}",
        names.iter().map(|n| format!("# name: {n}\n")).collect::<String>()
    );
    std::fs::create_dir_all(dir)?;
    quire_loopback::write_private(&cert_path, &kept)?;
    quire_loopback::write_private(&key_path, &key)?;
    Ok(quire_loopback::Tls::from_pem(&cert, &key)?)
}

fn covers(kept: &str, name: &str) -> bool {
    kept.lines().any(|line| line.strip_prefix("# name: ") == Some(name))
}

/// Refuses a listen address beyond loopback without TLS in front of it: the device's cookie would cross the network
/// in the clear.
pub fn check_listen(listen: SocketAddr, tls: Option<&TlsChoice>, public_url: Option<&str>) -> anyhow::Result<()> {
    // A proxy in front terminates TLS; the hop from it to quire stays on this computer.
    let proxied = public_url.is_some_and(|u| u.starts_with("https://")) && listen.ip().is_loopback();
    if !listen.ip().is_loopback() && tls.is_none() && !proxied {
        bail!(
            "{listen} is reachable from other machines, and sign-ins would cross the network unencrypted: give a \
             certificate (--tls-cert FILE --tls-key FILE), let quire make one (--tls-self-signed), or put an https \
             proxy or tunnel in front, listen on loopback for it (--addr 127.0.0.1:PORT) and pass its address with \
             --public-url"
        );
    }
    Ok(())
}
