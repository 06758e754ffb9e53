//! Server CPU per request: each server runs alone on one thread (a
//! current-thread runtime), the client on another runtime, and the server
//! thread's own CPU time (`/proc/thread-self/schedstat`) is divided by the
//! requests it answered. Unlike the throughput ratios, this does not move with
//! what else the machine runs, so it tells small changes apart. On the ok
//! path wiremock is measured too: it serves from a thread it starts itself,
//! whose CPU time (`/proc/self/task/{id}/schedstat`) counts with the server
//! thread's, as any thread a server starts does. So is the simulator with its
//! Stripe profile (`simulator_stripe`: form creates of customers), whose cost
//! against the generic wire's is the profile part's question.
//!
//! `cargo run --release -p lostreply-bench --example server_cpu -- [ok|drop|reset] [connections] [rounds] [shared]`
//!
//! `SERVER_CPU_ONLY=simulator` (or `simulator_stripe`, `bare_hyper`, `wiremock`) measures that
//! server alone (with `shared` too), so that a profiler, `strace -f -c` or
//! callgrind wrapped around the command sees one server's work and nothing
//! of the others'.

use std::time::Duration;

use lostreply_bench::client::Wire;
use lostreply_bench::load::{run_point, run_target, LoadSpec, Path};
use lostreply_bench::servers::{Behaviour, RunningServer, ServerKind};

/// A server this example measures: one of the benchmark's, or the
/// simulator on Stripe's wire.
#[derive(Debug, Clone, Copy)]
enum Under {
    Server(ServerKind),
    SimulatorStripe,
}

impl Under {
    fn name(self) -> &'static str {
        match self {
            Under::Server(kind) => kind.name(),
            Under::SimulatorStripe => "simulator_stripe",
        }
    }

    async fn start(self, behaviour: Behaviour) -> Result<RunningServer, lostreply_bench::Error> {
        match self {
            Under::Server(kind) => RunningServer::start(kind, behaviour).await,
            Under::SimulatorStripe => RunningServer::simulator(Wire::Stripe, behaviour).await,
        }
    }
}

/// `println!` that stops quietly when stdout is gone (`| head`) instead of
/// panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// A thread's CPU time, ns: the first field of its `schedstat` file (0 when
/// it cannot be read, as for a thread that has ended).
fn schedstat_ns(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn thread_cpu_ns() -> u64 {
    schedstat_ns("/proc/thread-self/schedstat")
}

/// The ids of this process's threads, from `/proc/self/task`.
fn thread_ids() -> std::collections::BTreeSet<u32> {
    std::fs::read_dir("/proc/self/task")
        .map(|dir| {
            dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// CPU time, ns, of the threads `ids` of this process.
fn threads_cpu_ns(ids: &std::collections::BTreeSet<u32>) -> u64 {
    ids.iter()
        .map(|id| schedstat_ns(&format!("/proc/self/task/{id}/schedstat")))
        .sum()
}

/// The whole process's CPU time (all threads), ns, from `/proc/self/stat`.
fn process_cpu_ns() -> u64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the command name (which may hold spaces) start after ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 (1-based), 12 and 13 after ')'.
    (ticks(11) + ticks(12)) * 10_000_000
}

/// `shared`: the server runs on the client's runtime, as in `lostreply-bench`,
/// and the figure is the whole process's CPU (client and server) per request.
fn shared_runtime(
    path: Path,
    behaviour: Behaviour,
    connections: usize,
    rounds: u64,
) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let only = std::env::var("SERVER_CPU_ONLY").ok();
    for kind in [ServerKind::Simulator, ServerKind::BareHyper] {
        if only.as_deref().is_some_and(|o| o != kind.name()) {
            continue;
        }
        let (requests, cpu_ns, secs) = rt.block_on(async {
            let server = RunningServer::start(kind, behaviour).await?;
            let spec = LoadSpec {
                connections,
                warmup: Duration::ZERO,
                measure: Duration::from_secs(600),
                max_rounds: Some(rounds),
            };
            let before = process_cpu_ns();
            let started = std::time::Instant::now();
            let point = run_point(server.addr, path, spec).await;
            let secs = started.elapsed().as_secs_f64();
            let used = process_cpu_ns() - before;
            server.shutdown().await;
            anyhow::Ok((point.sent, used, secs))
        })?;
        say!(
            "{:<10} {path:?} conns {connections} (shared runtime): {requests} requests in {secs:.2} s, {:.0} req/s, process CPU {:.2} µs/request",
            kind.name(),
            requests as f64 / secs,
            cpu_ns as f64 / 1000.0 / requests.max(1) as f64
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map_or("ok", String::as_str);
    let connections: usize = args.get(2).map_or(Ok(16), |s| s.parse())?;
    let rounds: u64 = args.get(3).map_or(Ok(5000), |s| s.parse())?;
    let (path, behaviour) = match path {
        "ok" => (Path::Ok, Behaviour::Ok),
        "drop" => (Path::Closed, Behaviour::DropAfterCommit),
        "reset" => (Path::Reset, Behaviour::ResetAfterCommit),
        other => anyhow::bail!("unknown path {other}: ok, drop or reset"),
    };
    if args.get(4).is_some_and(|a| a == "shared") {
        return shared_runtime(path, behaviour, connections, rounds);
    }
    // Wiremock answers only the ok path (it cannot lose a response).
    let kinds: &[Under] = if behaviour == Behaviour::Ok {
        &[
            Under::Server(ServerKind::Simulator),
            Under::SimulatorStripe,
            Under::Server(ServerKind::BareHyper),
            Under::Server(ServerKind::Wiremock),
        ]
    } else {
        &[
            Under::Server(ServerKind::Simulator),
            Under::SimulatorStripe,
            Under::Server(ServerKind::BareHyper),
        ]
    };
    let only = std::env::var("SERVER_CPU_ONLY").ok();
    for &kind in kinds {
        if only.as_deref().is_some_and(|o| o != kind.name()) {
            continue;
        }
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = std::thread::Builder::new().name("srv".to_owned()).spawn(
            move || -> anyhow::Result<u64> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    // Wiremock serves from a thread of its own that it starts:
                    // the threads a server starts count with this one.
                    let threads = thread_ids();
                    let server = kind.start(behaviour).await?;
                    let started: std::collections::BTreeSet<u32> =
                        thread_ids().difference(&threads).copied().collect();
                    addr_tx.send(server.target())?;
                    let before = thread_cpu_ns() + threads_cpu_ns(&started);
                    let _ = stop_rx.await;
                    let used = (thread_cpu_ns() + threads_cpu_ns(&started)).saturating_sub(before);
                    server.shutdown().await;
                    Ok(used)
                })
            },
        )?;
        let target = addr_rx.recv()?;
        let client = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let spec = LoadSpec {
            connections,
            warmup: Duration::ZERO,
            measure: Duration::from_secs(600),
            max_rounds: Some(rounds),
        };
        let point = client.block_on(run_target(target, path, spec));
        let _ = stop_tx.send(());
        let cpu_ns = server
            .join()
            .map_err(|_| anyhow::anyhow!("server thread panicked"))??;
        // `sent` counts every request (a create and a retrieve per ok round).
        let requests = point.sent;
        say!(
            "{:<10} {path:?} conns {connections}: {requests} requests, {} errors, server CPU {:.2} µs/request",
            kind.name(),
            point.errors,
            cpu_ns as f64 / 1000.0 / requests.max(1) as f64
        );
    }
    Ok(())
}
