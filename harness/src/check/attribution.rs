//! Which operation each create request and each effect belongs to.
//!
//! scenarios.md attributes effects by arguments. Operations that share their
//! arguments on purpose form a group, checked as a whole. A create whose
//! arguments match no operation (an adapter that changed them on retry) is
//! still traced to its operation through the reference it carries
//! (`client_reference` or `metadata.operation_id`), so that invariant 5 can name it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use simulator::{Effect, JournalEntry, RequestKind};

use crate::scenario::model::OperationSpec;

/// Operations with identical resource and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Operation ids, in scenario order.
    pub ops: Vec<String>,
}

/// A create request's body, taken apart.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateBody {
    /// The body without reserved fields.
    pub args: Map<String, Value>,
    /// `client_reference`, if a string.
    pub client_reference: Option<String>,
    /// `metadata.operation_id`, if a string.
    pub metadata_operation: Option<String>,
}

/// The attribution of a whole run.
#[derive(Debug, Clone, Default)]
pub struct Attribution {
    /// Groups of operations.
    pub groups: Vec<Group>,
    /// Operation id to group index.
    pub group_of_op: BTreeMap<String, usize>,
    /// Create request (journal seq) to group, for the adapter's tenant.
    pub request_group: BTreeMap<u64, usize>,
    /// Create requests of the adapter's tenant that match no operation.
    pub unattributed_requests: Vec<u64>,
    /// Effect id to group.
    pub effect_group: BTreeMap<String, usize>,
}

impl Attribution {
    /// Attributes requests and effects of `credential`'s tenant to `operations`.
    pub fn build(
        operations: &[OperationSpec],
        journal: &[JournalEntry],
        ledger: &[Effect],
        credential: &str,
    ) -> Attribution {
        let mut a = Attribution::default();
        for op in operations {
            let existing = a.groups.iter().position(|g| {
                g.ops
                    .first()
                    .and_then(|first| operations.iter().find(|o| &o.id == first))
                    .is_some_and(|o| o.resource == op.resource && o.args == op.args)
            });
            let index = match existing {
                Some(i) => i,
                None => {
                    a.groups.push(Group { ops: Vec::new() });
                    a.groups.len() - 1
                }
            };
            a.groups[index].ops.push(op.id.clone());
            a.group_of_op.insert(op.id.clone(), index);
        }
        for entry in journal {
            if entry.kind != Some(RequestKind::Create)
                || entry.tenant.as_deref() != Some(credential)
            {
                continue;
            }
            let Some(body) = entry.fingerprint.as_deref().and_then(create_body) else {
                // No parsed body: the request never reached the point of being an attempt.
                continue;
            };
            let resource = entry.resource.as_deref().unwrap_or_default();
            let by_args = operations
                .iter()
                .find(|o| o.resource == resource && o.args == body.args);
            let by_ref = || {
                operations.iter().find(|o| {
                    body.client_reference.as_deref() == Some(o.id.as_str())
                        || body.metadata_operation.as_deref() == Some(o.id.as_str())
                })
            };
            match by_args
                .or_else(by_ref)
                .and_then(|o| a.group_of_op.get(&o.id))
            {
                Some(&g) => {
                    a.request_group.insert(entry.seq, g);
                }
                None => a.unattributed_requests.push(entry.seq),
            }
        }
        for effect in ledger {
            if effect.tenant != credential {
                continue;
            }
            let group = match effect.request_seq {
                Some(seq) => a.request_group.get(&seq).copied(),
                // Seed objects belong to other actors, never to an operation.
                None => None,
            };
            if let Some(g) = group {
                a.effect_group.insert(effect.id.clone(), g);
            }
        }
        a
    }

    /// The group of an operation.
    pub fn group(&self, op: &str) -> Option<usize> {
        self.group_of_op.get(op).copied()
    }

    /// Effect ids attributed to a group, in ledger order.
    pub fn effects_of_group<'l>(&self, group: usize, ledger: &'l [Effect]) -> Vec<&'l Effect> {
        ledger
            .iter()
            .filter(|e| self.effect_group.get(&e.id) == Some(&group))
            .collect()
    }

    /// Create requests attributed to a group, in journal order.
    pub fn requests_of_group<'j>(
        &self,
        group: usize,
        journal: &'j [JournalEntry],
    ) -> Vec<&'j JournalEntry> {
        journal
            .iter()
            .filter(|e| self.request_group.get(&e.seq) == Some(&group))
            .collect()
    }
}

/// Splits a create body (the journal's canonical JSON) into arguments and references.
pub fn create_body(fingerprint: &str) -> Option<CreateBody> {
    let Value::Object(mut body) = serde_json::from_str::<Value>(fingerprint).ok()? else {
        return None;
    };
    let client_reference = match body.remove("client_reference") {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let metadata_operation = match body.remove("metadata") {
        Some(Value::Object(m)) => m
            .get("operation_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    Some(CreateBody {
        args: body,
        client_reference,
        metadata_operation,
    })
}
