//! The listener: one task accepts, one task per connection serves it with
//! hyper, and ends it with a FIN or an RST when a fault asks.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use futures::future::Either;
use futures::{FutureExt, TryFutureExt};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

use crate::body::Served;
use crate::conn::{hold_until_client_leaves, Conn, Ending, FaultIo, SharedSocket};
use crate::control;
use crate::head_deadline::{HeadTimer, HeadWatch};
use crate::poll_again::PollAgain;
use crate::provider::{provider_entry, RunRequest};
use crate::record::ResponseFate;
use crate::shared::Shared;
use crate::when_woken::WhenWoken;

/// Most connections served at once; further clients wait in the accept queue.
/// A client that holds one without sending holds it at most the plan's
/// `Limits::read_timeout` (for its head, then as long again for its body).
pub const MAX_CONNECTIONS: usize = 1024;

/// Where the control API lives; everything else is the provider (`/v1`, and
/// `/mcp` when the plan has an MCP face).
const CONTROL_PREFIX: &str = "/_lostreply";

/// The control API's router. The provider is not behind it: its requests go
/// straight from hyper to `provider_entry` (see `serve_connection`).
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .nest(CONTROL_PREFIX, control::router())
        .with_state(shared)
}

/// True for `/_lostreply` and `/_lostreply/...`, as `Router::nest` matches.
fn is_control(path: &str) -> bool {
    path.strip_prefix(CONTROL_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Accepts until shutdown.
pub(crate) async fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    let router = router(shared.clone());
    // Each connection copies it and adds a timer of its own.
    let http = Arc::new(http1_builder(shared.plan.limits.read_timeout));
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut shutdown = shared.shutdown.clone();
    // One wait for the whole loop, polled only when the watch wakes it: a
    // wait per connection would join and leave the watch's waiter list, under
    // its lock, twice for every connection.
    let down = std::pin::pin!(shutdown.wait_for(|down| *down));
    let mut down = WhenWoken::new(down);
    shared.tasks.spawn(keep_a_timer_due_first(
        timer_anchor_period(&shared.plan.limits),
        shared.shutdown.clone(),
    ));
    loop {
        let permit = tokio::select! {
            biased;
            _ = &mut down => return,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let accepted = tokio::select! {
            biased;
            _ = &mut down => return,
            accepted = listener.accept() => accepted.map(|(stream, _)| (stream, permit)),
        };
        match accepted {
            Ok((stream, permit)) => {
                let (shared, router, http) = (shared.clone(), router.clone(), http.clone());
                let task_shared = shared.clone();
                shared.tasks.spawn(async move {
                    serve_connection(task_shared, router, &http, stream).await;
                    drop(permit);
                });
            }
            // Out of descriptors and the like: back off instead of spinning.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// How often the standing timer of [`keep_a_timer_due_first`] comes due:
/// sooner than the shortest bound a connection arms on its own (the head's
/// read deadline, the hold after a fault), so that it is always due first;
/// never more often than ten times a second, so that an idle simulator with
/// tiny bounds is not kept busy (its bounds then wake the driver themselves).
fn timer_anchor_period(limits: &crate::plan::Limits) -> Duration {
    (limits.read_timeout.min(limits.stall_cap) / 2).max(Duration::from_millis(100))
}

/// Keeps one timer armed until shutdown, re-armed every `period`.
///
/// tokio wakes the thread parked on the I/O driver whenever a timer is armed
/// that comes due before every timer already armed (an eventfd write, and on
/// a multi-threaded runtime a second thread woken to look at the wheel under
/// its lock). Without a timer of its own, each connection that a fault ends
/// arms the first timer of the runtime (its hold's bound) and pays that wake;
/// with this one always due sooner, arming a bound is a wheel insert alone.
async fn keep_a_timer_due_first(
    period: Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let down = shutdown.wait_for(|down| *down);
    tokio::pin!(down);
    loop {
        tokio::select! {
            biased;
            _ = &mut down => return,
            () = tokio::time::sleep(period) => {}
        }
    }
}

/// How hyper serves each connection. `read_timeout` bounds each request's
/// head (and the wait for the next one on a kept-alive connection); the
/// provider bounds the body where it reads it. The timer that enforces the
/// head's bound is the connection's own (see `head_deadline`), added to a
/// copy of this builder per connection; serving without one panics.
fn http1_builder(read_timeout: Duration) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        // A client that half-closes or goes away mid-request must not cancel the
        // provider's work; stalls watch the socket themselves.
        .half_close(true)
        // `Date` comes from the simulator clock, set per response.
        .auto_date_header(false)
        .header_read_timeout(read_timeout);
    builder
}

/// What hyper awaits for each request: the control API's boxed future, or
/// the provider's [`RunRequest`].
type ServiceFuture =
    Either<std::pin::Pin<Box<dyn Future<Output = Result<Served, Infallible>> + Send>>, RunRequest>;

async fn serve_connection(
    shared: Arc<Shared>,
    router: Router,
    http: &http1::Builder,
    stream: TcpStream,
) {
    let _ = stream.set_nodelay(true);
    let (conn, ending) = Conn::new(stream);
    let service_conn = conn.clone();
    let service_shared = shared.clone();
    // Provider requests skip axum's router (its routing, extension map and
    // boxed service layers are a measurable share of the ok path); only the
    // control API, rare and not on any hot path, goes through it.
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        // Only the control API's requests become axum's `Body` (a box each),
        // and only their future is boxed: axum's, holding the whole request,
        // inline would make every provider request's future (which hyper moves
        // several times) as large as the control API's.
        let response: ServiceFuture = if is_control(request.uri().path()) {
            Either::Left(Box::pin(
                router
                    .clone()
                    .oneshot(request.map(Body::new))
                    .map_ok(|response| response.map(http_body_util::Either::Right)),
            ))
        } else {
            Either::Right(provider_entry(
                service_shared.clone(),
                service_conn.clone(),
                request,
                crate::mcp::endpoint::entry,
            ))
        };
        response
    });
    // The builder's copy, made only to give this connection its own timer,
    // is gone before the first wait: it takes no room in the task.
    let served = {
        let mut http = http.clone();
        http.timer(HeadTimer(conn.clone()));
        Box::pin(http.serve_connection(TokioIo::new(FaultIo::new(conn.clone())), service))
    };
    // hyper wakes this task from inside its own poll for each request body
    // it hands over: polled again at once, that wake costs no turn of the
    // runtime (see `PollAgain`).
    let serving = std::pin::pin!(until_ending(
        served,
        HeadWatch::new(conn.clone()),
        ending,
        shared.shutdown.clone()
    ));
    let ending = PollAgain::new(serving).await;
    match ending {
        None => {}
        Some(Ending::Reset { seq }) => {
            shared.finish(seq, ResponseFate::Reset);
            // Closing with SO_LINGER 0 sends an RST instead of a FIN.
            let _ = conn.stream.set_zero_linger();
        }
        // The graceful close is boxed: its timer and waits, inline, would
        // make every connection's task (which the runtime copies as it spawns
        // it) twice as large, for the few connections a fault ends.
        Some(Ending::Drop { seq }) => {
            shared.finish(seq, ResponseFate::Dropped);
            Box::pin(close_gracefully(&shared, &conn)).await;
        }
        Some(Ending::Close) => Box::pin(close_gracefully(&shared, &conn)).await,
    }
}

/// Serves the connection until hyper is done with it (`None`), a fault asks
/// to end it, or the simulator shuts down (`None`). hyper lets go of the
/// socket when this returns; what follows acts on it directly. `heads`
/// keeps the deadline of the head hyper awaits.
async fn until_ending(
    mut served: std::pin::Pin<Box<impl Future>>,
    mut heads: HeadWatch<Conn>,
    ending: tokio::sync::oneshot::Receiver<Ending>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) -> Option<Ending> {
    // The connection's task wakes for hyper once or twice a request; the
    // fault's ending and the shutdown are polled only when they woke it.
    let signals = std::pin::pin!(async {
        tokio::select! {
            biased;
            ending = ending => ending.ok(),
            _ = shutdown.wait_for(|down| *down) => None,
        }
    });
    let mut signals = WhenWoken::new(signals);
    // hyper first: a fault asks for its ending from inside hyper's poll, and
    // is seen in that same wake rather than in one more turn of the task.
    // The head's watch last: it arms a wait hyper began in the same wake.
    tokio::select! {
        biased;
        _ = &mut served => {}
        ending = &mut signals => return ending,
        never = &mut heads => match never {},
    }
    // hyper ended: an ending asked for in the same wake still counts.
    (&mut signals).now_or_never().flatten()
}

/// FIN, then read what the client still sends until it closes (bounded):
/// closing with unread data would turn the FIN into an RST.
async fn close_gracefully(shared: &Shared, conn: &Conn) {
    if conn.stream.shutdown_write().is_err() {
        return;
    }
    hold_until_client_leaves(conn, shared.plan.limits.stall_cap, shared.shutdown.clone()).await;
}
