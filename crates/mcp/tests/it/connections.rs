//! The MCP server's HTTP connections on loopback: one that sends nothing, or never finishes its header, is closed
//! after the idle time; one whose request is being answered is not (security finding 10).
#![expect(clippy::unwrap_used, reason = "tests stop where they fail")]

use std::sync::Arc;
use std::time::Duration;

use quire_core::Workspace;
use quire_mcp::http::HttpOptions;
use quire_mcp::{QuireServer, ServerOptions};
use quire_tools::ToolRegistry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const IDLE: Duration = Duration::from_millis(300);

/// Serves MCP on loopback with a short idle time; returns the address.
async fn serve() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let ws = Workspace::open_in_memory().unwrap();
    let server = QuireServer::new(ws, Arc::new(ToolRegistry::builtin()), ServerOptions::default());
    let options = HttpOptions {
        token: Some("secret".into()),
        idle_timeout: Some(IDLE),
        ..HttpOptions::default()
    };
    tokio::spawn(quire_mcp::http::serve(
        listener,
        server,
        options,
        std::future::pending(),
    ));
    address
}

/// Whether the server closed the connection within `within` (a read that ends or fails), without the client
/// sending anything more.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = vec![0u8; 64 * 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn idle_and_half_sent_connections_are_closed() {
    let address = serve().await;
    let mut idle = TcpStream::connect(address).await.unwrap();
    let mut half = TcpStream::connect(address).await.unwrap();
    half.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    assert!(
        closed_within(&mut idle, IDLE * 10).await,
        "a connection that sends nothing"
    );
    assert!(closed_within(&mut half, IDLE * 10).await, "a header never finished");
}

#[tokio::test]
async fn a_connection_is_not_idle_while_its_answer_streams() {
    let address = serve().await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    while !String::from_utf8_lossy(&answer).contains("protocolVersion") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("an answer in time")
            .unwrap();
        assert!(n > 0, "closed before the answer: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
    // Answered, the connection goes idle and is closed in its turn.
    assert!(closed_within(&mut stream, IDLE * 10).await);
}
