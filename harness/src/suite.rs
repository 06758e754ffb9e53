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
use crate::run::observation::Observation;
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
/// ([`CHECK_THREAD_FROM_RECORDS`]) keeps two threads busy: the operations'
/// texts while the attribution is built (itself on two threads), the
/// checks' index while the report is prepared, then the invariants beside
/// the expectations. The report is the same either way.
pub fn check_and_report(obs: Observation, reproduce: String) -> ScenarioReport {
    let records = obs.calls.len() + obs.journal.len() + obs.ledger.len();
    let two = records >= CHECK_THREAD_FROM_RECORDS;
    let (attribution, texts) = both(
        two,
        || Attribution::of(&obs),
        || crate::report_build::operation_texts(&obs.scenario.operations),
    );
    let (prepared, index) = both(
        two,
        || crate::report_build::prepare_with(&obs, &attribution, texts),
        || Index::new(&obs, &attribution),
    );
    // The violations in `check::check`'s order: the invariants', then the
    // expectations'.
    let (mut violations, expectations) = both(
        two,
        || invariants::check_all(&obs, &attribution, &index),
        || expectations::check_all(&obs, &attribution, &index),
    );
    violations.extend(expectations);
    // Freed before the report takes the observation over (they borrow it).
    drop(index);
    drop(attribution);
    crate::report_build::scenario_report(obs, prepared, violations, reproduce)
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
