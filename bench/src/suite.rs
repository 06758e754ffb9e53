//! The benchmark run: each selected part in turn, its figures out as JSON
//! lines and a table, then where each target stands.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cases::{self, AdapterChoice};
use crate::cost::{self, CostRun, Ending, Phase, StepFigures};
use crate::figures::{mib, num, table, Out};
use crate::load::{run_point, LoadSpec, Path as LoadPath, PointResult};
use crate::procfs;
use crate::serve_mem;
use crate::servers::{Behaviour, RunningServer, ServerKind};
use crate::stats::growth_exponent;

/// A part of the benchmark, selected with `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Ok path: create then retrieve, keep-alive.
    Ok,
    /// Commit, then the connection is closed (FIN).
    Drop,
    /// Commit, then the connection is reset (RST).
    Reset,
    /// Cost growth of checking and reporting.
    Check,
    /// The lost-response cases, in process and in Python.
    Cases,
    /// `lostreply serve` resident memory.
    Serve,
}

impl Part {
    /// Every part, in the order they run.
    pub const ALL: [Part; 6] = [
        Part::Ok,
        Part::Drop,
        Part::Reset,
        Part::Check,
        Part::Cases,
        Part::Serve,
    ];

    /// The name `--only` takes.
    pub fn name(self) -> &'static str {
        match self {
            Part::Ok => "ok",
            Part::Drop => "drop",
            Part::Reset => "reset",
            Part::Check => "check",
            Part::Cases => "cases",
            Part::Serve => "serve",
        }
    }

    /// Parses a name; `memory` is another name for `serve`.
    pub fn from_name(name: &str) -> Option<Part> {
        match name.trim() {
            "memory" => Some(Part::Serve),
            other => Part::ALL.into_iter().find(|p| p.name() == other),
        }
    }
}

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct Config {
    /// The parts to run.
    pub parts: BTreeSet<Part>,
    /// Client connections per point.
    pub connections: Vec<usize>,
    /// Warm-up before each point.
    pub warmup: Duration,
    /// Measured window of each point.
    pub measure: Duration,
    /// Synthetic observation sizes (operations).
    pub sizes: Vec<usize>,
    /// Every nth synthetic operation is created twice.
    pub duplicate_every: usize,
    /// Longest one (phase, size) child may run.
    pub cost_budget: Duration,
    /// The cost children's binary (`lostreply-bench-cost`, beside the benchmark's).
    pub cost_bin: PathBuf,
    /// Timed runs of the cases with the in-process reference adapter.
    pub case_runs: usize,
    /// Timed runs of the cases with the Python adapter.
    pub python_runs: usize,
    /// Scenarios at once in a case run.
    pub jobs: usize,
    /// Load scenarios from this directory instead of the built-in library.
    pub scenario_dir: Option<PathBuf>,
    /// The Python adapter.
    pub python_adapter: PathBuf,
    /// The release `lostreply` binary.
    pub lostreply_bin: PathBuf,
    /// Checkpoints (cumulative creates) of the loaded `lostreply serve` measurement.
    pub serve_creates: Vec<u64>,
}

/// Runs the selected parts, writing to `out`.
pub async fn run(config: &Config, out: &mut Out<'_>) {
    let machine = procfs::machine();
    out.figure(
        "machine",
        json!({"nproc": machine.nproc, "cpu": machine.cpu, "kernel": machine.kernel, "load_avg": machine.load,
               "parts": config.parts.iter().map(|p| p.name()).collect::<Vec<_>>()}),
    );
    out.text(&format!(
        "lostreply-bench: {} cores, {}, kernel {}, load average {:.2} {:.2} {:.2}",
        machine.nproc,
        machine.cpu,
        machine.kernel,
        machine.load[0],
        machine.load[1],
        machine.load[2]
    ));
    let mut results = Results::default();
    for part in &config.parts {
        match part {
            Part::Ok => results.ok = ok_path(config, out).await,
            Part::Drop => lost_path(config, out, Behaviour::DropAfterCommit).await,
            Part::Reset => lost_path(config, out, Behaviour::ResetAfterCommit).await,
            Part::Check => results.cost = cost_growth(config, out).await,
            Part::Cases => results.cases_in_process_ms = cases_part(config, out).await,
            Part::Serve => results.serve_idle_kib = serve_part(config, out).await,
        }
    }
    targets(config, &results, out);
    let load = procfs::load_average();
    out.figure("machine_end", json!({"load_avg": load}));
    out.text(&format!(
        "load average at the end: {:.2} {:.2} {:.2}",
        load[0], load[1], load[2]
    ));
}

#[derive(Debug, Default)]
struct Results {
    /// (connections, server) -> point.
    ok: Vec<(usize, ServerKind, PointResult)>,
    cost: Vec<CostRun>,
    cases_in_process_ms: Option<f64>,
    serve_idle_kib: Option<u64>,
}

fn spec(config: &Config, connections: usize) -> LoadSpec {
    LoadSpec {
        connections,
        warmup: config.warmup,
        measure: config.measure,
        max_rounds: None,
    }
}

fn point_fields(p: &PointResult) -> Value {
    json!({"requests": p.counted, "window_s": p.measured.as_secs_f64(), "p50_us": p.latency.p50_us, "p99_us": p.latency.p99_us,
           "max_us": p.latency.max_us, "sent": p.sent, "errors": p.errors, "first_error": p.first_error})
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

async fn ok_path(config: &Config, out: &mut Out<'_>) -> Vec<(usize, ServerKind, PointResult)> {
    let servers = [
        ServerKind::Simulator,
        ServerKind::BareHyper,
        ServerKind::Wiremock,
    ];
    let mut points = Vec::new();
    let (mut rows, mut ratios) = (Vec::new(), Vec::new());
    for &connections in &config.connections {
        for kind in servers {
            let server = match RunningServer::start(kind, Behaviour::Ok).await {
                Ok(s) => s,
                Err(e) => {
                    out.figure("ok_path", json!({"server": kind.name(), "connections": connections, "status": "failed", "error": e.to_string()}));
                    continue;
                }
            };
            let p = run_point(server.addr, LoadPath::Ok, spec(config, connections)).await;
            server.shutdown().await;
            out.figure(
                "ok_path",
                merge(json!({"server": kind.name(), "connections": connections, "rps": p.rate_per_s()}), point_fields(&p)),
            );
            rows.push(vec![
                connections.to_string(),
                kind.name().to_owned(),
                num(p.rate_per_s()),
                p.latency.p50_us.to_string(),
                p.latency.p99_us.to_string(),
                p.latency.max_us.to_string(),
                p.errors.to_string(),
            ]);
            points.push((connections, kind, p));
        }
        let rate = |k: ServerKind| {
            points
                .iter()
                .find(|(c, s, _)| *c == connections && *s == k)
                .map(|(_, _, p)| p.rate_per_s())
        };
        if let Some(sim) = rate(ServerKind::Simulator) {
            let over_bare = rate(ServerKind::BareHyper).map(|b| sim / b);
            let over_wiremock = rate(ServerKind::Wiremock).map(|w| sim / w);
            out.figure("ok_path_ratio", json!({"connections": connections, "simulator_over_bare": over_bare, "simulator_over_wiremock": over_wiremock}));
            ratios.push(vec![
                connections.to_string(),
                over_bare.map_or("-".to_owned(), num),
                over_wiremock.map_or("-".to_owned(), num),
            ]);
        }
    }
    out.text(&table(
        "ok path: POST /v1/tickets then GET /v1/tickets/{id}, keep-alive, each request counted",
        &[
            "conns", "server", "req/s", "p50 µs", "p99 µs", "max µs", "errors",
        ],
        &rows,
    ));
    out.text(&table(
        "ok path: throughput ratios",
        &["conns", "simulator/bare", "simulator/wiremock"],
        &ratios,
    ));
    points
}

async fn lost_path(config: &Config, out: &mut Out<'_>, behaviour: Behaviour) {
    let (bench, path, title) = match behaviour {
        Behaviour::DropAfterCommit => (
            "drop_path",
            LoadPath::Closed,
            "commit then drop (FIN): a new connection per POST",
        ),
        Behaviour::ResetAfterCommit => (
            "reset_path",
            LoadPath::Reset,
            "commit then reset (RST): a new connection per POST",
        ),
        Behaviour::Ok => return,
    };
    let mut rows = Vec::new();
    for &connections in &config.connections {
        for kind in [ServerKind::Simulator, ServerKind::BareHyper] {
            let server = match RunningServer::start(kind, behaviour).await {
                Ok(s) => s,
                Err(e) => {
                    out.figure(bench, json!({"server": kind.name(), "connections": connections, "status": "failed", "error": e.to_string()}));
                    continue;
                }
            };
            let p = run_point(server.addr, path, spec(config, connections)).await;
            let effects = server.effects();
            let fates = server.journal_fates();
            server.shutdown().await;
            // Every request the client sent must have committed (simulator only:
            // the bare server has no ledger).
            let all_committed = effects.map(|e| e as u64 == p.sent);
            out.figure(
                bench,
                merge(
                    json!({"server": kind.name(), "connections": connections, "closes_per_s": p.rate_per_s(),
                           "closed_seen": p.closed_seen, "reset_seen": p.reset_seen, "ledger_effects": effects,
                           "journal_dropped": fates.map(|f| f.0), "journal_reset": fates.map(|f| f.1),
                           "all_committed": all_committed}),
                    point_fields(&p),
                ),
            );
            rows.push(vec![
                connections.to_string(),
                kind.name().to_owned(),
                num(p.rate_per_s()),
                p.latency.p50_us.to_string(),
                p.latency.p99_us.to_string(),
                p.latency.max_us.to_string(),
                format!("{}/{}", p.closed_seen, p.reset_seen),
                effects.map_or("n/a".to_owned(), |e| format!("{e}/{}", p.sent)),
                p.errors.to_string(),
            ]);
        }
    }
    out.text(&table(
        &format!("{title}; wiremock cannot lose a response, so it is absent"),
        &[
            "conns",
            "server",
            "closes/s",
            "p50 µs",
            "p99 µs",
            "max µs",
            "FIN/RST seen",
            "effects/sent",
            "errors",
        ],
        &rows,
    ));
}

async fn cost_growth(config: &Config, out: &mut Out<'_>) -> Vec<CostRun> {
    let runs = cost::measure_all(&config.cost_bin, &config.sizes, config.duplicate_every, config.cost_budget, |run| {
        // Printed as each child ends: a long run shows progress.
        let base = json!({"phase": run.phase.name(), "operations": run.operations});
        match &run.ending {
            Ending::Completed | Ending::TimedOut { .. } | Ending::Failed(_) => {
                for s in &run.steps {
                    out.figure(
                        "cost",
                        merge(
                            base.clone(),
                            merge(
                                json!({"step": s.step, "status": "ok", "ms": s.ms, "ns_per_op": s.ms * 1e6 / run.operations.max(1) as f64,
                                       "rss_before_kib": s.rss_before_kib, "peak_kib": s.peak_kib, "growth_kib": s.growth_kib(),
                                       "peak_reset": s.peak_reset}),
                                Value::Object(s.extra.clone()),
                            ),
                        ),
                    );
                }
                if let Some(missing) = run.phase.steps().get(run.steps.len()) {
                    let (status, detail) = match &run.ending {
                        Ending::TimedOut { budget } => ("timed_out", json!({"budget_s": budget.as_secs_f64()})),
                        Ending::Failed(message) => ("failed", json!({"error": message})),
                        Ending::Completed | Ending::Skipped { .. } => ("failed", json!({"error": "step not reported"})),
                    };
                    out.figure("cost", merge(base.clone(), merge(json!({"step": missing, "status": status}), detail)));
                }
            }
            Ending::Skipped { after_size } => {
                out.figure("cost", merge(base, json!({"status": "skipped", "reason": format!("{after_size} operations already exceeded the budget")})));
            }
        }
    })
    .await;
    let mut rows = Vec::new();
    for run in &runs {
        for name in run.phase.steps() {
            let (ms, per_op, growth, note) = match run.step(name) {
                Some(s) => (
                    num(s.ms),
                    num(s.ms * 1e6 / run.operations.max(1) as f64),
                    mib(s.growth_kib()),
                    String::new(),
                ),
                None => {
                    let note = match &run.ending {
                        Ending::TimedOut { budget } => {
                            format!("> {} s budget: killed", budget.as_secs())
                        }
                        Ending::Skipped { after_size } => {
                            format!("skipped ({after_size} timed out)")
                        }
                        Ending::Failed(m) => format!("failed: {m}"),
                        Ending::Completed => "missing".to_owned(),
                    };
                    ("-".to_owned(), "-".to_owned(), "-".to_owned(), note)
                }
            };
            let note = match run.step(name) {
                Some(s) if note.is_empty() => step_note(s),
                _ => note,
            };
            rows.push(vec![
                run.operations.to_string(),
                name.to_string(),
                ms,
                per_op,
                growth,
                exponent(&runs, run, name),
                note,
            ]);
        }
    }
    out.text(&table(
        "cost growth over synthetic observations (each size in its own process; growth = peak RSS added by the step)",
        &["ops", "step", "ms", "ns/op", "peak growth", "k (t∝n^k)", "note"],
        &rows,
    ));
    out.text(&pipeline_table(&runs));
    for run in &runs {
        for name in run.phase.steps() {
            let k = exponent(&runs, run, name);
            if k != "-" {
                out.figure("cost_growth", json!({"phase": run.phase.name(), "step": name, "to_operations": run.operations, "exponent": k.parse::<f64>().ok()}));
            }
        }
    }
    runs
}

/// What the cost table's note says of a finished step: its violations
/// against those the observation was built with, its JSON size, and for the
/// pipeline the peak of the whole process.
fn step_note(s: &StepFigures) -> String {
    let mut parts = Vec::new();
    if let Some(v) = s.extra.get("violations") {
        match s.extra.get("expected_violations") {
            Some(e) => parts.push(format!("violations {v} (expected {e})")),
            None => parts.push(format!("violations {v}")),
        }
    }
    if let Some(b) = s.extra.get("bytes") {
        parts.push(format!("{b} bytes"));
    }
    if let Some(kib) = peak_total_kib(s) {
        parts.push(format!("peak in all {}", mib(kib)));
    }
    parts.join("; ")
}

/// The pipeline step's own figures (`peak_total_kib`, the split times), as
/// the child reported them.
fn peak_total_kib(s: &StepFigures) -> Option<u64> {
    s.extra.get("peak_total_kib").and_then(Value::as_u64)
}

/// A split time of the pipeline step, for a table cell.
fn split_ms(s: &StepFigures, field: &str) -> String {
    s.extra
        .get(field)
        .and_then(Value::as_f64)
        .map_or("-".to_owned(), num)
}

/// Where the pipeline's time went, per size: the figure the targets judge,
/// split as a run spends it.
fn pipeline_table(runs: &[CostRun]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .filter(|r| r.phase == Phase::Pipeline)
        .filter_map(|r| r.step(PIPELINE_STEP).map(|s| (r.operations, s)))
        .map(|(operations, s)| {
            vec![
                operations.to_string(),
                num(s.ms),
                split_ms(s, "check_and_report_ms"),
                split_ms(s, "json_ms"),
                mib(s.rss_before_kib),
                peak_total_kib(s).map_or("-".to_owned(), mib),
            ]
        })
        .collect();
    table(
        "checking and reporting as a run does it (phase pipeline; ms)",
        &[
            "ops",
            "pipeline ms",
            "check and report",
            "json",
            "observation RSS",
            "peak in all",
        ],
        &rows,
    )
}

/// The growth exponent of `step` from the previous completed size to this one.
fn exponent(runs: &[CostRun], run: &CostRun, step: &str) -> String {
    let Some(here) = run.step(step) else {
        return "-".to_owned();
    };
    let previous = runs
        .iter()
        .filter(|r| r.phase == run.phase && r.operations < run.operations)
        .filter_map(|r| r.step(step).map(|s| (r.operations, s)))
        .next_back();
    match previous
        .and_then(|(n, s)| growth_exponent(n as u64, s.ms, run.operations as u64, here.ms))
    {
        Some(k) => format!("{k:.2}"),
        None => "-".to_owned(),
    }
}

async fn cases_part(config: &Config, out: &mut Out<'_>) -> Option<f64> {
    let selection = match cases::select(config.scenario_dir.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            out.figure("cases", json!({"status": "failed", "error": e.to_string()}));
            return None;
        }
    };
    out.text(&format!("cases: {}", selection.note));
    if selection.scenarios.is_empty() {
        out.figure(
            "cases",
            json!({"status": "skipped", "reason": selection.note}),
        );
        return None;
    }
    let mut rows = Vec::new();
    let mut in_process = None;
    for choice in [
        AdapterChoice::Reference,
        AdapterChoice::Python(config.python_adapter.clone()),
        AdapterChoice::PythonPersistent(config.python_adapter.clone()),
    ] {
        match cases::time_cases(&selection, &choice, config.case_runs, config.jobs).await {
            Ok(t) => {
                let min = t.runs_ms.iter().copied().fold(f64::INFINITY, f64::min);
                let max = t.runs_ms.iter().copied().fold(0.0, f64::max);
                out.figure(
                    "cases",
                    json!({"adapter": t.adapter, "scenarios": t.scenarios, "jobs": t.jobs, "runs": t.runs_ms.len(),
                           "median_ms": t.median_ms(), "min_ms": min, "max_ms": max, "runs_ms": t.runs_ms,
                           "passed": t.verdicts.0, "violated": t.verdicts.1, "adapter_errors": t.verdicts.2,
                           "infra_errors": t.verdicts.3, "selection": selection.note}),
                );
                rows.push(vec![
                    t.adapter.clone(),
                    t.scenarios.to_string(),
                    t.runs_ms.len().to_string(),
                    num(t.median_ms()),
                    num(min),
                    num(max),
                    format!(
                        "{}/{}/{}/{}",
                        t.verdicts.0, t.verdicts.1, t.verdicts.2, t.verdicts.3
                    ),
                ]);
                if matches!(choice, AdapterChoice::Reference) {
                    in_process = Some(t.median_ms());
                }
            }
            Err(e) => {
                out.figure("cases", json!({"adapter": format!("{choice:?}"), "status": "failed", "error": e.to_string()}));
            }
        }
    }
    out.text(&table(
        &format!(
            "cases: wall time of run_suite (jobs {}), as `lostreply run` runs them",
            config.jobs
        ),
        &[
            "adapter",
            "scenarios",
            "runs",
            "median ms",
            "min ms",
            "max ms",
            "pass/viol/adapter-err/infra-err",
        ],
        &rows,
    ));
    in_process
}

async fn serve_part(config: &Config, out: &mut Out<'_>) -> Option<u64> {
    match serve_mem::measure(&config.lostreply_bin, &config.serve_creates).await {
        Ok(m) => {
            let mut rows = vec![vec![
                "idle (after the banner)".to_owned(),
                mib(m.idle.rss_kib),
                String::new(),
                String::new(),
            ]];
            for c in &m.checkpoints {
                // Two requests per create (the create and its retrieve).
                let per_request = c.memory.rss_kib.saturating_sub(m.idle.rss_kib) as f64 * 1024.0
                    / (2 * c.creates) as f64;
                out.figure(
                    "serve_memory",
                    json!({"binary": config.lostreply_bin.display().to_string(), "idle_rss_kib": m.idle.rss_kib,
                           "loaded_rss_kib": c.memory.rss_kib, "loaded_hwm_kib": c.memory.hwm_kib, "creates": c.creates,
                           "bytes_per_request": per_request, "load_rps": c.load.rate_per_s(),
                           "load_errors": c.load.errors, "first_error": c.load.first_error, "exit_code": m.exit_code}),
                );
                rows.push(vec![
                    format!("after {} creates + retrieves", c.creates),
                    mib(c.memory.rss_kib),
                    mib(c.memory.hwm_kib),
                    format!("{per_request:.0}"),
                ]);
            }
            out.text(&table(
                &format!(
                    "lostreply serve resident memory (exit after SIGTERM: {})",
                    m.exit_code.map_or("killed".to_owned(), |c| c.to_string())
                ),
                &["when", "VmRSS", "VmHWM", "B/request above idle"],
                &rows,
            ));
            Some(m.idle.rss_kib)
        }
        Err(e) => {
            out.figure(
                "serve_memory",
                json!({"status": "failed", "error": e.to_string()}),
            );
            out.text(&format!("lostreply serve memory: not measured: {e}"));
            None
        }
    }
}

/// One target: its name, what it wants, what was measured, whether it holds.
struct Target {
    name: &'static str,
    want: &'static str,
    value: Option<f64>,
    shown: String,
    met: Option<bool>,
    note: String,
}

fn targets(config: &Config, results: &Results, out: &mut Out<'_>) {
    let ok_rate = |c: usize, k: ServerKind| {
        results
            .ok
            .iter()
            .find(|(n, s, _)| *n == c && *s == k)
            .map(|(_, _, p)| p)
    };
    let mut list = Vec::new();
    let sim64 = ok_rate(64, ServerKind::Simulator);
    let bare64 = ok_rate(64, ServerKind::BareHyper);
    let wire64 = ok_rate(64, ServerKind::Wiremock);
    let ratio = sim64
        .zip(bare64)
        .map(|(s, b)| s.rate_per_s() / b.rate_per_s());
    list.push(Target {
        name: "ok_64_vs_bare",
        want: "simulator/bare >= 0.7 at 64 conns",
        value: ratio,
        shown: ratio.map_or("not measured".to_owned(), num),
        met: ratio.map(|r| r >= 0.7),
        note: String::new(),
    });
    let over = sim64
        .zip(wire64)
        .map(|(s, w)| s.rate_per_s() / w.rate_per_s());
    list.push(Target {
        name: "ok_64_vs_wiremock",
        want: "simulator/wiremock > 1 at 64 conns",
        value: over,
        shown: over.map_or("not measured".to_owned(), num),
        met: over.map(|r| r > 1.0),
        note: String::new(),
    });
    let p99 = ok_rate(16, ServerKind::Simulator).map(|p| f64::from(p.latency.p99_us));
    list.push(Target {
        name: "ok_16_p99",
        want: "p99 < 2000 µs at 16 conns",
        value: p99,
        shown: p99.map_or("not measured".to_owned(), |v| format!("{v:.0} µs")),
        met: p99.map(|v| v < 2000.0),
        note: String::new(),
    });
    let (check_report_time, check_report_memory) = check_targets(config.cost_budget, &results.cost);
    list.push(check_report_time);
    list.push(check_report_memory);
    let cases = results.cases_in_process_ms;
    list.push(Target {
        name: "cases_in_process",
        want: "median < 2000 ms",
        value: cases,
        shown: cases.map_or("not measured".to_owned(), |v| format!("{v:.0} ms")),
        met: cases.map(|v| v < 2000.0),
        note: String::new(),
    });
    let idle = results.serve_idle_kib;
    list.push(Target {
        name: "serve_idle_rss",
        want: "< 20 MiB",
        value: idle.map(|k| k as f64 / 1024.0),
        shown: idle.map_or("not measured".to_owned(), mib),
        met: idle.map(|k| k < 20 * 1024),
        note: String::new(),
    });
    let mut rows = Vec::new();
    for t in &list {
        out.figure("target", json!({"target": t.name, "want": t.want, "value": t.value, "met": t.met, "note": t.note}));
        let verdict = match t.met {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "not measured",
        };
        rows.push(vec![
            t.name.to_owned(),
            t.want.to_owned(),
            t.shown.clone(),
            verdict.to_owned(),
            t.note.clone(),
        ]);
    }
    out.text(&table(
        "targets",
        &["target", "want", "measured", "verdict", "note"],
        &rows,
    ));
}

/// The size the checking targets are stated for.
const MILLION: usize = 1_000_000;
/// The pipeline phase's measured step (its other one builds the observation).
const PIPELINE_STEP: &str = "pipeline";
const TIME_TARGET: &str = "check_report_1m_time";
const TIME_WANT: &str = "checking and reporting 1M ops < 5 s";
const TIME_LIMIT_MS: f64 = 5000.0;
const MEMORY_TARGET: &str = "check_report_1m_memory";
const MEMORY_WANT: &str = "< 1 GiB in all, observation included";
const MEMORY_LIMIT_KIB: u64 = 1024 * 1024;

/// Issue 12's "checking and reporting 1M operations < 5 s and < 1 GiB in
/// all, the observation included", judged on the pipeline phase: the wall
/// time of its `pipeline` step (all a run does after observing), and the
/// child's peak resident size since it started (the observation built,
/// checked, reported and written). When 1M did not finish, the notes say how
/// far it got and extrapolate from the largest sizes that did.
fn check_targets(budget: Duration, runs: &[CostRun]) -> (Target, Target) {
    let pipeline: Vec<&CostRun> = runs.iter().filter(|r| r.phase == Phase::Pipeline).collect();
    let finished: Vec<(usize, &StepFigures)> = pipeline
        .iter()
        .filter_map(|r| r.step(PIPELINE_STEP).map(|s| (r.operations, s)))
        .collect();
    if let Some((_, s)) = finished.iter().find(|(n, _)| *n == MILLION) {
        return (time_measured(s), memory_measured(s));
    }
    let killed = pipeline
        .iter()
        .copied()
        .find(|r| matches!(r.ending, Ending::TimedOut { .. }) && r.step(PIPELINE_STEP).is_none());
    (
        time_unfinished(budget, &finished, killed),
        memory_unfinished(&finished, killed),
    )
}

/// The time target from a finished 1M pipeline, its split in the note.
fn time_measured(s: &StepFigures) -> Target {
    Target {
        name: TIME_TARGET,
        want: TIME_WANT,
        value: Some(s.ms / 1000.0),
        shown: format!("{:.2} s", s.ms / 1000.0),
        met: Some(s.ms < TIME_LIMIT_MS),
        note: format!(
            "ms: check and report {}, json {}",
            split_ms(s, "check_and_report_ms"),
            split_ms(s, "json_ms")
        ),
    }
}

/// The memory target from a finished 1M pipeline (in MiB).
fn memory_measured(s: &StepFigures) -> Target {
    let Some(total) = peak_total_kib(s) else {
        return memory_target(
            None,
            "not measured".to_owned(),
            None,
            "the child did not report peak_total_kib".to_owned(),
        );
    };
    memory_target(
        Some(total as f64 / 1024.0),
        mib(total),
        Some(total < MEMORY_LIMIT_KIB),
        format!(
            "resident before checking (the observation): {}",
            mib(s.rss_before_kib)
        ),
    )
}

fn memory_target(value: Option<f64>, shown: String, met: Option<bool>, note: String) -> Target {
    Target {
        name: MEMORY_TARGET,
        want: MEMORY_WANT,
        value,
        shown,
        met,
        note,
    }
}

/// The time target when 1M did not finish: how far the pipeline got, and an
/// estimate from the two largest sizes that finished. Missed only when the
/// killed pipeline step had itself run past the limit (a child killed while
/// still building its observation says nothing of the checking).
fn time_unfinished(
    budget: Duration,
    finished: &[(usize, &StepFigures)],
    killed: Option<&CostRun>,
) -> Target {
    // The step the budget ran out in: the first one the child did not report.
    let killed_in = killed
        .and_then(|r| r.phase.steps().get(r.steps.len()).copied())
        .unwrap_or("?");
    let budget_s = budget.as_secs();
    let mut note = match (finished.last(), killed) {
        (Some((n, s)), Some(k)) => format!(
            "largest checked and reported: {n} ops in {} ms; {} ops killed at the {budget_s} s budget, in {killed_in}",
            num(s.ms),
            k.operations
        ),
        (Some((n, s)), None) => format!(
            "1M not in --sizes; largest checked and reported: {n} ops in {} ms",
            num(s.ms)
        ),
        (None, Some(k)) => format!(
            "{} ops killed at the {budget_s} s budget, in {killed_in}",
            k.operations
        ),
        (None, None) => "not measured".to_owned(),
    };
    if let [.., (n1, s1), (n2, s2)] = finished {
        if let Some(k) = growth_exponent(*n1 as u64, s1.ms, *n2 as u64, s2.ms) {
            let estimate_s = s2.ms / 1000.0 * (MILLION as f64 / *n2 as f64).powf(k);
            note.push_str(&format!("; t ∝ n^{k:.2} → 1M ≈ {} s", num(estimate_s)));
        }
    }
    let ran_ms = killed.and_then(|r| pipeline_ran_at_least_ms(r, budget));
    if let Some(ms) = ran_ms {
        note.push_str(&format!("; its pipeline step ran at least {} ms", num(ms)));
    }
    Target {
        name: TIME_TARGET,
        want: TIME_WANT,
        value: None,
        shown: unfinished_shown(finished, killed),
        met: ran_ms.and_then(|ms| (ms >= TIME_LIMIT_MS).then_some(false)),
        note,
    }
}

/// The memory target when 1M did not finish: missed if the killed child (of
/// 1M or fewer operations) had already passed the limit, else unknown; the
/// largest finished size is named, and the two largest give a straight line
/// to 1M (a line with its intercept: the process's fixed part does not grow).
fn memory_unfinished(finished: &[(usize, &StepFigures)], killed: Option<&CostRun>) -> Target {
    let totals: Vec<(usize, u64)> = finished
        .iter()
        .filter_map(|(n, s)| peak_total_kib(s).map(|t| (*n, t)))
        .collect();
    let mut note = match killed {
        Some(_) => "1M did not finish: peak unknown".to_owned(),
        None => "1M not in --sizes".to_owned(),
    };
    if let Some((n, total)) = totals.last() {
        note.push_str(&format!("; largest: {n} ops, {} in all", mib(*total)));
    }
    if let Some((n1, n2, estimate_kib)) = line_to_million_kib(&totals) {
        note.push_str(&format!(
            "; a line through {n1} and {n2} ops → 1M ≈ {}",
            mib(estimate_kib)
        ));
    }
    memory_verdict(note, finished, killed)
}

/// The peak at 1M on the straight line through the two largest sizes (with
/// its intercept, so the process's fixed part is not multiplied), and those
/// sizes. None with fewer than two, or sizes not ascending (`measure_all`
/// sorts them; anything else gives no line).
fn line_to_million_kib(totals: &[(usize, u64)]) -> Option<(usize, usize, u64)> {
    let [.., (n1, t1), (n2, t2)] = *totals else {
        return None;
    };
    if n2 <= n1 {
        return None;
    }
    let per_op_kib = (t2 as f64 - t1 as f64) / (n2 as f64 - n1 as f64);
    let estimate_kib = t2 as f64 + per_op_kib * (MILLION as f64 - n2 as f64);
    Some((n1, n2, estimate_kib.max(0.0) as u64))
}

/// The memory verdict when 1M did not finish, `note` already written.
fn memory_verdict(
    note: String,
    finished: &[(usize, &StepFigures)],
    killed: Option<&CostRun>,
) -> Target {
    // Each step's peak is at most the process's: a lower bound on the total.
    let at_least = killed
        .filter(|r| r.operations <= MILLION)
        .and_then(|r| {
            r.steps
                .iter()
                .map(|s| s.peak_kib)
                .max()
                .map(|kib| (r.operations, kib))
        })
        .filter(|(_, kib)| *kib >= MEMORY_LIMIT_KIB);
    match at_least {
        Some((n, kib)) => memory_target(
            None,
            format!("≥ {}", mib(kib)),
            Some(false),
            format!("{n} ops killed, past the limit already: {note}"),
        ),
        None => memory_target(None, unfinished_shown(finished, killed), None, note),
    }
}

/// How long a killed child's pipeline step had run: the budget less the
/// build it reported (an upper bound on its start, so this is a lower bound).
fn pipeline_ran_at_least_ms(run: &CostRun, budget: Duration) -> Option<f64> {
    if run.step(PIPELINE_STEP).is_some() {
        return None;
    }
    let build = run.step("build")?;
    Some((budget.as_secs_f64() * 1000.0 - build.ms).max(0.0))
}

fn unfinished_shown(finished: &[(usize, &StepFigures)], killed: Option<&CostRun>) -> String {
    match (killed, finished.is_empty()) {
        (Some(_), _) => "did not finish".to_owned(),
        (None, false) => "1M not run".to_owned(),
        (None, true) => "not measured".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn step(name: &str, ms: f64, peak_kib: u64, extra: Value) -> StepFigures {
        let Value::Object(extra) = extra else {
            panic!("extra must be an object");
        };
        StepFigures {
            step: name.to_owned(),
            ms,
            rss_before_kib: 0,
            peak_kib,
            peak_reset: true,
            extra,
        }
    }

    fn pipeline_run(operations: usize, steps: Vec<StepFigures>, ending: Ending) -> CostRun {
        CostRun {
            phase: Phase::Pipeline,
            operations,
            steps,
            ending,
        }
    }

    const GIB_KIB: u64 = 1024 * 1024;

    #[test]
    fn a_finished_million_is_judged_on_the_pipeline_step_and_the_peak_in_all() {
        // The step's own peak is small; the process's, observation included, is not.
        let runs = [pipeline_run(
            MILLION,
            vec![
                step("build", 9000.0, 3 * GIB_KIB, json!({})),
                step(
                    PIPELINE_STEP,
                    4000.0,
                    GIB_KIB / 2,
                    json!({"peak_total_kib": 3 * GIB_KIB}),
                ),
            ],
            Ending::Completed,
        )];
        let (time, memory) = check_targets(Duration::from_secs(60), &runs);
        assert_eq!((time.name, time.met), (TIME_TARGET, Some(true)));
        assert_eq!((memory.name, memory.met), (MEMORY_TARGET, Some(false)));
        assert_eq!(memory.value, Some(3.0 * 1024.0));
    }

    #[test]
    fn a_million_killed_while_building_misses_memory_but_not_time() {
        let runs = [
            pipeline_run(
                1000,
                vec![
                    step("build", 10.0, 1024, json!({})),
                    step(PIPELINE_STEP, 10.0, 1024, json!({"peak_total_kib": 2048})),
                ],
                Ending::Completed,
            ),
            pipeline_run(
                MILLION,
                vec![],
                Ending::TimedOut {
                    budget: Duration::from_secs(25),
                },
            ),
        ];
        let (time, memory) = check_targets(Duration::from_secs(25), &runs);
        // Nothing of the checking ran: the time is unknown, not missed.
        assert_eq!(time.met, None);
        assert!(time.note.contains("in build"), "{}", time.note);
        assert_eq!(memory.met, None);

        // Killed in the pipeline step, 20 s after a 5 s build, past 1 GiB already.
        let runs = [pipeline_run(
            MILLION,
            vec![step("build", 5000.0, 2 * GIB_KIB, json!({}))],
            Ending::TimedOut {
                budget: Duration::from_secs(25),
            },
        )];
        let (time, memory) = check_targets(Duration::from_secs(25), &runs);
        assert_eq!(time.met, Some(false));
        assert_eq!(memory.met, Some(false));
    }

    #[test]
    fn the_memory_line_keeps_the_fixed_part_fixed() {
        // 10 MiB fixed, 1 KiB per operation.
        let totals = [(1000, 10 * 1024 + 1000), (2000, 10 * 1024 + 2000)];
        assert_eq!(
            line_to_million_kib(&totals),
            Some((1000, 2000, 10 * 1024 + 1_000_000))
        );
        assert_eq!(line_to_million_kib(&totals[..1]), None);
        assert_eq!(line_to_million_kib(&[(2000, 5), (1000, 4)]), None);
    }

    #[test]
    fn other_phases_do_not_count_for_the_targets() {
        let runs = [CostRun {
            phase: Phase::Check,
            operations: MILLION,
            steps: vec![step("check", 1.0, 1, json!({}))],
            ending: Ending::Completed,
        }];
        let (time, memory) = check_targets(Duration::from_secs(25), &runs);
        assert_eq!((time.met, memory.met), (None, None));
        assert_eq!(time.shown, "not measured");
    }
}
