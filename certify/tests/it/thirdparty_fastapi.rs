//! A third-party implementation certified in two set-ups: fastapi-idempotency
//! 0.1.1 (PyPI) with its MemoryStore, in front of the order API in
//! `tests/thirdparty/python/orders.py`, scoped as its README describes: by
//! client IP (the default; `tests/thirdparty/fastapi-idempotency-ip.yaml`)
//! and by the caller's bearer credential (a `scope` function;
//! `tests/thirdparty/fastapi-idempotency-bearer.yaml`), both contracts
//! written from the README. Every probe's verdict is asserted on two seeds;
//! docs/certify.md explains each.

use lostreply_certify::verdict::Verdict;

use crate::thirdparty::assert_findings;
use crate::thirdparty_python::start_app;

/// What both scopings share; `cross_tenant` is the one probe that differs.
fn expected(cross_tenant: Verdict) -> [(&'static str, Verdict); 14] {
    [
        ("baseline", Verdict::Pass),
        ("sequential_replay", Verdict::Pass),
        ("replay_fidelity", Verdict::Pass),
        ("lost_response", Verdict::Pass),
        ("concurrent_duplicates", Verdict::Pass),
        ("key_reuse_other_args", Verdict::Pass),
        // raw_bytes: the reversed body is a different request, 422.
        ("key_reuse_reordered_args", Verdict::Pass),
        // A duplicate waits (up to 15 s) and gets the first result; other
        // arguments are refused at once (422).
        ("in_flight", Verdict::Pass),
        // The path is in the fingerprint, not the key: 422 on another route.
        ("other_endpoint", Verdict::Pass),
        ("cross_tenant", cross_tenant),
        // The 422 rejection is stored and replayed (only 5xx are not).
        ("rejected_not_poisoned", Verdict::Pass),
        // A 5xx is never stored and releases the key: the retry runs again.
        ("error_after_commit", Verdict::HardFail),
        // A 256-byte key is refused (422) and leaves no effect; a key with
        // spaces is a key: under accepts_any neither makes a duplicate.
        ("key_validation", Verdict::Pass),
        ("retention", Verdict::Pass),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn fastapi_idempotency_by_ip_findings_are_stable() {
    let (_app, url) = start_app("fastapi_idempotency_app.py", &["ip"]);
    let contract = "tests/thirdparty/fastapi-idempotency-ip.yaml";
    // Every tenant calls from 127.0.0.1: tenant 2 is replayed tenant 1's order.
    assert_findings(contract, &url, &expected(Verdict::HardFail), 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    lostreply_no_thirdparty_python,
    ignore = "needs the Python middlewares: python3 -m venv target/thirdparty-venv && target/thirdparty-venv/bin/pip install -r certify/tests/thirdparty/python/requirements.txt"
)]
async fn fastapi_idempotency_by_bearer_findings_are_stable() {
    let (_app, url) = start_app("fastapi_idempotency_app.py", &["bearer"]);
    let contract = "tests/thirdparty/fastapi-idempotency-bearer.yaml";
    // Scoped by credential: tenant 2's request is its own work.
    assert_findings(contract, &url, &expected(Verdict::Pass), 1).await;
}
