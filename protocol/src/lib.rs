//! The adapter protocol v1 (docs/adapter-protocol.md) as Rust types: what the
//! harness sends an adapter and what the adapter answers.
//!
//! Why a crate of its own, below both the harness and the report writers:
//! these are the wire types of the process protocol and the arguments of the
//! in-process `Adapter` trait (the engine's), and the report keeps every reply
//! an adapter gave (the writers'). Each of the two needs the types; neither
//! owns them.
//!
//! Every struct and enum that a later protocol revision may extend is
//! `#[non_exhaustive]`: code outside this crate builds them through their
//! constructors (`OutcomeReply::new`, `ExecuteRequest::new`, …) and reads
//! their fields, so a field added in a compatible revision breaks no adapter.

mod calls;
mod contract;
mod replies;
mod requests;

pub use calls::{unknown_reply_fields, CallName, UnknownCallName};
pub use contract::{
    ClientWindows, Contract, ContractIdempotency, ContractLookup, ContractMcp, ContractRetrieval,
    ContractTool, ContractWebhooks, WebhookScheme,
};
/// The shared string of the replies' text (adapters written in Rust build replies with it).
pub use lostreply_text::SharedStr;
pub use replies::{OutcomeKind, OutcomeReply, WebhookReply};
pub use requests::{
    Common, ExecuteRequest, Operation, OperationRequest, ProviderInfo, Resolution, ResolveRequest,
    WebhookRequest,
};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;
