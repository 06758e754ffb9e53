//! The threads every run's simulator serves on, apart from the caller's
//! runtime.
//!
//! An in-process adapter runs on the caller's runtime (a `#[tokio::test]` is
//! one thread by default). An adapter that keeps the contract may still block
//! that runtime's threads now and then: a synchronous `fsync`, a blocking
//! lock, a long computation. Were the simulator served on those same threads,
//! such a pause would hold the provider's answers too, past the scenario's
//! `client_timeout`, and the adapter would be judged on answers the machine
//! lost, not the provider. On threads of its own the provider answers on
//! time whatever the adapter does to its runtime. (The adapter's own client
//! still reads on the adapter's threads: a pause longer than its timeout is
//! its own, as it would be in production.)

use std::sync::OnceLock;

use lostreply_simulator::{Plan, ServeOptions, Simulator};
use tokio::runtime::{Builder, Handle, Runtime};

/// Most threads the provider takes: its work per request is small, and the
/// adapter and the harness need the machine's cores as much.
const MOST_THREADS: usize = 2;

/// The provider runtime, built on first use and kept for the process's life
/// (simulators of concurrent runs share it); why it could not be built, if
/// it could not.
fn provider_runtime() -> Result<&'static Handle, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let threads = std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(MOST_THREADS);
            Builder::new_multi_thread()
                .worker_threads(threads)
                .thread_name("lostreply-provider")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the provider's threads: {e}"))
        })
        .as_ref()
        .map(Runtime::handle)
        .map_err(Clone::clone)
}

/// Starts a simulator served on the provider runtime: its listener, its
/// connections and the tasks they spawn all run there.
pub(super) async fn start_simulator(
    plan: Plan,
    options: ServeOptions,
) -> Result<Simulator, String> {
    let handle = provider_runtime()?;
    match handle.spawn(Simulator::start(plan, options)).await {
        Ok(started) => started.map_err(|e| e.to_string()),
        Err(e) => Err(format!("the simulator's start ended early: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A caller whose only thread is blocked still gets its answer: the
    /// provider does not wait for the caller's runtime.
    #[tokio::test]
    async fn the_provider_answers_while_the_callers_thread_is_blocked() {
        let sim = start_simulator(Plan::default(), ServeOptions::default())
            .await
            .expect("the simulator starts");
        let addr = sim.local_addr();
        // A plain blocking client on another thread: it needs nothing from
        // this runtime, whose one thread is blocked until it is answered.
        let answer = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(addr)?;
            stream.set_read_timeout(Some(Duration::from_secs(10)))?;
            stream.write_all(
                b"GET /_lostreply/ledger HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            )?;
            let mut text = String::new();
            stream.read_to_string(&mut text)?;
            Ok::<String, std::io::Error>(text)
        })
        .join()
        .expect("the client thread ends");
        let answer = answer.expect("an answer over loopback");
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        sim.shutdown().await;
    }
}
