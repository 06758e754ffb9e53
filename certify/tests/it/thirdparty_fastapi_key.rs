//! A third-party implementation certified: fastapi-idempotency-key 0.1.1
//! (PyPI) with its MemoryBackend, registered as its README's Quick Start
//! shows in front of the order API in `tests/thirdparty/python/orders.py`,
//! held to `tests/thirdparty/fastapi-idempotency-key.yaml` (written from the
//! README). Every probe's verdict is asserted on two seeds; docs/certify.md
//! explains each.

use lostreply_certify::verdict::Verdict;

use crate::thirdparty::assert_findings;
use crate::thirdparty_python::start_app;

/// Every probe's verdict, as explained finding by finding in docs/certify.md.
const EXPECTED: [(&str, Verdict); 14] = [
    ("baseline", Verdict::Pass),
    ("sequential_replay", Verdict::Pass),
    ("replay_fidelity", Verdict::Pass),
    ("lost_response", Verdict::Pass),
    ("concurrent_duplicates", Verdict::Pass),
    ("key_reuse_other_args", Verdict::Pass),
    // raw_bytes: the reversed body is another payload, 422 as declared.
    ("key_reuse_reordered_args", Verdict::Pass),
    ("in_flight", Verdict::Pass),
    // The path is in the fingerprint: the key on another route is 422.
    ("other_endpoint", Verdict::Pass),
    // The caller is in neither the key nor the fingerprint: tenant 2 is
    // replayed tenant 1's order.
    ("cross_tenant", Verdict::HardFail),
    // The 422 rejection is cached and replayed, as the README's flow chart says.
    ("rejected_not_poisoned", Verdict::Pass),
    // A 5xx releases the key (as the README promises): the retry runs again.
    ("error_after_commit", Verdict::HardFail),
    ("key_validation", Verdict::Pass),
    ("retention", Verdict::Pass),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn fastapi_idempotency_key_findings_are_stable() {
    let (_app, url) = start_app("fastapi_idempotency_key_app.py", &[]);
    let contract = "tests/thirdparty/fastapi-idempotency-key.yaml";
    assert_findings(contract, &url, &EXPECTED, 1).await;
}
