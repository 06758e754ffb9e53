//! Synthetic observations of any size, built directly (no simulator, no
//! adapter), shaped like a real run of the reference adapter: N operations with
//! distinct arguments, one execute step each, one create request and one effect
//! each, an execute call and a final `status` call each, and `final` and
//! `effects` expectations for each. Every `duplicate_every`th operation is
//! created twice (a second request and a second effect), so the checks have
//! real violations to find and report.

use std::collections::BTreeMap;
use std::time::Duration;

use lostreply_harness::protocol::{CallName, OutcomeKind, OutcomeReply};
use lostreply_harness::run::call_log::CallLog;
use lostreply_harness::run::observation::{
    forget_derivable_fingerprints, share_with_operation, Call, FinalCalls, JournalWindow,
    Observation, Reply,
};
use lostreply_harness::scenario::model::{
    Expectations, OperationFields, OperationSpec, Scenario, Step,
};
use lostreply_reports::model::{
    CallEnd, MadeFrom, RecordedRequest, SharedJson, SharedStr, SharedTail, StepLabel, StepReport,
    StepVerb,
};
use lostreply_simulator::{
    canonical_json, nonmax_u32, nonmax_u64, Effect, JournalEntry, JsonText, ObjectStatus, Plan,
    RequestKind, ResponseFate,
};
use serde_json::{json, Map, Value};

use crate::client::{CREDENTIAL, RESOURCE};

/// What to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyntheticSpec {
    /// Logical operations.
    pub operations: usize,
    /// Every nth operation is created twice (0: never).
    pub duplicate_every: usize,
}

impl SyntheticSpec {
    /// How many operations get a duplicate effect: the violations to expect
    /// (each breaks invariant 1 and the `effects` expectation).
    pub fn duplicates(&self) -> usize {
        self.operations
            .checked_div(self.duplicate_every)
            .unwrap_or(0)
    }
}

const CLOCK_START_MS: i64 = 1_767_225_600_000;

/// Builds the observation.
pub fn observation(spec: SyntheticSpec) -> Observation {
    let n = spec.operations;
    // The scenario's operations share one copy of their collection's name, as the validator's do.
    let resource = SharedStr::from(RESOURCE);
    let operations: Vec<OperationSpec> = (0..n).map(|i| operation(i, &resource)).collect();
    // The scenario first, as a run has it: read and validated before any
    // call is made, so that what making it frees is reused by the records.
    let scenario = scenario(spec, operations);
    let operations = &scenario.operations;
    let mut journal: Vec<JournalEntry> = Vec::with_capacity(n + spec.duplicates());
    let mut ledger: Vec<Effect> = Vec::with_capacity(n + spec.duplicates());
    // Recorded as a run records them: a status reply repeating the execute's
    // shares its copy.
    let mut calls = CallLog::with_capacity(2 * n, n);
    let mut steps: Vec<StepReport> = Vec::with_capacity(n);
    let repeated = Repeated::new();
    for (i, op) in operations.iter().enumerate() {
        let t_ms = 2 * i as u64;
        let journal_before = journal.len();
        let attempts = if spec.duplicate_every > 0 && (i + 1) % spec.duplicate_every == 0 {
            2
        } else {
            1
        };
        let mut first_id = None;
        for attempt in 1..=attempts {
            let seq = journal.len() as u64 + 1;
            let id = format!("tkt_{:016x}", ledger.len() + 1);
            let (mut entry, mut effect) = create(
                &repeated,
                op,
                seq,
                ledger.len() as u64 + 1,
                &id,
                attempt,
                t_ms,
            );
            // The adapter's `provider_ref` is kept as the ledger's copy of the
            // id, as a run keeps it (`StepRunner::share_provider_ref`).
            first_id.get_or_insert_with(|| effect.id.clone());
            // A run frees the fingerprints its effects say again as it
            // collects them, and gives an effect its operation's copies of
            // its reference and arguments (the simulator's copies going with
            // it): the same code, here one request at a time, so that the
            // observation built never holds what a run's would not.
            forget_derivable_fingerprints(
                std::slice::from_mut(&mut entry),
                std::slice::from_mut(&mut effect),
            );
            share_with_operation(&mut effect, op);
            journal.push(entry);
            ledger.push(effect);
        }
        let provider_ref = first_id.unwrap_or_default();
        let execute = call(
            &repeated,
            i + 1,
            CallName::Execute,
            op,
            t_ms,
            Some((
                saturating_u32(journal_before),
                saturating_u32(journal.len()),
            )),
            &provider_ref,
        );
        // The adapter writes nothing to stderr.
        calls.push(execute, SharedStr::default());
        steps.push(
            StepReport::builder()
                .number(saturating_u32(i + 1))
                .label(StepLabel::of(
                    &format!("execute {}", op.id),
                    StepVerb::Execute,
                    &op.id,
                ))
                .start_ms(saturating_u32(t_ms))
                .end_ms(saturating_u32(t_ms + 1))
                .sim_start_ms(CLOCK_START_MS)
                .sim_end_ms(CLOCK_START_MS)
                .build(),
        );
    }
    // The final sweep: one status call per operation, sending nothing.
    let mut final_status = FinalCalls::new(operations.len());
    let sweep_ms = 2 * n as u64;
    for (i, op) in operations.iter().enumerate() {
        let provider_ref = calls
            .get(i)
            .and_then(|c| c.outcome())
            .and_then(|o| o.provider_ref.clone())
            .unwrap_or_default();
        let status = call(
            &repeated,
            0,
            CallName::Status,
            op,
            sweep_ms,
            Some((saturating_u32(journal.len()), saturating_u32(journal.len()))),
            &provider_ref,
        );
        let index = calls.push(status, SharedStr::default());
        final_status.set(i, index);
    }
    let (calls, stderr) = calls.into_calls();
    Observation {
        scenario,
        seed: 1,
        credential: CREDENTIAL.to_owned(),
        calls,
        stderr,
        steps,
        deliveries: Vec::new(),
        forged: Vec::new(),
        ledger,
        journal,
        simulator_offset_ms: 0,
        sim_start_ms: CLOCK_START_MS,
        final_status,
        errors: Vec::new(),
        infra_failed: false,
        duration_ms: 2 * n as u64 + 1,
    }
}

/// The scenario of `spec`: each operation executed once, expected to succeed
/// with one effect.
fn scenario(spec: SyntheticSpec, operations: Vec<OperationSpec>) -> Scenario {
    let n = spec.operations;
    let expect = Expectations {
        final_outcomes: operations
            .iter()
            .map(|o| (o.id.clone(), [OutcomeKind::Succeeded].into_iter().collect()))
            .collect(),
        after_step: BTreeMap::new(),
        effects: operations.iter().map(|o| (o.id.clone(), 1)).collect(),
        needs_review: BTreeMap::new(),
        needs_review_from_step: BTreeMap::new(),
    };
    Scenario {
        path: format!("synthetic/{n}-operations.yaml"),
        id: format!("synthetic-{n}"),
        title: format!(
            "{n} operations, every {}th created twice",
            spec.duplicate_every
        ),
        case: None,
        tags: vec!["synthetic".to_owned()],
        plan: Plan::default(),
        mcp: None,
        steps: operations
            .iter()
            .map(|o| Step::Execute {
                op: o.id.clone(),
                crash: None,
            })
            .collect(),
        operations,
        expect,
        client_timeout: Duration::from_millis(250),
        call_deadline: Duration::from_secs(30),
    }
}

/// A journal length, step number or time in ms as a call keeps it (saturating).
fn saturating_u32(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

fn operation(i: usize, resource: &SharedStr) -> OperationSpec {
    let mut args = Map::new();
    args.insert("title".to_owned(), Value::String(format!("ticket {i}")));
    args.insert("n".to_owned(), json!(i));
    OperationSpec::new(OperationFields {
        id: format!("op-{i}").into(),
        resource: resource.clone(),
        tool: None,
        args: SharedJson::from_map(&args),
    })
}

/// The text every request and effect repeats, one copy each, as the
/// simulator's interner keeps it.
struct Repeated {
    tenant: SharedStr,
    method: SharedStr,
    path: SharedStr,
    resource: SharedStr,
    /// The fields every adapter request ends with.
    common: Option<SharedTail>,
}

impl Repeated {
    fn new() -> Repeated {
        Repeated {
            tenant: CREDENTIAL.into(),
            method: "POST".into(),
            path: format!("/v1/{RESOURCE}").into(),
            resource: RESOURCE.into(),
            common: json!({
                "protocol": 1,
                "now": "2026-01-01T00:00:00Z",
                "provider": {"base_url": "http://127.0.0.1:40000", "credential": CREDENTIAL},
                "client_timeout_ms": 250,
            })
            .as_object()
            .and_then(SharedTail::of_members),
        }
    }
}

/// A create request as the reference adapter sends it (arguments, its
/// operation as `client_reference`, one key per operation) and its effect,
/// sharing text as the simulator's records do: the effect's id and the
/// fingerprint are one copy each, the key one copy in each record. (The
/// caller frees the fingerprint as a run's collection does.)
#[allow(clippy::too_many_arguments)]
fn create(
    repeated: &Repeated,
    op: &OperationSpec,
    seq: u64,
    effect_seq: u64,
    id: &str,
    attempt: u32,
    t_ms: u64,
) -> (JournalEntry, Effect) {
    let mut body = op.args.to_map();
    body.insert(
        "client_reference".to_owned(),
        Value::String(op.id.to_string()),
    );
    let fingerprint = SharedStr::from(canonical_json(&Value::Object(body)));
    let key = SharedStr::from(format!("lostreply-{}", op.id));
    let id = SharedStr::from(id);
    let entry = JournalEntry {
        seq,
        at_ms: CLOCK_START_MS,
        real_start_ms: t_ms,
        real_end_ms: Some(nonmax_u64(t_ms + 1)),
        tenant: Some(repeated.tenant.clone()),
        method: repeated.method.clone(),
        path: repeated.path.clone(),
        query: None,
        kind: Some(RequestKind::Create),
        resource: Some(repeated.resource.clone()),
        idempotency_key: Some(key.clone()),
        fingerprint: Some(fingerprint.clone()),
        fault: None,
        effect: Some(id.clone()),
        replayed: false,
        step: Some(nonmax_u32(1)),
        rpc: None,
        fate: ResponseFate::Sent {
            status: 201,
            client_left: false,
        },
    };
    let effect = Effect {
        seq: effect_seq,
        id,
        tenant: repeated.tenant.clone(),
        resource: repeated.resource.clone(),
        // The simulator's store writes the text anew from the request body,
        // and keeps the reference it was sent (the run's collection gives
        // both the operation's copies: the caller does as it does).
        args: JsonText::of(&op.args.to_map()),
        client_reference: Some(SharedStr::from(op.id.as_str())),
        metadata: None,
        // The simulator's object shares its request's journaled key.
        idempotency_key: Some(key),
        fingerprint,
        attempt,
        created_at_ms: CLOCK_START_MS,
        status: ObjectStatus::Succeeded,
        request_seq: Some(nonmax_u64(seq)),
    };
    (entry, effect)
}

fn call(
    repeated: &Repeated,
    step: usize,
    name: CallName,
    op: &OperationSpec,
    t_ms: u64,
    window: Option<(u32, u32)>,
    provider_ref: &SharedStr,
) -> Call {
    let own = match name {
        CallName::Execute => json!({
            "operation": {"id": op.id, "action": "create", "resource": op.resource, "args": op.args},
        }),
        CallName::Reconcile | CallName::Webhook | CallName::Resolve | CallName::Status => {
            json!({ "operation_id": op.id })
        }
    };
    // As the harness records it: its own fields as the operation (or its id)
    // they were made from, then the common ones shared.
    let request = match (own, &repeated.common) {
        (Value::Object(own), Some(common)) => match name {
            CallName::Execute => RecordedRequest::recorded(&own, common, MadeFrom::Operation(op)),
            _ => RecordedRequest::recorded(&own, common, MadeFrom::Id(&op.id)),
        },
        (own, _) => SharedJson::new(&own).into(),
    };
    let outcome = OutcomeReply::new(
        op.id.as_str(),
        OutcomeKind::Succeeded,
        format!("created {provider_ref}"),
    )
    .with_provider_ref(Some(provider_ref.clone()));
    Call {
        step: saturating_u32(step),
        name,
        probe: false,
        start_ms: saturating_u32(t_ms),
        end_ms: saturating_u32(t_ms + 1),
        journal_window: JournalWindow::of(window),
        // The step's copy of the scenario's id, as the harness records it.
        operation_id: Some(op.id.clone()),
        request,
        // As the harness records a reply: kept as its outcome when it is
        // exactly that written out.
        reply: Reply::recorded(
            serde_json::to_value(&outcome).ok().map(Into::into),
            Some(outcome),
        ),
        end: CallEnd::Replied,
        sim_ms: CLOCK_START_MS,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shape_matches_the_spec() {
        let spec = SyntheticSpec {
            operations: 20,
            duplicate_every: 5,
        };
        let obs = observation(spec);
        assert_eq!(obs.scenario.operations.len(), 20);
        assert_eq!(obs.journal.len(), 24);
        assert_eq!(obs.ledger.len(), 24);
        assert_eq!(obs.calls.len(), 40);
        // Every operation has its final call, the last twenty in order.
        let finals: Vec<Option<usize>> = obs.final_status.iter().collect();
        assert_eq!(finals, (20..40).map(Some).collect::<Vec<_>>());
        // Journal and ledger agree: each effect names the request that made it.
        for effect in &obs.ledger {
            let entry = &obs.journal[effect.request().unwrap() as usize - 1];
            assert_eq!(entry.effect.as_deref(), Some(effect.id.as_str()));
        }
    }

    fn check(obs: &Observation) -> Vec<lostreply_reports::model::Violation> {
        lostreply_harness::check::check(
            obs,
            &lostreply_harness::check::attribution::Attribution::of(obs),
        )
    }

    #[test]
    fn the_check_finds_exactly_the_planted_duplicates() {
        let spec = SyntheticSpec {
            operations: 20,
            duplicate_every: 5,
        };
        let violations = check(&observation(spec));
        let at_most_once = violations
            .iter()
            .filter(|v| v.message.contains("2 effects for 1 operation"))
            .count();
        assert_eq!(at_most_once, spec.duplicates());
        // Each duplicate also breaks its `effects: 1` expectation; nothing else breaks.
        assert_eq!(violations.len(), 2 * spec.duplicates(), "{violations:#?}");
        let clean = check(&observation(SyntheticSpec {
            operations: 20,
            duplicate_every: 0,
        }));
        assert!(clean.is_empty(), "{clean:#?}");
    }

    #[test]
    fn a_missing_final_status_is_caught_whatever_its_place_in_id_order() {
        let spec = SyntheticSpec {
            operations: 12,
            duplicate_every: 0,
        };
        let mut obs = observation(spec);
        // op-1 (between op-0 and op-10 in id order) and op-9 (the last) lose
        // their final status; `op-5x` is expected but no operation has it.
        obs.final_status.remove(1);
        obs.final_status.remove(9);
        obs.scenario.expect.final_outcomes.insert(
            "op-5x".into(),
            [OutcomeKind::Succeeded].into_iter().collect(),
        );
        let ops: Vec<Option<String>> = check(&obs).into_iter().map(|v| v.operation_id).collect();
        assert_eq!(
            ops,
            [
                Some("op-1".to_owned()),
                Some("op-5x".to_owned()),
                Some("op-9".to_owned())
            ]
        );
    }

    #[test]
    fn two_operations_claiming_one_effect_are_caught() {
        let spec = SyntheticSpec {
            operations: 3,
            duplicate_every: 0,
        };
        let mut obs = observation(spec);
        // op-2's execute and final status name op-0's effect.
        let taken = obs.ledger[0].id.clone();
        for call in &mut obs.calls {
            if call.operation_id.as_deref() == Some("op-2") {
                if let Some(outcome) = call.outcome_mut() {
                    outcome.provider_ref = Some(taken.clone());
                }
            }
        }
        let messages: Vec<String> = check(&obs).into_iter().map(|v| v.message).collect();
        assert_eq!(
            messages,
            [format!(
                "op-2: execute reports succeeded with provider_ref {taken}, which is not an effect of this operation"
            )],
        );
        // Same arguments on purpose: op-1 and op-2 are one group, and both claim its one effect.
        let mut obs = observation(spec);
        obs.scenario.operations[2].make_mut().args = obs.scenario.operations[1].args.clone();
        obs.scenario.expect.effects.clear();
        let shared = obs.ledger[1].id.clone();
        for call in &mut obs.calls {
            if call.operation_id.as_deref() == Some("op-2") {
                if let Some(outcome) = call.outcome_mut() {
                    outcome.provider_ref = Some(shared.clone());
                }
            }
        }
        let messages: Vec<String> = check(&obs).into_iter().map(|v| v.message).collect();
        assert!(
            messages.contains(&format!("op-2 and op-1 both claim the one effect {shared}")),
            "{messages:#?}"
        );
    }
}

#[cfg(test)]
mod report_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use lostreply_reports::model::{ScenarioReport, Violation};

    /// The report's part made while `obs` is borrowed.
    fn prepared(obs: &Observation) -> lostreply_harness::report_build::Prepared {
        let attribution = lostreply_harness::check::attribution::Attribution::of(obs);
        lostreply_harness::report_build::prepare(obs, &attribution)
    }

    /// The report of `obs` with `violations`, its checks done first.
    fn report_of(obs: Observation, violations: Vec<Violation>) -> ScenarioReport {
        let prepared = prepared(&obs);
        lostreply_harness::report_build::scenario_report(obs, prepared, violations, "r".to_owned())
    }

    /// [`report_of`], its records made on one thread or two as asked.
    fn report_on(
        obs: Observation,
        violations: Vec<Violation>,
        two_threads: bool,
    ) -> ScenarioReport {
        let prepared = prepared(&obs);
        lostreply_harness::report_build::scenario_report_on(
            obs,
            prepared,
            violations,
            "r".to_owned(),
            two_threads,
        )
    }

    /// Ten operations, two of them created twice, and their report.
    fn report_of_ten() -> (Observation, ScenarioReport) {
        let obs = observation(SyntheticSpec {
            operations: 10,
            duplicate_every: 5,
        });
        let report = report_of(obs.clone(), Vec::new());
        (obs, report)
    }

    /// 20 000 operations, 40 created twice: past the records from which a
    /// run is checked and reported on two threads.
    fn past_the_threshold() -> Observation {
        let obs = observation(SyntheticSpec {
            operations: 20_000,
            duplicate_every: 1_000,
        });
        let records = obs.calls.len() + obs.journal.len() + obs.ledger.len();
        assert!(records >= lostreply_harness::two_threads::FROM_RECORDS);
        obs
    }

    #[test]
    fn freed_memory_is_marked_for_giving_back_three_times_on_a_large_run_and_never_on_a_small_one()
    {
        // After the fingerprints, after the checks' index and after the
        // ledger's records (the effects' own arguments).
        let mut phases = Vec::new();
        let mut freed_much = 0;
        let small = observation(SyntheticSpec {
            operations: 10,
            duplicate_every: 5,
        });
        lostreply_harness::suite::check_and_report_phases(small, "r".to_owned(), &mut |end| {
            phases.push(end.phase.name());
            freed_much += usize::from(end.freed_much);
        });
        assert_eq!(freed_much, 0);
        assert_eq!(
            phases,
            [
                "attribution",
                "fingerprints freed",
                "checks' index",
                "checks",
                "index freed",
                "report prepared",
                "ledger records",
                "report"
            ]
        );
        let mut large_freed = Vec::new();
        let large = lostreply_harness::suite::check_and_report_phases(
            past_the_threshold(),
            "r".to_owned(),
            &mut |end| {
                if end.freed_much {
                    large_freed.push(end.phase.name());
                }
            },
        );
        assert_eq!(
            large_freed,
            ["fingerprints freed", "index freed", "ledger records"]
        );
        assert_eq!(large.violations.len(), 40);
    }

    #[test]
    fn checks_beside_the_report_give_the_report_of_checks_before_it() {
        // Past the threshold the checks get a thread of their own; the report
        // must be the one of checking first, violations and verdict included.
        let obs = past_the_threshold();
        let attribution = lostreply_harness::check::attribution::Attribution::of(&obs);
        let violations = lostreply_harness::check::check(&obs, &attribution);
        assert_eq!(violations.len(), 40);
        let sequential = report_of(obs.clone(), violations);
        let both = lostreply_harness::suite::check_and_report(obs, "r".to_owned());
        assert_eq!(both.verdict, lostreply_reports::model::Verdict::Violated);
        assert_eq!(both, sequential);
    }

    #[test]
    fn one_thread_and_two_make_the_same_report_in_place() {
        // Past the threshold the calls' records are made on a second thread;
        // the report must be the one-thread report, and each list still
        // rewritten where it lay.
        let obs = past_the_threshold();
        let mut obs_with_errors = obs.clone();
        // Two calls that ended in adapter errors, and an error of the run's
        // own: the run's first, then the calls' in call order.
        obs_with_errors.calls[3].end = CallEnd::Exited { code: Some(3) };
        obs_with_errors.calls[30_001].end = CallEnd::Deadline {
            deadline_ms: 30_000,
        };
        obs_with_errors.errors.push(
            lostreply_reports::model::ErrorRecord::builder()
                .step(0)
                .message("the run's own".to_owned())
                .build(),
        );
        for obs in [obs, obs_with_errors] {
            let in_place = |obs: Observation, two_threads: bool| {
                let lists = (
                    obs.calls.as_ptr() as usize,
                    obs.journal.as_ptr() as usize,
                    obs.ledger.as_ptr() as usize,
                );
                let report = report_on(obs, Vec::new(), two_threads);
                let rewritten = (
                    report.calls.as_ptr() as usize,
                    report.journal.as_ptr() as usize,
                    report.ledger.as_ptr() as usize,
                );
                assert_eq!(rewritten, lists);
                report
            };
            let had_errors = !obs.errors.is_empty();
            let one = in_place(obs.clone(), false);
            let two = in_place(obs, true);
            assert_eq!(one, two);
            let calls_in_error: Vec<Option<usize>> =
                two.errors.iter().map(|e| e.call_index).collect();
            if had_errors {
                assert_eq!(calls_in_error, [None, Some(3), Some(30_001)]);
            } else {
                assert!(calls_in_error.is_empty());
            }
        }
    }

    #[test]
    fn the_report_rewrites_the_observations_lists_where_they_lie() {
        // What `scenario_report` promises: calls, requests and effects become
        // report records in the allocations that held them, not in new ones.
        let obs = observation(SyntheticSpec {
            operations: 100,
            duplicate_every: 10,
        });
        let calls = obs.calls.as_ptr() as usize;
        let journal = obs.journal.as_ptr() as usize;
        let ledger = obs.ledger.as_ptr() as usize;
        let report = report_of(obs, Vec::new());
        assert_eq!(report.calls.as_ptr() as usize, calls);
        assert_eq!(report.journal.as_ptr() as usize, journal);
        assert_eq!(report.ledger.as_ptr() as usize, ledger);
    }

    #[test]
    fn effects_share_their_operations_argument_text() {
        let (_, report) = report_of_ten();
        assert_eq!(report.ledger.len(), 12);
        for record in &report.ledger {
            let op = report
                .operations
                .iter()
                .find(|o| Some(&o.id) == record.operation_id.as_ref())
                .unwrap();
            assert_eq!(record.args, op.args);
            assert_eq!(record.args.text().as_ptr(), op.args.text().as_ptr());
        }
    }

    #[test]
    fn records_that_say_the_same_thing_share_one_copy_and_say_it_right() {
        use lostreply_reports::model::SharedStr;
        let (obs, report) = report_of_ten();
        for (record, effect) in report.ledger.iter().zip(&obs.ledger) {
            // The text is the observation's, whatever is shared.
            assert_eq!(record.id, effect.id);
            assert_eq!(record.tenant, effect.tenant);
            assert_eq!(record.status.as_str(), "succeeded");
            let request = &report.journal[effect.request().unwrap() as usize - 1];
            assert!(SharedStr::ptr_eq(
                request.effect.as_ref().unwrap(),
                &record.id
            ));
            // The key is the observation's: one copy in the journal entry and
            // one in the effect, as the simulator hands them out.
            assert_eq!(request.idempotency_key, record.idempotency_key);
            let op = report
                .operations
                .iter()
                .find(|o| Some(&o.id) == record.operation_id.as_ref())
                .unwrap();
            assert!(SharedStr::ptr_eq(
                record.operation_id.as_ref().unwrap(),
                &op.id
            ));
            assert!(op
                .effects
                .iter()
                .any(|id| SharedStr::ptr_eq(id, &record.id)));
            assert!(SharedStr::ptr_eq(&record.tenant, &report.ledger[0].tenant));
        }
        for op in &report.operations {
            let outcome = op.final_outcome.as_ref().unwrap();
            // The adapter's reply is its own text, equal to the effect's id.
            assert_eq!(outcome.provider_ref.as_ref(), Some(&op.effects[0]));
        }
        for (record, call) in report.calls.iter().zip(&obs.calls) {
            assert_eq!(record.call.as_str(), call.name.as_str());
            assert_eq!(record.operation_id.as_deref(), call.operation_id.as_deref());
            assert!(report
                .operations
                .iter()
                .any(|o| Some(&o.id) == record.operation_id.as_ref()));
            // The record takes the observation's copy by a reference count.
            assert!(SharedStr::ptr_eq(
                record.operation_id.as_ref().unwrap(),
                call.operation_id.as_ref().unwrap()
            ));
        }
        for (record, entry) in report.journal.iter().zip(&obs.journal) {
            assert_eq!(record.fate.to_string(), "sent 201");
            assert!(!record.lost);
            assert_eq!(record.target, entry.path);
            assert_eq!(record.kind.map(|k| k.as_str()), Some("create"));
            assert!(SharedStr::ptr_eq(&record.method, &report.journal[0].method));
        }
    }
}
