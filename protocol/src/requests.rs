//! What the harness sends: the fields every call carries and the request of
//! each call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contract::Contract;
use crate::replies::OutcomeKind;

/// Fields common to every call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Common {
    /// Always [`PROTOCOL_VERSION`](crate::PROTOCOL_VERSION).
    pub protocol: u32,
    /// The simulator clock, RFC 3339. Adapters use it, not the wall clock, for
    /// every retention, deadline or age decision.
    pub now: String,
    /// Where the provider is and what it supports.
    pub provider: ProviderInfo,
    /// The per-request timeout the adapter should give its HTTP client.
    pub client_timeout_ms: u64,
}

/// The provider as the adapter sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProviderInfo {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The adapter's bearer credential.
    pub credential: String,
    /// What the provider documents about itself.
    pub contract: Contract,
}

/// One logical side-effecting action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Operation {
    /// Stable across every call about it: `op-1`.
    pub id: String,
    /// `create` (an HTTP create) or `call_tool` (a paid MCP tool call, see
    /// [`Operation::tool`]).
    pub action: String,
    /// Collection to create in (for `call_tool`: the tool's collection).
    pub resource: String,
    /// `call_tool` only: the paid tool to call with `args` as its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The create body, before reserved fields.
    pub args: serde_json::Map<String, serde_json::Value>,
}

/// `execute`: perform the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecuteRequest {
    /// The operation.
    pub operation: Operation,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `reconcile` and `status`: about one operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OperationRequest {
    /// The operation's id.
    pub operation_id: String,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `webhook`: a delivered provider event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WebhookRequest {
    /// Headers as delivered (lower-case names).
    pub headers: BTreeMap<String, String>,
    /// The raw body as received.
    pub body: String,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// `resolve`: an operator's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResolveRequest {
    /// The operation's id.
    pub operation_id: String,
    /// The decision.
    pub resolution: Resolution,
    /// Common fields.
    #[serde(flatten)]
    pub common: Common,
}

/// An operator's decision about an operation in review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Resolution {
    /// `succeeded` or `failed`.
    pub outcome: OutcomeKind,
    /// The provider object the operator found, if any.
    pub provider_ref: Option<String>,
    /// What the operator based it on.
    pub evidence: String,
    /// Always `operator` in protocol v1.
    pub by: String,
}

impl Common {
    /// The common fields of one call, at simulator time `now` (RFC 3339), of
    /// this crate's [`crate::PROTOCOL_VERSION`].
    pub fn new(now: impl Into<String>, provider: ProviderInfo, client_timeout_ms: u64) -> Common {
        Common {
            protocol: crate::PROTOCOL_VERSION,
            now: now.into(),
            provider,
            client_timeout_ms,
        }
    }
}

impl ProviderInfo {
    /// The provider at `base_url`, reached with `credential`, documenting `contract`.
    pub fn new(
        base_url: impl Into<String>,
        credential: impl Into<String>,
        contract: Contract,
    ) -> ProviderInfo {
        ProviderInfo {
            base_url: base_url.into(),
            credential: credential.into(),
            contract,
        }
    }
}

impl Operation {
    /// An operation `id` that does `action` (`create`) in `resource` with
    /// `args`, calling no MCP tool (see [`Operation::with_tool`]).
    pub fn new(
        id: impl Into<String>,
        action: impl Into<String>,
        resource: impl Into<String>,
        args: serde_json::Map<String, serde_json::Value>,
    ) -> Operation {
        Operation {
            id: id.into(),
            action: action.into(),
            resource: resource.into(),
            tool: None,
            args,
        }
    }

    /// The same operation calling the paid MCP tool `tool` (for `call_tool`), or none.
    pub fn with_tool(mut self, tool: Option<String>) -> Operation {
        self.tool = tool;
        self
    }
}

impl ExecuteRequest {
    /// `execute` of `operation`.
    pub fn new(operation: Operation, common: Common) -> ExecuteRequest {
        ExecuteRequest { operation, common }
    }
}

impl OperationRequest {
    /// `reconcile` or `status` of the operation `operation_id`.
    pub fn new(operation_id: impl Into<String>, common: Common) -> OperationRequest {
        OperationRequest {
            operation_id: operation_id.into(),
            common,
        }
    }
}

impl WebhookRequest {
    /// `webhook`: a delivery's `headers` (lower-case names) and raw `body`.
    pub fn new(
        headers: BTreeMap<String, String>,
        body: impl Into<String>,
        common: Common,
    ) -> WebhookRequest {
        WebhookRequest {
            headers,
            body: body.into(),
            common,
        }
    }
}

impl ResolveRequest {
    /// `resolve`: a person's `resolution` of the operation `operation_id`.
    pub fn new(
        operation_id: impl Into<String>,
        resolution: Resolution,
        common: Common,
    ) -> ResolveRequest {
        ResolveRequest {
            operation_id: operation_id.into(),
            resolution,
            common,
        }
    }
}

impl Resolution {
    /// An operator's decision: `outcome`, the provider object found (if
    /// any) and what it rests on. `by` is `operator`, as protocol v1 has it.
    pub fn new(
        outcome: OutcomeKind,
        provider_ref: Option<String>,
        evidence: impl Into<String>,
    ) -> Resolution {
        Resolution {
            outcome,
            provider_ref,
            evidence: evidence.into(),
            by: "operator".to_owned(),
        }
    }
}
