//! Runs scenarios: one simulator and one fresh state directory per scenario run,
//! steps driven in order, then the final `status` sweep, the checks and the report.

mod contract;
pub mod observation;
mod steps;

use std::sync::Mutex;
use std::time::Instant;

use futures::StreamExt;
use lostreply_reports::model::{AdapterInfo, ErrorRecord, Report, ScenarioReport, SCHEMA_VERSION};
use lostreply_simulator::{ServeOptions, Simulator};

pub use contract::{common, contract, contract_for_plan, documented_mode};
use observation::Observation;

use crate::driver::{shell_quote, AdapterUnderTest};
use crate::scenario::model::Scenario;

/// The seed used when none is given: fixed, so that two runs of the same
/// command are the same run.
pub const DEFAULT_SEED: u64 = 1;

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

/// A scenario's seed: derived from the run's seed and the scenario's id only, so
/// that it does not depend on which other scenarios run or in which order.
pub fn scenario_seed(run_seed: u64, scenario_id: &str) -> u64 {
    // FNV-1a over the id, then splitmix64 with the run seed: stable across Rust versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scenario_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ run_seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

/// Runs one scenario and returns what it observed.
pub async fn observe(scenario: &Scenario, adapter: &AdapterUnderTest, seed: u64) -> Observation {
    let started = Instant::now();
    let credential = scenario.plan.tenants.first().cloned().unwrap_or_default();
    let mut obs = Observation {
        scenario: scenario.clone(),
        seed,
        credential: credential.clone(),
        calls: Vec::new(),
        steps: Vec::new(),
        deliveries: Vec::new(),
        forged: Vec::new(),
        ledger: Vec::new(),
        journal: Vec::new(),
        simulator_offset_ms: 0,
        sim_start_ms: scenario.plan.clock_start_ms,
        final_status: Default::default(),
        errors: Vec::new(),
        infra_failed: false,
        duration_ms: 0,
    };
    let infra = |obs: &mut Observation, message: String| {
        obs.errors.push(ErrorRecord {
            step: 0,
            call_index: None,
            message,
        });
        obs.infra_failed = true;
        obs.duration_ms = started.elapsed().as_millis() as u64;
    };
    let state = match tempfile::Builder::new()
        .prefix("lostreply-state-")
        .tempdir()
    {
        Ok(dir) => dir,
        Err(e) => {
            infra(&mut obs, format!("cannot create a state directory: {e}"));
            return obs;
        }
    };
    let session = match adapter.session(state.path()) {
        Ok(s) => s,
        Err(e) => {
            // An in-process factory that cannot build is the adapter's failure.
            obs.errors.push(ErrorRecord {
                step: 0,
                call_index: None,
                message: format!("cannot build the adapter: {e}"),
            });
            obs.duration_ms = started.elapsed().as_millis() as u64;
            return obs;
        }
    };
    let mut plan = scenario.plan.clone();
    plan.seed = seed;
    let sim_started_ms = started.elapsed().as_millis() as u64;
    let sim = match Simulator::start(plan, ServeOptions::default()).await {
        Ok(sim) => sim,
        Err(e) => {
            infra(&mut obs, format!("cannot start the simulator: {e}"));
            return obs;
        }
    };
    // Forged deliveries are signed with a secret derived from the seed: wrong, but reproducible.
    let forged_secret = forged_secret(seed);
    let mut runner = steps::StepRunner {
        scenario,
        sim: &sim,
        session: &session,
        started,
        credential,
        forged_secret,
        calls: Mutex::new(Vec::new()),
        steps: Vec::new(),
        deliveries: Vec::new(),
        forged: Vec::new(),
        errors: Mutex::new(Vec::new()),
        notes: Mutex::new(Vec::new()),
    };
    runner.run_steps().await;
    let finals = runner.final_sweep().await;
    let steps::Recorded {
        calls,
        steps,
        deliveries,
        forged,
        errors,
    } = runner.into_parts();
    obs.ledger = sim.ledger();
    obs.journal = sim.journal();
    sim.shutdown().await;
    obs.calls = calls;
    obs.steps = steps;
    obs.deliveries = deliveries;
    obs.forged = forged;
    obs.infra_failed = !errors.is_empty();
    obs.errors.extend(errors);
    obs.final_status = finals;
    obs.simulator_offset_ms = sim_started_ms;
    obs.duration_ms = started.elapsed().as_millis() as u64;
    obs
}

fn forged_secret(seed: u64) -> String {
    use base64::Engine as _;
    let mut key = [0u8; 24];
    for (i, chunk) in key.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&scenario_seed(seed, &format!("forged-{i}")).to_le_bytes());
    }
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(key)
    )
}

/// Runs one scenario: observe, check, build its report.
pub async fn run_scenario(scenario: &Scenario, options: &RunOptions) -> ScenarioReport {
    let seed = scenario_seed(options.seed, &scenario.id);
    let obs = observe(scenario, &options.adapter, seed).await;
    let attribution = crate::check::attribution::Attribution::of(&obs);
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
