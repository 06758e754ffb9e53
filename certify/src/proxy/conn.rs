//! The client's socket, shared between hyper (which reads the requests and
//! writes the answers) and the faults that act on the connection itself: a
//! FIN without a byte, an RST, bytes written past hyper (a head without its
//! body, a cut body), and noticing that the client has left, during a stall
//! or by the time an answer is handed over.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use futures::FutureExt;
use socket2::SockRef;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// One client connection.
#[derive(Debug)]
pub(crate) struct Conn {
    stream: TcpStream,
    /// Set once a fault owns the connection: hyper's graceful shutdown must
    /// not add a FIN to a reset.
    faulted: AtomicBool,
}

impl Conn {
    pub(crate) fn new(stream: TcpStream) -> Arc<Conn> {
        Arc::new(Conn {
            stream,
            faulted: AtomicBool::new(false),
        })
    }

    /// Closes both directions now (FIN): the client reads the end of the stream.
    pub(crate) fn fin(&self) {
        self.faulted.store(true, Ordering::SeqCst);
        let _ = SockRef::from(&self.stream).shutdown(std::net::Shutdown::Both);
    }

    /// Makes the socket's close an RST (SO_LINGER 0); it closes when hyper and
    /// the fault both let go of it, which they do once the fault ends.
    pub(crate) fn reset(&self) {
        self.faulted.store(true, Ordering::SeqCst);
        let _ = SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
    }

    /// Writes `bytes` straight to the socket while hyper waits for this
    /// request's answer (so nothing of hyper's is interleaved).
    pub(crate) async fn write_raw(&self, mut bytes: &[u8]) -> io::Result<()> {
        self.faulted.store(true, Ordering::SeqCst);
        while !bytes.is_empty() {
            self.stream.writable().await?;
            match self.stream.try_write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Returns once the client has closed its side (or the socket failed);
    /// never while the client is only sending more.
    pub(crate) async fn client_gone(&self) {
        let mut byte = [0u8; 1];
        match self.stream.peek(&mut byte).await {
            Ok(0) | Err(_) => {}
            Ok(_) => std::future::pending::<()>().await,
        }
    }

    /// Whether the client has already closed its side of the connection (a
    /// FIN or a reset), as the kernel says now; never waits. Asked when an
    /// answer is handed over: one written to a client that has left is a
    /// lost response, however complete it is.
    pub(crate) fn has_left(&self) -> bool {
        let mut byte = [MaybeUninit::<u8>::uninit(); 1];
        loop {
            // A peek leaves the bytes to hyper; the socket is non-blocking, so
            // an open connection with nothing to read answers WouldBlock.
            match SockRef::from(&self.stream).peek(&mut byte) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Ok(0) | Err(_) => return true,
                // Unread bytes (a request sent behind this one) hide a FIN
                // queued after them from a peek.
                Ok(_) => return self.read_half_closed(),
            }
        }
    }

    /// The I/O driver's readiness: epoll's RDHUP or HUP, which tokio never
    /// clears once seen. `ready` waits in a list several tasks share and is
    /// dropped at once, so hyper's read waker is left alone.
    fn read_half_closed(&self) -> bool {
        match self.stream.ready(Interest::READABLE).now_or_never() {
            Some(Ok(ready)) => ready.is_read_closed(),
            Some(Err(_)) => true,
            None => false,
        }
    }
}

/// hyper's side of the shared socket.
#[derive(Debug)]
pub(crate) struct Io(pub(crate) Arc<Conn>);

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.0.stream.poll_read_ready(cx))?;
            match self.0.stream.try_read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.stream.poll_write_ready(cx))?;
            match self.0.stream.try_write(buf) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.0.faulted.load(Ordering::SeqCst) {
            let _ = SockRef::from(&self.0.stream).shutdown(std::net::Shutdown::Write);
        }
        Poll::Ready(Ok(()))
    }
}
