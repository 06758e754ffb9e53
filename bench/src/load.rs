//! Closed-loop load: `connections` tasks, each issuing its next request as soon
//! as the previous one ended, for a warm-up and then a measured window. A
//! request counts when it completes inside the window; its latency is from
//! just before it was sent to the end of its body (or of its connection).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::StatusCode;

use crate::client::{self, classify, Lost, Target};
use crate::stats::{percentiles, Percentiles};

/// A worker gives up after this many errors in a row (a server that is gone
/// must not turn the benchmark into a busy loop).
const MAX_CONSECUTIVE_ERRORS: u32 = 10;

/// One measured point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSpec {
    /// Concurrent client connections (tasks).
    pub connections: usize,
    /// Run, but do not count, this long first.
    pub warmup: Duration,
    /// Count this long.
    pub measure: Duration,
    /// Stop each connection after this many rounds even if time is left (tests).
    pub max_rounds: Option<u64>,
}

/// What a point measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// Requests that completed inside the window.
    pub counted: u64,
    /// The window's real length (shorter than asked when `max_rounds` ended it).
    pub measured: Duration,
    /// Latencies of the counted requests.
    pub latency: Percentiles,
    /// Every request sent, warm-up included (to compare with the ledger).
    pub sent: u64,
    /// Requests that ended otherwise than expected.
    pub errors: u64,
    /// The first such error, as text.
    pub first_error: Option<String>,
    /// Lost-response paths: connections the client saw closed (FIN) / reset (RST).
    pub closed_seen: u64,
    /// See `closed_seen`.
    pub reset_seen: u64,
}

impl PointResult {
    /// Counted requests per second of window.
    pub fn rate_per_s(&self) -> f64 {
        let s = self.measured.as_secs_f64();
        if s > 0.0 {
            self.counted as f64 / s
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Window {
    measure_from: Instant,
    end: Instant,
}

impl Window {
    fn counts(&self, done: Instant) -> bool {
        done >= self.measure_from && done <= self.end
    }
}

#[derive(Debug, Default)]
struct WorkerStats {
    latencies_us: Vec<u32>,
    sent: u64,
    errors: u64,
    first_error: Option<String>,
    closed_seen: u64,
    reset_seen: u64,
    last_done: Option<Instant>,
}

impl WorkerStats {
    fn record(&mut self, window: &Window, started: Instant, done: Instant) {
        self.last_done = Some(done);
        if window.counts(done) {
            let us = done.duration_since(started).as_micros();
            self.latencies_us
                .push(u32::try_from(us).unwrap_or(u32::MAX));
        }
    }

    fn error(&mut self, message: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(message);
        }
    }
}

/// Which path a point drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Keep-alive connections; each round is a create then a retrieve of what it created.
    Ok,
    /// A new connection per create, which the server must close (FIN) after committing.
    Closed,
    /// A new connection per create, which the server must reset (RST) after committing.
    Reset,
}

/// Runs one point against the server at `addr`, on the generic wire.
pub async fn run_point(addr: SocketAddr, path: Path, spec: LoadSpec) -> PointResult {
    run_target(Target::new(addr), path, spec).await
}

/// Runs one point against `target`, on the wire it names.
pub async fn run_target(target: Target, path: Path, spec: LoadSpec) -> PointResult {
    run_samples(target, path, spec).await.finish()
}

/// What a run measured, its latencies still raw, so that runs taken in
/// slices (one server's, interleaved with another's) add up to one point
/// with exact percentiles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Samples {
    latencies_us: Vec<u32>,
    measured: Duration,
    sent: u64,
    errors: u64,
    first_error: Option<String>,
    closed_seen: u64,
    reset_seen: u64,
}

impl Samples {
    /// Adds a later slice of the same point.
    pub fn add(&mut self, later: Samples) {
        self.latencies_us.extend(later.latencies_us);
        self.measured += later.measured;
        self.sent += later.sent;
        self.errors += later.errors;
        if self.first_error.is_none() {
            self.first_error = later.first_error;
        }
        self.closed_seen += later.closed_seen;
        self.reset_seen += later.reset_seen;
    }

    /// The point: counts, the window and the latencies' percentiles.
    pub fn finish(mut self) -> PointResult {
        PointResult {
            counted: self.latencies_us.len() as u64,
            measured: self.measured,
            latency: percentiles(&mut self.latencies_us),
            sent: self.sent,
            errors: self.errors,
            first_error: self.first_error,
            closed_seen: self.closed_seen,
            reset_seen: self.reset_seen,
        }
    }
}

/// How many times a point of [`run_interleaved`] goes through its servers
/// forward and back.
pub const SLICE_PAIRS: u32 = 4;

/// The warm-up of a server's later slices: the server is warm by then, and
/// only the slice's connections are new.
const LATER_SLICE_WARMUP: Duration = Duration::from_millis(100);

/// One point against several servers that run side by side, taken in short
/// slices: forward, then backward, [`SLICE_PAIRS`] times (A B C C B A A B C
/// C B A ...; B A first when `backward_first`), so that other work on the
/// machine (another guest's burst on a shared host, a CPU clocking down),
/// which comes and goes within a second, falls on every server alike rather
/// than on whichever ran then. Each server's slices add up to one point of
/// `spec`'s window; its first slice has `spec`'s warm-up, its later ones a
/// short one. The samples come back in the order of `targets`.
pub async fn run_interleaved(
    targets: &[Target],
    path: Path,
    spec: LoadSpec,
    backward_first: bool,
) -> Vec<Samples> {
    let slices = 2 * SLICE_PAIRS;
    let mut samples = vec![Samples::default(); targets.len()];
    let mut warmed = vec![false; targets.len()];
    for index in slice_order(targets.len(), backward_first) {
        let (Some(target), Some(into), Some(warm)) = (
            targets.get(index),
            samples.get_mut(index),
            warmed.get_mut(index),
        ) else {
            continue;
        };
        let slice = LoadSpec {
            warmup: if *warm {
                spec.warmup.min(LATER_SLICE_WARMUP)
            } else {
                spec.warmup
            },
            measure: spec.measure / slices,
            ..spec
        };
        *warm = true;
        into.add(run_samples(target.clone(), path, slice).await);
    }
    samples
}

/// Which of `servers` runs each slice of an interleaved point, in turn.
fn slice_order(servers: usize, backward_first: bool) -> Vec<usize> {
    let forward: Vec<usize> = (0..servers).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    let pair = if backward_first {
        [backward, forward]
    } else {
        [forward, backward]
    };
    (0..SLICE_PAIRS)
        .flat_map(|_| pair.iter().flatten().copied())
        .collect()
}

/// Runs one point (or one slice of one) against `target`, keeping the latencies raw.
pub async fn run_samples(target: Target, path: Path, spec: LoadSpec) -> Samples {
    let target = Arc::new(target);
    let start = Instant::now();
    let window = Window {
        measure_from: start + spec.warmup,
        end: start + spec.warmup + spec.measure,
    };
    let mut tasks = Vec::with_capacity(spec.connections);
    for worker in 0..spec.connections {
        let target = target.clone();
        let first_n = (worker as u64) << 32;
        tasks.push(tokio::spawn(async move {
            match path {
                Path::Ok => ok_worker(&target, window, spec.max_rounds, first_n).await,
                Path::Closed | Path::Reset => {
                    lost_worker(&target, window, spec.max_rounds, first_n).await
                }
            }
        }));
    }
    let mut all = WorkerStats::default();
    let mut last_done = window.measure_from;
    for task in tasks {
        match task.await {
            Ok(w) => {
                all.latencies_us.extend(w.latencies_us);
                all.sent += w.sent;
                all.errors += w.errors;
                if all.first_error.is_none() {
                    all.first_error = w.first_error;
                }
                all.closed_seen += w.closed_seen;
                all.reset_seen += w.reset_seen;
                last_done = last_done.max(w.last_done.unwrap_or(last_done));
            }
            Err(e) => all.error(format!("a load task failed: {e}")),
        }
    }
    if path == Path::Closed || path == Path::Reset {
        // What the client saw must be what the path promises; anything else is an error.
        let (expected, unexpected) = match path {
            Path::Closed => (all.closed_seen, all.reset_seen),
            Path::Reset | Path::Ok => (all.reset_seen, all.closed_seen),
        };
        if unexpected > 0 {
            all.error(format!(
                "{unexpected} connection(s) ended the other way ({expected} as expected)"
            ));
        }
    }
    Samples {
        latencies_us: all.latencies_us,
        measured: last_done
            .min(window.end)
            .saturating_duration_since(window.measure_from),
        sent: all.sent,
        errors: all.errors,
        first_error: all.first_error,
        closed_seen: all.closed_seen,
        reset_seen: all.reset_seen,
    }
}

fn more(window: &Window, rounds: u64, max_rounds: Option<u64>, consecutive_errors: u32) -> bool {
    Instant::now() < window.end
        && max_rounds.is_none_or(|m| rounds < m)
        && consecutive_errors < MAX_CONSECUTIVE_ERRORS
}

async fn ok_worker(
    target: &Target,
    window: Window,
    max_rounds: Option<u64>,
    first_n: u64,
) -> WorkerStats {
    let mut stats = WorkerStats::default();
    let mut connection: Option<client::Sender> = None;
    let (mut rounds, mut consecutive_errors) = (0u64, 0u32);
    while more(&window, rounds, max_rounds, consecutive_errors) {
        rounds += 1;
        let sender = match &mut connection {
            Some(sender) => sender,
            None => match client::connect(target.addr).await {
                // The connection task ends by itself when the sender is dropped.
                Ok((sender, _task)) => connection.insert(sender),
                Err(e) => {
                    consecutive_errors += 1;
                    stats.error(e.to_string());
                    continue;
                }
            },
        };
        match ok_round(sender, target, first_n + rounds, &window, &mut stats).await {
            Ok(()) => consecutive_errors = 0,
            Err(error) => {
                consecutive_errors += 1;
                stats.error(error.to_string());
                connection = None;
            }
        }
    }
    stats
}

/// Why a round of the answered path did not end in two expected answers.
#[derive(Debug, thiserror::Error)]
enum RoundError {
    /// The create got no answer.
    #[error("create: {0}")]
    Create(#[source] hyper::Error),
    /// The create answered with another status than the wire's "created".
    #[error("create answered {0}")]
    CreateStatus(StatusCode),
    /// The create's answer holds no object id to retrieve.
    #[error("create answered no object id")]
    NoObjectId,
    /// The retrieve got no answer.
    #[error("retrieve: {0}")]
    Retrieve(#[source] hyper::Error),
    /// The retrieve answered with another status than 200.
    #[error("retrieve {id} answered {status}")]
    RetrieveStatus { id: String, status: StatusCode },
}

/// A create, then a retrieve of the id it answered: each request timed and counted.
async fn ok_round(
    sender: &mut client::Sender,
    target: &Target,
    n: u64,
    window: &Window,
    stats: &mut WorkerStats,
) -> Result<(), RoundError> {
    let started = Instant::now();
    stats.sent += 1;
    let (status, body) = client::create(sender, target, n)
        .await
        .map_err(RoundError::Create)?;
    let done = Instant::now();
    if status != target.wire.created_status() {
        return Err(RoundError::CreateStatus(status));
    }
    stats.record(window, started, done);
    let id = client::object_id(&body).ok_or(RoundError::NoObjectId)?;
    let started = Instant::now();
    stats.sent += 1;
    let (status, _) = client::retrieve(sender, target, &id)
        .await
        .map_err(RoundError::Retrieve)?;
    let done = Instant::now();
    if status != StatusCode::OK {
        return Err(RoundError::RetrieveStatus { id, status });
    }
    stats.record(window, started, done);
    Ok(())
}

async fn lost_worker(
    target: &Target,
    window: Window,
    max_rounds: Option<u64>,
    first_n: u64,
) -> WorkerStats {
    let mut stats = WorkerStats::default();
    let (mut rounds, mut consecutive_errors) = (0u64, 0u32);
    while more(&window, rounds, max_rounds, consecutive_errors) {
        rounds += 1;
        let started = Instant::now();
        let (mut sender, task) = match client::connect(target.addr).await {
            Ok(c) => c,
            Err(e) => {
                consecutive_errors += 1;
                stats.error(e.to_string());
                continue;
            }
        };
        stats.sent += 1;
        let result = client::create(&mut sender, target, first_n + rounds).await;
        drop(sender);
        // The connection task has ended (or ends now the sender is gone): the
        // socket is closed before the next round, so none pile up.
        let _ = task.await;
        let done = Instant::now();
        match result {
            Ok((status, _)) => {
                consecutive_errors += 1;
                stats.error(format!(
                    "the server answered {status} instead of losing the response"
                ));
            }
            Err(e) => match classify(&e) {
                Lost::Closed => {
                    consecutive_errors = 0;
                    stats.closed_seen += 1;
                    stats.record(&window, started, done);
                }
                Lost::Reset => {
                    consecutive_errors = 0;
                    stats.reset_seen += 1;
                    stats.record(&window, started, done);
                }
                Lost::Other(message) => {
                    consecutive_errors += 1;
                    stats.error(message);
                }
            },
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_runs_as_many_slices_in_mirrored_turns() {
        let order = slice_order(3, false);
        assert_eq!(&order[..6], &[0, 1, 2, 2, 1, 0]);
        assert_eq!(order.len(), 6 * SLICE_PAIRS as usize);
        for server in 0..3 {
            let slices = order.iter().filter(|&&s| s == server).count();
            assert_eq!(slices, 2 * SLICE_PAIRS as usize);
            // Mirrored turns: a server's slices sit, on average, at the
            // middle of the point, whichever it is.
            let mean: f64 = order
                .iter()
                .enumerate()
                .filter(|(_, &s)| s == server)
                .map(|(at, _)| at as f64)
                .sum::<f64>()
                / slices as f64;
            assert!((mean - (order.len() - 1) as f64 / 2.0).abs() < 1e-9);
        }
        assert_eq!(&slice_order(2, true)[..4], &[1, 0, 0, 1]);
    }
}
