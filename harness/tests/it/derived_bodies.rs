//! A run keeps no fingerprint for a create that committed: its body is its
//! effect's arguments and reserved fields, and the attribution reads it from
//! there (`forget_derivable_fingerprints`). Proven here against a real
//! simulator over a loopback socket, with bodies that make the two readings
//! differ if either is wrong (nested objects in another order, escapes,
//! number forms, references in `client_reference` and in `metadata`): the
//! attribution is the same with the fingerprints and without them.

use std::time::Duration;

use lostreply_harness::check::attribution::Attribution;
use lostreply_harness::run::observation::forget_derivable_fingerprints;
use lostreply_harness::scenario::model::{OperationFields, OperationSpec};
use lostreply_reports::model::SharedJson;
use lostreply_simulator::{Plan, RequestKind, ServeOptions, Simulator};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const ME: &str = "sk_test_a";
const OTHER: &str = "sk_test_b";

fn op(id: &str, args: Value) -> OperationSpec {
    OperationSpec::new(OperationFields {
        id: id.into(),
        resource: "tickets".into(),
        tool: None,
        args: SharedJson::from_map(args.as_object().unwrap()),
    })
}

/// Posts `body` (text, sent as written) on a connection of its own and
/// returns the status.
async fn post(sim: &Simulator, tenant: &str, body: &str) -> u16 {
    let request = format!(
        "POST /v1/tickets HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {tenant}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    let head = String::from_utf8_lossy(&answer);
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

/// What an attribution says, in full.
fn answers(a: &Attribution<'_>, operations: usize, effects: usize) -> Vec<String> {
    let mut out = vec![
        format!("groups {}", a.group_count()),
        format!("changed {:?}", a.changed_arguments),
        format!("unattributed {:?}", a.unattributed_requests),
    ];
    for position in 0..operations {
        let group = a.group_at(position);
        out.push(format!(
            "op {position}: group {group:?}, requests {:?}, effects {:?}",
            group.map(|g| a.request_positions(g)),
            group.map(|g| a.effect_positions(g)),
        ));
    }
    for position in 0..effects {
        out.push(format!(
            "effect {position}: {:?}",
            a.group_of_effect(position)
        ));
    }
    out
}

#[tokio::test]
async fn the_attribution_reads_a_committed_create_from_its_effect_as_from_its_fingerprint() {
    let operations = [
        op(
            "op-1",
            json!({"title": "a \"b\"", "n": 1, "nested": {"z": [1, {"y": 2, "x": null}], "a": "é"}}),
        ),
        op("op-2", json!({"t": "x"})),
        op("op-3", json!({"amount": 1500.0, "tags": ["b", "a"]})),
        op("op-4", json!({"a\"b": 1, "é": "A"})),
        op("op-5", json!({"kind": "refund"})),
    ];
    let sim = Simulator::start(Plan::default(), ServeOptions::default())
        .await
        .unwrap();
    let bodies = [
        // The same arguments, nested members in another order, a reference.
        (
            ME,
            r#"{"nested":{"a":"\u00e9","z":[1,{"x":null,"y":2}]},"client_reference":"op-1","n":1,"title":"a \"b\""}"#,
        ),
        // Changed arguments, traced by `metadata.operation_id` only.
        (
            ME,
            r#"{"t":"changed","metadata":{"k":1,"operation_id":"op-2"}}"#,
        ),
        // Another number form of the same value; an explicit null reference.
        (
            ME,
            r#"{"tags":["b","a"],"amount":1.5e3,"client_reference":null}"#,
        ),
        // Escapes in names and values.
        (ME, r#"{"\u00e9":"\u0041","a\"b":1}"#),
        // Changed arguments, traced by `client_reference` only.
        (ME, r#"{"kind":"chargeback","client_reference":"op-5"}"#),
        // Matches nothing and names nothing: unattributed.
        (ME, r#"{"kind":"unknown"}"#),
        // Rejected before commit (metadata not an object): no effect, so
        // its fingerprint stays.
        (ME, r#"{"t":"x","metadata":"op-2"}"#),
        // Another tenant's create of the same arguments: never the adapter's.
        (OTHER, r#"{"t":"x"}"#),
    ];
    let mut statuses = Vec::new();
    for (tenant, body) in bodies {
        statuses.push(post(&sim, tenant, body).await);
    }
    assert_eq!(statuses, [201, 201, 201, 201, 201, 201, 400, 201]);
    let (journal, ledger) = (sim.journal(), sim.ledger());
    sim.shutdown().await;

    let with_fingerprints = Attribution::build(&operations, &journal, &ledger, ME);
    let (mut kept_journal, mut kept_ledger) = (journal.clone(), ledger.clone());
    forget_derivable_fingerprints(&mut kept_journal, &mut kept_ledger);
    let creates: Vec<(bool, bool)> = kept_journal
        .iter()
        .filter(|e| e.kind == Some(RequestKind::Create))
        .map(|e| (e.effect.is_some(), e.fingerprint.is_some()))
        .collect();
    // Every committed create's fingerprint freed, the rejected one's kept.
    assert_eq!(
        creates,
        [
            (true, false),
            (true, false),
            (true, false),
            (true, false),
            (true, false),
            (true, false),
            (false, true),
            (true, false),
        ]
    );
    assert!(kept_ledger.iter().all(|e| e.fingerprint.is_empty()));
    let from_effects = Attribution::build(&operations, &kept_journal, &kept_ledger, ME);
    let expected = answers(&with_fingerprints, operations.len(), ledger.len());
    assert_eq!(
        answers(&from_effects, operations.len(), ledger.len()),
        expected
    );
    // And the case mix is really there: by arguments, by either reference,
    // unattributed.
    assert_eq!(with_fingerprints.changed_arguments.len(), 2);
    assert_eq!(with_fingerprints.unattributed_requests.len(), 1);
    for position in 0..operations.len() {
        let group = with_fingerprints.group_at(position).unwrap();
        assert_eq!(
            with_fingerprints.effect_positions(group).len(),
            1,
            "{}",
            expected.join("\n")
        );
    }
}
