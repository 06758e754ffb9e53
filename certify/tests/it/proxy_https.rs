//! `lostreply proxy` in front of an `https://` upstream on loopback: the
//! simulator behind a TLS-terminating server whose certificate a CA made in
//! the test signs. With that CA trusted the proxy forwards, faults and reads
//! back over TLS; without it the proxy does not start, naming the host and
//! the reason.

use std::time::Duration;

use lostreply_certify::proxy::{self, ProxyConfig, ProxyError};
use lostreply_certify::simulator::{self, Wire};
use lostreply_certify::tls::Trust;
use lostreply_simulator::{FaultResponse, FaultRule, IdempotencyMode, Match, Position};

use super::proxy_thirdparty::{create_request, effects, exchange, get_json, status};
use super::tls_server::{Ca, TlsProxy, Validity};

fn drop_first_create() -> Vec<FaultRule> {
    let mut when = Match::default();
    when.method = Some("POST".to_owned());
    when.nth = Some(1);
    vec![FaultRule::builder()
        .when(when)
        .at(Position::AfterCommit)
        .response(FaultResponse::Drop)
        .build()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_upstream_is_forwarded_faulted_and_read_back_over_tls() {
    let ca = Ca::new("lostreply proxy test CA");
    let dir = tempfile::tempdir().expect("tempdir");
    let trust = Trust::ca_file(&ca.write_pem(dir.path())).expect("the CA file is usable");
    let sim = simulator::start(Wire::Generic, IdempotencyMode::Stripe, 7)
        .await
        .expect("simulator starts");
    let tls = TlsProxy::start(
        ca.server_cert(&["127.0.0.1"], Validity::Current),
        sim.local_addr(),
    )
    .await;
    let contract = simulator::contract(Wire::Generic, IdempotencyMode::Stripe, &tls.origin())
        .expect("shipped contract");
    let config = |trust| ProxyConfig {
        upstream: tls.origin(),
        contract: contract.clone(),
        faults: drop_first_create(),
        stall_cap: Duration::from_secs(30),
        hold_cap: Duration::from_secs(30),
        port: 0,
        trust,
    };

    let refused = proxy::start(config(Trust::System)).await.err();
    let shown = refused
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        shown.contains(&format!("TLS with {}: unknown issuer", tls.host())),
        "{shown}"
    );
    assert_eq!(refused.as_ref().map(ProxyError::exit_code), Some(3));

    let running = proxy::start(config(trust)).await.expect("the proxy starts");
    let to = running.url();
    let lost = exchange(&to, &create_request(&contract, "tls-k1", "tls-m1")).await;
    assert_eq!(lost.expect("a FIN"), b"", "no byte of answer");
    assert_eq!(effects(&to, "tls-m1").await, 1, "committed behind TLS");
    let retry = exchange(&to, &create_request(&contract, "tls-k1", "tls-m1"))
        .await
        .expect("an answer");
    assert_eq!(status(&retry), 201, "{}", String::from_utf8_lossy(&retry));
    assert_eq!(effects(&to, "tls-m1").await, 1, "replayed");
    assert_eq!(
        sim.ledger_len(),
        1,
        "one effect in the simulator's own ledger"
    );
    let journal = get_json(&to, "/_lostreply/journal").await;
    assert_eq!(journal["entries"][0]["fate"], "dropped", "{journal:#}");
    assert_eq!(journal["entries"][0]["upstream_status"], 201, "{journal:#}");
    running.shutdown().await;
    sim.shutdown().await;
}
