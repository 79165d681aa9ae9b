//! `quire serve`: the web app (assembled by quire-host) on loopback, with a key of its own in the address it prints.

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_host::devices::TlsChoice;
use quire_host::web::ServeFlags;

use crate::cli::ServeArgs;

pub(crate) fn run(ws: Workspace, args: ServeArgs) -> anyhow::Result<()> {
    let addr = args.listen.unwrap_or(args.addr);
    let allow_remote = args.allow_remote || args.listen.is_some();
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("{addr} is reachable from other machines; pass --listen {addr} to serve your other devices there");
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(certificate), Some(key)) => Some(TlsChoice::Files {
            certificate: certificate.clone(),
            key: key.clone(),
        }),
        _ => args.tls_self_signed.then_some(TlsChoice::SelfSigned),
    };
    quire_host::devices::check_listen(addr, tls.as_ref(), args.public_url.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // Bound first, so that the address devices are given has the port a `:0` picked.
    let bound = std::net::TcpListener::bind(addr);
    let mut flags = ServeFlags {
        allow_remote,
        public_url: args.public_url.clone(),
        rotate_key: args.rotate_key,
        address: bound.as_ref().ok().and_then(|l| l.local_addr().ok()),
        tls,
    };
    if flags.address.is_none() {
        flags.tls = None;
    }
    let served = quire_host::web::assemble(&ws, &flags, runtime.handle())?;
    let key = served.key;
    let scheme = if served.tls.is_some() { "https" } else { "http" };
    runtime.block_on(async move {
        let listener = match bound.and_then(|l| {
            l.set_nonblocking(true)?;
            tokio::net::TcpListener::from_std(l)
        }) {
            Ok(listener) => listener,
            // A server already running there reads the key file again when a session is opened: the new key
            // works there now, and the old one opens nothing.
            Err(e) if args.rotate_key && e.kind() == std::io::ErrorKind::AddrInUse => {
                crate::output::line(&format!(
                    "The web key was replaced: {scheme}://{}/?token={key}",
                    shown(addr)
                ))?;
                bail!(
                    "cannot listen on {addr} ({e}). If quire serve is already running there, it now opens sessions only \
                     with the address above; addresses printed before open nothing, and sessions already open stay \
                     open until it stops"
                );
            }
            Err(e) => return Err(e).with_context(|| format!("cannot listen on {addr}")),
        };
        let address = format!("{scheme}://{}/?token={key}", shown(listener.local_addr()?));
        crate::output::line(&format!("quire is at {address}"))?;
        if args.open
            && let Err(e) = open::that_detached(&address)
        {
            eprintln!("Could not open a browser ({e}); open the address above yourself.");
        }
        eprintln!("Open the address above in your browser (it starts a session); Ctrl+C stops the server.");
        let _serving = match &served.device_url {
            Some(url) => {
                eprintln!("Your other devices reach quire at {url}: pair one with `quire device pair NAME`.");
                if let Some(tls) = &served.tls {
                    eprintln!("The certificate's SHA-256 fingerprint: {}", tls.fingerprint);
                }
                let own = served.tls.as_ref().filter(|_| args.tls_self_signed);
                Some(quire_host::devices::announce_serving(url, own.map(|t| t.fingerprint.as_str()))?)
            }
            None => None,
        };
        let _watching = served.background.report_changes(tokio::runtime::Handle::current());
        served.plugins.announce("quire serve");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let result = quire_web::serve_over(listener, served.tls.as_ref(), served.app, served.mcp, shutdown).await;
        // The plugins' processes end with the server.
        served.plugins.shutdown().await;
        drop(served.background);
        // No agent (a sidebar's, an automation's) outlives the server in its own process group.
        quire_agent::acp::end_all();
        result?;
        Ok(())
    })
}

/// The address as the printed link shows it: a loopback address as 127.0.0.1 (one origin for the session).
fn shown(addr: std::net::SocketAddr) -> String {
    if addr.ip().is_loopback() {
        format!("127.0.0.1:{}", addr.port())
    } else {
        addr.to_string()
    }
}
