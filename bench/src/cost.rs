//! Cost growth of checking and reporting over synthetic observations.
//!
//! Each (phase, size) runs in a child process (the bench binary re-executed
//! with the hidden `__cost` subcommand), for two reasons: its peak resident
//! memory is its own (read from `VmHWM`, reset before each step through
//! `/proc/self/clear_refs`), and a size that takes too long can be killed at
//! its time budget instead of stalling the benchmark. The child prints one JSON
//! line per step as soon as the step ends, so a killed child still reports the
//! steps it finished.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use lostreply_reports::model::{AdapterInfo, AdapterKind, Report, SCHEMA_VERSION};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::procfs;
use crate::synthetic::{observation, SyntheticSpec};
use crate::Error;

/// The hidden subcommand that runs one (phase, size) in a child.
pub const CHILD_SUBCOMMAND: &str = "__cost";

/// What a child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// `Attribution::build` alone, then checking as a run does it: the
    /// attribution again plus `lostreply_harness::check::check`.
    Check,
    /// The attribution plus `lostreply_harness::report_build::scenario_report`, then the JSON writer.
    Report,
}

impl Phase {
    /// Both, in the order they run.
    pub const ALL: [Phase; 2] = [Phase::Check, Phase::Report];

    /// The name on the child's command line and in JSON lines.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Check => "check",
            Phase::Report => "report",
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
        }
    }
}

/// One step's figures, as a child printed them.
#[derive(Debug, Clone, PartialEq)]
pub struct StepFigures {
    /// `build`, `attribution`, `check`, `report` or `json`.
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
/// as they were.
pub fn run_child(
    phase: Phase,
    spec: SyntheticSpec,
    json_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), Error> {
    let io = |e| Error::Io("writing a step line".to_owned(), e);
    let mut emit = |step: &str,
                    ms: f64,
                    before: procfs::Memory,
                    reset: bool,
                    extra: Value|
     -> Result<(), Error> {
        let peak = procfs::memory(None).map_or(0, |m| m.hwm_kib);
        let mut line = json!({"step": step, "ms": ms, "rss_before_kib": before.rss_kib, "peak_kib": peak, "peak_reset": reset});
        if let (Some(line), Value::Object(extra)) = (line.as_object_mut(), extra) {
            line.extend(extra);
        }
        writeln!(out, "{line}").map_err(io)?;
        out.flush().map_err(io)
    };
    let here = || {
        procfs::memory(None).unwrap_or(procfs::Memory {
            rss_kib: 0,
            hwm_kib: 0,
        })
    };

    let before = here();
    let reset = procfs::reset_peak();
    let started = Instant::now();
    let obs = observation(spec);
    let ms = elapsed_ms(started);
    emit(
        "build",
        ms,
        before,
        reset,
        json!({"journal": obs.journal.len(), "ledger": obs.ledger.len(), "calls": obs.calls.len()}),
    )?;

    match phase {
        Phase::Check => {
            let before = here();
            let reset = procfs::reset_peak();
            let started = Instant::now();
            let attribution = lostreply_harness::check::attribution::Attribution::build(
                &obs.scenario.operations,
                &obs.journal,
                &obs.ledger,
                &obs.credential,
            );
            let ms = elapsed_ms(started);
            let groups = attribution.group_count();
            drop(attribution);
            emit("attribution", ms, before, reset, json!({"groups": groups}))?;

            let before = here();
            let reset = procfs::reset_peak();
            let started = Instant::now();
            let attribution = lostreply_harness::check::attribution::Attribution::of(&obs);
            let violations = lostreply_harness::check::check(&obs, &attribution);
            let ms = elapsed_ms(started);
            let count = violations.len();
            drop(violations);
            emit(
                "check",
                ms,
                before,
                reset,
                json!({"violations": count, "expected_violations": 2 * spec.duplicates()}),
            )?;
        }
        Phase::Report => {
            let violations = match json_out {
                Some(_) => lostreply_harness::check::check(
                    &obs,
                    &lostreply_harness::check::attribution::Attribution::of(&obs),
                ),
                None => Vec::new(),
            };
            let before = here();
            let reset = procfs::reset_peak();
            let started = Instant::now();
            let attribution = lostreply_harness::check::attribution::Attribution::of(&obs);
            let scenario = lostreply_harness::report_build::scenario_report(
                &obs,
                &attribution,
                violations,
                format!("lostreply run --seed 1 {}", obs.scenario.path),
            );
            let ms = elapsed_ms(started);
            emit(
                "report",
                ms,
                before,
                reset,
                json!({"ledger_records": scenario.ledger.len(), "call_records": scenario.calls.len()}),
            )?;

            let report = Report {
                schema_version: SCHEMA_VERSION,
                tool_version: env!("CARGO_PKG_VERSION").to_owned(),
                adapter: AdapterInfo {
                    name: "builtin:reference".to_owned(),
                    kind: AdapterKind::InProcess,
                },
                seed: 1,
                duration_ms: obs.duration_ms,
                scenarios: vec![scenario],
            };
            let before = here();
            let reset = procfs::reset_peak();
            let started = Instant::now();
            // Into a counting sink: the writer's own cost, not the disk's.
            let mut sink = CountingSink::default();
            let written = match json_out {
                Some(path) => {
                    let file = std::fs::File::create(path)
                        .map_err(|e| Error::Io(format!("creating {}", path.display()), e))?;
                    sink.inner = Some(std::io::BufWriter::new(file));
                    lostreply_reports::write_json(&mut sink, &report).and_then(|()| sink.flush())
                }
                None => lostreply_reports::write_json(&mut sink, &report),
            };
            written.map_err(|e| Error::Io("writing the JSON report".to_owned(), e))?;
            let ms = elapsed_ms(started);
            emit("json", ms, before, reset, json!({"bytes": sink.bytes}))?;
        }
    }
    Ok(())
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
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

/// In the parent: runs one (phase, size) in a child of `exe`, killing it at `budget`.
pub async fn measure(exe: &Path, phase: Phase, spec: SyntheticSpec, budget: Duration) -> CostRun {
    let mut run = CostRun {
        phase,
        operations: spec.operations,
        steps: Vec::new(),
        ending: Ending::Completed,
    };
    let spawned = tokio::process::Command::new(exe)
        .arg(CHILD_SUBCOMMAND)
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
