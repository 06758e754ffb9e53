//! The client's socket, shared between hyper (which reads the requests and
//! writes the answers) and the faults that act on the connection itself: a
//! FIN without a byte, an RST, bytes written past hyper (a head without its
//! body, a cut body), and noticing that the client has left during a stall.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use socket2::SockRef;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
