//! A parsed, validated scenario: the simulator's plan plus the harness's steps
//! and expectations. Everything here is checked; nothing refers to YAML.

use std::collections::BTreeMap;
use std::time::Duration;

use lostreply_reports::model::SharedStr;
use lostreply_simulator::mcp::Revision;
use lostreply_simulator::{EventKind, Plan};

use super::client_profiles::McpClient;
use crate::protocol::OutcomeKind;

/// One scenario file, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Where it came from (as given on the command line, or `scenarios/<file>`).
    pub path: String,
    /// `id:` (unique in a suite).
    pub id: String,
    /// `title:`.
    pub title: String,
    /// `case:`: which of the ten lost-response cases (1..=10), if one.
    pub case: Option<u8>,
    /// `tags:`.
    pub tags: Vec<String>,
    /// The provider and its faults. `seed` is left 0: the runner sets it.
    /// `plan.mcp` is `Some` when the file has an `mcp:` section.
    pub plan: Plan,
    /// What the adapter is told about the MCP server beyond the plan (the
    /// revision to ask for, the client windows); `Some` exactly when `plan.mcp` is.
    pub mcp: Option<McpSetup>,
    /// `operations:`, in file order.
    pub operations: Vec<OperationSpec>,
    /// `steps:`, in file order (numbered from 1 by `expect.after_step`).
    pub steps: Vec<Step>,
    /// `expect:`.
    pub expect: Expectations,
    /// `client_timeout:`: what adapters are told to give their HTTP client.
    pub client_timeout: Duration,
    /// `call_deadline:`: how long one adapter call may take before it is killed.
    pub call_deadline: Duration,
}

/// An operation's id: one copy, made when the scenario is read and shared
/// by every step, expectation and record that names the operation (a
/// million-operation run named each some eight times, a string each).
pub type OpId = SharedStr;

/// A logical operation, and its fields: the report's model defines them, so
/// that an `execute` request in a record can be kept as the operation it was
/// made from (`lostreply_reports::call_request`). Cloning an operation shares it.
pub use lostreply_reports::model::{OperationFields, OperationSpec};

/// The retrieval tool that answers one operation by id.
pub const GET_OPERATION: &str = "get_operation";
/// The retrieval tool that lists the caller's recent operations.
pub const LIST_RECENT_OPERATIONS: &str = "list_recent_operations";

/// The harness's side of an MCP scenario (the server's side is `Plan::mcp`).
#[derive(Debug, Clone, PartialEq)]
pub struct McpSetup {
    /// `mcp.revision`: what the adapter is told to ask for in `initialize`.
    pub revision: Revision,
    /// `mcp.client`: the windows the adapter gives its MCP client.
    pub client: McpClient,
}

/// One step the harness drives.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Call `execute` for an operation.
    Execute {
        /// Operation id.
        op: OpId,
        /// Kill the adapter at this point.
        crash: Option<CrashPoint>,
    },
    /// Call `reconcile` for an operation.
    Reconcile {
        /// Operation id.
        op: OpId,
        /// Kill the adapter at this point.
        crash: Option<CrashPoint>,
    },
    /// Call `status` for an operation.
    Status {
        /// Operation id.
        op: OpId,
    },
    /// Move the simulator clock.
    Advance {
        /// How far.
        by: Duration,
    },
    /// Run adapter calls at once (`execute`, `reconcile`, `status`, `webhook`, `resolve`).
    Parallel(Vec<Step>),
    /// Deliver a provider event about an operation's object to the adapter.
    Webhook {
        /// Operation whose object the event is about.
        op: OpId,
        /// Which event.
        event: EventKind,
        /// How many times to deliver it (a duplicate is the same event id, signed afresh).
        deliveries: u32,
        /// Sign with a wrong secret: the adapter must reject it and change nothing.
        forged: bool,
    },
    /// A call of a `parallel` step that starts once the provider holds
    /// another call's request matching `during`, whose answer then waits
    /// until this call has returned (`during:`). Only inside `Parallel`.
    During {
        /// The request it waits for (fields only: no counts, no steps).
        /// Boxed: a rare step, and a `Match` inline made every step of a
        /// million-step scenario 160 bytes, not 40.
        during: Box<lostreply_simulator::Match>,
        /// The call: `execute`, `reconcile`, `status`, `webhook` or `resolve`.
        call: Box<Step>,
    },
    /// An operator's decision.
    Resolve {
        /// Operation id.
        op: OpId,
        /// `succeeded` or `failed`.
        outcome: OutcomeKind,
        /// Which provider object the operator names.
        provider_ref: ResolveRef,
        /// The operator's evidence text (shared text: a `String` made every
        /// step of a million-step scenario 64 bytes, not 32).
        evidence: SharedStr,
    },
}

/// Where a client-side crash strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrashPoint {
    /// When the simulator commits this operation's effect, before the response leaves.
    AfterCommit,
}

/// The `provider_ref` an operator's resolution names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveRef {
    /// None.
    None,
    /// The id of the operation's effect in the ledger at that moment (`ledger`).
    Ledger,
    /// A literal id.
    Literal(SharedStr),
}

/// The outcomes an expectation allows: each kind once, in the order the
/// scenario lists them (a repeated name keeps its first place). Inline, as
/// there are only four kinds: a million-operation scenario's `final:` held a
/// `Vec` per operation, an allocation each. Reads as a slice. (Five bytes
/// and `Copy`; a `SmallVec` of four, the nearest crate, is 24 bytes.)
#[derive(Clone, Copy)]
pub struct Allowed {
    kinds: [OutcomeKind; 4],
    len: u8,
}

impl Allowed {
    /// None allowed yet.
    pub fn new() -> Allowed {
        Allowed {
            // Only the first `len` count.
            kinds: [OutcomeKind::Unknown; 4],
            len: 0,
        }
    }

    /// Allows `kind` too, after those before it; a kind already allowed keeps its place.
    pub fn push(&mut self, kind: OutcomeKind) {
        if self.contains(&kind) {
            return;
        }
        // Four distinct kinds at most, so there is always room for a new one.
        if let Some(slot) = self.kinds.get_mut(usize::from(self.len)) {
            *slot = kind;
            self.len += 1;
        }
    }
}

/// Equal when they list the same kinds in the same order.
impl PartialEq for Allowed {
    fn eq(&self, other: &Allowed) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Allowed {}

impl Default for Allowed {
    fn default() -> Allowed {
        Allowed::new()
    }
}

impl std::ops::Deref for Allowed {
    type Target = [OutcomeKind];

    fn deref(&self) -> &[OutcomeKind] {
        &self.kinds[..usize::from(self.len)]
    }
}

impl FromIterator<OutcomeKind> for Allowed {
    fn from_iter<I: IntoIterator<Item = OutcomeKind>>(kinds: I) -> Allowed {
        let mut allowed = Allowed::new();
        kinds.into_iter().for_each(|kind| allowed.push(kind));
        allowed
    }
}

/// As the list it is.
impl std::fmt::Debug for Allowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// What must hold at the end, beyond the invariants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expectations {
    /// `final:` allowed final outcomes (asked with `status` after the last step).
    pub final_outcomes: BTreeMap<OpId, Allowed>,
    /// `after_step:` allowed outcomes reported by step N (1-based).
    pub after_step: BTreeMap<usize, BTreeMap<OpId, Allowed>>,
    /// `effects:` exact effect counts.
    pub effects: BTreeMap<OpId, u32>,
    /// `needs_review:` the final `needs_review` flag.
    pub needs_review: BTreeMap<OpId, bool>,
    /// `needs_review_from_step:` from this step on, every reply about the
    /// operation that is not terminal must say `needs_review: true`.
    pub needs_review_from_step: BTreeMap<OpId, usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_stays_small() {
        // A million-operation scenario holds a million steps: a rare step's
        // parts are boxed so that every step does not pay for them.
        assert!(
            std::mem::size_of::<Step>() <= 40,
            "{}",
            std::mem::size_of::<Step>()
        );
    }

    #[test]
    fn allowed_outcomes_keep_the_first_place_of_each_kind() {
        use OutcomeKind::{Failed, Pending, Succeeded, Unknown};
        let allowed: Allowed = [
            Pending, Succeeded, Pending, Unknown, Failed, Succeeded, Failed,
        ]
        .into_iter()
        .collect();
        assert_eq!(allowed[..], [Pending, Succeeded, Unknown, Failed]);
        assert!(allowed.contains(&Failed));
        assert_eq!(
            format!("{allowed:?}"),
            "[Pending, Succeeded, Unknown, Failed]"
        );
        let none = Allowed::default();
        assert!(none.is_empty() && !none.contains(&Unknown));
        assert_eq!(none, Allowed::new());
        let one: Allowed = [Unknown].into_iter().collect();
        assert_ne!(one, none);
        assert_eq!(one[..], [Unknown]);
        assert_eq!(std::mem::size_of::<Allowed>(), 5);
    }
}
