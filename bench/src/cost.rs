//! Cost growth of checking and reporting over synthetic observations.
//!
//! Each (phase, size) runs in a child process (`lostreply-bench-cost`,
//! src/cost_main.rs, with the `lostreply` binary's allocator), for two reasons: its peak resident
//! memory is its own (read from `VmHWM`, reset before each step through
//! `/proc/self/clear_refs`), and a size that takes too long can be killed at
//! its time budget instead of stalling the benchmark. The child prints one JSON
//! line per step as soon as the step ends, so a killed child still reports the
//! steps it finished.
//!
//! The `check` and `report` phases give the breakdown; the `pipeline` phase is
//! what the targets judge: everything a run does after observing, in one step,
//! with the peak of the whole process beside the step's own (the observation is
//! part of what a run holds).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use lostreply_cli::allocator::give_back_after;
use lostreply_harness::check::{self, attribution::Attribution};
use lostreply_harness::report_build;
use lostreply_harness::run::observation::Observation;
use lostreply_reports::model::{AdapterInfo, AdapterKind, Report, ScenarioReport, SCHEMA_VERSION};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::procfs;
use crate::synthetic::{observation, SyntheticSpec};
use crate::Error;

/// The binary that runs one (phase, size) in a child: `src/cost_main.rs`,
/// built beside `lostreply-bench`.
pub const CHILD_BINARY: &str = "lostreply-bench-cost";

/// What a child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// `Attribution::build` alone, then checking as a run does it: the
    /// attribution again plus `lostreply_harness::check::check`.
    Check,
    /// The attribution plus `lostreply_harness::report_build::scenario_report`, then the JSON writer.
    Report,
    /// All of it in one step, as a run does it after observing
    /// (`suite::check_and_report`: the attribution, the checks, the report,
    /// which takes the observation over), then the JSON. The targets judge
    /// this one; the two phases above give the breakdown.
    Pipeline,
}

impl Phase {
    /// Every phase, in the order they run.
    pub const ALL: [Phase; 3] = [Phase::Check, Phase::Report, Phase::Pipeline];

    /// The name on the child's command line and in JSON lines.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Check => "check",
            Phase::Report => "report",
            Phase::Pipeline => "pipeline",
        }
    }

    /// Parses [`Phase::name`].
    pub fn from_name(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The steps a child of this phase reports, in order.
    pub fn steps(self) -> &'static [&'static str] {
        match self {
            Phase::Check => &["build", "attribution", "check"],
            Phase::Report => &["build", "report", "json"],
            Phase::Pipeline => &["build", PIPELINE_STEP],
        }
    }
}

/// The pipeline phase's measured step (its other one builds the
/// observation): all a run does after observing, what the targets judge.
pub const PIPELINE_STEP: &str = "pipeline";

/// The pipeline phase's sizes whose pipeline step finished, with its
/// figures, in the order `runs` has them (ascending from `measure_all`).
pub fn finished_pipelines(runs: &[CostRun]) -> impl Iterator<Item = (usize, &StepFigures)> {
    runs.iter()
        .filter(|r| r.phase == Phase::Pipeline)
        .filter_map(|r| r.step(PIPELINE_STEP).map(|s| (r.operations, s)))
}

/// One step's figures, as a child printed them.
#[derive(Debug, Clone, PartialEq)]
pub struct StepFigures {
    /// `build`, `attribution`, `check`, `report`, `json` or `pipeline`.
    pub step: String,
    /// Wall time.
    pub ms: f64,
    /// Resident size when the step started.
    pub rss_before_kib: u64,
    /// Peak resident size during the step (since the start when the reset failed).
    pub peak_kib: u64,
    /// Whether the peak was reset before the step.
    pub peak_reset: bool,
    /// Step-specific numbers (`violations`, `bytes`, `calls`...).
    pub extra: serde_json::Map<String, Value>,
}

impl StepFigures {
    /// Memory the step added at its peak.
    pub fn growth_kib(&self) -> u64 {
        self.peak_kib.saturating_sub(self.rss_before_kib)
    }

    /// The pipeline step's peak of the whole process (`peak_total_kib`), as
    /// the child reported it.
    pub fn peak_total_kib(&self) -> Option<u64> {
        self.extra.get("peak_total_kib").and_then(Value::as_u64)
    }

    /// A split time of the pipeline step (`check_and_report_ms`, `json_ms`).
    pub fn split_ms(&self, field: &str) -> Option<f64> {
        self.extra.get(field).and_then(Value::as_f64)
    }

    fn from_line(line: &str) -> Option<StepFigures> {
        let Value::Object(mut map) = serde_json::from_str::<Value>(line).ok()? else {
            return None;
        };
        let step = map.remove("step")?.as_str()?.to_owned();
        let ms = map.remove("ms")?.as_f64()?;
        let rss_before_kib = map.remove("rss_before_kib")?.as_u64()?;
        let peak_kib = map.remove("peak_kib")?.as_u64()?;
        let peak_reset = map.remove("peak_reset")?.as_bool()?;
        Some(StepFigures {
            step,
            ms,
            rss_before_kib,
            peak_kib,
            peak_reset,
            extra: map,
        })
    }
}

/// How a (phase, size) run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// Every step reported.
    Completed,
    /// Killed at its budget; the steps not reported did not finish in time.
    TimedOut {
        /// The budget.
        budget: Duration,
    },
    /// Not run: a smaller size already exceeded the budget.
    Skipped {
        /// The smaller size that timed out.
        after_size: usize,
    },
    /// The child failed (the text says how).
    Failed(String),
}

/// A (phase, size) measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRun {
    /// Which phase.
    pub phase: Phase,
    /// Operations in the synthetic observation.
    pub operations: usize,
    /// The steps that finished.
    pub steps: Vec<StepFigures>,
    /// How it ended.
    pub ending: Ending,
}

impl CostRun {
    /// A finished step by name.
    pub fn step(&self, name: &str) -> Option<&StepFigures> {
        self.steps.iter().find(|s| s.step == name)
    }
}

/// In the child: builds the observation and runs the phase's steps, printing
/// one JSON line per step to `out` as soon as it ends. With `json_out`, the
/// report phase also checks the observation (untimed), puts the violations in
/// the report and writes the JSON to that file instead of a counting sink: a
/// hash of that file shows a change left the report's bytes and the verdicts
/// as they were. The pipeline phase writes its JSON (violations included) to
/// that file too, and its time then includes the disk.
pub fn run_child(
    phase: Phase,
    spec: SyntheticSpec,
    json_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let mut lines = StepLines {
        out,
        lifetime: LifetimePeak::default(),
    };
    let obs = build_step(spec, &mut lines)?;
    match phase {
        Phase::Check => check_steps(&obs, spec, &mut lines),
        Phase::Report => report_steps(obs, json_out, &mut lines),
        Phase::Pipeline => pipeline_step(obs, spec, json_out, &mut lines),
    }
}

/// The step `build`: the synthetic observation every phase starts from.
fn build_step(spec: SyntheticSpec, lines: &mut StepLines<'_>) -> Result<Observation, Error> {
    let start = lines.begin();
    let obs = observation(spec);
    let ms = start.elapsed_ms();
    lines.emit(
        "build",
        &start,
        ms,
        json!({"journal": obs.journal.len(), "ledger": obs.ledger.len(), "calls": obs.calls.len()}),
    )?;
    Ok(obs)
}

/// The steps `attribution` and `check` of the check phase.
fn check_steps(
    obs: &Observation,
    spec: SyntheticSpec,
    lines: &mut StepLines<'_>,
) -> Result<(), Error> {
    let start = lines.begin();
    let attribution = Attribution::build(
        &obs.scenario.operations,
        &obs.journal,
        &obs.ledger,
        &obs.credential,
    );
    let ms = start.elapsed_ms();
    let groups = attribution.group_count();
    drop(attribution);
    lines.emit("attribution", &start, ms, json!({"groups": groups}))?;

    let start = lines.begin();
    let attribution = Attribution::of(obs);
    let violations = check::check(obs, &attribution);
    let ms = start.elapsed_ms();
    let count = violations.len();
    drop(violations);
    lines.emit(
        "check",
        &start,
        ms,
        json!({"violations": count, "expected_violations": expected_violations(spec)}),
    )
}

/// The steps `report` and `json` of the report phase. Without `json_out` the
/// report has no violations: the phase measures the report, not the check.
fn report_steps(
    obs: Observation,
    json_out: Option<&Path>,
    lines: &mut StepLines<'_>,
) -> Result<(), Error> {
    let violations = match json_out {
        Some(_) => check::check(&obs, &Attribution::of(&obs)),
        None => Vec::new(),
    };
    let duration_ms = obs.duration_ms;
    let reproduce = reproduce(&obs);
    let start = lines.begin();
    let prepared = {
        let attribution = Attribution::of(&obs);
        report_build::prepare(&obs, &attribution)
    };
    // Freed memory given back as `lostreply run` gives it.
    let scenario = report_build::scenario_report_phases(
        obs,
        prepared,
        violations,
        reproduce,
        &mut give_back_after,
    );
    let ms = start.elapsed_ms();
    lines.emit(
        "report",
        &start,
        ms,
        json!({"ledger_records": scenario.ledger.len(), "call_records": scenario.calls.len()}),
    )?;

    let report = whole_report(duration_ms, scenario);
    let start = lines.begin();
    let bytes = write_report(&report, json_out)?;
    let ms = start.elapsed_ms();
    lines.emit("json", &start, ms, json!({"bytes": bytes}))
}

/// The step `pipeline`: what a run does once it has observed
/// (`lostreply_harness::suite::check_and_report`: the attribution, the checks
/// and the report, which takes the observation over; then the report wrapped
/// and written as JSON), so its `ms` is the "checking and reporting" of the
/// target. `peak_total_kib` is the process's peak since it started, the
/// observation included: the "in all" of the memory target. `phases` gives
/// each phase's resident size as it ended and the step's peak by then.
fn pipeline_step(
    obs: Observation,
    spec: SyntheticSpec,
    json_out: Option<&Path>,
    lines: &mut StepLines<'_>,
) -> Result<(), Error> {
    let duration_ms = obs.duration_ms;
    let reproduce = reproduce(&obs);
    let start = lines.begin();
    // Resident memory as each phase ends, and the step's peak so far: where
    // the peak is reached, and what each phase leaves.
    let mut phases = Vec::new();
    let mut phase_done = |phase: &str| {
        if let Some(memory) = crate::procfs::memory(None) {
            phases.push(json!({"phase": phase, "rss_kib": memory.rss_kib,
                               "peak_kib": memory.hwm_kib}));
        }
    };
    // Freed memory given back as `lostreply run` gives it, before the
    // phase's memory is read.
    let (scenario, check_and_report_ms) = timed(|| {
        lostreply_harness::suite::check_and_report_phases(obs, reproduce, &mut |end| {
            give_back_after(end);
            phase_done(end.phase.name());
        })
    });
    let count = scenario.violations.len();
    let report = whole_report(duration_ms, scenario);
    let (bytes, json_ms) = timed(|| write_report(&report, json_out));
    let bytes = bytes?;
    phase_done("json written");
    let ms = start.elapsed_ms();
    lines.emit(
        PIPELINE_STEP,
        &start,
        ms,
        json!({"violations": count,
               "expected_violations": expected_violations(spec), "bytes": bytes,
               "check_and_report_ms": check_and_report_ms, "json_ms": json_ms,
               "phases": phases}),
    )
}

/// Two per duplicated operation: invariant 1 and the `effects` expectation.
fn expected_violations(spec: SyntheticSpec) -> usize {
    2 * spec.duplicates()
}

/// A plausible reproduce command (nothing reads it here).
fn reproduce(obs: &Observation) -> String {
    format!("lostreply run --seed 1 {}", obs.scenario.path)
}

/// The run's report around one scenario, as `run_suite` wraps it.
fn whole_report(duration_ms: u64, scenario: ScenarioReport) -> Report {
    Report::builder()
        .schema_version(SCHEMA_VERSION)
        .tool_version(env!("CARGO_PKG_VERSION").to_owned())
        .adapter(
            AdapterInfo::builder()
                .name("builtin:reference".to_owned())
                .kind(AdapterKind::InProcess)
                .build(),
        )
        .seed(1)
        .duration_ms(duration_ms)
        .scenarios(vec![scenario])
        .build()
}

/// Writes the JSON report into a counting sink (the writer's own cost, not
/// the disk's), or through it into `json_out`; returns its size in bytes.
fn write_report(report: &Report, json_out: Option<&Path>) -> Result<u64, Error> {
    let mut sink = CountingSink::default();
    let written = match json_out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| Error::Io(format!("creating {}", path.display()), e))?;
            sink.inner = Some(std::io::BufWriter::new(file));
            lostreply_reports::write_json(&mut sink, report).and_then(|()| sink.flush())
        }
        None => lostreply_reports::write_json(&mut sink, report),
    };
    written.map_err(|e| Error::Io("writing the JSON report".to_owned(), e))?;
    Ok(sink.bytes)
}

/// Runs `f`, returning what it gave and its wall time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let value = f();
    (value, elapsed_ms(started))
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// This process's `VmHWM` as if it had never been reset. Each step resets it
/// to measure its own peak, which forgets the peak before; so the peak read
/// just before each reset is kept, and the larger of it and the current one
/// is the peak since the process started.
#[derive(Debug, Default)]
struct LifetimePeak {
    before_resets_kib: u64,
}

impl LifetimePeak {
    /// Resets `VmHWM` (see [`procfs::reset_peak`]), keeping the peak so far.
    fn reset(&mut self) -> bool {
        self.before_resets_kib = self.kib(memory_now().hwm_kib);
        procfs::reset_peak()
    }

    /// The peak since the process started, given `VmHWM` now (0 where
    /// `/proc` cannot be read).
    fn kib(&self, hwm_kib: u64) -> u64 {
        self.before_resets_kib.max(hwm_kib)
    }
}

/// Where a step started: resident size, whether the peak was reset, the clock.
#[derive(Debug)]
struct StepStart {
    before: procfs::Memory,
    reset: bool,
    started: Instant,
}

impl StepStart {
    fn elapsed_ms(&self) -> f64 {
        elapsed_ms(self.started)
    }
}

/// The child's step lines, and the peak they must not lose.
struct StepLines<'w> {
    out: &'w mut dyn Write,
    lifetime: LifetimePeak,
}

impl StepLines<'_> {
    /// Starts a step: resident size read, then the peak reset, then the clock.
    fn begin(&mut self) -> StepStart {
        let before = memory_now();
        let reset = self.lifetime.reset();
        StepStart {
            before,
            reset,
            started: Instant::now(),
        }
    }

    /// Prints one step's line (`ms` measured by the step, so that what it
    /// drops afterwards is not counted) and flushes it, so that a child killed
    /// later still reported it.
    fn emit(&mut self, step: &str, start: &StepStart, ms: f64, extra: Value) -> Result<(), Error> {
        let peak = memory_now().hwm_kib;
        // From the same reading as `peak_kib`, so that the one is never below the other.
        let peak_total = self.lifetime.kib(peak);
        let mut line = json!({"step": step, "ms": ms, "rss_before_kib": start.before.rss_kib,
                              "peak_kib": peak, "peak_reset": start.reset,
                              "peak_total_kib": peak_total});
        if let (Some(line), Value::Object(extra)) = (line.as_object_mut(), extra) {
            line.extend(extra);
        }
        let io = |e| Error::Io("writing a step line".to_owned(), e);
        writeln!(self.out, "{line}").map_err(io)?;
        self.out.flush().map_err(io)
    }
}

/// This process's memory now; zeros where `/proc` cannot be read.
fn memory_now() -> procfs::Memory {
    procfs::memory(None).unwrap_or(procfs::Memory {
        rss_kib: 0,
        hwm_kib: 0,
    })
}

/// Counts what it is given, and passes it on to a file when there is one.
#[derive(Debug, Default)]
struct CountingSink {
    bytes: u64,
    inner: Option<std::io::BufWriter<std::fs::File>>,
}

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = match &mut self.inner {
            Some(inner) => inner.write(buf)?,
            None => buf.len(),
        };
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.inner {
            Some(inner) => inner.flush(),
            None => Ok(()),
        }
    }
}

/// In the parent: runs one (phase, size) in a child, `exe` (the cost binary), killing it at `budget`.
pub async fn measure(exe: &Path, phase: Phase, spec: SyntheticSpec, budget: Duration) -> CostRun {
    let mut run = CostRun {
        phase,
        operations: spec.operations,
        steps: Vec::new(),
        ending: Ending::Completed,
    };
    let spawned = tokio::process::Command::new(exe)
        .args(["--phase", phase.name()])
        .args(["--ops", &spec.operations.to_string()])
        .args(["--duplicate-every", &spec.duplicate_every.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            run.ending = Ending::Failed(format!("cannot start {}: {e}", exe.display()));
            return run;
        }
    };
    let Some(stdout) = child.stdout.take() else {
        run.ending = Ending::Failed("the child has no stdout".to_owned());
        return run;
    };
    let mut lines = BufReader::new(stdout).lines();
    let deadline = tokio::time::Instant::now() + budget;
    loop {
        match tokio::time::timeout_at(deadline, lines.next_line()).await {
            Ok(Ok(Some(line))) => match StepFigures::from_line(&line) {
                Some(step) => run.steps.push(step),
                None => {
                    run.ending = Ending::Failed(format!("unreadable step line: {line}"));
                    break;
                }
            },
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                run.ending = Ending::Failed(format!("reading the child: {e}"));
                break;
            }
            Err(_) => {
                run.ending = Ending::TimedOut { budget };
                let _ = child.start_kill();
                break;
            }
        }
    }
    // Reaped within a bound: killed, or finished writing its last line.
    match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
        Ok(Ok(status)) if !status.success() && run.ending == Ending::Completed => {
            run.ending = Ending::Failed(format!("the child exited with {status}"));
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => run.ending = Ending::Failed(format!("waiting for the child: {e}")),
        Err(_) => {
            let _ = child.start_kill();
            run.ending = Ending::Failed("the child did not exit after its last line".to_owned());
        }
    }
    if run.ending == Ending::Completed && run.steps.len() != phase.steps().len() {
        run.ending = Ending::Failed(format!(
            "the child reported {} of {} steps",
            run.steps.len(),
            phase.steps().len()
        ));
    }
    run
}

/// Every phase at every size, ascending; once a size of a phase runs out of
/// budget, its larger sizes are reported as skipped (never silently dropped).
pub async fn measure_all(
    exe: &Path,
    sizes: &[usize],
    duplicate_every: usize,
    budget: Duration,
    mut on_run: impl FnMut(&CostRun),
) -> Vec<CostRun> {
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs = Vec::new();
    for phase in Phase::ALL {
        let mut timed_out_at: Option<usize> = None;
        for &operations in &sorted {
            let run = match timed_out_at {
                Some(after_size) => CostRun {
                    phase,
                    operations,
                    steps: Vec::new(),
                    ending: Ending::Skipped { after_size },
                },
                None => {
                    measure(
                        exe,
                        phase,
                        SyntheticSpec {
                            operations,
                            duplicate_every,
                        },
                        budget,
                    )
                    .await
                }
            };
            if matches!(run.ending, Ending::TimedOut { .. }) {
                timed_out_at = Some(operations);
            }
            on_run(&run);
            runs.push(run);
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_pipeline_child_finds_the_planted_violations_and_writes_a_report() {
        let spec = SyntheticSpec {
            operations: 1000,
            duplicate_every: 100,
        };
        let mut out = Vec::new();
        run_child(Phase::Pipeline, spec, None, &mut out).unwrap();
        let steps: Vec<StepFigures> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| StepFigures::from_line(l).unwrap())
            .collect();
        let names: Vec<&str> = steps.iter().map(|s| s.step.as_str()).collect();
        assert_eq!(names, Phase::Pipeline.steps());
        let pipeline = &steps[1].extra;
        let count = |field: &str| pipeline.get(field).and_then(Value::as_u64).unwrap();
        assert_eq!(count("violations"), 20);
        assert_eq!(count("expected_violations"), 20);
        assert!(count("bytes") > 0);
        // The peak in all is at least every step's own peak, and never falls.
        let total = |s: &StepFigures| {
            s.extra
                .get("peak_total_kib")
                .and_then(Value::as_u64)
                .unwrap()
        };
        for s in &steps {
            assert!(total(s) >= s.peak_kib, "{s:?}");
        }
        assert!(total(&steps[1]) >= total(&steps[0]));
        for split in ["check_and_report_ms", "json_ms"] {
            assert!(
                pipeline.get(split).and_then(Value::as_f64).is_some(),
                "{split}"
            );
        }
    }

    #[test]
    fn every_phase_is_named_once() {
        for phase in Phase::ALL {
            assert_eq!(Phase::from_name(phase.name()), Some(phase));
        }
        assert_eq!(Phase::from_name("pipeline"), Some(Phase::Pipeline));
        assert_eq!(Phase::from_name("nope"), None);
    }
}
