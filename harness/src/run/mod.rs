//! Observes one scenario run: one simulator and one fresh state directory,
//! steps driven in order, then the final `status` sweep. What it saw is an
//! [`Observation`], and that is all this module produces: the checks and the
//! report read it, and the suite puts the stages together, above this one.

pub mod call_log;
mod contract;
pub mod observation;
mod provider_runtime;
mod steps;

use std::sync::Mutex;
use std::time::Instant;

use lostreply_reports::model::ErrorRecord;
use lostreply_simulator::ServeOptions;

use call_log::CallLog;
pub use contract::{
    common, contract, contract_for_plan, contract_mcp, documented_mode, mcp_url, operation,
};
use observation::{forget_derivable_fingerprints, share_with_operation, Observation};
pub use steps::{judged_reply, step_label};

use crate::by_key::ByKey;
use crate::driver::AdapterUnderTest;
use crate::scenario::model::Scenario;
use crate::seed::scenario_seed;

/// Runs one scenario and returns what it observed.
pub async fn observe(scenario: &Scenario, adapter: &AdapterUnderTest, seed: u64) -> Observation {
    let started = Instant::now();
    let credential = scenario.plan.tenants.first().cloned().unwrap_or_default();
    let mut obs = nothing_yet(scenario, seed, credential.clone());
    let infra = |obs: &mut Observation, message: String| {
        obs.errors
            .push(ErrorRecord::builder().step(0).message(message).build());
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
            obs.errors.push(
                ErrorRecord::builder()
                    .step(0)
                    .message(format!("cannot build the adapter: {e}"))
                    .build(),
            );
            obs.duration_ms = started.elapsed().as_millis() as u64;
            return obs;
        }
    };
    let mut plan = scenario.plan.clone();
    plan.seed = seed;
    let sim_started_ms = started.elapsed().as_millis() as u64;
    let sim = match provider_runtime::start_simulator(plan, ServeOptions::default()).await {
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
        calls: Mutex::new(CallLog::new()),
        common_tail: Mutex::new(None),
        steps: Vec::new(),
        deliveries: Vec::new(),
        forged: Vec::new(),
        errors: Mutex::new(Vec::new()),
        notes: Mutex::new(Vec::new()),
    };
    runner.run_steps().await;
    let finals = runner.final_sweep().await;
    let recorded = runner.into_parts();
    obs.ledger = sim.ledger();
    share_operation_texts(&mut obs);
    obs.journal = sim.journal();
    forget_derivable_fingerprints(&mut obs.journal, &mut obs.ledger);
    sim.shutdown().await;
    take_recorded(&mut obs, recorded);
    obs.final_status = finals;
    obs.simulator_offset_ms = sim_started_ms;
    obs.duration_ms = started.elapsed().as_millis() as u64;
    obs
}

/// What a run has observed before anything happened: the scenario, and no
/// call, request or effect yet.
fn nothing_yet(scenario: &Scenario, seed: u64, credential: String) -> Observation {
    Observation {
        scenario: scenario.clone(),
        seed,
        credential,
        calls: Vec::new(),
        stderr: Default::default(),
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
    }
}

/// Moves what the steps recorded into the observation.
fn take_recorded(obs: &mut Observation, recorded: steps::Recorded) {
    let steps::Recorded {
        calls,
        stderr,
        steps,
        deliveries,
        forged,
        errors,
    } = recorded;
    obs.calls = calls;
    obs.stderr = stderr;
    obs.steps = steps;
    obs.deliveries = deliveries;
    obs.forged = forged;
    obs.infra_failed = !errors.is_empty();
    obs.errors.extend(errors);
}

/// Each effect that names an operation by its `client_reference` keeps that
/// operation's copies of its id and arguments ([`share_with_operation`]).
fn share_operation_texts(obs: &mut Observation) {
    let operations = &obs.scenario.operations;
    let by_id = ByKey::new(operations, |op| op.id.as_str());
    for effect in &mut obs.ledger {
        let Some(reference) = effect.client_reference.as_deref() else {
            continue;
        };
        if let Some((_, op)) = by_id.get(reference) {
            share_with_operation(effect, op);
        }
    }
}

/// A `whsec_<base64>` secret: Standard Webhooks key with its decoded bytes,
/// Stripe with the string itself, so it forges in either scheme.
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
