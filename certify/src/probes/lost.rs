//! The lost response: the probe closes its own connection right after sending
//! (before reading a byte), waits, and retries with the same key.

use super::ctx::{exchange, wait, Ctx, KeyUse};
use super::trail::{Stop, Trail};

/// Most retries while the first attempt is still reported in flight.
const MAX_IN_FLIGHT_RETRIES: u32 = 20;

/// One sub-case per declared wait, each with its own marker and key.
pub async fn lost_response(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    for (n, w) in c.contract.lost_response_waits.iter().enumerate() {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let marker = c.marker("lost_response", n);
        let key = KeyUse::Key(c.key("lost_response", n));
        let req = c.create_main(&c.body(&marker), &key);
        let label = format!("retry after {w}");
        let sent = c.client.send_and_abort(&req).await;
        t.push(exchange(
            "sent, connection closed before reading",
            &req,
            &sent.clone().map(|()| crate::client::Response {
                status: 0,
                headers: Vec::new(),
                body: b"(answer not read: lost on purpose)".to_vec(),
                elapsed: std::time::Duration::ZERO,
            }),
        ));
        sent?;
        wait(w.value).await;
        let before = c.count(t, &marker, 1).await?;
        t.note(format!(
            "{label}: before the retry the read-back counts {before} effect(s) from the lost request"
        ));
        let mut answer = c.send(t, &label, &req).await?;
        let mut tries = 1;
        while c.contract.in_flight.refuses_with(answer.status) && tries <= MAX_IN_FLIGHT_RETRIES {
            wait(c.contract.in_flight_after.value).await;
            answer = c
                .send(t, &format!("{label}, again (in flight)"), &req)
                .await?;
            tries += 1;
        }
        let found = c.count(t, &marker, 1).await?;
        c.judge_count(t, found, 1, &label);
        if !c.is_success(answer.status) {
            t.fail(format!(
                "{label}: the retry ended with {}, not the saved result",
                answer.status
            ));
        }
    }
    Ok(())
}
