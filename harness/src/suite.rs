//! Runs scenarios end to end, the one place where the stages meet: each
//! scenario is observed ([`crate::run`]), checked ([`crate::check`]) and
//! reported ([`crate::report_build`]). Data flows one way through them; none of
//! the three knows this module.

use std::time::Instant;

use futures::StreamExt;
use lostreply_reports::model::{AdapterInfo, Report, ScenarioReport, SCHEMA_VERSION};

use crate::check::attribution::Attribution;
use crate::driver::{shell_quote, AdapterUnderTest};
use crate::scenario::model::Scenario;
use crate::seed::scenario_seed;

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
    let attribution = Attribution::of(&obs);
    let violations = crate::check::check(&obs, &attribution);
    crate::report_build::scenario_report(
        &obs,
        &attribution,
        violations,
        reproduce_command(options, scenario),
    )
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
