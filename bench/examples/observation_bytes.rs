//! Where a synthetic observation's memory goes, in bytes requested from the
//! allocator (exact and the same on every run, unlike resident size): each
//! part of the observation per operation, then the peak above the
//! observation of each step that checks and reports it, as
//! `suite::check_and_report` does them.
//!
//! `cargo run --release -p lostreply-bench --example observation_bytes -- [OPS]`
//! (default 20 000 operations, about 9 s; the figures per operation move by a
//! few bytes from 20 000 to 100 000). The allocator is dhat's, which keeps a backtrace per allocation:
//! slow, and for accounting only; time and resident size are the
//! `lostreply-bench-cost` child's (docs/benchmarks.md).

use lostreply_bench::synthetic::{observation, SyntheticSpec};
use lostreply_harness::run::observation::Reply;
use lostreply_harness::suite;
use lostreply_reports::model::{RecordedRequest, SharedJson};

/// `println!` that stops quietly when stdout is gone (`| head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    let ops: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 20_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: observation_bytes [OPS] (a number of operations, at least 1)");
            std::process::exit(2);
        }
    };
    let _profiler = dhat::Profiler::builder().testing().build();
    let live = || dhat::HeapStats::get().curr_bytes;
    let per_op = |bytes: usize| bytes / ops;
    // Bytes above (or below) `base`, per operation.
    let signed_per_op = |bytes: usize, base: usize| {
        if bytes >= base {
            ((bytes - base) / ops) as i64
        } else {
            -(((base - bytes) / ops) as i64)
        }
    };

    say!("{ops} operations, bytes per operation");
    let spec = SyntheticSpec {
        operations: ops,
        duplicate_every: 1000,
    };
    let before = live();
    let blocks_before = dhat::HeapStats::get().curr_blocks;
    let mut parts = observation(spec);
    let whole = live() - before;
    // Each block costs the allocator a rounding to its size class and
    // bookkeeping: what resident memory adds to the bytes requested.
    let blocks = dhat::HeapStats::get().curr_blocks - blocks_before;
    say!(
        "observation {:>6} ({}.{:02} allocations per operation)",
        per_op(whole),
        blocks / ops,
        blocks % ops * 100 / ops
    );

    // Each part, by dropping it and counting what was freed (text shared
    // with a part dropped later counts there).
    let mut last = live();
    let mut part = |name: &str, drop_it: &mut dyn FnMut()| {
        drop_it();
        let now = live();
        say!("  {name:<22} {:>6}", per_op(last - now));
        last = now;
    };
    // Replies, kept as their outcomes or (when not exactly an outcome
    // written out) as text.
    part("calls' replies", &mut || {
        parts.calls.iter_mut().for_each(|c| c.reply = Reply::Absent)
    });
    part("calls' requests", &mut || {
        // A request kept as its operation frees nothing here: the
        // operation is the scenario's, counted with the operations.
        let none = RecordedRequest::from(SharedJson::new(&serde_json::Value::Null));
        parts
            .calls
            .iter_mut()
            .for_each(|c| c.request = none.clone());
    });
    part("calls, the rest", &mut || parts.calls = Vec::new());
    part("journal", &mut || parts.journal = Vec::new());
    part("ledger", &mut || parts.ledger = Vec::new());
    part("step reports", &mut || parts.steps = Vec::new());
    part("final status", &mut || parts.final_status.clear());
    part("scenario steps", &mut || parts.scenario.steps = Vec::new());
    part("expectations", &mut || {
        parts.scenario.expect = Default::default()
    });
    part("operations", &mut || parts.scenario.operations = Vec::new());
    drop(parts);

    let obs = observation(spec);

    // The phases of checking and reporting as a run has them
    // (`suite::check_and_report`: what each keeps, freed where a run frees
    // it; a large run does two things at once in each phase, so the peak
    // within a phase is both sides' together, as here).
    let base = live();
    say!("checking and reporting, above the observation");
    let report = suite::check_and_report_phases(obs, String::new(), &mut |end| {
        let stats = dhat::HeapStats::get();
        let phase = end.phase.name();
        say!(
            "  {phase:<34} live {:>+6}  peak so far {:>+6}",
            signed_per_op(stats.curr_bytes, base),
            signed_per_op(stats.max_bytes, base)
        );
    });
    let after = live();
    say!(
        "report {:>6} (the observation taken over)",
        per_op(after.saturating_sub(before))
    );
    say!(
        "peak above the observation {:>6}",
        per_op(
            dhat::HeapStats::get()
                .max_bytes
                .saturating_sub(before + whole)
        )
    );
    drop(report);
}
