//! The benchmark run: each selected part in turn, its figures out as JSON
//! lines and a table, then where each target stands.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cases::{self, AdapterChoice, CasesTiming};
use crate::client::Wire;
use crate::cost::{self, CostRun, Ending, StepFigures};
use crate::explore::{self, Exploration, ExploreProfileRun};
use crate::figures::{mib, num, table, Out};
use crate::load::{run_interleaved, LoadSpec, Path as LoadPath, PointResult};
use crate::procfs;
use crate::serve_mem;
use crate::servers::{Behaviour, RunningServer, ServerKind};
use crate::soak;
use crate::stats::growth_exponent;
use crate::targets::{self, split_cell, ExploreRate, LostPoint, Results};

/// A part of the benchmark, selected with `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Part {
    /// Ok path: create then retrieve, keep-alive.
    Ok,
    /// The ok path on the generic wire and on Stripe's, side by side.
    Profile,
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
    /// `lostreply explore`'s situations a minute: the generic wire and MCP
    /// in process, a provider profile's against a given adapter.
    Explore,
    /// `lostreply serve` under a long load of mixed faults, then its records
    /// checked (minutes: only with `--only soak`).
    Soak,
}

impl Part {
    /// Every part, in the order they run.
    pub const ALL: [Part; 8] = [
        Part::Ok,
        Part::Profile,
        Part::Drop,
        Part::Reset,
        Part::Check,
        Part::Cases,
        Part::Serve,
        Part::Explore,
    ];

    /// Parts that run only when named: the soak takes ten minutes.
    pub const OPT_IN: [Part; 1] = [Part::Soak];

    /// The name `--only` takes.
    pub fn name(self) -> &'static str {
        match self {
            Part::Ok => "ok",
            Part::Profile => "profile",
            Part::Drop => "drop",
            Part::Reset => "reset",
            Part::Check => "check",
            Part::Cases => "cases",
            Part::Serve => "serve",
            Part::Explore => "explore",
            Part::Soak => "soak",
        }
    }

    /// Parses a name; `memory` is another name for `serve`.
    pub fn from_name(name: &str) -> Option<Part> {
        match name.trim() {
            "memory" => Some(Part::Serve),
            other => Part::ALL
                .into_iter()
                .chain(Part::OPT_IN)
                .find(|p| p.name() == other),
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
    /// Situations `lostreply explore` runs against the reference, timed.
    pub explore_situations: u64,
    /// MCP situations `lostreply explore --mcp` runs against the reference's MCP side, timed.
    pub explore_mcp_situations: u64,
    /// A provider profile's wire, timed against a process adapter on its SDK when one is given.
    pub explore_profile: Option<ExploreProfileRun>,
    /// How long the soak's clients run.
    pub soak_duration: Duration,
    /// Whether the soak delivers webhooks.
    pub soak_webhooks: soak::Webhooks,
}

/// Runs the selected parts, writing to `out`. False when a part that checks
/// (the soak) found a check failed or could not run.
pub async fn run(config: &Config, out: &mut Out<'_>) -> bool {
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
    let mut checks_held = true;
    for part in &config.parts {
        match part {
            Part::Ok => results.ok = ok_path(config, out).await,
            Part::Profile => results.profile = profile_part(config, out).await,
            Part::Drop => results
                .lost
                .extend(lost_path(config, out, Behaviour::DropAfterCommit).await),
            Part::Reset => results
                .lost
                .extend(lost_path(config, out, Behaviour::ResetAfterCommit).await),
            Part::Check => results.cost = cost_growth(config, out).await,
            Part::Cases => results.cases = cases_part(config, out).await,
            Part::Serve => results.serve = serve_part(config, out).await,
            Part::Explore => {
                let (generic, mcp) = explore_part(config, out).await;
                results.explore = Some(generic);
                results.explore_mcp = Some(mcp);
            }
            Part::Soak => checks_held &= soak_part(config, &machine, out).await,
        }
    }
    // The targets judge the default parts; a run of the soak alone has none to judge.
    if config.parts.iter().any(|p| !Part::OPT_IN.contains(p)) {
        targets::print(&targets::judge(&results, config.cost_budget), &machine, out);
    }
    let load = procfs::load_average();
    out.figure("machine_end", json!({"load_avg": load}));
    out.text(&format!(
        "load average at the end: {:.2} {:.2} {:.2}",
        load[0], load[1], load[2]
    ));
    checks_held
}

/// `lostreply explore`'s rate on each wire (bench/src/explore.rs): the
/// generic wire's and MCP's, both in process, for the targets. A profile's
/// is reported alone: its rate is its provider SDK's.
async fn explore_part(config: &Config, out: &mut Out<'_>) -> (ExploreRate, ExploreRate) {
    let generic = Exploration::generic(config.explore_situations, config.jobs)
        .time(out)
        .await;
    let mcp = Exploration::mcp(config.explore_mcp_situations, config.jobs)
        .time(out)
        .await;
    match &config.explore_profile {
        Some(run) => {
            Exploration::profile(run, config.jobs).time(out).await;
        }
        None => explore::profile_skipped(out),
    }
    (generic, mcp)
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

/// The ok path against the simulator, bare hyper and wiremock. The three
/// run side by side through each point and take turns in slices (see
/// `run_interleaved`), so that the ratios compare servers measured under
/// the same conditions.
async fn ok_path(config: &Config, out: &mut Out<'_>) -> Vec<(usize, ServerKind, PointResult)> {
    let mut points = Vec::new();
    let (mut rows, mut ratios) = (Vec::new(), Vec::new());
    for (index, &connections) in config.connections.iter().enumerate() {
        let kinds = [
            ServerKind::Simulator,
            ServerKind::BareHyper,
            ServerKind::Wiremock,
        ];
        let running = start_servers(&kinds, Behaviour::Ok, "ok_path", connections, out).await;
        let targets: Vec<_> = running.iter().map(RunningServer::target).collect();
        let spec = spec(config, connections);
        let measured = run_interleaved(&targets, LoadPath::Ok, spec, index % 2 == 1).await;
        for (server, samples) in running.into_iter().zip(measured) {
            let (kind, p) = (server.kind, samples.finish());
            server.shutdown().await;
            out.figure(
                "ok_path",
                merge(json!({"server": kind.name(), "connections": connections, "rps": p.rate_per_s()}), point_fields(&p)),
            );
            rows.push(point_row(connections, kind.name(), &p));
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

/// One point's servers, each fresh; one that fails to start is reported
/// (as a `bench` figure) and left out of the point.
async fn start_servers(
    kinds: &[ServerKind],
    behaviour: Behaviour,
    bench: &str,
    connections: usize,
    out: &mut Out<'_>,
) -> Vec<RunningServer> {
    let mut running = Vec::new();
    for &kind in kinds {
        match RunningServer::start(kind, behaviour).await {
            Ok(server) => running.push(server),
            Err(e) => {
                out.figure(bench, json!({"server": kind.name(), "connections": connections, "status": "failed", "error": e.to_string()}));
            }
        }
    }
    running
}

/// The ok path against the simulator on the generic wire and on Stripe's.
/// Both servers run through the whole point and take turns in slices (A B
/// B A, four times, starting B A at the next point; see `run_interleaved`).
async fn profile_part(config: &Config, out: &mut Out<'_>) -> Vec<(usize, Wire, PointResult)> {
    let mut points = Vec::new();
    let (mut rows, mut ratios) = (Vec::new(), Vec::new());
    for (index, &connections) in config.connections.iter().enumerate() {
        let measured = match profile_point(config, connections, index % 2 == 1).await {
            Ok(measured) => measured,
            Err((wire, e)) => {
                out.figure("profile_path", json!({"wire": wire.name(), "connections": connections, "status": "failed", "error": e.to_string()}));
                continue;
            }
        };
        for (wire, p) in measured {
            out.figure(
                "profile_path",
                merge(
                    json!({"wire": wire.name(), "connections": connections, "rps": p.rate_per_s()}),
                    point_fields(&p),
                ),
            );
            rows.push(point_row(connections, wire.name(), &p));
            points.push((connections, wire, p));
        }
        let ratio = targets::stripe_over_generic(&points, connections);
        out.figure(
            "profile_ratio",
            json!({"connections": connections, "stripe_over_generic": ratio}),
        );
        ratios.push(vec![
            connections.to_string(),
            ratio.map_or("-".to_owned(), num),
        ]);
    }
    out.text(&table(
        "ok path by wire: the simulator with the generic profile (POST /v1/tickets JSON, GET /v1/tickets/{id}) and the stripe profile (POST /v1/customers form, GET /v1/customers/{id}), keep-alive, each request counted, slices A B B A, four times",
        &["conns", "wire", "req/s", "p50 µs", "p99 µs", "max µs", "errors"],
        &rows,
    ));
    out.text(&table(
        "ok path by wire: throughput ratio",
        &["conns", "stripe/generic"],
        &ratios,
    ));
    points
}

/// One point of the profile part: both servers started, their slices run
/// in turn (`stripe_first` swaps the order), then both stopped.
async fn profile_point(
    config: &Config,
    connections: usize,
    stripe_first: bool,
) -> Result<[(Wire, PointResult); 2], (Wire, crate::Error)> {
    let generic = RunningServer::simulator(Wire::Generic, Behaviour::Ok)
        .await
        .map_err(|e| (Wire::Generic, e))?;
    let stripe = match RunningServer::simulator(Wire::Stripe, Behaviour::Ok).await {
        Ok(s) => s,
        Err(e) => {
            generic.shutdown().await;
            return Err((Wire::Stripe, e));
        }
    };
    let targets = [generic.target(), stripe.target()];
    let spec = spec(config, connections);
    let mut measured = run_interleaved(&targets, LoadPath::Ok, spec, stripe_first).await;
    let on_stripe = measured.pop().unwrap_or_default();
    let on_generic = measured.pop().unwrap_or_default();
    generic.shutdown().await;
    stripe.shutdown().await;
    Ok([
        (Wire::Generic, on_generic.finish()),
        (Wire::Stripe, on_stripe.finish()),
    ])
}

/// A table row of a keep-alive point: connections, what ran, rate, latencies, errors.
fn point_row(connections: usize, name: &str, p: &PointResult) -> Vec<String> {
    vec![
        connections.to_string(),
        name.to_owned(),
        num(p.rate_per_s()),
        p.latency.p50_us.to_string(),
        p.latency.p99_us.to_string(),
        p.latency.max_us.to_string(),
        p.errors.to_string(),
    ]
}

async fn lost_path(config: &Config, out: &mut Out<'_>, behaviour: Behaviour) -> Vec<LostPoint> {
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
        Behaviour::Ok => return Vec::new(),
    };
    let (mut rows, mut points) = (Vec::new(), Vec::new());
    for (index, &connections) in config.connections.iter().enumerate() {
        let kinds = [ServerKind::Simulator, ServerKind::BareHyper];
        let running = start_servers(&kinds, behaviour, bench, connections, out).await;
        let targets: Vec<_> = running.iter().map(RunningServer::target).collect();
        let spec = spec(config, connections);
        let measured = run_interleaved(&targets, path, spec, index % 2 == 1).await;
        for (server, samples) in running.into_iter().zip(measured) {
            let (kind, p) = (server.kind, samples.finish());
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
            points.push(LostPoint {
                behaviour,
                connections,
                server: kind,
                point: p,
                effects,
                fates,
            });
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
    points
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
    if let Some(kib) = s.peak_total_kib() {
        parts.push(format!("peak in all {}", mib(kib)));
    }
    parts.join("; ")
}

/// Where the pipeline's time went, per size: the figure the targets judge,
/// split as a run spends it.
fn pipeline_table(runs: &[CostRun]) -> String {
    let rows: Vec<Vec<String>> = cost::finished_pipelines(runs)
        .map(|(operations, s)| {
            vec![
                operations.to_string(),
                num(s.ms),
                split_cell(s, "check_and_report_ms"),
                split_cell(s, "json_ms"),
                mib(s.rss_before_kib),
                s.peak_total_kib().map_or("-".to_owned(), mib),
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

async fn cases_part(config: &Config, out: &mut Out<'_>) -> Vec<(AdapterChoice, CasesTiming)> {
    let selection = match cases::select(config.scenario_dir.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            out.figure("cases", json!({"status": "failed", "error": e.to_string()}));
            return Vec::new();
        }
    };
    out.text(&format!("cases: {}", selection.note));
    if selection.scenarios.is_empty() {
        out.figure(
            "cases",
            json!({"status": "skipped", "reason": selection.note}),
        );
        return Vec::new();
    }
    let mut rows = Vec::new();
    let mut timings = Vec::new();
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
                timings.push((choice, t));
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
    timings
}

async fn serve_part(config: &Config, out: &mut Out<'_>) -> Option<serve_mem::ServeMemory> {
    match serve_mem::measure(&config.lostreply_bin, &config.serve_creates).await {
        Ok(m) => {
            let mut rows = vec![vec![
                "idle (after the banner)".to_owned(),
                mib(m.idle.rss_kib),
                String::new(),
                String::new(),
            ]];
            for c in &m.checkpoints {
                let per_request = m.bytes_per_request(c);
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
            Some(m)
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

/// The soak against the release `lostreply serve`: its figures, its checks
/// and the verdict; false when a check failed or the soak could not run.
async fn soak_part(config: &Config, machine: &procfs::Machine, out: &mut Out<'_>) -> bool {
    out.text(&format!(
        "soak: {} of mixed faults against {} serve, {} clients, webhooks {:?}",
        humanish(config.soak_duration),
        config.lostreply_bin.display(),
        soak::CLIENTS,
        config.soak_webhooks
    ));
    match soak::run(
        &config.lostreply_bin,
        config.soak_duration,
        config.soak_webhooks,
    )
    .await
    {
        Ok(report) => {
            soak::print::report(&report, machine, out);
            report.passed()
        }
        Err(e) => {
            out.figure("soak", json!({"status": "failed", "error": e.to_string()}));
            out.text(&format!("soak: not run: {e}"));
            false
        }
    }
}

/// `600 s` as `10m`, `30 s` as `30s`.
fn humanish(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
