//! Serving over standard input and output: nothing but protocol messages on stdout, and pipes read through the
//! runtime's event loop.

use rmcp::ServiceExt;

use crate::Error;
use crate::server::QuireServer;

/// Serves `server` over standard input and output until the client closes its end.
/// Nothing but protocol messages is written to stdout.
///
/// When both are pipes (as when an AI client starts `quire mcp`), they are read and written through the runtime's
/// event loop; tokio's own stdin and stdout hand every read and write to a blocking thread, which cost a third of
/// the time of a `read_note` round trip (`cargo xtask bench mcp`). Anything else (a terminal, a file) uses those.
pub async fn serve_stdio(server: QuireServer) -> Result<(), Error> {
    let running = match stdio_pipes() {
        Some(pipes) => server.serve(pipes).await,
        None => server.serve(rmcp::transport::stdio()).await,
    }
    .map_err(|e| Error::Transport(e.to_string()))?;
    running.waiting().await.map_err(|e| Error::Transport(e.to_string()))?;
    Ok(())
}

/// Standard input and output as non-blocking pipe ends, when both are pipes.
///
/// Both are checked before either is converted: converting puts the file description in non-blocking mode, and
/// a stdin made non-blocking and then read through tokio's blocking `stdin()` (because stdout turned out to be a
/// file or a terminal) failed with `EAGAIN` after the first message.
#[cfg(unix)]
fn stdio_pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let is_pipe = |fd: &std::os::fd::OwnedFd| {
        fd.try_clone()
            .ok()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata().ok())
            .is_some_and(|m| m.file_type().is_fifo())
    };
    if !is_pipe(&input) || !is_pipe(&output) {
        return None;
    }
    let receiver = tokio::net::unix::pipe::Receiver::from_file(std::fs::File::from(input)).ok()?;
    let sender = tokio::net::unix::pipe::Sender::from_file(std::fs::File::from(output)).ok()?;
    Some((receiver, sender))
}

#[cfg(not(unix))]
fn stdio_pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}
