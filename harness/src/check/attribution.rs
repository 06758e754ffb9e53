//! Which operation each create request and each effect belongs to.
//!
//! docs/scenario-format.md attributes effects by arguments. Operations that share their
//! arguments on purpose form a group, checked as a whole. A create whose
//! arguments match no operation (an adapter that changed them on retry) is
//! still traced to its operation through the reference it carries
//! (`client_reference` or `metadata.operation_id`), so that invariant 5 can name it.
//!
//! Everything is indexed once (hash maps keyed by canonical arguments and by id;
//! nothing here reaches output in map order), so attribution is linear in the
//! size of the run: a million operations are checked in seconds, not hours.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use lostreply_simulator::{canonical_json, Effect, JournalEntry, RequestKind};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::scenario::model::OperationSpec;

/// Operations with identical resource and arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Operation ids, in scenario order.
    pub ops: Vec<String>,
    /// Positions in the ledger of the effects attributed to the group, in ledger order.
    effects: Vec<usize>,
    /// Positions in the journal of the create requests attributed to it, in journal order.
    requests: Vec<usize>,
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
    pub group_of_op: HashMap<String, usize>,
    /// Create request (journal seq) to group, for the adapter's tenant.
    pub request_group: HashMap<u64, usize>,
    /// Attributed create requests whose arguments are not their operation's
    /// (traced by the reference they carried): each is an invariant-5 breach.
    pub changed_arguments: BTreeSet<u64>,
    /// Create requests of the adapter's tenant that match no operation.
    pub unattributed_requests: Vec<u64>,
    /// Effect id to group.
    pub effect_group: HashMap<String, usize>,
}

/// The key that identifies a group: resource and canonical arguments.
fn group_key(resource: &str, args: Map<String, Value>) -> String {
    let mut key = canonical_json(&Value::Object(args));
    // A resource name never holds a space ([a-z][a-z0-9_]*), so this cannot collide.
    key.insert(0, ' ');
    key.insert_str(0, resource);
    key
}

impl Attribution {
    /// The attribution of one observed run, for the adapter's tenant.
    pub fn of(obs: &crate::run::observation::Observation) -> Attribution {
        Attribution::build(
            &obs.scenario.operations,
            &obs.journal,
            &obs.ledger,
            &obs.credential,
        )
    }

    /// Attributes requests and effects of `credential`'s tenant to `operations`.
    pub fn build(
        operations: &[OperationSpec],
        journal: &[JournalEntry],
        ledger: &[Effect],
        credential: &str,
    ) -> Attribution {
        let mut a = Attribution::default();
        let mut by_args: HashMap<String, usize> = HashMap::with_capacity(operations.len());
        // Sized up front: at a million entries, growing by doubling moved every
        // group and rehashed every map several times over.
        a.group_of_op.reserve(operations.len());
        a.groups.reserve(operations.len());
        a.request_group.reserve(journal.len());
        a.effect_group.reserve(ledger.len());
        for op in operations {
            let next = a.groups.len();
            let index = *by_args
                .entry(group_key(&op.resource, op.args.clone()))
                .or_insert(next);
            if index == next {
                a.groups.push(Group {
                    ops: Vec::new(),
                    effects: Vec::new(),
                    requests: Vec::new(),
                });
            }
            a.groups[index].ops.push(op.id.clone());
            a.group_of_op.insert(op.id.clone(), index);
        }
        for (position, entry) in journal.iter().enumerate() {
            if entry.kind != Some(RequestKind::Create)
                || entry.tenant.as_deref() != Some(credential)
            {
                continue;
            }
            let resource = entry.resource.as_deref().unwrap_or_default();
            let Some(body) = entry
                .fingerprint
                .as_deref()
                .and_then(|f| split_body(resource, f))
            else {
                // No parsed body: the request never reached the point of being an attempt.
                continue;
            };
            let by_reference = [
                body.client_reference.as_deref(),
                body.metadata_operation.as_deref(),
            ]
            .into_iter()
            .flatten()
            .find_map(|id| a.group_of_op.get(id).copied());
            let by_arguments = by_args.get(&body.group_key).copied();
            match (by_arguments, by_reference) {
                (Some(g), _) => {
                    a.request_group.insert(entry.seq, g);
                    a.groups[g].requests.push(position);
                }
                // Traced by its reference only: the adapter changed the arguments.
                (None, Some(g)) => {
                    a.request_group.insert(entry.seq, g);
                    a.groups[g].requests.push(position);
                    a.changed_arguments.insert(entry.seq);
                }
                (None, None) => a.unattributed_requests.push(entry.seq),
            }
        }
        for (position, effect) in ledger.iter().enumerate() {
            if effect.tenant != credential {
                continue;
            }
            // Seed objects (no request) belong to other actors, never to an operation.
            let group = effect
                .request_seq
                .and_then(|seq| a.request_group.get(&seq).copied());
            if let Some(g) = group {
                a.effect_group.insert(effect.id.clone(), g);
                a.groups[g].effects.push(position);
            }
        }
        a
    }

    /// The group of an operation.
    pub fn group(&self, op: &str) -> Option<usize> {
        self.group_of_op.get(op).copied()
    }

    /// Effects attributed to a group, in ledger order. `ledger` must be the one
    /// the attribution was built from.
    pub fn effects_of_group<'l>(&self, group: usize, ledger: &'l [Effect]) -> Vec<&'l Effect> {
        self.groups
            .get(group)
            .map(|g| g.effects.iter().filter_map(|&i| ledger.get(i)).collect())
            .unwrap_or_default()
    }

    /// Create requests attributed to a group, in journal order. `journal` must be
    /// the one the attribution was built from.
    pub fn requests_of_group<'j>(
        &self,
        group: usize,
        journal: &'j [JournalEntry],
    ) -> Vec<&'j JournalEntry> {
        self.groups
            .get(group)
            .map(|g| g.requests.iter().filter_map(|&i| journal.get(i)).collect())
            .unwrap_or_default()
    }
}

/// A create body read for attribution: its group key and its references.
struct SplitBody {
    group_key: String,
    client_reference: Option<String>,
    metadata_operation: Option<String>,
}

/// [`create_body`] without building the arguments: the fingerprint is
/// canonical (keys sorted at every depth), so the arguments' canonical text is
/// the fingerprint's own members, reserved ones left out, copied as they are.
/// Parsing every create into a `Value` tree and writing it out again was
/// most of the attribution's time and allocations at a million operations.
fn split_body(resource: &str, fingerprint: &str) -> Option<SplitBody> {
    let members: BTreeMap<String, Box<RawValue>> = serde_json::from_str(fingerprint).ok()?;
    let mut key = Vec::with_capacity(resource.len() + 1 + fingerprint.len());
    key.extend_from_slice(resource.as_bytes());
    // A resource name never holds a space ([a-z][a-z0-9_]*), so this cannot collide.
    key.push(b' ');
    key.push(b'{');
    let (mut client_reference, mut metadata_operation) = (None, None);
    let mut first = true;
    for (name, value) in &members {
        match name.as_str() {
            "client_reference" => {
                client_reference = serde_json::from_str::<String>(value.get()).ok();
            }
            "metadata" => {
                metadata_operation = serde_json::from_str::<Value>(value.get())
                    .ok()
                    .and_then(|m| m.get("operation_id")?.as_str().map(str::to_owned));
            }
            _ => {
                if !first {
                    key.push(b',');
                }
                first = false;
                // Writing a string into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut key, name);
                key.push(b':');
                key.extend_from_slice(value.get().as_bytes());
            }
        }
    }
    key.push(b'}');
    Some(SplitBody {
        group_key: String::from_utf8(key).ok()?,
        client_reference,
        metadata_operation,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_key_is_the_group_key_of_the_arguments() {
        let body = serde_json::json!({
            "title": "a \"b\"", "n": 1, "nested": {"z": [1, {"y": 2, "x": null}], "a": "é"},
            "client_reference": "op-1", "metadata": {"operation_id": "op-2", "k": 1}
        });
        let fingerprint = canonical_json(&body);
        let split = split_body("tickets", &fingerprint).expect("an object");
        let mut args = body.as_object().cloned().unwrap_or_default();
        args.remove("client_reference");
        args.remove("metadata");
        assert_eq!(split.group_key, group_key("tickets", args));
        assert_eq!(split.client_reference.as_deref(), Some("op-1"));
        assert_eq!(split.metadata_operation.as_deref(), Some("op-2"));
        assert!(split_body("tickets", "[1]").is_none());
        let bare = create_body(&fingerprint).expect("an object");
        assert_eq!(bare.client_reference.as_deref(), Some("op-1"));
    }
}
