//! Runs scenarios end to end, the one place where the stages meet: each
//! scenario is observed ([`crate::run`]), checked ([`crate::check`]) and
//! reported ([`crate::report_build`]). Data flows one way through them; none of
//! the three knows this module.

use std::sync::OnceLock;
use std::time::Instant;

use futures::StreamExt;
use lostreply_reports::model::{AdapterInfo, Report, ScenarioReport, SCHEMA_VERSION};

use crate::check::attribution::Attribution;
use crate::check::index::Index;
use crate::check::{expectations, invariants};
use crate::driver::{shell_quote, AdapterUnderTest};
use crate::run::observation::{forget_fingerprints, Observation};
use crate::scenario::model::Scenario;
use crate::seed::scenario_seed;
use crate::two_threads::{self, both};

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The code under test.
    pub adapter: AdapterUnderTest,
    /// The run's seed; each scenario derives its own from it and its id.
    pub seed: u64,
    /// How many scenarios run at once (each has its own simulator and state).
    pub jobs: usize,
    /// How the reproduce command starts (`lostreply run`, or `cargo run --release -- run`).
    pub command_prefix: String,
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
    check_and_report(obs, reproduce_command(options, scenario))
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

/// [`check_and_report`], calling `done` with each phase's name as it ends
/// (the bench's `observation_bytes` counts the memory each phase leaves and
/// the peak it reached, in the order and with the lifetimes a run has).
#[doc(hidden)]
pub fn check_and_report_phases(
    mut obs: Observation,
    reproduce: String,
    done: &mut dyn FnMut(&str),
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
    done("attribution");
    // Only the attribution reads the requests' bodies (the fingerprints of
    // those that made no effect; a run freed the others as it collected
    // them): freed now, they are not held through the checks and the report.
    forget_fingerprints(&mut obs.journal, &mut obs.ledger);
    if two {
        give_back_freed();
    }
    done("fingerprints freed");
    let index = Index::new(&obs, &attribution);
    done("checks' index");
    // The violations in `check::check`'s order: the invariants', then the
    // expectations'.
    let (mut violations, expectations) = both(
        two,
        || invariants::check_all(&obs, &attribution, &index),
        || expectations::check_all(&obs, &attribution, &index),
    );
    violations.extend(expectations);
    done("checks");
    // The report's part that needs the attribution only once the index is
    // gone: made beside it (on the second thread), the two were held
    // together, the highest point of checking a large run after the
    // attribution.
    drop(index);
    if two {
        // The index's lists, given back for what the records need next
        // (other sizes: unreused, they stayed resident under them).
        give_back_freed();
    }
    let prepared = crate::report_build::prepare(&obs, &attribution);
    // Freed before the report takes the observation over (it borrows it),
    // and before the report's records are made.
    drop(attribution);
    done("report prepared");
    let report = crate::report_build::scenario_report(obs, prepared, violations, reproduce);
    done("report");
    report
}

/// What gives memory freed while a run is checked back to the system, set
/// once by a binary that knows its allocator (`lostreply run`: mimalloc's
/// collect, `lostreply_cli::allocator`). Without it, freed memory stays with the
/// allocator for reuse.
static GIVE_BACK_FREED: OnceLock<fn()> = OnceLock::new();

/// Sets [`GIVE_BACK_FREED`]; false if it was already set (the first stays).
pub fn set_give_back_freed(give_back: fn()) -> bool {
    GIVE_BACK_FREED.set(give_back).is_ok()
}

/// Called on a large run once the attribution is built and the fingerprints
/// left are freed (at a million operations its working tables, some 25 MB
/// that nothing after reuses: other sizes are allocated next), once the
/// checks' index is (some 40 MB), and once the ledger's records are made
/// (`report_build`: the attribution and any effect's own copy of its
/// arguments): without it each stayed resident under what came next.
pub(crate) fn give_back_freed() {
    if let Some(give_back) = GIVE_BACK_FREED.get() {
        give_back();
    }
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
    Report {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        adapter: AdapterInfo {
            name: options.adapter.display_name(),
            kind: options.adapter.kind(),
        },
        seed: options.seed,
        duration_ms: started.elapsed().as_millis() as u64,
        scenarios: slots.into_iter().flatten().collect(),
    }
}
