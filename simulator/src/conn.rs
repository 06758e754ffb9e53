//! One client connection, shared between hyper (which owns the HTTP exchange)
//! and the fault engine (which sometimes has to act on the socket itself).
//!
//! The socket sits in an `Arc` so that a stall can watch it for the client's
//! EOF or RST while hyper still owns the connection, and so that the
//! connection task can end it with a FIN or an RST after hyper is gone.
//! Everything here works over any [`SharedSocket`]: a `TcpStream` when
//! serving, a scripted stream in unit tests.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use futures::task::AtomicWaker;
use futures::FutureExt;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch};

use crate::head_deadline::HeadDeadline;
use crate::sync::lock;

/// How the connection must end, decided by a request's fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// FIN without a byte of response (`drop`); the journal says `dropped`.
    Drop { seq: u64 },
    /// RST (`reset`); the journal says `reset`.
    Reset { seq: u64 },
    /// FIN after a stall; the journal already says how the stall ended.
    Close,
}

/// A connection's socket, used through `&self`: hyper reads and writes it
/// while a stall watches it for the client leaving, and the connection task
/// ends it once hyper is gone. `TcpStream` is the one that serves.
pub(crate) trait SharedSocket: Send + Sync + 'static {
    /// hyper's reads. One reader at a time: like `TcpStream::poll_read_ready`,
    /// only the latest caller's waker may be woken.
    fn poll_read_shared(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>)
        -> Poll<io::Result<()>>;

    /// hyper's writes.
    fn poll_write_shared(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>>;

    /// hyper's vectored writes.
    fn poll_write_vectored_shared(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>>;

    /// Ends once the client has closed or reset the connection, discarding
    /// whatever it still sends. Waits alongside hyper's reads, so it must not
    /// take their waker.
    fn until_client_leaves(&self) -> impl Future<Output = ()> + Send + '_;

    /// Whether the client has already closed or reset its side, as far as
    /// the socket has said so far; never waits. Asked when an answer is
    /// handed over, so the journal can say it went to nobody.
    fn has_left(&self) -> bool;

    /// Sends a FIN (the write half closes; the read half stays open).
    fn shutdown_write(&self) -> io::Result<()>;
}

impl SharedSocket for TcpStream {
    fn poll_read_shared(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_read_ready(cx))?;
            // A short read means the socket was drained (epoll is edge
            // triggered), so its readiness is cleared at once, as tokio's own
            // `poll_read` does: otherwise hyper's next read of the connection
            // is a `recvfrom` that fails with EAGAIN, one wasted system call
            // per request. `try_io` clears readiness only when its closure
            // says `WouldBlock`, and only if no newer event came in since it
            // looked, so the bytes read are carried out beside that answer.
            let room = buf.remaining();
            let mut short = false;
            let read = self.try_io(Interest::READABLE, || {
                // Reads into the unfilled (uninitialised) part as it is:
                // zeroing it first (`initialize_unfilled`) cost a memset of
                // hyper's whole read buffer per read.
                let n = self.try_read_buf(buf)?;
                if 0 < n && n < room {
                    short = true;
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(n)
            });
            match read {
                Ok(_) => return Poll::Ready(Ok(())),
                Err(_) if short => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_write_shared(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        write_when_ready(self, cx, |stream| stream.try_write(data))
    }

    fn poll_write_vectored_shared(
        &self,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        write_when_ready(self, cx, |stream| stream.try_write_vectored(bufs))
    }

    async fn until_client_leaves(&self) {
        // `readable()`, unlike `poll_read_ready`, lets several tasks wait at
        // once: hyper's reads keep their waker.
        loop {
            if self.readable().await.is_err() {
                return;
            }
            match discard_readable(self) {
                Ok(0) => return,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(_) => return,
            }
        }
    }

    fn has_left(&self) -> bool {
        // The readiness the I/O driver already holds (epoll's RDHUP or HUP,
        // which tokio never clears once seen): no system call on the path
        // of every answer, and hyper's read waker is left alone (`ready`
        // waits in the list that several tasks share, and is dropped at once).
        match self.ready(Interest::READABLE).now_or_never() {
            Some(Ok(ready)) => ready.is_read_closed(),
            Some(Err(_)) => true,
            None => false,
        }
    }

    fn shutdown_write(&self) -> io::Result<()> {
        socket2::SockRef::from(self).shutdown(std::net::Shutdown::Write)
    }
}

/// Reads and discards what the client sent. The scratch buffer lives here,
/// not in `until_client_leaves`: a local held across an `.await` is part of
/// the future, and every future that can hold a connection (each request's
/// handler among them) would carry and copy these 4 KiB. It is left
/// uninitialised: what is read is never looked at, and zeroing 4 KiB on every
/// read would cost more than the rest of a lost answer's work on the socket.
fn discard_readable(stream: &TcpStream) -> io::Result<usize> {
    let mut scratch = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
    stream.try_read_buf(&mut scratch.as_mut_slice())
}

/// One write, retried until the socket takes it.
fn write_when_ready(
    stream: &TcpStream,
    cx: &mut Context<'_>,
    write: impl Fn(&TcpStream) -> io::Result<usize>,
) -> Poll<io::Result<usize>> {
    loop {
        ready!(stream.poll_write_ready(cx))?;
        match write(stream) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            result => return Poll::Ready(result),
        }
    }
}

/// The shared state of one connection.
#[derive(Debug)]
pub(crate) struct Conn<S = TcpStream> {
    pub(crate) stream: S,
    writes_blocked: AtomicBool,
    ending: Mutex<Option<oneshot::Sender<Ending>>>,
    flushes: AtomicU64,
    flush_waker: AtomicWaker,
    /// The deadline of the head hyper awaits (see `head_deadline`).
    head: HeadDeadline,
}

impl<S> AsRef<HeadDeadline> for Conn<S> {
    fn as_ref(&self) -> &HeadDeadline {
        &self.head
    }
}

impl<S> Conn<S> {
    pub(crate) fn new(stream: S) -> (Arc<Conn<S>>, oneshot::Receiver<Ending>) {
        let (tx, rx) = oneshot::channel();
        let conn = Conn {
            stream,
            writes_blocked: AtomicBool::new(false),
            ending: Mutex::new(Some(tx)),
            flushes: AtomicU64::new(0),
            flush_waker: AtomicWaker::new(),
            head: HeadDeadline::new(),
        };
        (Arc::new(conn), rx)
    }

    /// Asks the connection task to end the connection this way. From here on
    /// nothing hyper writes reaches the socket.
    pub(crate) fn request_end(&self, ending: Ending) {
        self.writes_blocked.store(true, Ordering::SeqCst);
        if let Some(tx) = lock(&self.ending).take() {
            let _ = tx.send(ending);
        }
    }

    /// How many times hyper flushed (each flush follows writing all it had buffered).
    pub(crate) fn flushes(&self) -> u64 {
        self.flushes.load(Ordering::SeqCst)
    }

    pub(crate) fn register_flush_waker(&self, cx: &Context<'_>) {
        self.flush_waker.register(cx.waker());
    }
}

/// Why a hold (stall or idle) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HoldEnd {
    /// The client closed or reset the connection.
    ClientLeft,
    /// `Limits::stall_cap` ran out first.
    Cap,
    /// The simulator is shutting down.
    Shutdown,
}

/// Holds until the client leaves (EOF or error on the socket), the cap runs out
/// or the simulator shuts down. Whatever the client still sends is discarded:
/// a held connection is never reused.
pub(crate) async fn hold_until_client_leaves<S: SharedSocket>(
    conn: &Conn<S>,
    cap: Duration,
    mut shutdown: watch::Receiver<bool>,
) -> HoldEnd {
    tokio::select! {
        () = conn.stream.until_client_leaves() => HoldEnd::ClientLeft,
        () = tokio::time::sleep(cap) => HoldEnd::Cap,
        _ = shutdown.wait_for(|down| *down) => HoldEnd::Shutdown,
    }
}

/// The socket as hyper sees it: plain reads and writes on the shared stream,
/// plus a flush counter (partial bodies wait for it) and a write gate.
#[derive(Debug)]
pub(crate) struct FaultIo<S = TcpStream> {
    conn: Arc<Conn<S>>,
}

impl<S> FaultIo<S> {
    pub(crate) fn new(conn: Arc<Conn<S>>) -> FaultIo<S> {
        FaultIo { conn }
    }

    fn blocked(&self) -> Option<io::Error> {
        self.conn
            .writes_blocked
            .load(Ordering::SeqCst)
            .then(|| io::Error::new(io::ErrorKind::BrokenPipe, "connection ended by a fault"))
    }
}

impl<S: SharedSocket> AsyncRead for FaultIo<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.conn.stream.poll_read_shared(cx, buf)
    }
}

impl<S: SharedSocket> AsyncWrite for FaultIo<S> {
    // Every write goes through the gate: refused once the connection's end is
    // decided, so nothing hyper still has to say reaches the client.
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.blocked() {
            return Poll::Ready(Err(e));
        }
        self.conn.stream.poll_write_shared(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(e) = self.blocked() {
            return Poll::Ready(Err(e));
        }
        self.conn.stream.poll_write_vectored_shared(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Writes go straight to the socket, so a flush only marks the moment
        // hyper has written everything it buffered.
        self.conn.flushes.fetch_add(1, Ordering::SeqCst);
        self.conn.flush_waker.wake();
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let _ = self.conn.stream.shutdown_write();
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::scripted_conn;
    use std::future::poll_fn;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_test::io::Builder;
    use tokio_test::{assert_pending, assert_ready, assert_ready_eq, task};

    #[tokio::test]
    async fn reads_and_writes_pass_through_until_a_fault_ends_the_connection() {
        // The script expects exactly one write: a second one reaching the
        // socket would panic in the mock.
        let mock = Builder::new()
            .read(b"GET / HTTP/1.1\r\n\r\n")
            .write(b"HTTP/1.1 200 OK\r\n")
            .build();
        let (conn, ending) = scripted_conn(mock);
        let mut io = FaultIo::new(conn.clone());

        let mut request = [0u8; 64];
        let read = io.read(&mut request).await.expect("the script's read");
        assert_eq!(&request[..read], b"GET / HTTP/1.1\r\n\r\n");
        io.write_all(b"HTTP/1.1 200 OK\r\n")
            .await
            .expect("the script's write");

        conn.request_end(Ending::Reset { seq: 1 });
        let refused = io.write(b"late bytes").await.map_err(|e| e.kind());
        assert_eq!(refused, Err(io::ErrorKind::BrokenPipe));
        let refused = io
            .write_vectored(&[io::IoSlice::new(b"late"), io::IoSlice::new(b"r")])
            .await
            .map_err(|e| e.kind());
        assert_eq!(refused, Err(io::ErrorKind::BrokenPipe));
        assert_eq!(ending.await.ok(), Some(Ending::Reset { seq: 1 }));
    }

    #[tokio::test]
    async fn only_the_first_ending_asked_for_counts() {
        let (conn, ending) = scripted_conn(Builder::new().build());
        conn.request_end(Ending::Drop { seq: 3 });
        conn.request_end(Ending::Close);
        assert_eq!(ending.await.ok(), Some(Ending::Drop { seq: 3 }));
    }

    #[test]
    fn a_flush_is_counted_and_wakes_whoever_waits_for_it() {
        let (conn, _ending) = scripted_conn(Builder::new().build());
        let mut io = FaultIo::new(conn.clone());
        // What a partial body does: wait for a flush after the one it saw.
        let mut waiter = task::spawn(poll_fn(|cx| {
            conn.register_flush_waker(cx);
            if conn.flushes() > 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        assert_pending!(waiter.poll());

        let mut flush = task::spawn(poll_fn(|cx| Pin::new(&mut io).poll_flush(cx)));
        assert_ready!(flush.poll()).expect("a flush never fails");

        assert!(waiter.is_woken());
        assert_ready!(waiter.poll());
        assert_eq!(conn.flushes(), 1);
    }

    #[tokio::test]
    async fn shutdown_closes_the_write_half() {
        let (conn, _ending) = scripted_conn(Builder::new().build());
        let mut io = FaultIo::new(conn.clone());
        io.shutdown().await.expect("shutdown never fails");
        assert_eq!(conn.stream.fins(), 1);
    }

    #[tokio::test]
    async fn a_hold_stays_pending_until_the_client_leaves() {
        let (mock, mut client) = Builder::new().build_with_handle();
        let (conn, _ending) = scripted_conn(mock);
        let (_shutdown, shutdown_rx) = watch::channel(false);
        let mut hold = task::spawn(hold_until_client_leaves(
            &conn,
            Duration::from_secs(30),
            shutdown_rx,
        ));
        assert_pending!(hold.poll());

        // What the client still sends is discarded; the hold goes on.
        client.read(b"POST /v1/things HTTP/1.1\r\n");
        assert!(hold.is_woken());
        assert_pending!(hold.poll());

        // The client closes: EOF.
        drop(client);
        assert!(hold.is_woken());
        assert_ready_eq!(hold.poll(), HoldEnd::ClientLeft);
    }

    #[tokio::test]
    async fn a_hold_ends_when_the_simulator_shuts_down() {
        let (mock, _client) = Builder::new().build_with_handle();
        let (conn, _ending) = scripted_conn(mock);
        let (shutdown, shutdown_rx) = watch::channel(false);
        let mut hold = task::spawn(hold_until_client_leaves(
            &conn,
            Duration::from_secs(30),
            shutdown_rx,
        ));
        assert_pending!(hold.poll());
        let _ = shutdown.send(true);
        assert!(hold.is_woken());
        assert_ready_eq!(hold.poll(), HoldEnd::Shutdown);
    }

    #[tokio::test]
    async fn a_hold_ends_at_its_cap_while_the_client_stays() {
        let (mock, _client) = Builder::new().build_with_handle();
        let (conn, _ending) = scripted_conn(mock);
        let (_shutdown, shutdown_rx) = watch::channel(false);
        let end = hold_until_client_leaves(&conn, Duration::from_millis(20), shutdown_rx).await;
        assert_eq!(end, HoldEnd::Cap);
    }
}
