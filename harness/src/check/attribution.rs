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

use std::collections::BTreeSet;

use lostreply_simulator::{Effect, JournalEntry, RequestKind};
use serde_json::{Map, Value};

use super::group_keys::GroupKeys;
use super::grouped::{Grouped, Pos, NONE};
use crate::by_key::ByKey;
use crate::scenario::model::OperationSpec;
use crate::seq_positions::SeqPositions;
use crate::split_body::{split_body, split_effect};
use crate::two_threads::{self, both};

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

/// The attribution of a whole run, borrowing the operations' ids from the
/// observation it was built from.
///
/// Groups are numbered in the order of their first operation; operations,
/// requests and effects are kept as positions (in the scenario's operations,
/// the journal, the ledger), grouped by counting: no string is copied and no
/// group has an allocation of its own. Operation ids are unique in a scenario
/// (validation refuses a duplicate).
#[derive(Debug, Clone)]
pub struct Attribution<'o> {
    operations: &'o [OperationSpec],
    /// Operation id to its position in the scenario's operations.
    op_position: ByKey<'o, OperationSpec>,
    /// By operation position: its group.
    op_group: Vec<Pos>,
    /// By group: its operations' positions, in scenario order.
    ops: Grouped,
    /// By group: the journal positions of the create requests attributed to it.
    requests: Grouped,
    /// By group: the ledger positions of the effects attributed to it.
    effects: Grouped,
    /// By ledger position: the effect's group, or [`NONE`].
    effect_group: Vec<Pos>,
    /// Attributed create requests whose arguments are not their operation's
    /// (traced by the reference they carried): each is an invariant-5 breach.
    pub changed_arguments: BTreeSet<u64>,
    /// Create requests of the adapter's tenant that match no operation.
    pub unattributed_requests: Vec<u64>,
}

impl<'o> Attribution<'o> {
    /// The attribution of one observed run, for the adapter's tenant.
    pub fn of(obs: &'o crate::run::observation::Observation) -> Attribution<'o> {
        Attribution::build(
            &obs.scenario.operations,
            &obs.journal,
            &obs.ledger,
            &obs.credential,
        )
    }

    /// Attributes requests and effects of `credential`'s tenant to `operations`.
    /// A large run (operations and requests together, from
    /// [`two_threads::FROM_RECORDS`]) is attributed on two threads: on a
    /// million operations it took two seconds on one, the second core idle.
    /// The attribution is the same either way.
    pub fn build(
        operations: &'o [OperationSpec],
        journal: &[JournalEntry],
        ledger: &[Effect],
        credential: &str,
    ) -> Attribution<'o> {
        let two_threads = operations.len() + journal.len() >= two_threads::FROM_RECORDS;
        Attribution::build_with(operations, journal, ledger, credential, two_threads)
    }

    /// [`Attribution::build`] on one thread or two, as asked.
    fn build_with(
        operations: &'o [OperationSpec],
        journal: &[JournalEntry],
        ledger: &[Effect],
        credential: &str,
        two_threads: bool,
    ) -> Attribution<'o> {
        // The groups by arguments on this thread (their keys written on two
        // when large), the positions by id on the other: independent.
        let ((group_keys, op_group, groups), op_position) = both(
            two_threads,
            || GroupKeys::build(operations, two_threads),
            || ByKey::new(operations, |op: &OperationSpec| op.id.as_str()),
        );

        // A committed create's body is read from its effect (the run keeps
        // no fingerprint for it): by journal position, the ledger position
        // of the effect its request made.
        let seqs = SeqPositions::new(journal);
        let made = effects_made(&seqs, journal.len(), ledger);
        // The create requests, in two halves of the journal when on two
        // threads, each attributed against the maps above (only read now).
        let maps = GroupMaps {
            group_keys: &group_keys,
            op_position: &op_position,
            op_group: &op_group,
            ledger,
            credential,
        };
        let half = if two_threads {
            journal.len() / 2
        } else {
            journal.len()
        };
        let (first, second) = journal.split_at(half);
        let (made_first, made_second) = made.split_at(half);
        let (mut requests, rest) = both(
            two_threads,
            || maps.requests(first, made_first),
            || maps.requests(second, made_second),
        );
        drop(made);
        requests.group.extend(rest.group);
        requests.changed_arguments.extend(rest.changed_arguments);
        requests.unattributed.extend(rest.unattributed);
        let RequestGroups {
            group: request_group,
            changed_arguments,
            unattributed: unattributed_requests,
        } = requests;
        let effect_group: Vec<Pos> = ledger
            .iter()
            .map(|effect| {
                if effect.tenant != credential {
                    return NONE;
                }
                // Seed objects (no request) belong to other actors, never to an operation.
                effect
                    .request()
                    .and_then(|seq| seqs.position(seq))
                    .and_then(|position| request_group.get(position).copied())
                    .unwrap_or(NONE)
            })
            .collect();
        Attribution {
            operations,
            ops: Grouped::new(&op_group, groups),
            requests: Grouped::new(&request_group, groups),
            effects: Grouped::new(&effect_group, groups),
            op_position,
            op_group,
            effect_group,
            changed_arguments,
            unattributed_requests,
        }
    }

    /// How many groups; they are numbered from 0.
    pub fn group_count(&self) -> usize {
        self.ops.len()
    }

    /// The group of an operation.
    pub fn group(&self, op: &str) -> Option<usize> {
        self.op_position(op).and_then(|p| self.group_at(p))
    }

    /// The position of an operation in the scenario's operations.
    pub fn op_position(&self, op: &str) -> Option<usize> {
        self.op_position.position(op)
    }

    /// The group of the operation at `position` in the scenario's operations.
    pub fn group_at(&self, position: usize) -> Option<usize> {
        self.op_group.get(position).map(|&g| g as usize)
    }

    /// A group's operations, in scenario order.
    pub fn ops_of_group(
        &self,
        group: usize,
    ) -> impl ExactSizeIterator<Item = &'o OperationSpec> + '_ {
        let operations = self.operations;
        self.ops
            .of(group)
            .iter()
            .map(move |&p| &operations[p as usize])
    }

    /// A group's operations' positions in the scenario's operations, in order.
    pub fn op_positions_of_group(&self, group: usize) -> &[Pos] {
        self.ops.of(group)
    }

    /// The id of a group's first operation (the one its findings are filed under).
    pub fn first_op(&self, group: usize) -> Option<&'o str> {
        self.ops_of_group(group).next().map(|op| op.id.as_str())
    }

    /// A group's operation ids, joined by `, `.
    pub fn group_label(&self, group: usize) -> String {
        self.ops_of_group(group)
            .map(|op| op.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Positions in the ledger of the effects attributed to a group, in ledger order.
    pub fn effect_positions(&self, group: usize) -> &[Pos] {
        self.effects.of(group)
    }

    /// Positions in the journal of the create requests attributed to a group, in journal order.
    pub fn request_positions(&self, group: usize) -> &[Pos] {
        self.requests.of(group)
    }

    /// The group of the effect at `position` in the ledger, if it has one.
    pub fn group_of_effect(&self, position: usize) -> Option<usize> {
        self.effect_group
            .get(position)
            .filter(|&&g| g != NONE)
            .map(|&g| g as usize)
    }

    /// Effects attributed to a group, in ledger order. `ledger` must be the one
    /// the attribution was built from.
    pub fn effects_of_group<'l>(&self, group: usize, ledger: &'l [Effect]) -> Vec<&'l Effect> {
        self.effect_positions(group)
            .iter()
            .filter_map(|&i| ledger.get(i as usize))
            .collect()
    }

    /// Create requests attributed to a group, in journal order. `journal` must be
    /// the one the attribution was built from.
    pub fn requests_of_group<'j>(
        &self,
        group: usize,
        journal: &'j [JournalEntry],
    ) -> Vec<&'j JournalEntry> {
        self.request_positions(group)
            .iter()
            .filter_map(|&i| journal.get(i as usize))
            .collect()
    }
}

/// What create requests are attributed against, once built.
struct GroupMaps<'m, 'o> {
    group_keys: &'m GroupKeys<'o>,
    op_position: &'m ByKey<'o, OperationSpec>,
    op_group: &'m [Pos],
    ledger: &'m [Effect],
    credential: &'m str,
}

/// The create requests of part of a journal, attributed.
struct RequestGroups {
    /// By position in that part: the request's group, or [`NONE`].
    group: Vec<Pos>,
    /// Seqs of those traced by their reference only (changed arguments).
    changed_arguments: BTreeSet<u64>,
    /// Seqs of the adapter's creates that match no operation, in order.
    unattributed: Vec<u64>,
}

impl GroupMaps<'_, '_> {
    fn group_of_op(&self, id: &str) -> Option<Pos> {
        self.op_position
            .position(id)
            .and_then(|p| self.op_group.get(p).copied())
    }

    /// Attributes the create requests of `journal` (a part of the run's;
    /// `made`, by the same positions, the ledger position of the effect each
    /// made, or [`NONE`]).
    fn requests(&self, journal: &[JournalEntry], made: &[Pos]) -> RequestGroups {
        let mut found = RequestGroups {
            group: vec![NONE; journal.len()],
            changed_arguments: BTreeSet::new(),
            unattributed: Vec::new(),
        };
        let (mut key, mut scratch) = (Vec::new(), Vec::new());
        for (position, entry) in journal.iter().enumerate() {
            if entry.kind != Some(RequestKind::Create)
                || entry.tenant.as_deref() != Some(self.credential)
            {
                continue;
            }
            let resource = entry.resource.as_deref().unwrap_or_default();
            let effect = made
                .get(position)
                .and_then(|&at| self.ledger.get(at as usize));
            let references = match (entry.fingerprint.as_deref(), effect) {
                (Some(fingerprint), _) => split_body(resource, fingerprint, &mut key),
                (None, Some(effect)) => split_effect(resource, effect, &mut key),
                (None, None) => None,
            };
            let Some(references) = references else {
                // No parsed body: the request never reached the point of being an attempt.
                continue;
            };
            let by_arguments = std::str::from_utf8(&key)
                .ok()
                .and_then(|k| self.group_keys.first_with(k, &mut scratch))
                .and_then(|first| self.op_group.get(first as usize).copied());
            // The reference only matters when the arguments match nothing: not
            // looked up otherwise (a million lookups of cold ids saved).
            let by_reference = || {
                [
                    references.client_reference.as_deref(),
                    references.metadata_operation.as_deref(),
                ]
                .into_iter()
                .flatten()
                .find_map(|id| self.group_of_op(id))
            };
            let group = match by_arguments {
                Some(g) => g,
                None => match by_reference() {
                    // Traced by its reference only: the adapter changed the arguments.
                    Some(g) => {
                        found.changed_arguments.insert(entry.seq);
                        g
                    }
                    None => {
                        found.unattributed.push(entry.seq);
                        continue;
                    }
                },
            };
            found.group[position] = group;
        }
        found
    }
}

/// By journal position, the ledger position of the effect that request made
/// (its `request_seq`), or [`NONE`].
fn effects_made(seqs: &SeqPositions, journal_len: usize, ledger: &[Effect]) -> Vec<Pos> {
    let mut made = vec![NONE; journal_len];
    for (at, effect) in ledger.iter().enumerate() {
        if let Some(slot) = effect
            .request()
            .and_then(|seq| seqs.position(seq))
            .and_then(|position| made.get_mut(position))
        {
            *slot = crate::position::pos(at);
        }
    }
    made
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
    #![allow(clippy::unwrap_used)]
    use lostreply_simulator::{canonical_json, ObjectStatus, ResponseFate};
    use serde_json::json;

    use lostreply_reports::model::SharedJson;

    use super::*;

    fn op(id: &str, args: Value) -> OperationSpec {
        OperationSpec::new(crate::scenario::model::OperationFields {
            id: id.into(),
            resource: "tickets".into(),
            tool: None,
            args: SharedJson::from_map(args.as_object().unwrap()),
        })
    }

    fn create(seq: u64, tenant: &str, body: Value) -> JournalEntry {
        JournalEntry {
            seq,
            at_ms: 0,
            real_start_ms: 0,
            real_end_ms: None,
            tenant: Some(tenant.into()),
            method: "POST".into(),
            path: "/v1/tickets".into(),
            query: None,
            kind: Some(RequestKind::Create),
            resource: Some("tickets".into()),
            idempotency_key: None,
            fingerprint: Some(canonical_json(&body).into()),
            fault: None,
            effect: None,
            replayed: false,
            step: None,
            rpc: None,
            fate: ResponseFate::Sent {
                status: 201,
                client_left: false,
            },
        }
    }

    fn effect(id: &str, tenant: &str, request_seq: Option<u64>) -> Effect {
        Effect {
            seq: 0,
            id: id.into(),
            tenant: tenant.into(),
            resource: "tickets".into(),
            args: lostreply_simulator::JsonText::of(&Map::new()),
            client_reference: None,
            metadata: None,
            idempotency_key: None,
            fingerprint: Default::default(),
            attempt: 1,
            created_at_ms: 0,
            status: ObjectStatus::Succeeded,
            request_seq: request_seq.map(lostreply_simulator::nonmax_u64),
        }
    }

    #[test]
    fn requests_and_effects_land_in_their_operations_groups() {
        let operations = [
            op("a", json!({"t": "x", "n": 1})),
            op("b", json!({"t": "y"})),
            // Same arguments as `a`, given in another order: the same group.
            op("c", json!({"n": 1, "t": "x"})),
        ];
        let journal = [
            create(1, "me", json!({"t": "y", "client_reference": "b"})),
            // Changed arguments, traced by metadata.
            create(
                2,
                "me",
                json!({"t": "z", "metadata": {"operation_id": "b"}}),
            ),
            create(3, "me", json!({"t": "x", "n": 1})),
            // Matches nothing.
            create(4, "me", json!({"t": "w"})),
            // Another tenant's: not the adapter's.
            create(5, "other", json!({"t": "y"})),
        ];
        let ledger = [
            effect("e1", "me", Some(1)),
            effect("e2", "me", Some(3)),
            effect("e3", "me", None),
            effect("e4", "other", Some(5)),
            effect("e5", "me", Some(2)),
        ];
        let a = Attribution::build(&operations, &journal, &ledger, "me");
        assert_eq!(a.group_count(), 2);
        assert_eq!(
            (a.group("a"), a.group("b"), a.group("c")),
            (Some(0), Some(1), Some(0))
        );
        assert_eq!(a.group("nope"), None);
        assert_eq!(a.group_label(0), "a, c");
        assert_eq!(a.first_op(1), Some("b"));
        assert_eq!(a.op_positions_of_group(0), &[0, 2]);
        assert_eq!(a.request_positions(0), &[2]);
        assert_eq!(a.request_positions(1), &[0, 1]);
        assert_eq!(a.effect_positions(0), &[1]);
        assert_eq!(a.effect_positions(1), &[0, 4]);
        let ids: Vec<&str> = a
            .effects_of_group(1, &ledger)
            .iter()
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(ids, ["e1", "e5"]);
        let seqs: Vec<u64> = a
            .requests_of_group(1, &journal)
            .iter()
            .map(|r| r.seq)
            .collect();
        assert_eq!(seqs, [1, 2]);
        let groups: Vec<Option<usize>> = (0..6).map(|p| a.group_of_effect(p)).collect();
        assert_eq!(groups, [Some(1), Some(0), None, None, Some(1), None]);
        assert_eq!(a.changed_arguments.iter().copied().collect::<Vec<_>>(), [2]);
        assert_eq!(a.unattributed_requests, [4]);
        assert_eq!(a.effect_positions(2), &[] as &[u32]);
        // The same with seqs that do not run on by one (a summarised journal).
        let mut gapped = journal.clone();
        for entry in &mut gapped {
            entry.seq *= 10;
        }
        let mut ledger = ledger.clone();
        for effect in &mut ledger {
            effect.request_seq = effect
                .request()
                .map(|s| lostreply_simulator::nonmax_u64(s * 10));
        }
        let b = Attribution::build(&operations, &gapped, &ledger, "me");
        let groups: Vec<Option<usize>> = (0..6).map(|p| b.group_of_effect(p)).collect();
        assert_eq!(groups, [Some(1), Some(0), None, None, Some(1), None]);
        assert_eq!(
            b.changed_arguments.iter().copied().collect::<Vec<_>>(),
            [20]
        );
    }

    /// Everything an attribution answers, for comparing two of them.
    fn answers(a: &Attribution<'_>, ops: &[OperationSpec], ledger_len: usize) -> String {
        let mut out = format!(
            "groups {} changed {:?} unattributed {:?}\n",
            a.group_count(),
            a.changed_arguments,
            a.unattributed_requests
        );
        for op in ops {
            out += &format!(
                "{} {:?} {:?}\n",
                op.id,
                a.group(&op.id),
                a.op_position(&op.id)
            );
        }
        for g in 0..a.group_count() {
            out += &format!(
                "{g}: ops {:?} requests {:?} effects {:?}\n",
                a.op_positions_of_group(g),
                a.request_positions(g),
                a.effect_positions(g)
            );
        }
        for p in 0..ledger_len {
            out += &format!("effect {p} {:?}\n", a.group_of_effect(p));
        }
        out
    }

    #[test]
    fn one_thread_and_two_attribute_alike() {
        // Operations whose groups span both halves (op i shares its
        // arguments with op i + 7), and requests of every kind in both
        // halves of the journal: by arguments, by reference with changed
        // arguments, matching nothing, another tenant's, a duplicate.
        let operations: Vec<OperationSpec> = (0..20)
            .map(|i| op(&format!("op-{i}"), json!({"n": i % 7})))
            .collect();
        let mut journal = Vec::new();
        let mut ledger = Vec::new();
        for i in 0..30u64 {
            let body = match i % 5 {
                0 => json!({"n": i % 7}),
                1 => json!({"n": 100 + i, "client_reference": format!("op-{}", i % 20)}),
                2 => json!({"n": 200 + i}),
                3 => json!({"n": i % 7, "client_reference": "op-3"}),
                _ => json!({"n": 300 + i, "metadata": {"operation_id": format!("op-{}", i % 20)}}),
            };
            let tenant = if i % 11 == 10 { "other" } else { "me" };
            journal.push(create(i + 1, tenant, body));
            ledger.push(effect(&format!("e{i}"), tenant, Some(i + 1)));
        }
        ledger.push(effect("seed", "me", None));
        for journal_len in [0, 1, 2, 15, 30] {
            for ops_len in [0, 1, 7, 20] {
                let ops = &operations[..ops_len];
                let one =
                    Attribution::build_with(ops, &journal[..journal_len], &ledger, "me", false);
                let two =
                    Attribution::build_with(ops, &journal[..journal_len], &ledger, "me", true);
                assert_eq!(
                    answers(&one, ops, ledger.len()),
                    answers(&two, ops, ledger.len()),
                    "{ops_len} operations, {journal_len} requests"
                );
            }
        }
        // And the case mix is really there.
        let full = Attribution::build_with(&operations, &journal, &ledger, "me", true);
        assert!(!full.changed_arguments.is_empty());
        assert!(!full.unattributed_requests.is_empty());
        assert!(full.group_count() == 7);
    }

    #[test]
    fn seq_positions_by_arithmetic_or_by_map() {
        let journal: Vec<JournalEntry> = [5, 6, 7]
            .iter()
            .map(|&s| create(s, "me", json!({})))
            .collect();
        let seqs = SeqPositions::new(&journal);
        assert!(matches!(seqs, SeqPositions::Contiguous { .. }));
        let found: Vec<Option<usize>> = [4, 5, 7, 8, 0].iter().map(|&s| seqs.position(s)).collect();
        assert_eq!(found, [None, Some(0), Some(2), None, None]);
        let journal: Vec<JournalEntry> = [5, 9, 7]
            .iter()
            .map(|&s| create(s, "me", json!({})))
            .collect();
        let seqs = SeqPositions::new(&journal);
        assert!(matches!(seqs, SeqPositions::Mapped(_)));
        let found: Vec<Option<usize>> = [5, 6, 7, 9].iter().map(|&s| seqs.position(s)).collect();
        assert_eq!(found, [Some(0), None, Some(2), Some(1)]);
        assert!(SeqPositions::new(&[]).position(0).is_none());
    }
}
