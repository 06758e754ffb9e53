//! A third-party implementation certified: @node-idempotency/nestjs 1.0.4
//! (npm) with its memory storage, behind the tiny NestJS app in
//! `tests/thirdparty/nest/`, held to `tests/thirdparty/nest.yaml` (written
//! from its README). Every probe's verdict is asserted on two seeds;
//! docs/certify.md explains each.
//!
//! Needs node and `npm ci --prefix certify/tests/thirdparty/nest` (.ci/run
//! does both). Without them the build marks the test ignored, with the reason
//! (certify/build.rs), unless `LOSTREPLY_REQUIRE_NODE=1` (CI sets it): then it
//! runs, and their absence fails it.

mod nest;

use std::process::Command;

use lostreply_certify::verdict::Verdict;

use crate::thirdparty::{assert_findings, start};

/// Every probe's verdict, as explained finding by finding in docs/certify.md.
const EXPECTED: [(&str, Verdict); 14] = [
    ("baseline", Verdict::Pass),
    ("sequential_replay", Verdict::Pass),
    ("replay_fidelity", Verdict::Pass),
    ("lost_response", Verdict::Pass),
    ("concurrent_duplicates", Verdict::Pass),
    ("key_reuse_other_args", Verdict::Pass),
    // The fingerprint is JSON.stringify of the parsed body, which keeps the
    // fields' order: the reordered body is refused (422) where the contract,
    // silent in the README, takes the draft's parsed-payload default.
    ("key_reuse_reordered_args", Verdict::Fail),
    ("in_flight", Verdict::Pass),
    // The method and path are in the stored key: separate work per endpoint.
    ("other_endpoint", Verdict::Pass),
    // The caller is in neither the key nor the fingerprint: tenant 2 is
    // replayed tenant 1's order.
    ("cross_tenant", Verdict::HardFail),
    // The 422 is stored and replayed, as the README's `error` response says.
    ("rejected_not_poisoned", Verdict::Pass),
    // The 500 is stored too: the retry gets it again and nothing runs twice.
    ("error_after_commit", Verdict::Pass),
    ("key_validation", Verdict::Pass),
    ("retention", Verdict::Pass),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_nest,
    ignore = "needs node and @node-idempotency/nestjs: apt-get install nodejs npm && npm ci --prefix certify/tests/thirdparty/nest"
)]
async fn node_idempotency_nestjs_findings_are_stable() {
    let node = nest::find_node()
        .unwrap_or_else(|why| panic!("this test needs node and @node-idempotency/nestjs: {why}"));
    let mut command = Command::new(node);
    command.arg("app.js").arg("0").current_dir(nest::app_dir());
    let (_app, url) = start(command);
    assert_findings("tests/thirdparty/nest.yaml", &url, &EXPECTED, 1).await;
}
