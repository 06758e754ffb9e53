//! What the real provider SDKs do when a create's answer is lost, measured
//! against the simulator's own profile of their provider over loopback: one
//! SDK call (examples/sdk-adapters/*/fact_driver.*) against a simulator
//! that commits the first create and then closes the connection without a
//! byte. The journal counts the requests the SDK sent and the keys it sent
//! them with; the ledger counts what was billed. docs/sdks.md cites these
//! tests for each claim.

use std::sync::Arc;

use crate::common;
use crate::common::sdks::{argv, Runtime};
use lostreply_simulator::{
    FaultResponse, FaultRule, Match, Plan, Position, Profile, RequestKind, ServeOptions, Simulator,
};
use serde_json::Value;

/// What one SDK call did, as the simulator saw it.
#[derive(Debug)]
struct Seen {
    /// The driver's line: `kind` is `result` or `error`.
    line: Value,
    /// The idempotency key of each create request, in order.
    keys: Vec<Option<String>>,
    /// Effects in the ledger.
    effects: usize,
    /// How many create requests were answered as replays.
    replays: usize,
}

impl Seen {
    fn error_type(&self) -> &str {
        self.line["error"]["type"].as_str().unwrap_or("")
    }
}

/// Runs `scenario` of the fact driver against `profile` with the first
/// create's answer dropped after its commit.
async fn lost_answer(runtime: Runtime, profile: &str, scenario: &str) -> Seen {
    answered(runtime, profile, scenario, FaultResponse::Drop).await
}

/// Runs `scenario` of the fact driver against `profile` with the first
/// create answered by `response` after its commit.
async fn answered(
    runtime: Runtime,
    profile: &str,
    scenario: &str,
    response: FaultResponse,
) -> Seen {
    let script = match runtime {
        Runtime::Python => "fact_driver.py",
        Runtime::Node => "fact_driver.mjs",
    };
    let argv = argv(runtime, script);
    let profile = Profile::builtin(profile).expect("a built-in profile");
    let mut plan = {
        let mut changed = Plan::default();
        changed.idempotency.mode = profile.keys.default_mode;
        changed.profile = Arc::new(profile);
        changed
    };
    plan.faults = vec![FaultRule::builder()
        .when({
            let mut changed = Match::default();
            changed.kind = Some(RequestKind::Create);
            changed.nth = Some(1);
            changed
        })
        .at(Position::AfterCommit)
        .response(response)
        .build()];
    let sim = Simulator::start(plan, ServeOptions::default())
        .await
        .expect("the simulator starts");
    let out = tokio::process::Command::new(&argv[0])
        .args(&argv[1..])
        .args([scenario, &sim.base_url()])
        .output()
        .await
        .expect("the fact driver runs");
    assert!(
        out.status.success(),
        "{scenario}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{scenario}: not one JSON line ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    sim.wait_quiet(std::time::Duration::from_secs(5)).await;
    let creates: Vec<_> = sim
        .journal()
        .into_iter()
        .filter(|e| e.kind == Some(RequestKind::Create))
        .collect();
    let seen = Seen {
        line,
        keys: creates
            .iter()
            .map(|e| e.idempotency_key.as_ref().map(|k| k.to_string()))
            .collect(),
        effects: sim.ledger_len(),
        replays: creates.iter().filter(|e| e.replayed).count(),
    };
    sim.shutdown().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_stripe_client_by_default_sends_once_and_raises() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "stripe", "stripe-create-default-client").await;
    assert_eq!(seen.keys.len(), 1, "{seen:?}");
    assert_eq!(seen.error_type(), "APIConnectionError", "{seen:?}");
    assert!(
        seen.keys[0].is_some(),
        "the SDK sends a key of its own: {seen:?}"
    );
    assert_eq!(seen.effects, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_with_two_retries_resends_the_same_key_and_stripe_replays_it() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "stripe", "stripe-create-retries-2").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys.len(), 2, "{seen:?}");
    assert!(
        seen.keys[0].is_some() && seen.keys[0] == seen.keys[1],
        "{seen:?}"
    );
    assert_eq!((seen.effects, seen.replays), (1, 1), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_global_api_retries_twice_by_default() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "stripe", "stripe-create-global-default").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys.len(), 2, "{seen:?}");
    assert_eq!(seen.keys[0], seen.keys[1]);
    assert_eq!(seen.effects, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_node,
    ignore = "needs node and the Node provider SDKs: npm ci --prefix examples/sdk-adapters/node"
)]
async fn stripe_node_retries_by_default_with_the_same_key() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Node, "stripe", "stripe-create-default-client").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys.len(), 2, "{seen:?}");
    assert!(
        seen.keys[0].is_some() && seen.keys[0] == seen.keys[1],
        "{seen:?}"
    );
    assert_eq!((seen.effects, seen.replays), (1, 1), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_node,
    ignore = "needs node and the Node provider SDKs: npm ci --prefix examples/sdk-adapters/node"
)]
async fn stripe_node_with_no_retries_still_resends_once_after_a_closed_connection() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Node, "stripe", "stripe-create-retries-0").await;
    assert_eq!(seen.keys.len(), 2, "{seen:?}");
    assert_eq!(seen.keys[0], seen.keys[1]);
    assert_eq!(seen.effects, 1, "the key saves it: {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn openai_python_by_default_bills_a_lost_answer_twice_without_a_key() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "openai", "openai-chat-default").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys, vec![None, None], "{seen:?}");
    assert_eq!(seen.effects, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn openai_python_with_no_retries_bills_once_and_raises() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "openai", "openai-chat-no-retries").await;
    assert_eq!(seen.error_type(), "APIConnectionError", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (1, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn openai_python_responses_by_default_bills_twice() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "openai", "openai-responses-default").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (2, 2), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_node,
    ignore = "needs node and the Node provider SDKs: npm ci --prefix examples/sdk-adapters/node"
)]
async fn openai_node_by_default_bills_a_lost_answer_twice_without_a_key() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Node, "openai", "openai-chat-default").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys, vec![None, None], "{seen:?}");
    assert_eq!(seen.effects, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn anthropic_python_by_default_bills_a_lost_answer_twice_without_a_key() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "anthropic", "anthropic-messages-default").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys, vec![None, None], "{seen:?}");
    assert_eq!(seen.effects, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn anthropic_python_with_no_retries_bills_once_and_raises() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(
        Runtime::Python,
        "anthropic",
        "anthropic-messages-no-retries",
    )
    .await;
    assert_eq!(seen.error_type(), "APIConnectionError", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (1, 1));
}

/// The first bytes of a create's answer, then a closed connection.
const TRUNCATED: FaultResponse = FaultResponse::Partial { bytes: 10 };

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_sends_the_callers_key_on_every_retry() {
    let _alone = common::module_alone(module_path!());
    let seen = lost_answer(Runtime::Python, "stripe", "stripe-create-retries-2-key").await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    let key = Some("fact-key-1".to_owned());
    assert_eq!(seen.keys, vec![key.clone(), key], "{seen:?}");
    assert_eq!((seen.effects, seen.replays), (1, 1), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_with_two_retries_resends_after_a_500_with_the_same_key() {
    let _alone = common::module_alone(module_path!());
    let fault = FaultResponse::Status {
        code: 500,
        retry_after_s: None,
    };
    let seen = answered(Runtime::Python, "stripe", "stripe-create-retries-2", fault).await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!(seen.keys.len(), 2, "{seen:?}");
    assert_eq!(seen.keys[0], seen.keys[1], "{seen:?}");
    assert_eq!((seen.effects, seen.replays), (1, 1), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn stripe_python_does_not_resend_after_a_truncated_body() {
    let _alone = common::module_alone(module_path!());
    let seen = answered(
        Runtime::Python,
        "stripe",
        "stripe-create-retries-2",
        TRUNCATED,
    )
    .await;
    assert_eq!(seen.keys.len(), 1, "{seen:?}");
    assert_eq!(seen.error_type(), "APIConnectionError", "{seen:?}");
    assert_eq!(seen.effects, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_node,
    ignore = "needs node and the Node provider SDKs: npm ci --prefix examples/sdk-adapters/node"
)]
async fn stripe_node_does_not_resend_after_a_truncated_body() {
    let _alone = common::module_alone(module_path!());
    let seen = answered(
        Runtime::Node,
        "stripe",
        "stripe-create-retries-2",
        TRUNCATED,
    )
    .await;
    assert_eq!(seen.keys.len(), 1, "{seen:?}");
    assert_eq!(seen.error_type(), "StripeConnectionError", "{seen:?}");
    assert_eq!(seen.effects, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn openai_python_by_default_resends_after_a_truncated_body() {
    let _alone = common::module_alone(module_path!());
    let seen = answered(Runtime::Python, "openai", "openai-chat-default", TRUNCATED).await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (2, 2), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn openai_python_by_default_resends_after_a_500() {
    let _alone = common::module_alone(module_path!());
    let fault = FaultResponse::Status {
        code: 500,
        retry_after_s: None,
    };
    let seen = answered(Runtime::Python, "openai", "openai-chat-default", fault).await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (2, 2), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_node,
    ignore = "needs node and the Node provider SDKs: npm ci --prefix examples/sdk-adapters/node"
)]
async fn openai_node_throws_a_raw_type_error_after_a_truncated_body_and_does_not_resend() {
    let _alone = common::module_alone(module_path!());
    let seen = answered(Runtime::Node, "openai", "openai-chat-default", TRUNCATED).await;
    assert_eq!(seen.error_type(), "TypeError", "{seen:?}");
    assert_eq!(
        seen.line["error"]["module"], "other",
        "not an OpenAIError: {seen:?}"
    );
    assert_eq!((seen.keys.len(), seen.effects), (1, 1), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_sdk_python,
    ignore = "needs the Python provider SDKs: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install -r examples/sdk-adapters/python/requirements.txt"
)]
async fn anthropic_python_by_default_resends_after_a_truncated_body() {
    let _alone = common::module_alone(module_path!());
    let seen = answered(
        Runtime::Python,
        "anthropic",
        "anthropic-messages-default",
        TRUNCATED,
    )
    .await;
    assert_eq!(seen.line["kind"], "result", "{seen:?}");
    assert_eq!((seen.keys.len(), seen.effects), (2, 2), "{seen:?}");
}
