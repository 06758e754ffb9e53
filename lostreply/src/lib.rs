//! lostreply: when the response is lost, does your code still do each thing
//! at most once, and does it tell the truth about what happened?
//!
//! This is the crate an adapter author adds to `dev-dependencies`. It is a
//! small, curated face over the engine:
//!
//! - [`Adapter`], [`AdapterFactory`], [`AdapterFailure`] and the protocol's
//!   types in [`protocol`]: the in-process form of the adapter protocol
//!   (`docs/adapter-protocol.md` is the same contract over JSON, for adapters
//!   in any language).
//! - [`testing::main`]: one `cargo test` per built-in scenario, through
//!   libtest-mimic (`--list`, `--exact`, `--ignored`, filters), and
//!   [`testing::main_with`] with a [`testing::TestConfig`] for your own
//!   scenario files and tags.
//! - [`simulator`]: the fake provider, started on 127.0.0.1 for hand-written
//!   tests.
//! - [`report`]: the report model, for reading a run's results (and a JSON
//!   report written by `lostreply run`).
//!
//! The command line (`lostreply run`, `validate`, `serve`, `certify`, `report
//! merge`) is the `lostreply-cli` package; this crate compiles none of it.
//!
//! # Writing an adapter
//!
//! An adapter turns the harness's five calls into your provider's requests
//! and answers each with what it knows, never a guess:
//!
//! - `execute` performs the operation once: record the intent durably before
//!   the request, send it with one idempotency key per logical operation, and
//!   answer `unknown` (not `failed`) when the response was lost, since the
//!   provider may have committed.
//! - `reconcile` finds out what happened from evidence (an idempotent replay,
//!   a lookup by id or client reference) and finishes the operation when that
//!   is safe.
//! - `webhook` takes a signed provider event; it verifies the signature and
//!   moves the operation only when the event proves something.
//! - `resolve` applies a person's decision: it is final, and an event that
//!   later contradicts it raises the operation for review again.
//! - `status` reports the stored record without calling the provider.
//!
//! A crash step drops the adapter in the middle of a call and builds a new
//! one over the same state directory through [`AdapterFactory::build`], so
//! whatever was kept only in memory is gone, as after a SIGKILL.
//!
//! The smallest adapter that keeps the contract never calls the provider and
//! so never learns anything: every answer is `unknown` with a reason. It
//! passes no scenario's expectations, but it makes no false claim.
//!
//! ```
//! use std::path::Path;
//!
//! use lostreply::protocol::{
//!     ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest, WebhookReply,
//!     WebhookRequest,
//! };
//! use lostreply::{Adapter, AdapterFactory, AdapterFailure};
//!
//! struct Silent;
//!
//! fn unknown(operation_id: &str) -> OutcomeReply {
//!     OutcomeReply::new(operation_id, OutcomeKind::Unknown, "never asked the provider")
//! }
//!
//! #[lostreply::async_trait]
//! impl Adapter for Silent {
//!     async fn execute(&self, r: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
//!         Ok(unknown(&r.operation.id))
//!     }
//!     async fn reconcile(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
//!         Ok(unknown(&r.operation_id))
//!     }
//!     async fn webhook(&self, _: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
//!         Ok(WebhookReply::REJECTED)
//!     }
//!     async fn resolve(&self, r: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
//!         Ok(unknown(&r.operation_id))
//!     }
//!     async fn status(&self, r: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
//!         Ok(unknown(&r.operation_id))
//!     }
//! }
//!
//! struct SilentFactory;
//!
//! impl AdapterFactory for SilentFactory {
//!     fn name(&self) -> String {
//!         "silent".into()
//!     }
//!     fn build(&self, _state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
//!         Ok(Box::new(Silent))
//!     }
//! }
//!
//! // tests/lostreply.rs, with `harness = false` for that test in Cargo.toml:
//! # #[cfg(feature = "testing")]
//! fn main() -> std::process::ExitCode {
//!     # if true { return std::process::ExitCode::SUCCESS; }
//!     lostreply::testing::main(std::sync::Arc::new(SilentFactory))
//! }
//! # #[cfg(not(feature = "testing"))]
//! # fn main() {}
//! ```
#![deny(missing_docs)]

pub use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};

/// The attribute the [`Adapter`] trait's implementations need (`#[lostreply::async_trait]`),
/// so an adapter crate does not have to add `async-trait` itself.
pub use async_trait::async_trait;

/// The adapter protocol's requests and replies (`docs/adapter-protocol.md`).
/// Each struct a later protocol revision may extend is `#[non_exhaustive]`:
/// build it with its `new` (and `with_…`) constructors, read its fields.
pub mod protocol {
    pub use lostreply_protocol::{
        CallName, ClientWindows, Common, Contract, ContractIdempotency, ContractLookup,
        ContractMcp, ContractRetrieval, ContractTool, ContractWebhooks, ExecuteRequest, Operation,
        OperationRequest, OutcomeKind, OutcomeReply, ProviderInfo, Resolution, ResolveRequest,
        SharedStr, WebhookReply, WebhookRequest, WebhookScheme, PROTOCOL_VERSION,
    };
}

/// `cargo test` for an adapter: one libtest trial per scenario (the
/// `testing` feature, on by default).
#[cfg(feature = "testing")]
pub mod testing {
    pub use lostreply_harness::testing::{main, main_with, TestConfig};
}

/// The fake provider, for hand-written tests: [`simulator::Simulator::start`]
/// with a [`simulator::Plan`] binds 127.0.0.1:0 and serves the provider API
/// (`docs/provider-api.md`) until it is dropped.
pub mod simulator {
    pub use lostreply_simulator::{
        Asynchronous, Delivery, Effect, Event, EventKind, FaultResponse, FaultRule, Idempotency,
        IdempotencyMode, JournalEntry, Limits, Lookup, Match, ObjectStatus, Plan, Position,
        Release, RequestKind, ResponseFate, SeedObject, ServeOptions, SettleResult, Simulator,
        StallThen, StartError, Webhooks,
    };
}

/// The report model, for reading a run's results: what `lostreply run`
/// writes as JSON (`docs/report-json.md`) and [`report::read_json`] reads back.
pub mod report {
    pub use lostreply_reports::model::{
        AdapterInfo, AdapterKind, BacklogItem, CallEnd, CallName, CallRecord, CallReply, Check,
        DeliveryRecord, EffectRecord, ErrorRecord, Evidence, Fate, Fault, Finding, FindingKind,
        Invariant, Kept, ObjectStatus, OperationReport, Outcome, OutcomeKind, RecordedRequest,
        Report, RequestKind, RequestRecord, ResponseEnd, Rule, ScenarioReport, SharedJson,
        SharedStr, Signals, StepLabel, StepReport, Totals, Verdict, Violation,
    };
    pub use lostreply_reports::signals::SignalTotals;
    pub use lostreply_reports::{read_json, ReadJsonError};
}
