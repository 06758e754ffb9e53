//! `lostreply proxy` in front of lostreply's own simulator (plain HTTP, no
//! third-party tool needed): the faults the third-party tests leave out, an
//! error status before the upstream with its `Retry-After`, a reset and a
//! stall after the commit, and a rule matched on the caller's credential.

use std::time::Duration;

use lostreply_certify::contract::Contract;
use lostreply_certify::proxy::{self, Proxy, ProxyConfig};
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::tls::Trust;
use lostreply_simulator::{
    FaultResponse, FaultRule, IdempotencyMode, Match, Position, Release, StallThen,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::proxy_thirdparty::{
    connect_and_send, create_request, effects, exchange, get_json, status, wait_for_fate,
};

fn rule(when: Match, at: Position, response: FaultResponse) -> FaultRule {
    FaultRule::builder()
        .when(when)
        .at(at)
        .response(response)
        .build()
}

fn nth_post(nth: u32) -> Match {
    let mut when = Match::default();
    when.method = Some("POST".to_owned());
    when.tenant = Some("sk_test_a".to_owned());
    when.nth = Some(nth);
    when
}

async fn start(contract: &Contract, faults: Vec<FaultRule>) -> Proxy {
    proxy::start(ProxyConfig {
        upstream: contract.base_url.clone(),
        contract: contract.clone(),
        faults,
        stall_cap: Duration::from_secs(600),
        hold_cap: Duration::from_secs(600),
        port: 0,
        trust: Trust::System,
    })
    .await
    .expect("the proxy starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reset_stall_and_a_tenant_rule_in_front_of_the_simulator() {
    let sim = simulator::start(Wire::Generic, IdempotencyMode::Stripe, 11)
        .await
        .expect("simulator starts");
    let contract = simulator::contract(Wire::Generic, IdempotencyMode::Stripe, &sim.base_url())
        .expect("shipped contract");
    let mut tenant_b = Match::default();
    tenant_b.tenant = Some("sk_test_b".to_owned());
    let faults = vec![
        rule(
            nth_post(1),
            Position::BeforeCommit,
            FaultResponse::Status {
                code: 429,
                retry_after_s: Some(30),
            },
        ),
        rule(nth_post(2), Position::AfterCommit, FaultResponse::Reset),
        rule(
            nth_post(3),
            Position::AfterCommit,
            FaultResponse::Stall {
                then: StallThen::Abandon,
                until: Release::ClientGone,
            },
        ),
        rule(tenant_b, Position::AfterCommit, FaultResponse::Drop),
    ];
    let proxy = start(&contract, faults).await;
    let to = proxy.url();
    let create = |key: &str, marker: &str| create_request(&contract, key, marker);

    let refused = exchange(&to, &create("s-k1", "s-m1"))
        .await
        .expect("an answer");
    assert_eq!(status(&refused), 429);
    let text = String::from_utf8_lossy(&refused).to_ascii_lowercase();
    assert!(text.contains("\r\nretry-after: 30\r\n"), "{text}");
    assert_eq!(effects(&to, "s-m1").await, 0, "never forwarded");

    let reset = exchange(&to, &create("s-k2", "s-m2")).await;
    assert_eq!(
        reset.expect_err("an RST").kind(),
        std::io::ErrorKind::ConnectionReset
    );
    assert_eq!(effects(&to, "s-m2").await, 1, "committed before the reset");

    let mut held = connect_and_send(&to, &create("s-k3", "s-m3")).await;
    wait_for_fate(&to, 2, "stalled").await;
    assert_eq!(effects(&to, "s-m3").await, 1, "committed before the stall");
    held.shutdown().await.expect("the client leaves");
    let mut rest = Vec::new();
    held.read_to_end(&mut rest).await.expect("a FIN");
    assert_eq!(rest, b"", "no byte of answer");

    // The same create as tenant b: its rule drops it, tenant a's rules do not count it.
    let as_b = String::from_utf8(create("s-k4", "s-m4"))
        .expect("text")
        .replace("sk_test_a", "sk_test_b");
    let dropped = exchange(&to, as_b.as_bytes()).await.expect("a FIN");
    assert_eq!(dropped, b"");
    let answered = exchange(&to, &create("s-k5", "s-m5"))
        .await
        .expect("an answer");
    assert_eq!(
        status(&answered),
        201,
        "the fourth of tenant a's creates is not struck"
    );

    let journal = get_json(&to, "/_lostreply/journal").await;
    let story: Vec<(Option<u64>, &str, Option<u64>, &str)> = journal["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["upstream_status"].as_u64(),
                e["fate"].as_str().unwrap_or("?"),
                e["client_status"].as_u64(),
                e["held_until"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    let expected = vec![
        (None, "error_status", Some(429), "-"),
        (Some(201), "reset", None, "-"),
        (Some(201), "stalled", None, "client_left"),
        (Some(201), "dropped", None, "-"),
        (Some(201), "answered", Some(201), "-"),
    ];
    assert_eq!(story, expected, "{journal:#}");
    assert_eq!(sim.ledger_len(), 4, "every forwarded create committed once");
    proxy.shutdown().await;
    sim.shutdown().await;
}
