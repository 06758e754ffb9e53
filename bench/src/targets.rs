//! Where each target stands after a run: every performance target of the
//! project, judged from the figures the run's parts measured, side by
//! side in one table (and one `"target"` JSON line each). A target whose part
//! did not run, or whose point is not in `--connections`, is "not measured",
//! never met.

use std::time::Duration;

use serde_json::json;

use crate::cases::{AdapterChoice, CasesTiming};
use crate::client::Wire;
use crate::cost::{finished_pipelines, CostRun, Ending, Phase, StepFigures, PIPELINE_STEP};
use crate::figures::{mib, num, table, Out};
use crate::load::PointResult;
use crate::serve_mem::ServeMemory;
use crate::servers::{Behaviour, ServerKind};
use crate::stats::growth_exponent;

/// What the parts of one run measured, for the targets.
#[derive(Debug, Default)]
pub struct Results {
    /// The ok path: (connections, server) -> point.
    pub ok: Vec<(usize, ServerKind, PointResult)>,
    /// The ok path against the simulator by wire: (connections, wire) -> point.
    pub profile: Vec<(usize, Wire, PointResult)>,
    /// The commit-then-drop and commit-then-reset paths.
    pub lost: Vec<LostPoint>,
    /// The checking and reporting cost, per phase and size.
    pub cost: Vec<CostRun>,
    /// The case set, per adapter form.
    pub cases: Vec<(AdapterChoice, CasesTiming)>,
    /// `lostreply serve` under load.
    pub serve: Option<ServeMemory>,
    /// `lostreply explore` in process on the generic wire.
    pub explore: Option<ExploreRate>,
    /// `lostreply explore --mcp` against the in-process reference's MCP side.
    pub explore_mcp: Option<ExploreRate>,
}

/// How fast `lostreply explore` ran, and what it found (against a correct
/// adapter: nothing).
#[derive(Debug, Clone)]
pub struct ExploreRate {
    /// Situations run.
    pub situations: u64,
    /// How long they took.
    pub elapsed: Duration,
    /// Findings (violations).
    pub findings: usize,
}

impl ExploreRate {
    /// Situations a minute.
    pub fn per_minute(&self) -> f64 {
        self.situations as f64 * 60.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One point of a lost-response path, with what the simulator recorded.
#[derive(Debug, Clone)]
pub struct LostPoint {
    /// `DropAfterCommit` or `ResetAfterCommit`.
    pub behaviour: Behaviour,
    /// Client connections.
    pub connections: usize,
    /// The server under load.
    pub server: ServerKind,
    /// What the client measured.
    pub point: PointResult,
    /// Effects in the simulator's ledger (`None` for the bare server).
    pub effects: Option<usize>,
    /// How the simulator's journal says responses ended: (dropped, reset, sent).
    pub fates: Option<(usize, usize, usize)>,
}

/// One target: its name, what it wants, what was measured, whether it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Stable name (the JSON line's `target`).
    pub name: String,
    /// The target as stated.
    pub want: String,
    /// The measured figure, when there is one.
    pub value: Option<f64>,
    /// The figure as the table shows it.
    pub shown: String,
    /// `None`: not measured.
    pub met: Option<bool>,
    /// What else the verdict rests on.
    pub note: String,
}

impl Target {
    fn new(name: impl Into<String>, want: impl Into<String>) -> Target {
        Target {
            name: name.into(),
            want: want.into(),
            value: None,
            shown: "not measured".to_owned(),
            met: None,
            note: String::new(),
        }
    }

    /// What was measured, as the table shows it, and the verdict (`None`:
    /// measured but not judged).
    fn measured(mut self, value: f64, shown: String, met: Option<bool>) -> Target {
        self.value = Some(value);
        self.shown = shown;
        self.met = met;
        self
    }

    fn noted(mut self, note: String) -> Target {
        self.note = note;
        self
    }

    /// A ratio that must be at least (or, `strictly`, more than) `floor`.
    fn ratio(self, ratio: Option<f64>, floor: f64, strictly: bool) -> Target {
        match ratio {
            Some(r) => self.measured(
                r,
                num(r),
                Some(if strictly { r > floor } else { r >= floor }),
            ),
            None => self,
        }
    }
}

/// The ok path's ratios are stated at these connection counts.
const OK_VS_BARE_AT: [usize; 2] = [16, 64];
const OK_VS_WIREMOCK_AT: [usize; 3] = [1, 16, 64];
const LOST_VS_BARE_AT: [usize; 3] = [1, 16, 64];
/// The Stripe wire's ok path is stated at these connection counts.
const PROFILE_AT: [usize; 3] = [1, 16, 64];
/// The Stripe wire's ok path within 10% of the generic wire's.
const PROFILE_FLOOR: f64 = 0.9;
/// The ok path and the lost paths at >= 0.8 of bare hyper: the simulator's
/// own work stays a minor share of a request's cost.
const OK_FLOOR: f64 = 0.8;
const LOST_FLOOR: f64 = 0.8;
/// Journal and ledger <= 512 B per request on the ok path, so a long `serve`
/// fits in memory.
const SERVE_BYTES_PER_REQUEST: f64 = 512.0;
/// The memory per request of `serve` is judged from this many creates up.
const SERVE_JUDGED_FROM: u64 = 100_000;
/// The persistent Python adapter within 2x of the in-process reference: the
/// process boundary costs less than the work.
const PERSISTENT_FACTOR: f64 = 2.0;
/// Cost grows linearly with the run's size (exponent 1.0); above this it does
/// not (measured between the two largest sizes, where fixed costs do not hide it).
const MAX_EXPONENT: f64 = 1.1;

/// Every target, judged on `results`.
pub fn judge(results: &Results, cost_budget: Duration) -> Vec<Target> {
    let mut list = Vec::new();
    list.extend(ok_targets(&results.ok));
    list.extend(profile_targets(&results.profile));
    list.extend(lost_targets(&results.lost));
    let (time, memory) = check_targets(cost_budget, &results.cost);
    list.push(time);
    list.push(memory);
    list.push(exponent_target(&results.cost));
    list.extend(cases_targets(&results.cases));
    list.extend(serve_targets(results.serve.as_ref()));
    list.push(explore_target(results.explore.as_ref()));
    list.push(explore_mcp_target(results.explore_mcp.as_ref()));
    list
}

/// At least 1,000 situations a minute in process, with nothing found
/// against the reference (a correct design).
fn explore_target(rate: Option<&ExploreRate>) -> Target {
    let target = Target::new(
        "explore_per_minute",
        "> 1000 situations a minute in process, no finding against the reference",
    );
    judge_explore_rate(target, rate)
}

/// The same target on MCP. Its sessions go over loopback, but both ends
/// are in this process, and its rate, like the generic wire's, is set by
/// the situations' waits in real time rather than by the CPU, so the
/// in-process target holds it too. A profile's wire has no target: its
/// rate is its provider SDK's.
fn explore_mcp_target(rate: Option<&ExploreRate>) -> Target {
    let target = Target::new(
        "explore_mcp_per_minute",
        "> 1000 MCP situations a minute in process (loopback MCP sessions), no finding against the reference's MCP side",
    );
    judge_explore_rate(target, rate)
}

/// Met above 1,000 situations a minute with no finding.
fn judge_explore_rate(target: Target, rate: Option<&ExploreRate>) -> Target {
    match rate {
        Some(r) => {
            let per_minute = r.per_minute();
            target
                .measured(
                    per_minute,
                    format!("{per_minute:.0} a minute"),
                    Some(per_minute > 1000.0 && r.findings == 0),
                )
                .noted(format!(
                    "{} situations, {} findings",
                    r.situations, r.findings
                ))
        }
        None => target,
    }
}

/// Prints the targets: a JSON line each, then the table.
pub fn print(list: &[Target], machine: &crate::procfs::Machine, out: &mut Out<'_>) {
    let mut rows = Vec::new();
    for t in list {
        out.figure(
            "target",
            json!({"target": t.name, "want": t.want, "value": t.value, "met": t.met, "note": t.note}),
        );
        let verdict = match t.met {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "not measured",
        };
        rows.push(vec![
            t.name.clone(),
            t.want.clone(),
            t.shown.clone(),
            verdict.to_owned(),
            t.note.clone(),
        ]);
    }
    // The machine beside the verdicts: a time is a fact about a CPU.
    out.text(&table(
        &format!("targets ({}, {} cores)", machine.cpu, machine.nproc),
        &["target", "want", "measured", "verdict", "note"],
        &rows,
    ));
}

fn ok_targets(ok: &[(usize, ServerKind, PointResult)]) -> Vec<Target> {
    let rate = |c: usize, k: ServerKind| {
        ok.iter()
            .find(|(n, s, _)| *n == c && *s == k)
            .map(|(_, _, p)| p.rate_per_s())
    };
    let over = |c: usize, k: ServerKind| {
        rate(c, ServerKind::Simulator)
            .zip(rate(c, k))
            .map(|(s, o)| s / o)
    };
    let mut list = Vec::new();
    for c in OK_VS_BARE_AT {
        list.push(
            Target::new(
                format!("ok_{c}_vs_bare"),
                format!("simulator/bare >= {OK_FLOOR} at {c} conns"),
            )
            .ratio(over(c, ServerKind::BareHyper), OK_FLOOR, false),
        );
    }
    for c in OK_VS_WIREMOCK_AT {
        list.push(
            Target::new(
                format!("ok_{c}_vs_wiremock"),
                format!("simulator/wiremock > 1 at {c} conns"),
            )
            .ratio(over(c, ServerKind::Wiremock), 1.0, true),
        );
    }
    let p99 = Target::new("ok_16_p99", "p99 < 2000 µs at 16 conns");
    list.push(
        match ok
            .iter()
            .find(|(n, s, _)| *n == 16 && *s == ServerKind::Simulator)
        {
            Some((_, _, p)) => {
                let v = f64::from(p.latency.p99_us);
                p99.measured(v, format!("{v:.0} µs"), Some(v < 2000.0))
            }
            None => p99,
        },
    );
    list
}

/// The simulator's ok-path rate on Stripe's wire over its rate on the
/// generic wire at `connections`; `None` unless both were measured and the
/// generic one served something.
pub fn stripe_over_generic(
    points: &[(usize, Wire, PointResult)],
    connections: usize,
) -> Option<f64> {
    let rate = |w: Wire| {
        points
            .iter()
            .find(|(c, wire, _)| *c == connections && *wire == w)
            .map(|(_, _, p)| p.rate_per_s())
    };
    let generic = rate(Wire::Generic).filter(|g| *g > 0.0)?;
    rate(Wire::Stripe).map(|s| s / generic)
}

/// The Stripe wire's ok path within 10% of the generic wire's, at each
/// connection count; a point where either wire failed a request says so in
/// its note, since a failed round ends early and flatters nothing.
fn profile_targets(points: &[(usize, Wire, PointResult)]) -> Vec<Target> {
    PROFILE_AT
        .into_iter()
        .map(|c| {
            let errors: Vec<String> = points
                .iter()
                .filter(|(n, _, p)| *n == c && p.errors > 0)
                .map(|(_, w, p)| {
                    let first = p.first_error.as_deref().unwrap_or("?");
                    format!("{}: {} errors, first: {first}", w.name(), p.errors)
                })
                .collect();
            Target::new(
                format!("stripe_ok_{c}_vs_generic"),
                format!("stripe/generic >= {PROFILE_FLOOR} at {c} conns"),
            )
            .ratio(stripe_over_generic(points, c), PROFILE_FLOOR, false)
            .noted(errors.join("; "))
        })
        .collect()
}

/// The lost paths' ratios at each connection count, and one target for
/// their exactness: at every simulator point, every request sent committed,
/// the client saw the planned ending (FIN or RST) for each and nothing else,
/// and the journal recorded that ending for each.
fn lost_targets(lost: &[LostPoint]) -> Vec<Target> {
    let mut list = Vec::new();
    for (behaviour, name) in [
        (Behaviour::DropAfterCommit, "drop"),
        (Behaviour::ResetAfterCommit, "reset"),
    ] {
        let rate = |c: usize, k: ServerKind| {
            lost.iter()
                .find(|p| p.behaviour == behaviour && p.connections == c && p.server == k)
                .map(|p| p.point.rate_per_s())
        };
        for c in LOST_VS_BARE_AT {
            let ratio = rate(c, ServerKind::Simulator)
                .zip(rate(c, ServerKind::BareHyper))
                .map(|(s, b)| s / b);
            list.push(
                Target::new(
                    format!("{name}_{c}_vs_bare"),
                    format!("simulator/bare >= {LOST_FLOOR} at {c} conns"),
                )
                .ratio(ratio, LOST_FLOOR, false),
            );
        }
    }
    let simulated: Vec<&LostPoint> = lost
        .iter()
        .filter(|p| p.server == ServerKind::Simulator)
        .collect();
    let exact = Target::new(
        "faults_exact",
        "every drop/reset point: effects = sent, only the planned FIN or RST seen, journal agrees, no errors",
    );
    if simulated.is_empty() {
        list.push(exact);
    } else {
        let wrong: Vec<String> = simulated.iter().filter_map(|p| inexact(p)).collect();
        let shown = format!(
            "{} of {} points exact",
            simulated.len() - wrong.len(),
            simulated.len()
        );
        list.push(
            exact
                .measured(wrong.len() as f64, shown, Some(wrong.is_empty()))
                .noted(wrong.join("; ")),
        );
    }
    list
}

/// What is wrong with a simulator point of a lost path, if anything.
fn inexact(p: &LostPoint) -> Option<String> {
    let sent = p.point.sent;
    let (planned, other, journal) = match p.behaviour {
        Behaviour::DropAfterCommit => (
            p.point.closed_seen,
            p.point.reset_seen,
            p.fates.map(|f| f.0),
        ),
        Behaviour::ResetAfterCommit => (
            p.point.reset_seen,
            p.point.closed_seen,
            p.fates.map(|f| f.1),
        ),
        Behaviour::Ok => return None,
    };
    let mut faults = Vec::new();
    if p.effects.map(|e| e as u64) != Some(sent) {
        faults.push(format!("effects {:?} of {sent} sent", p.effects));
    }
    if planned != sent || other != 0 {
        faults.push(format!(
            "planned ending seen {planned}, other {other}, of {sent} sent"
        ));
    }
    if journal.map(|j| j as u64) != Some(sent) {
        faults.push(format!("journal recorded {journal:?} of {sent}"));
    }
    if p.point.errors != 0 {
        faults.push(format!(
            "{} errors (first: {})",
            p.point.errors,
            p.point.first_error.as_deref().unwrap_or("-")
        ));
    }
    (!faults.is_empty()).then(|| {
        let path = if p.behaviour == Behaviour::DropAfterCommit {
            "drop"
        } else {
            "reset"
        };
        format!("{path} at {} conns: {}", p.connections, faults.join(", "))
    })
}

/// "Keep the exponent at 1.0": the pipeline's growth between the two largest
/// sizes that finished.
fn exponent_target(runs: &[CostRun]) -> Target {
    let finished: Vec<(usize, &StepFigures)> = finished_pipelines(runs).collect();
    let target = Target::new(
        "check_report_exponent",
        format!("t ∝ n^k, k <= {MAX_EXPONENT} between the two largest sizes"),
    );
    let [.., (n1, s1), (n2, s2)] = finished[..] else {
        return target;
    };
    match growth_exponent(n1 as u64, s1.ms, n2 as u64, s2.ms) {
        Some(k) => target
            .measured(k, format!("{k:.2}"), Some(k <= MAX_EXPONENT))
            .noted(format!("{n1} → {n2} ops")),
        None => target,
    }
}

/// The in-process reference's median (the "< 2 s" target), and the
/// persistent Python adapter against it; the persistent form counts only
/// when its verdicts are the reference's (a fast run that fails is no run).
fn cases_targets(cases: &[(AdapterChoice, CasesTiming)]) -> Vec<Target> {
    let find =
        |want: fn(&AdapterChoice) -> bool| cases.iter().find(|(c, _)| want(c)).map(|(_, t)| t);
    let reference = find(|c| matches!(c, AdapterChoice::Reference));
    let per_call = find(|c| matches!(c, AdapterChoice::Python(_)));
    let persistent = find(|c| matches!(c, AdapterChoice::PythonPersistent(_)));
    let mut in_process = Target::new("cases_in_process", "median < 2000 ms");
    if let Some(r) = reference {
        let ms = r.median_ms();
        in_process = in_process.measured(ms, format!("{ms:.0} ms"), Some(ms < 2000.0));
    }
    let mut python = Target::new(
        "cases_python_persistent",
        format!("persistent Python median <= {PERSISTENT_FACTOR}x the in-process reference's"),
    );
    if let Some((r, p)) = reference.zip(persistent) {
        let factor = p.median_ms() / r.median_ms();
        let same = p.verdicts == r.verdicts;
        let met = Some(factor <= PERSISTENT_FACTOR && same);
        let mut note = format!(
            "{} / {} ms; verdicts {}",
            num(p.median_ms()),
            num(r.median_ms()),
            if same {
                "the reference's"
            } else {
                "DIFFER from the reference's"
            }
        );
        if let Some(c) = per_call {
            note.push_str(&format!(
                "; a process per call {:.2}x",
                c.median_ms() / r.median_ms()
            ));
        }
        python = python
            .measured(factor, format!("{factor:.2}x"), met)
            .noted(note);
    }
    vec![in_process, python]
}

/// `lostreply serve`: idle size, memory per request at the largest
/// checkpoint (the whole process above idle: journal and ledger, and what the
/// allocator keeps around them), and whether it kept answering throughout.
fn serve_targets(serve: Option<&ServeMemory>) -> Vec<Target> {
    let idle = Target::new("serve_idle_rss", "< 20 MiB");
    let per_request = Target::new(
        "serve_bytes_per_request",
        format!("<= {SERVE_BYTES_PER_REQUEST:.0} B per request (RSS above idle) at the largest checkpoint"),
    );
    let keeps_serving = Target::new("serve_keeps_serving", "no failed request at any checkpoint");
    let Some(m) = serve else {
        return vec![idle, per_request, keeps_serving];
    };
    let idle = idle.measured(
        m.idle.rss_kib as f64 / 1024.0,
        mib(m.idle.rss_kib),
        Some(m.idle.rss_kib < 20 * 1024),
    );
    let Some(last) = m.checkpoints.last() else {
        return vec![idle, per_request, keeps_serving];
    };
    let b = m.bytes_per_request(last);
    let mut note = m
        .checkpoints
        .iter()
        .map(|c| {
            format!(
                "{} B after {} creates",
                num(m.bytes_per_request(c)),
                c.creates
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    // Below that, what any process grows by first (allocator arenas, the
    // journal's first blocks) is most of the figure.
    let judged = last.creates >= SERVE_JUDGED_FROM;
    if !judged {
        note.push_str(&format!("; judged from {SERVE_JUDGED_FROM} creates up"));
    }
    let per_request = per_request
        .measured(
            b,
            format!("{b:.0} B"),
            judged.then_some(b <= SERVE_BYTES_PER_REQUEST),
        )
        .noted(note);
    let errors: u64 = m.checkpoints.iter().map(|c| c.load.errors).sum();
    let sent: u64 = m.checkpoints.iter().map(|c| c.load.sent).sum();
    let first_error = m
        .checkpoints
        .iter()
        .find_map(|c| c.load.first_error.as_deref());
    let keeps_serving = keeps_serving
        .measured(
            errors as f64,
            format!("{errors} failed of {sent}"),
            Some(errors == 0),
        )
        .noted(first_error.map_or(String::new(), |e| format!("first: {e}")));
    vec![idle, per_request, keeps_serving]
}

/// A split time of the pipeline step, for a table cell or a note.
pub(crate) fn split_cell(s: &StepFigures, field: &str) -> String {
    s.split_ms(field).map_or("-".to_owned(), num)
}

/// The size the checking targets are stated for.
const MILLION: usize = 1_000_000;
const TIME_TARGET: &str = "check_report_1m_time";
const TIME_WANT: &str = "checking and reporting 1M ops < 5 s";
const TIME_LIMIT_MS: f64 = 5000.0;
const MEMORY_TARGET: &str = "check_report_1m_memory";
const MEMORY_WANT: &str = "< 1 GiB in all, observation included";
const MEMORY_LIMIT_KIB: u64 = 1024 * 1024;

/// "Checking and reporting 1M operations < 5 s and < 1 GiB in all, the
/// observation included", judged on the pipeline phase: the wall
/// time of its `pipeline` step (all a run does after observing), and the
/// child's peak resident size since it started (the observation built,
/// checked, reported and written). When 1M did not finish, the notes say how
/// far it got and extrapolate from the largest sizes that did.
fn check_targets(budget: Duration, runs: &[CostRun]) -> (Target, Target) {
    let pipeline: Vec<&CostRun> = runs.iter().filter(|r| r.phase == Phase::Pipeline).collect();
    let finished: Vec<(usize, &StepFigures)> = finished_pipelines(runs).collect();
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
    Target::new(TIME_TARGET, TIME_WANT)
        .measured(
            s.ms / 1000.0,
            format!("{:.2} s", s.ms / 1000.0),
            Some(s.ms < TIME_LIMIT_MS),
        )
        .noted(format!(
            "ms: check and report {}, json {}",
            split_cell(s, "check_and_report_ms"),
            split_cell(s, "json_ms")
        ))
}

/// The memory target from a finished 1M pipeline (in MiB).
fn memory_measured(s: &StepFigures) -> Target {
    let Some(total) = s.peak_total_kib() else {
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
        name: MEMORY_TARGET.to_owned(),
        want: MEMORY_WANT.to_owned(),
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
        name: TIME_TARGET.to_owned(),
        want: TIME_WANT.to_owned(),
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
        .filter_map(|(n, s)| s.peak_total_kib().map(|t| (*n, t)))
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
    use serde_json::Value;

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
        assert_eq!((time.name.as_str(), time.met), (TIME_TARGET, Some(true)));
        assert_eq!(
            (memory.name.as_str(), memory.met),
            (MEMORY_TARGET, Some(false))
        );
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

    use std::path::PathBuf;
    use std::time::Duration as Window;

    use crate::procfs::Memory;
    use crate::serve_mem::Checkpoint;
    use crate::stats::Percentiles;

    /// A point of `counted` requests in one second.
    fn point(counted: u64) -> PointResult {
        PointResult {
            counted,
            measured: Window::from_secs(1),
            latency: Percentiles::default(),
            sent: counted,
            errors: 0,
            first_error: None,
            closed_seen: 0,
            reset_seen: 0,
        }
    }

    fn find<'a>(list: &'a [Target], name: &str) -> &'a Target {
        list.iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn the_ok_ratios_are_judged_per_connection_count_and_only_where_measured() {
        let ok = vec![
            (16, ServerKind::Simulator, point(80)),
            (16, ServerKind::BareHyper, point(100)),
            (16, ServerKind::Wiremock, point(80)),
            (64, ServerKind::Simulator, point(79)),
            (64, ServerKind::BareHyper, point(100)),
        ];
        let list = ok_targets(&ok);
        assert_eq!(
            find(&list, "ok_16_vs_bare").met,
            Some(true),
            "0.8 itself is met"
        );
        assert_eq!(find(&list, "ok_64_vs_bare").met, Some(false));
        assert_eq!(
            find(&list, "ok_16_vs_wiremock").met,
            Some(false),
            "level with wiremock is not ahead"
        );
        // No 1-connection point and no wiremock at 64: not measured, not met.
        assert_eq!(find(&list, "ok_1_vs_wiremock").met, None);
        assert_eq!(find(&list, "ok_64_vs_wiremock").met, None);
    }

    #[test]
    fn the_stripe_wire_is_judged_per_point_and_only_where_both_wires_ran() {
        let profile = vec![
            (1, Wire::Generic, point(100)),
            (1, Wire::Stripe, point(90)),
            (16, Wire::Stripe, point(89)),
            (16, Wire::Generic, point(100)),
            // No generic point at 64: nothing to compare with.
            (64, Wire::Stripe, point(100)),
        ];
        let list = profile_targets(&profile);
        let one = find(&list, "stripe_ok_1_vs_generic");
        assert_eq!(
            (one.value, one.met),
            (Some(0.9), Some(true)),
            "0.9 itself is met"
        );
        let sixteen = find(&list, "stripe_ok_16_vs_generic");
        assert_eq!(sixteen.met, Some(false));
        let unmeasured = find(&list, "stripe_ok_64_vs_generic");
        assert_eq!((unmeasured.met, unmeasured.value), (None, None));
        assert_eq!(unmeasured.shown, "not measured");

        // A stripe point that failed every request is measured, and missed.
        let mut failed = point(0);
        failed.errors = 10;
        failed.first_error = Some("create answered 400 Bad Request".to_owned());
        let list = profile_targets(&[(1, Wire::Generic, point(100)), (1, Wire::Stripe, failed)]);
        let one = find(&list, "stripe_ok_1_vs_generic");
        assert_eq!(one.met, Some(false));
        assert!(one.note.contains("400"), "{}", one.note);
        // A generic point that served nothing gives no ratio to judge.
        let list = profile_targets(&[(1, Wire::Generic, point(0)), (1, Wire::Stripe, point(5))]);
        assert_eq!(find(&list, "stripe_ok_1_vs_generic").met, None);
    }

    fn lost(behaviour: Behaviour, c: usize, server: ServerKind, rate: u64) -> LostPoint {
        let mut p = point(rate);
        let simulated = server == ServerKind::Simulator;
        match behaviour {
            Behaviour::DropAfterCommit => p.closed_seen = rate,
            _ => p.reset_seen = rate,
        }
        let fates = match behaviour {
            Behaviour::DropAfterCommit => (rate as usize, 0, 0),
            _ => (0, rate as usize, 0),
        };
        LostPoint {
            behaviour,
            connections: c,
            server,
            point: p,
            effects: simulated.then_some(rate as usize),
            fates: simulated.then_some(fates),
        }
    }

    #[test]
    fn lost_paths_need_the_ratio_and_every_simulator_point_exact() {
        let mut points = vec![
            lost(Behaviour::DropAfterCommit, 1, ServerKind::Simulator, 80),
            lost(Behaviour::DropAfterCommit, 1, ServerKind::BareHyper, 100),
            lost(Behaviour::ResetAfterCommit, 1, ServerKind::Simulator, 79),
            lost(Behaviour::ResetAfterCommit, 1, ServerKind::BareHyper, 100),
        ];
        let list = lost_targets(&points);
        assert_eq!(find(&list, "drop_1_vs_bare").met, Some(true));
        assert_eq!(find(&list, "reset_1_vs_bare").met, Some(false));
        assert_eq!(find(&list, "drop_16_vs_bare").met, None);
        assert_eq!(find(&list, "faults_exact").met, Some(true));

        // One RST where a FIN was planned: fast or not, the fault was not exact.
        points[0].point.closed_seen -= 1;
        points[0].point.reset_seen = 1;
        let exact = find(&lost_targets(&points), "faults_exact").clone();
        assert_eq!(exact.met, Some(false));
        assert!(exact.note.contains("drop at 1 conns"), "{}", exact.note);

        // A commit missing from the ledger, or a journal that disagrees.
        let mut points = vec![lost(
            Behaviour::ResetAfterCommit,
            16,
            ServerKind::Simulator,
            50,
        )];
        points[0].effects = Some(49);
        assert_eq!(
            find(&lost_targets(&points), "faults_exact").met,
            Some(false)
        );
        let mut points = vec![lost(
            Behaviour::ResetAfterCommit,
            16,
            ServerKind::Simulator,
            50,
        )];
        points[0].fates = Some((50, 0, 0));
        assert_eq!(
            find(&lost_targets(&points), "faults_exact").met,
            Some(false)
        );
        // Only the bare server measured: exactness is not measured.
        let bare = vec![lost(
            Behaviour::DropAfterCommit,
            1,
            ServerKind::BareHyper,
            10,
        )];
        assert_eq!(find(&lost_targets(&bare), "faults_exact").met, None);
    }

    fn timing(runs_ms: Vec<f64>, verdicts: (usize, usize, usize, usize)) -> CasesTiming {
        CasesTiming {
            adapter: String::new(),
            scenarios: 15,
            jobs: 2,
            runs_ms,
            verdicts,
        }
    }

    #[test]
    fn the_persistent_form_counts_only_with_the_references_verdicts() {
        let python = PathBuf::from("adapter.py");
        let mut cases = vec![
            (
                AdapterChoice::Reference,
                timing(vec![1000.0, 2500.0, 3000.0], (15, 0, 0, 0)),
            ),
            (
                AdapterChoice::PythonPersistent(python.clone()),
                timing(vec![5000.0], (15, 0, 0, 0)),
            ),
        ];
        let list = cases_targets(&cases);
        assert_eq!(
            find(&list, "cases_in_process").met,
            Some(false),
            "median 2500 ms"
        );
        let persistent = find(&list, "cases_python_persistent");
        assert_eq!((persistent.value, persistent.met), (Some(2.0), Some(true)));

        cases[1].1.verdicts = (14, 1, 0, 0);
        assert_eq!(
            find(&cases_targets(&cases), "cases_python_persistent").met,
            Some(false)
        );
        cases.truncate(1);
        assert_eq!(
            find(&cases_targets(&cases), "cases_python_persistent").met,
            None
        );
    }

    #[test]
    fn each_in_process_wire_is_judged_on_its_own_rate_and_findings() {
        let rate = |situations: u64, seconds: u64, findings: usize| ExploreRate {
            situations,
            elapsed: Duration::from_secs(seconds),
            findings,
        };
        let results = Results {
            explore: Some(rate(1000, 30, 0)),
            explore_mcp: Some(rate(400, 30, 0)),
            ..Results::default()
        };
        let list = judge(&results, Duration::from_secs(25));
        // 2000 a minute on the generic wire, 800 on MCP.
        assert_eq!(find(&list, "explore_per_minute").met, Some(true));
        assert_eq!(find(&list, "explore_mcp_per_minute").met, Some(false));

        let results = Results {
            explore_mcp: Some(rate(1000, 30, 1)),
            ..Results::default()
        };
        let list = judge(&results, Duration::from_secs(25));
        assert_eq!(find(&list, "explore_mcp_per_minute").met, Some(false));
        assert_eq!(find(&list, "explore_per_minute").met, None);
    }

    #[test]
    fn serve_is_judged_at_its_largest_checkpoint_and_on_every_failed_request() {
        let checkpoint = |creates: u64, rss_kib: u64, errors: u64| {
            let mut load = point(2 * creates);
            load.errors = errors;
            Checkpoint {
                creates,
                memory: Memory {
                    rss_kib,
                    hwm_kib: rss_kib,
                },
                load,
            }
        };
        let idle = Memory {
            rss_kib: 10 * 1024,
            hwm_kib: 10 * 1024,
        };
        // At the largest checkpoint 1 KiB per create above idle: 512 B per
        // request, the limit itself.
        let mut serve = ServeMemory {
            idle,
            checkpoints: vec![
                checkpoint(1000, 10 * 1024 + 2000, 0),
                checkpoint(200_000, 10 * 1024 + 200_000, 0),
            ],
            exit_code: Some(0),
        };
        let list = serve_targets(Some(&serve));
        assert_eq!(find(&list, "serve_idle_rss").met, Some(true));
        let bytes = find(&list, "serve_bytes_per_request");
        assert_eq!((bytes.value, bytes.met), (Some(512.0), Some(true)));
        assert_eq!(find(&list, "serve_keeps_serving").met, Some(true));

        serve.checkpoints[0].load.errors = 1;
        serve.checkpoints[0].load.first_error = Some("503".to_owned());
        serve.checkpoints[1].memory.rss_kib += 1;
        let list = serve_targets(Some(&serve));
        assert_eq!(find(&list, "serve_bytes_per_request").met, Some(false));
        // A short run (`--quick`) measures, but does not judge.
        serve.checkpoints.truncate(1);
        let short = serve_targets(Some(&serve));
        assert_eq!(find(&short, "serve_bytes_per_request").met, None);
        assert_eq!(find(&short, "serve_keeps_serving").met, Some(false));
        let serving = find(&list, "serve_keeps_serving");
        assert_eq!(serving.met, Some(false));
        assert!(serving.note.contains("503"), "{}", serving.note);
        assert!(serve_targets(None).iter().all(|t| t.met.is_none()));
    }

    #[test]
    fn the_exponent_comes_from_the_two_largest_finished_sizes() {
        let run = |n: usize, ms: f64| {
            pipeline_run(
                n,
                vec![
                    step("build", 1.0, 1, json!({})),
                    step(PIPELINE_STEP, ms, 1, json!({})),
                ],
                Ending::Completed,
            )
        };
        // Sub-linear at small sizes (fixed costs), then linear, then quadratic.
        let linear = [run(1000, 50.0), run(10_000, 100.0), run(100_000, 1000.0)];
        let k = exponent_target(&linear);
        assert_eq!(k.met, Some(true));
        assert!((k.value.unwrap() - 1.0).abs() < 1e-9);
        let quadratic = [run(10_000, 100.0), run(100_000, 10_000.0)];
        assert_eq!(exponent_target(&quadratic).met, Some(false));
        assert_eq!(exponent_target(&linear[..1]).met, None);
    }
}
