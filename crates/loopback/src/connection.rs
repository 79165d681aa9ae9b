//! The server's connections: one that sends nothing, or stays idle between requests, is closed after a while.
//!
//! axum's `serve` sets no header-read or idle timeout, so a client could open connections and hold them for ever.
//! Each accepted stream is wrapped: while no request of the connection is being handled, a read that waits longer
//! than the idle time since the connection opened or last sent something fails, and hyper closes the connection.
//! Bytes received do not extend that time, so a client that trickles a request's header in byte by byte is closed
//! too (a header-read timeout). While a request is being handled (the guard marks it, see [`Activity`]), reads never
//! time out: a slow search or a large upload is not cut off. A streamed answer (a chat turn's events) writes at
//! least every second, which keeps its connection open.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// A listener whose connections close when idle for `idle`.
pub struct IdleListener {
    /// The listener it accepts from.
    pub inner: TcpListener,
    /// How long a connection may send nothing while no request of it is being handled.
    pub idle: Duration,
}

impl axum::serve::Listener for IdleListener {
    type Io = Watched;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Watched, SocketAddr) {
        let (stream, addr) = axum::serve::Listener::accept(&mut self.inner).await;
        (Watched::new(Stream::Plain(stream), addr, self.idle), addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// How many requests of one connection are being handled now, and when it last sent something or finished a
/// request. Given to each request as its connect info, so that the guard can mark the time a request takes as busy.
#[derive(Clone, Debug)]
pub struct Activity(Arc<State>);

#[derive(Debug)]
struct State {
    busy: AtomicUsize,
    last: Mutex<Instant>,
    peer: SocketAddr,
}

impl Activity {
    fn new(peer: SocketAddr) -> Activity {
        Activity(Arc::new(State {
            busy: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            peer,
        }))
    }

    /// The address the connection comes from (a proxy's, behind one).
    pub fn peer(&self) -> SocketAddr {
        self.0.peer
    }

    /// Marks a request as being handled until the returned value is dropped.
    pub fn busy(&self) -> Busy {
        self.0.busy.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    fn is_busy(&self) -> bool {
        self.0.busy.load(Ordering::SeqCst) > 0
    }

    /// The idle time starts again now.
    fn touch(&self) {
        *self.0.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn last(&self) -> Instant {
        *self.0.last.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Connected<IncomingStream<'_, IdleListener>> for Activity {
    fn connect_info(stream: IncomingStream<'_, IdleListener>) -> Activity {
        stream.io().activity.clone()
    }
}

/// A request being handled; see [`Activity::busy`].
pub struct Busy(Activity);

impl Drop for Busy {
    fn drop(&mut self) {
        // Its answer is yet to be written: the idle time counts from the end of the request, not from before it.
        self.0.touch();
        (self.0).0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An accepted stream that fails its reads once idle for too long.
pub struct Watched {
    stream: Stream,
    activity: Activity,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
}

/// A connection as accepted: plain, or TLS once its handshake is done.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl Watched {
    pub(crate) fn new(stream: Stream, peer: SocketAddr, idle: Duration) -> Watched {
        Watched {
            stream,
            activity: Activity::new(peer),
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        }
    }

    pub(crate) fn activity(&self) -> &Activity {
        &self.activity
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        if read.is_ready() || this.activity.is_busy() {
            return read;
        }
        let deadline = this.activity.last() + this.idle;
        if this.deadline.deadline() != deadline {
            this.deadline.as_mut().reset(deadline);
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the connection was idle for too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Watched {
    /// Something was sent: the idle time starts again.
    fn sent(&self, result: &Poll<io::Result<usize>>) {
        if matches!(result, Poll::Ready(Ok(n)) if *n > 0) {
            self.activity.touch();
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.sent(&result);
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.sent(&result);
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Keeps the connection of `activity` busy until `response`'s body has been sent (or dropped): for answers that
/// stream (server-sent events), which may send nothing for a while without the connection being idle.
pub fn hold_busy(activity: &Activity, response: axum::response::Response) -> axum::response::Response {
    use futures::StreamExt as _;
    let busy = activity.busy();
    response.map(|body| {
        let stream = body.into_data_stream().map(move |chunk| {
            // The guard lives as long as the stream: it is dropped with it.
            let _ = &busy;
            chunk
        });
        axum::body::Body::from_stream(stream)
    })
}
