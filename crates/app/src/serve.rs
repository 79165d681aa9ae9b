//! `quire serve`: the web app (assembled by quire-host) on loopback, with a key of its own in the address it prints.

use anyhow::{Context, bail};
use quire_core::Workspace;
use quire_host::web::ServeFlags;

use crate::cli::ServeArgs;

pub(crate) fn run(ws: Workspace, args: ServeArgs) -> anyhow::Result<()> {
    if !args.addr.ip().is_loopback() && !args.allow_remote {
        bail!(
            "{} is reachable from other machines; pass --allow-remote if that is what you want",
            args.addr
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let flags = ServeFlags {
        allow_remote: args.allow_remote,
        public_url: args.public_url.clone(),
        rotate_key: args.rotate_key,
    };
    let served = quire_host::web::assemble(&ws, &flags, runtime.handle())?;
    let key = served.key;
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(args.addr).await {
            Ok(listener) => listener,
            // A server already running there reads the key file again when a session is opened: the new key
            // works there now, and the old one opens nothing.
            Err(e) if args.rotate_key && e.kind() == std::io::ErrorKind::AddrInUse => {
                crate::output::line(&format!(
                    "The web key was replaced: http://{}/?token={key}",
                    shown(args.addr)
                ))?;
                bail!(
                    "cannot listen on {} ({e}). If quire serve is already running there, it now opens sessions only \
                     with the address above; addresses printed before open nothing, and sessions already open stay \
                     open until it stops",
                    args.addr
                );
            }
            Err(e) => return Err(e).with_context(|| format!("cannot listen on {}", args.addr)),
        };
        let address = format!("http://{}/?token={key}", shown(listener.local_addr()?));
        crate::output::line(&format!("quire is at {address}"))?;
        if args.open
            && let Err(e) = open::that_detached(&address)
        {
            eprintln!("Could not open a browser ({e}); open the address above yourself.");
        }
        eprintln!("Open the address above in your browser (it starts a session); Ctrl+C stops the server.");
        let _watching = served.background.report_changes(tokio::runtime::Handle::current());
        served.plugins.announce("quire serve");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let result = quire_web::serve_with(listener, served.app, served.mcp, shutdown).await;
        // The plugins' processes end with the server.
        served.plugins.shutdown().await;
        drop(served.background);
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
