//! One scenario's steps through the proxy: the adapter is called as the
//! harness calls it (the protocol's requests, the scenario's deadlines, a
//! crash when the upstream commits), with `provider.base_url` at the proxy
//! and each operation's id carrying its run's marker. The proxy is told
//! which step runs, so rules scoped to a step fire in it. Every call is
//! recorded with the journal's length around it; nothing is judged here.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use lostreply_harness::driver::Session;
use lostreply_harness::protocol::{
    CallName, Common, Contract, ExecuteRequest, OperationRequest, OutcomeReply, ProviderInfo,
    Resolution, ResolveRequest,
};
use lostreply_harness::run::{judged_reply, operation, step_label};
use lostreply_harness::scenario::model::{CrashPoint, OperationSpec, ResolveRef, Scenario, Step};
use lostreply_reports::model::{CallEnd, ErrorRecord, StepReport};
use serde_json::Value;
use tokio::sync::oneshot;

use super::clock::ServiceClock;
use crate::proxy::Proxy;

/// One adapter call as it was made.
#[derive(Debug, Clone)]
pub(super) struct Made {
    /// The step that made it (0: the final `status` sweep).
    pub step: u32,
    /// Which call.
    pub name: CallName,
    /// The operation's position in the scenario.
    pub op: usize,
    /// The request sent.
    pub request: Value,
    /// The reply, when a JSON object came back.
    pub reply: Option<Value>,
    /// The reply read as an outcome.
    pub outcome: Option<OutcomeReply>,
    /// How it ended.
    pub end: CallEnd,
    /// The tail of its stderr.
    pub stderr: String,
    /// Real ms since the scenario started.
    pub start_ms: u64,
    /// Real ms since the scenario started.
    pub end_ms: u64,
    /// The journal's length before and after, for a call that ran alone.
    pub journal: Option<(u64, u64)>,
}

/// What the steps recorded.
#[derive(Debug, Default)]
pub(super) struct Driven {
    pub calls: Vec<Made>,
    pub steps: Vec<StepReport>,
    pub errors: Vec<ErrorRecord>,
}

/// A call to make: which, for which operation, sent how, killed when.
struct Spec {
    name: CallName,
    op: usize,
    request: Value,
    crash: Option<CrashPoint>,
}

/// Runs a scenario's steps, then the final `status` sweep.
pub(super) struct Driver<'a> {
    pub scenario: &'a Scenario,
    pub proxy: &'a Proxy,
    pub session: &'a Session,
    /// By operation position: the id the adapter is given (its marker).
    pub markers: &'a [String],
    /// The contract every request documents.
    pub contract: Contract,
    /// The adapter's credential (the contract's primary tenant).
    pub credential: String,
    pub started: Instant,
    /// The service's clock, when the contract declares one.
    pub clock: Option<ServiceClock<'a>>,
    /// The time the adapter is told, read from the service's clock at each
    /// step's start; `None`: the real time at each call.
    pub now: Mutex<Option<String>>,
    /// How long to wait for the proxy to be quiet after a step.
    pub quiet_bound: Duration,
}

impl Driver<'_> {
    /// Every step in order, then `status` of every operation (step 0).
    pub async fn run(&self) -> Driven {
        let mut driven = Driven::default();
        for (index, step) in self.scenario.steps.iter().enumerate() {
            let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
            let start_ms = self.now_ms();
            let wall_start = wall_ms();
            if let Err(why) = self.read_clock().await {
                driven.errors.push(error(number, why));
            }
            self.proxy.begin_step(number);
            if let Step::Advance { by } = step {
                if let Err(why) = self.advance(*by).await {
                    driven.errors.push(error(number, why));
                }
            }
            let specs = self.specs(step);
            let sequential = specs.len() == 1;
            let made = futures::future::join_all(
                specs
                    .into_iter()
                    .map(|spec| self.call(number, spec, sequential)),
            )
            .await;
            self.proxy.end_step();
            if !self.proxy.wait_quiet(self.quiet_bound).await {
                driven.errors.push(error(
                    number,
                    format!(
                        "the proxy still served requests {} after the step ended",
                        humantime::format_duration(self.quiet_bound)
                    ),
                ));
            }
            for (made, errors) in made {
                driven.calls.push(made);
                driven.errors.extend(errors);
            }
            driven.steps.push(
                StepReport::builder()
                    .number(number)
                    .label(step_label(step).into())
                    .start_ms(saturating(start_ms))
                    .end_ms(saturating(self.now_ms()))
                    .sim_start_ms(wall_start)
                    .sim_end_ms(wall_ms())
                    .build(),
            );
        }
        if let Err(why) = self.read_clock().await {
            driven.errors.push(error(0, why));
        }
        for op in 0..self.scenario.operations.len() {
            let spec = self.spec_of(CallName::Status, op, None);
            let (made, errors) = self.call(0, spec, true).await;
            driven.calls.push(made);
            driven.errors.extend(errors);
        }
        driven
    }

    /// The calls of one step: one, or a `parallel` step's.
    fn specs(&self, step: &Step) -> Vec<Spec> {
        match step {
            Step::Parallel(inner) => inner.iter().flat_map(|s| self.specs(s)).collect(),
            Step::Execute { op, crash } => self.named(CallName::Execute, op, *crash),
            Step::Reconcile { op, crash } => self.named(CallName::Reconcile, op, *crash),
            Step::Status { op } => self.named(CallName::Status, op, None),
            Step::Resolve {
                op,
                outcome,
                provider_ref,
                evidence,
            } => {
                let Some(position) = self.position(op) else {
                    return Vec::new();
                };
                let named = match provider_ref {
                    ResolveRef::Literal(id) => Some(id.to_string()),
                    ResolveRef::None | ResolveRef::Ledger => None,
                };
                let resolution = Resolution::new(*outcome, named, evidence.to_string());
                let request =
                    ResolveRequest::new(&self.markers[position], resolution, self.common());
                vec![Spec {
                    name: CallName::Resolve,
                    op: position,
                    request: serde_json::to_value(request).unwrap_or(Value::Null),
                    crash: None,
                }]
            }
            // `advance` is no call (`run`); the others are left out of an
            // upstream run before it starts (`fit`).
            Step::Advance { .. } | Step::Webhook { .. } | Step::During { .. } => Vec::new(),
        }
    }

    fn named(&self, name: CallName, op: &str, crash: Option<CrashPoint>) -> Vec<Spec> {
        self.position(op)
            .map(|position| vec![self.spec_of(name, position, crash)])
            .unwrap_or_default()
    }

    fn position(&self, op: &str) -> Option<usize> {
        self.scenario
            .operations
            .iter()
            .position(|spec| spec.id.as_str() == op)
    }

    fn spec_of(&self, name: CallName, op: usize, crash: Option<CrashPoint>) -> Spec {
        let marker = &self.markers[op];
        let request = match name {
            CallName::Execute => {
                let mut operation = operation(&self.scenario.operations[op]);
                operation.id.clone_from(marker);
                serde_json::to_value(ExecuteRequest::new(operation, self.common()))
            }
            _ => serde_json::to_value(OperationRequest::new(marker, self.common())),
        };
        Spec {
            name,
            op,
            request: request.unwrap_or(Value::Null),
            crash,
        }
    }

    fn common(&self) -> Common {
        let provider = ProviderInfo::new(
            self.proxy.url(),
            self.credential.as_str(),
            self.contract.clone(),
        );
        let now = self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        Common::new(
            now.unwrap_or_else(|| lostreply_simulator::rfc3339(wall_ms())),
            provider,
            self.scenario.client_timeout.as_millis() as u64,
        )
    }

    /// Makes one call, armed with a crash point when the step asks for one.
    async fn call(&self, step: u32, spec: Spec, sequential: bool) -> (Made, Vec<ErrorRecord>) {
        let mut errors = Vec::new();
        let crash = spec.crash.map(|CrashPoint::AfterCommit| {
            let (fire, fired) = oneshot::channel();
            self.proxy.crash_after_commit(&self.markers[spec.op], fire);
            fired
        });
        let armed = crash.is_some();
        let before = self.proxy.journal().len();
        let start_ms = self.now_ms();
        let out = self
            .session
            .call(spec.name, &spec.request, self.scenario.call_deadline, crash)
            .await;
        let end_ms = self.now_ms();
        if armed {
            self.proxy.disarm_crash();
            if out.end == CallEnd::Crashed {
                if let Err(e) = self.session.rebuild() {
                    errors.push(
                        ErrorRecord::builder()
                            .step(step as usize)
                            .message(format!("cannot rebuild the adapter after the crash: {e}"))
                            .build(),
                    );
                }
            }
        }
        let after = self.proxy.journal().len();
        let (outcome, end) = judged_reply(spec.name, &out);
        let made = Made {
            step,
            name: spec.name,
            op: spec.op,
            request: spec.request,
            reply: out.reply,
            outcome,
            end,
            stderr: out.stderr,
            start_ms,
            end_ms,
            journal: sequential.then_some((before, after)),
        };
        (made, errors)
    }

    /// Reads the service's clock, when there is one, for the calls to come.
    async fn read_clock(&self) -> Result<(), String> {
        let Some(clock) = &self.clock else {
            return Ok(());
        };
        let now = clock.now().await?;
        *self
            .now
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(now);
        Ok(())
    }

    /// An `advance` step: the service's clock moved, then read again.
    async fn advance(&self, by: Duration) -> Result<(), String> {
        let Some(clock) = &self.clock else {
            return Err("`advance` without a clock endpoint (left out by `fit`)".to_owned());
        };
        clock.advance(by).await?;
        self.read_clock().await
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// The operations' markers: each id with a suffix from the run's seed, so
/// that a stateful service never shows one run another run's objects.
pub(super) fn markers(operations: &[OperationSpec], seed: u64) -> Vec<String> {
    operations
        .iter()
        .map(|op| {
            let salt = lostreply_harness::seed::scenario_seed(seed, &op.id);
            format!("{}-lr{:012x}", op.id, salt & 0xffff_ffff_ffff)
        })
        .collect()
}

fn error(step: u32, message: String) -> ErrorRecord {
    ErrorRecord::builder()
        .step(step as usize)
        .message(message)
        .build()
}

/// Milliseconds since the Unix epoch, now: a real service's clock.
fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn saturating(ms: u64) -> u32 {
    u32::try_from(ms).unwrap_or(u32::MAX)
}
