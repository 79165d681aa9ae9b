//! TLS for a server that listens beyond loopback (`quire serve --listen`): a listener whose connections are TLS,
//! closed when idle like [`crate::IdleListener`]'s.
//!
//! Each handshake runs in a task of its own, within the idle time: a client that opens a connection and sends
//! nothing (or refuses the certificate, as a browser does at first with one it does not know) holds up no other
//! connection, and its socket is closed when the time is up.

use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::Activity;
use crate::connection::{Stream, Watched};

/// A server's TLS configuration, from a certificate chain and its key in PEM.
#[derive(Clone, Debug)]
pub struct Tls {
    config: Arc<rustls::ServerConfig>,
    /// The SHA-256 fingerprint of the certificate, as browsers show it (`AB:CD:...`).
    pub fingerprint: String,
}

impl Tls {
    /// The configuration of a certificate chain and its private key, both PEM files.
    pub fn from_pem_files(certificate: &Path, key: &Path) -> io::Result<Tls> {
        let chain = CertificateDer::pem_file_iter(certificate)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| invalid(format!("{}: {e}", certificate.display())))?;
        let key = PrivateKeyDer::from_pem_file(key).map_err(|e| invalid(format!("{}: {e}", key.display())))?;
        Tls::new(chain, key)
    }

    /// The configuration of a certificate chain and its private key, both PEM text.
    pub fn from_pem(certificate: &str, key: &str) -> io::Result<Tls> {
        let chain = CertificateDer::pem_slice_iter(certificate.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid(format!("the certificate: {e}")))?;
        let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| invalid(format!("the key: {e}")))?;
        Tls::new(chain, key)
    }

    fn new(chain: Vec<CertificateDer<'static>>, key: PrivateKeyDer<'static>) -> io::Result<Tls> {
        let Some(first) = chain.first() else {
            return Err(invalid("the certificate file holds no certificate".into()));
        };
        let digest = fingerprint_of(first);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| invalid(format!("the certificate and its key do not go together: {e}")))?;
        // HTTP/1.1 only: the server is built without HTTP/2.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            fingerprint: digest,
        })
    }
}

fn fingerprint_of(certificate: &CertificateDer<'_>) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(certificate.as_ref())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The most TLS handshakes in progress at once.
const MOST_HANDSHAKES: usize = 256;

/// A listener whose connections are TLS and close when idle for `idle`.
pub struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(Watched, SocketAddr)>,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Accepts on `listener` (from within a Tokio runtime), each connection's handshake in a task of its own.
    pub fn new(listener: TcpListener, tls: &Tls, idle: Duration) -> io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let (send, ready) = mpsc::channel(64);
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.config.clone());
        // At most this many handshakes at once: past it, connections wait in the kernel's queue, so a client that
        // opens many and sends nothing cannot take every file descriptor.
        let handshakes = Arc::new(tokio::sync::Semaphore::new(MOST_HANDSHAKES));
        let accepting = tokio::spawn(async move {
            loop {
                let Ok(permit) = handshakes.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors, or the like: wait a little rather than spin.
                        tracing::warn!(error = %e, "a connection could not be accepted");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let send = send.clone();
                tokio::spawn(async move {
                    let _permit = permit;
                    match tokio::time::timeout(idle, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            let watched = Watched::new(Stream::Tls(Box::new(stream)), peer, idle);
                            let _ = send.send((watched, peer)).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "a TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "a TLS handshake took too long"),
                    }
                });
            }
        });
        Ok(TlsListener {
            local,
            ready,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = Watched;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Watched, SocketAddr) {
        match self.ready.recv().await {
            Some(ready) => ready,
            // The accepting task ended (it never does, but for a panic): no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for Activity {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Activity {
        stream.io().activity().clone()
    }
}
