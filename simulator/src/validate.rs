//! Plan checks at start: an inconsistent plan is refused with a message that
//! names the field, instead of surprising a run halfway.

mod mcp;

pub use mcp::{McpFaultError, McpPlanError};

use std::collections::BTreeSet;

use crate::names::is_valid_resource_name;
use crate::plan::{FaultResponse, Limits, Plan, Position, Release, StallThen, MAX_READ_TIMEOUT};
use crate::provider::MAX_CLIENT_REFERENCE_BYTES;
use crate::time::{max_clock_ms, min_clock_ms};
use crate::webhook::signing_key;

/// Why a plan is refused: the field that is wrong, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A field of the plan outside its MCP section.
    #[error("{field}: {problem}")]
    Field {
        /// Where in the plan, as a path (`faults[2].when.nth`).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A field of the MCP section (its message names the field).
    #[error(transparent)]
    Mcp(McpPlanError),
}

impl PlanError {
    fn new(field: impl Into<String>, problem: impl Into<String>) -> PlanError {
        PlanError::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// Checks `plan`; returns the decoded webhook key (if any).
pub(crate) fn check_plan(plan: &Plan) -> Result<Option<Vec<u8>>, PlanError> {
    if plan.tenants.is_empty() {
        return Err(PlanError::new(
            "tenants",
            "at least one credential is needed",
        ));
    }
    let mut seen = BTreeSet::new();
    for (index, tenant) in plan.tenants.iter().enumerate() {
        if tenant.is_empty() || !tenant.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(PlanError::new(
                format!("tenants[{index}]"),
                "a credential is non-empty visible ASCII without spaces",
            ));
        }
        if !seen.insert(tenant) {
            return Err(PlanError::new(
                format!("tenants[{index}]"),
                format!("`{tenant}` appears twice"),
            ));
        }
    }
    if let Some(resources) = &plan.resources {
        if let Some(bad) = resources.iter().find(|r| !is_valid_resource_name(r)) {
            return Err(PlanError::new(
                "resources",
                format!("`{bad}` does not match [a-z][a-z0-9_]{{0,39}}"),
            ));
        }
    }
    let resource_allowed = |r: &str| {
        is_valid_resource_name(r) && plan.resources.as_ref().is_none_or(|set| set.contains(r))
    };
    if !(min_clock_ms()..=max_clock_ms()).contains(&plan.clock_start_ms) {
        return Err(PlanError::new(
            "clock_start_ms",
            format!("{} is outside years -9999..=9999", plan.clock_start_ms),
        ));
    }
    check_limits(&plan.limits)?;
    for (index, seed) in plan.seed_objects.iter().enumerate() {
        if !plan.tenants.contains(&seed.tenant) {
            return Err(PlanError::new(
                format!("seed_objects[{index}].tenant"),
                format!("`{}` is not a tenant of the plan", seed.tenant),
            ));
        }
        if !resource_allowed(&seed.resource) {
            return Err(PlanError::new(
                format!("seed_objects[{index}].resource"),
                format!("`{}` is not a resource of the plan", seed.resource),
            ));
        }
        if seed
            .client_reference
            .as_ref()
            .is_some_and(|r| r.len() > MAX_CLIENT_REFERENCE_BYTES)
        {
            return Err(PlanError::new(
                format!("seed_objects[{index}].client_reference"),
                format!("longer than {MAX_CLIENT_REFERENCE_BYTES} bytes"),
            ));
        }
        if let Some(reserved) = ["client_reference", "metadata"]
            .iter()
            .find(|k| seed.args.contains_key(**k))
        {
            return Err(PlanError::new(
                format!("seed_objects[{index}].args"),
                format!("`{reserved}` is reserved; use the seed's own field"),
            ));
        }
    }
    for (index, rule) in plan.faults.iter().enumerate() {
        let at = rule.at;
        if rule.when.nth == Some(0) {
            return Err(PlanError::new(
                format!("faults[{index}].when.nth"),
                "counts from 1",
            ));
        }
        if rule.when.times == Some(0) {
            return Err(PlanError::new(
                format!("faults[{index}].when.times"),
                "at least 1",
            ));
        }
        if rule.when.nth.is_some() && rule.when.times.is_some() {
            return Err(PlanError::new(
                format!("faults[{index}].when"),
                "nth and times exclude each other",
            ));
        }
        if rule
            .when
            .steps
            .as_ref()
            .is_some_and(|s| s.is_empty() || s.contains(&0))
        {
            return Err(PlanError::new(
                format!("faults[{index}].when.step"),
                "steps count from 1, and at least one is needed",
            ));
        }
        if let Some(method) = &rule.when.method {
            if method.is_empty() || method.bytes().any(|b| !b.is_ascii_uppercase()) {
                return Err(PlanError::new(
                    format!("faults[{index}].when.method"),
                    format!("`{method}` must be an upper-case method such as POST"),
                ));
            }
        }
        if let Some(resource) = &rule.when.resource {
            if !resource_allowed(resource) {
                return Err(PlanError::new(
                    format!("faults[{index}].when.resource"),
                    format!("`{resource}` is not a resource of the plan"),
                ));
            }
        }
        if let Some(tenant) = &rule.when.tenant {
            if !plan.tenants.contains(tenant) {
                return Err(PlanError::new(
                    format!("faults[{index}].when.tenant"),
                    format!("`{tenant}` is not a tenant of the plan"),
                ));
            }
        }
        if let Some(why) = fault_shape_error(rule.response, at, &plan.limits) {
            return Err(PlanError::new(format!("faults[{index}]"), why));
        }
    }
    if let Some(mcp) = &plan.mcp {
        mcp::check(plan, mcp).map_err(PlanError::Mcp)?;
    }
    plan.webhooks
        .as_ref()
        .map(|hooks| {
            signing_key(plan.profile.webhooks.scheme, &hooks.secret)
                .map_err(|e| PlanError::new("webhooks.secret", e.to_string()))
        })
        .transpose()
}

/// The bounds themselves: a body limit of at least a byte, a read deadline
/// that lets a request arrive at all and is itself bounded.
fn check_limits(limits: &Limits) -> Result<(), PlanError> {
    if limits.max_body_bytes == 0 {
        return Err(PlanError::new(
            "limits.max_body_bytes",
            "must be at least 1",
        ));
    }
    if limits.read_timeout.is_zero() || limits.read_timeout > MAX_READ_TIMEOUT {
        return Err(PlanError::new(
            "limits.read_timeout",
            format!(
                "must be more than 0 and at most {} s",
                MAX_READ_TIMEOUT.as_secs()
            ),
        ));
    }
    Ok(())
}

/// Fault responses that cannot happen where the rule puts them.
fn fault_shape_error(response: FaultResponse, at: Position, limits: &Limits) -> Option<String> {
    match response {
        FaultResponse::Gather { requests, .. } if requests < 2 => Some(format!(
            "gather needs at least 2 requests to meet (got {requests})"
        )),
        FaultResponse::Gather { at_most, .. } if at_most.is_zero() || at_most > limits.stall_cap => {
            Some(format!(
                "gather at_most must be more than 0 and at most stall_cap ({} ms)",
                limits.stall_cap.as_millis()
            ))
        }
        FaultResponse::Stall {
            until: Release::StepEnd(0),
            ..
        } => Some("a stall until the end of step 0: steps count from 1".to_owned()),
        FaultResponse::Status { code, .. } if !(400..=599).contains(&code) => {
            Some(format!("status {code} is not an error status (400..=599)"))
        }
        FaultResponse::Status {
            retry_after_s: Some(seconds),
            ..
        } if seconds > crate::plan::MAX_RETRY_AFTER_S => Some(format!(
            "retry_after {seconds} s is more than {} s",
            crate::plan::MAX_RETRY_AFTER_S
        )),
        FaultResponse::Partial { .. } | FaultResponse::Idle => match at {
            Position::BeforeRead | Position::BeforeCommit => Some(format!(
                "partial and idle cut the provider's response, which exists only at after_commit (got {})",
                at.name()
            )),
            Position::AfterCommit => None,
        },
        FaultResponse::Stall {
            then: StallThen::Commit,
            ..
        } => match at {
            Position::BeforeRead => {
                Some("`stall then: commit` at before_read cannot commit a body it never read; use before_commit".to_owned())
            }
            Position::BeforeCommit | Position::AfterCommit => None,
        },
        FaultResponse::Ok
        | FaultResponse::Drop
        | FaultResponse::Reset
        | FaultResponse::Delay { .. }
        | FaultResponse::Status { .. }
        | FaultResponse::Gather { .. }
        | FaultResponse::Stall {
            then: StallThen::Abandon,
            ..
        } => None,
    }
}
