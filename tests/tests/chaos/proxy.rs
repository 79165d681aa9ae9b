//! A TCP proxy on loopback in front of a storage server that misbehaves on demand: it passes every connection, or
//! drops, resets and stalls some of them, or takes none (the server away).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// What the proxy does with the connections of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every connection reaches the server.
    Pass,
    /// Of the connections: 60% pass, 10% are closed at once, 15% reset after a little of the answer, 15% stall
    /// (held without a byte, then closed).
    Misbehave,
    /// Every connection is closed at once, unanswered.
    Refuse,
}

pub(crate) struct Proxy {
    pub(crate) port: u16,
    mode: Arc<AtomicU8>,
}

impl Proxy {
    /// Listens on a free port and forwards to `server` on loopback; `seed` makes its choices repeatable.
    pub(crate) fn start(server: u16, seed: u64) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(0));
        let shared = mode.clone();
        std::thread::spawn(move || {
            let mut rng = fastrand::Rng::with_seed(seed);
            for client in listener.incoming().flatten() {
                let roll = rng.u32(0..100);
                let hold = rng.u64(0..4096);
                match (shared.load(Ordering::SeqCst), roll) {
                    (0, _) | (1, 0..60) => forward(client, server, None),
                    (2, _) | (1, 60..70) => drop(client),
                    (1, 70..85) => forward(client, server, Some(hold)),
                    _ => {
                        // Stalled: held with nothing sent, then closed.
                        std::thread::spawn(move || {
                            std::thread::sleep(Duration::from_secs(3));
                            drop(client);
                        });
                    }
                }
            }
        });
        Proxy { port, mode }
    }

    pub(crate) fn set(&self, mode: Mode) {
        let value = match mode {
            Mode::Pass => 0,
            Mode::Misbehave => 1,
            Mode::Refuse => 2,
        };
        self.mode.store(value, Ordering::SeqCst);
    }
}

/// Copies both ways between `client` and the server; with `cut`, the answer is cut (reset) after that many bytes.
fn forward(client: TcpStream, server: u16, cut: Option<u64>) {
    std::thread::spawn(move || {
        let Ok(upstream) = TcpStream::connect(("127.0.0.1", server)) else {
            return;
        };
        let (mut client_in, mut upstream_out) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut client_in, &mut upstream_out);
            let _ = upstream_out.shutdown(Shutdown::Write);
        });
        let (mut upstream_in, mut client_out) = (upstream, client);
        let mut sent = 0u64;
        let mut buffer = [0u8; 8192];
        loop {
            let n = match upstream_in.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let n = match cut {
                Some(limit) if sent + n as u64 > limit => {
                    let _ = client_out.write_all(&buffer[..(limit - sent) as usize]);
                    // A reset: the connection ends without the rest of the answer.
                    let _ = client_out.shutdown(Shutdown::Both);
                    return;
                }
                _ => n,
            };
            if client_out.write_all(&buffer[..n]).is_err() {
                break;
            }
            sent += n as u64;
        }
        let _ = client_out.shutdown(Shutdown::Write);
    });
}
