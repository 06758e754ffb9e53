//! Runs scenarios end to end, the one place where the stages meet: each
//! scenario is observed ([`crate::run`]), checked ([`crate::check`]) and
//! reported ([`crate::report_build`]). Data flows one way through them; none of
//! the three knows this module.

use std::time::Instant;

use futures::StreamExt;
use lostreply_reports::model::{AdapterInfo, Report, ScenarioReport, SCHEMA_VERSION};

use crate::check::attribution::Attribution;
use crate::check::index::Index;
use crate::check::{expectations, invariants};
use crate::driver::{shell_quote, AdapterUnderTest};
use crate::phase::{Phase, PhaseEnd, PhaseHook};
use crate::run::observation::{forget_fingerprints, Observation};
use crate::scenario::model::Scenario;
use crate::seed::scenario_seed;
use crate::two_threads::{self, both};

/// How a suite runs: [`RunOptions::new`] with the adapter, then the
/// settings that differ from the defaults.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOptions {
    /// The code under test.
    pub adapter: AdapterUnderTest,
    /// The run's seed; each scenario derives its own from it and its id.
    pub seed: u64,
    /// How many scenarios run at once (each has its own simulator and state).
    pub jobs: usize,
    /// How the reproduce command starts (`lostreply run`, or `cargo run --release -- run`).
    pub command_prefix: String,
    /// Called as each phase of checking and reporting a scenario ends.
    pub phase_hook: Option<PhaseHook>,
}

impl RunOptions {
    /// A run of `adapter` with the default seed, one scenario at a time,
    /// reproduce commands starting `lostreply run`, and no phase hook.
    pub fn new(adapter: AdapterUnderTest) -> RunOptions {
        RunOptions {
            adapter,
            seed: crate::seed::DEFAULT_SEED,
            jobs: 1,
            command_prefix: "lostreply run".to_owned(),
            phase_hook: None,
        }
    }

    /// The run's seed.
    pub fn seed(mut self, seed: u64) -> RunOptions {
        self.seed = seed;
        self
    }

    /// How many scenarios run at once.
    pub fn jobs(mut self, jobs: usize) -> RunOptions {
        self.jobs = jobs;
        self
    }

    /// How the reproduce command starts.
    pub fn command_prefix(mut self, prefix: impl Into<String>) -> RunOptions {
        self.command_prefix = prefix.into();
        self
    }

    /// What is called as each phase of checking and reporting ends.
    pub fn phase_hook(mut self, hook: PhaseHook) -> RunOptions {
        self.phase_hook = Some(hook);
        self
    }
}

/// The command that reruns exactly one scenario.
pub fn reproduce_command(options: &RunOptions, scenario: &Scenario) -> String {
    format!(
        "{} {} --seed {} {}",
        options.command_prefix,
        options.adapter.cli_flags(),
        options.seed,
        shell_quote(&scenario.path)
    )
}

/// Runs one scenario: observe, check, build its report.
pub async fn run_scenario(scenario: &Scenario, options: &RunOptions) -> ScenarioReport {
    let seed = scenario_seed(options.seed, &scenario.id);
    let obs = crate::run::observe(scenario, &options.adapter, seed).await;
    let reproduce = reproduce_command(options, scenario);
    match options.phase_hook {
        Some(hook) => check_and_report_phases(obs, reproduce, &mut |end| hook(end)),
        None => check_and_report(obs, reproduce),
    }
}

/// Records (calls, requests, effects) past which a run checks and reports
/// on two threads ([`crate::two_threads`], where the why is).
pub const CHECK_THREAD_FROM_RECORDS: usize = two_threads::FROM_RECORDS;

/// What a run does with an observation: the attribution once, the checks,
/// and the report with their verdict, which takes the observation over
/// ([`crate::report_build::scenario_report`]). A large observation
/// ([`CHECK_THREAD_FROM_RECORDS`]) keeps two threads busy: the attribution
/// is built on two, then the invariants beside the expectations. The
/// report's operation records are made after the checks, once their index
/// is freed, so that the two are never held together. The report is the
/// same either way.
pub fn check_and_report(obs: Observation, reproduce: String) -> ScenarioReport {
    check_and_report_phases(obs, reproduce, &mut |_| {})
}

/// [`check_and_report`], calling `done` as each phase ends (a binary gives
/// freed memory back to the system where [`PhaseEnd::freed_much`]; the
/// bench's `observation_bytes` counts the memory each phase leaves and the
/// peak it reached, in the order and with the lifetimes a run has).
pub fn check_and_report_phases(
    mut obs: Observation,
    reproduce: String,
    done: &mut dyn FnMut(PhaseEnd),
) -> ScenarioReport {
    let records = obs.calls.len() + obs.journal.len() + obs.ledger.len();
    let two = records >= CHECK_THREAD_FROM_RECORDS;
    // The attribution first (itself on two threads when large), alone: it
    // is one of the two highest points of checking a large run (the checks
    // are the other), so nothing is made beside it.
    let attribution = Attribution::build(
        &obs.scenario.operations,
        &obs.journal,
        &obs.ledger,
        &obs.credential,
    );
    done(PhaseEnd::new(Phase::Attribution, false));
    // Only the attribution reads the requests' bodies (the fingerprints of
    // those that made no effect; a run freed the others as it collected
    // them): freed now, they are not held through the checks and the report.
    // At a million operations the attribution's working tables (some 25 MB)
    // are freed too, and nothing after reuses their sizes.
    forget_fingerprints(&mut obs.journal, &mut obs.ledger);
    done(PhaseEnd::new(Phase::FingerprintsFreed, two));
    let index = Index::new(&obs, &attribution);
    done(PhaseEnd::new(Phase::ChecksIndex, false));
    // The violations in `check::check`'s order: the invariants', then the
    // expectations'.
    let (mut violations, expectations) = both(
        two,
        || invariants::check_all(&obs, &attribution, &index),
        || expectations::check_all(&obs, &attribution, &index),
    );
    violations.extend(expectations);
    done(PhaseEnd::new(Phase::Checks, false));
    // The report's part that needs the attribution only once the index is
    // gone: made beside it (on the second thread), the two were held
    // together, the highest point of checking a large run after the
    // attribution. The index's lists (some 40 MB at a million operations)
    // are of sizes the records do not reuse.
    drop(index);
    done(PhaseEnd::new(Phase::IndexFreed, two));
    let prepared = crate::report_build::prepare(&obs, &attribution);
    // Freed before the report takes the observation over (it borrows it),
    // and before the report's records are made.
    drop(attribution);
    done(PhaseEnd::new(Phase::ReportPrepared, false));
    let report =
        crate::report_build::scenario_report_phases(obs, prepared, violations, reproduce, done);
    done(PhaseEnd::new(Phase::Report, false));
    report
}

/// Runs scenarios concurrently (up to `jobs`), calling `on_done` as each
/// finishes; the report keeps the order the scenarios were given in.
pub async fn run_suite(
    scenarios: &[Scenario],
    options: &RunOptions,
    mut on_done: impl FnMut(&ScenarioReport),
) -> Report {
    let started = Instant::now();
    let jobs = options.jobs.max(1);
    let mut slots: Vec<Option<ScenarioReport>> = vec![None; scenarios.len()];
    let mut stream = futures::stream::iter(scenarios.iter().enumerate())
        .map(|(i, s)| async move { (i, run_scenario(s, options).await) })
        .buffer_unordered(jobs);
    while let Some((i, report)) = stream.next().await {
        on_done(&report);
        slots[i] = Some(report);
    }
    Report::builder()
        .schema_version(SCHEMA_VERSION)
        .tool_version(env!("CARGO_PKG_VERSION").to_owned())
        .adapter(
            AdapterInfo::builder()
                .name(options.adapter.display_name())
                .kind(options.adapter.kind())
                .build(),
        )
        .seed(options.seed)
        .duration_ms(started.elapsed().as_millis() as u64)
        .scenarios(slots.into_iter().flatten().collect())
        .build()
}
