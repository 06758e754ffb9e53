//! An answer written after its client had left is journaled so: `sent`, with
//! `client_left: true`, when the socket had said (EOF or reset) that the
//! client was gone before the answer was handed over; a client that stays
//! reads it, and the entry says nothing more than `sent`. Raw clients over
//! loopback, each closing (or not) at a moment the test chooses.

use std::time::Duration;

use crate::common::*;
use lostreply_simulator::{FaultResponse, Position, ResponseFate, Simulator};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A simulator whose creates answer `delay` after their commit.
async fn delayed(delay: Duration) -> Simulator {
    let mut plan = plan();
    plan.faults = vec![rule(
        creates(),
        Position::AfterCommit,
        FaultResponse::Delay { delay },
    )];
    start(plan).await
}

/// The journal as the control API writes it.
async fn journal_json(sim: &Simulator) -> serde_json::Value {
    let url = format!("{}/journal", sim.control_url());
    json(client(5000).get(url).send().await.unwrap()).await.1
}

/// Sends one create on a connection of its own and waits for its commit.
async fn committed_create(sim: &Simulator) -> TcpStream {
    let mut stream = TcpStream::connect(sim.local_addr()).await.unwrap();
    let request = raw_post(A, "tickets", r#"{"title":"late"}"#);
    stream.write_all(request.as_bytes()).await.unwrap();
    wait_until("the create committed", || sim.ledger().len() == 1).await;
    stream
}

#[tokio::test]
async fn an_answer_written_after_the_client_closed_is_journaled_client_left() {
    // A FIN, then an RST: either way the socket says the client is gone.
    for reset in [false, true] {
        // Long enough that the close is seen well before the answer leaves.
        let sim = delayed(Duration::from_millis(1500)).await;
        let stream = committed_create(&sim).await;
        if reset {
            stream.set_zero_linger().unwrap();
        }
        drop(stream);
        let fate = fate_of(&sim, 1).await;
        assert_eq!(
            fate,
            ResponseFate::Sent {
                status: 201,
                client_left: true
            },
            "reset: {reset}"
        );
        let journal = journal_json(&sim).await;
        let entry = &journal["data"][0];
        assert_eq!(entry["fate"], "sent", "{entry}");
        assert_eq!(entry["status"], 201, "{entry}");
        assert_eq!(entry["client_left"], true, "{entry}");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn an_answer_the_client_waited_for_is_journaled_sent_alone() {
    let sim = delayed(Duration::from_millis(200)).await;
    let mut stream = committed_create(&sim).await;
    let Raw::Silent(bytes) = read_raw(&mut stream, 1000).await else {
        panic!("the connection stays open after the answer");
    };
    let (status, _, _) = split_response(&bytes);
    assert_eq!(status, 201);
    assert_eq!(
        fate_of(&sim, 1).await,
        ResponseFate::Sent {
            status: 201,
            client_left: false
        }
    );
    let journal = journal_json(&sim).await;
    let entry = &journal["data"][0];
    assert_eq!(entry["fate"], "sent", "{entry}");
    assert!(entry.get("client_left").is_none(), "{entry}");
    sim.shutdown().await;
}
