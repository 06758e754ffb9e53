//! Server CPU per request: each server runs alone on one thread (a
//! current-thread runtime), the client on another runtime, and the server
//! thread's own CPU time (`/proc/thread-self/schedstat`) is divided by the
//! requests it answered. Unlike the throughput ratios, this does not move with
//! what else the machine runs, so it tells small changes apart.
//!
//! `cargo run --release -p lostreply-bench --example server_cpu -- [ok|drop|reset] [connections] [rounds]`

use std::time::Duration;

use bench::load::{run_point, LoadSpec, Path};
use bench::servers::{Behaviour, RunningServer, ServerKind};

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
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
    for kind in [ServerKind::Simulator, ServerKind::BareHyper] {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = std::thread::Builder::new().name("srv".to_owned()).spawn(
            move || -> anyhow::Result<u64> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    let server = RunningServer::start(kind, behaviour).await?;
                    addr_tx.send(server.addr)?;
                    let before = thread_cpu_ns();
                    let _ = stop_rx.await;
                    let used = thread_cpu_ns() - before;
                    server.shutdown().await;
                    Ok(used)
                })
            },
        )?;
        let addr = addr_rx.recv()?;
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
        let point = client.block_on(run_point(addr, path, spec));
        let _ = stop_tx.send(());
        let cpu_ns = server
            .join()
            .map_err(|_| anyhow::anyhow!("server thread panicked"))??;
        // `sent` counts every request (a create and a retrieve per ok round).
        let requests = point.sent;
        println!(
            "{:<10} {path:?} conns {connections}: {requests} requests, {} errors, server CPU {:.2} µs/request",
            kind.name(),
            point.errors,
            cpu_ns as f64 / 1000.0 / requests.max(1) as f64
        );
    }
    Ok(())
}
