//! The storage servers the sync tests run on loopback (wsgidav for WebDAV, moto for S3, both from PyPI): where their
//! programs are, starting one and waiting for its port, and a bare HTTP request to it.
#![expect(clippy::unwrap_used, reason = "test helpers stop the test where it failed")]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process, stopped when dropped.
pub struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where the server programs are: `QUIRE_SYNC_SERVERS` (set by `cargo xtask ci`: they must be there), else the
/// PATH; `None` (the test skips) when they are not found outside CI.
pub fn program(name: &str) -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("QUIRE_SYNC_SERVERS") {
        let path = Path::new(&dir).join(name);
        assert!(
            path.exists(),
            "{} is missing: `cargo xtask ci` installs it",
            path.display()
        );
        return Some(path);
    }
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.exists()));
    if found.is_none() {
        eprintln!("skipped: {name} is not installed (`cargo xtask ci` installs it into target/sync-servers)");
    }
    found
}

/// A port free on loopback now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `command` and waits until its port answers.
pub fn start(mut command: Command, port: u16) -> Server {
    let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let server = Server(child);
    let until = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the server on port {port} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// One HTTP/1.0 request to the server on `port`; the response's body.
pub fn http(port: u16, method: &str, path: &str) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let at = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    response.split_off(at + 4)
}

/// wsgidav serving `root` anonymously on a free port, with that port; `None` when it is not installed (see
/// [`program`]).
pub fn wsgidav(root: &Path) -> Option<(Server, u16)> {
    let program = program("wsgidav")?;
    let port = free_port();
    let mut command = Command::new(program);
    command
        .args(["--no-config", "--host=127.0.0.1", "--auth=anonymous", "-q"])
        .arg(format!("--port={port}"))
        .arg(format!("--root={}", root.display()));
    Some((start(command, port), port))
}

/// wsgidav serving `root` to `user` with `password` alone (Basic authentication), with the port; `None` when it is
/// not installed.
pub fn wsgidav_with_password(root: &Path, user: &str, password: &str) -> Option<(Server, u16)> {
    let program = program("wsgidav")?;
    let port = free_port();
    let config = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "provider_mapping": { "/": root },
        "http_authenticator": {
            "domain_controller": null, "accept_basic": true, "accept_digest": false, "default_to_digest": false
        },
        "simple_dc": { "user_mapping": { "*": { user: { "password": password, "roles": [] } } } },
        "verbose": 1,
        "logging": { "enable": false },
    });
    let file = root.with_extension("wsgidav.json");
    let written = std::fs::write(&file, config.to_string());
    assert!(
        written.is_ok(),
        "the server's configuration is not written: {written:?}"
    );
    let mut command = Command::new(program);
    command.arg(format!("--config={}", file.display()));
    Some((start(command, port), port))
}

/// moto's S3 server on a free port with `bucket` made, with the port; `None` when it is not installed.
pub fn moto(bucket: &str) -> Option<(Server, u16)> {
    let program = program("moto_server")?;
    let port = free_port();
    let mut command = Command::new(program);
    command.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
    let server = start(command, port);
    http(port, "PUT", &format!("/{bucket}"));
    Some((server, port))
}
