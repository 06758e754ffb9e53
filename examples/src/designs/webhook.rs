//! Standard Webhooks: is a delivery genuine and fresh (by
//! `lostreply_simulator::standard_webhooks`, the scheme the simulator signs
//! with), and which operation is it about. Pure: the caller decides what an
//! accepted event changes.

use std::collections::BTreeMap;

use lostreply_simulator::standard_webhooks::{self, Rejection};
use serde_json::Value;

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The contract has no webhooks: nothing can be genuine.
    #[error("the contract has no webhooks")]
    NoWebhooks,
    /// The delivery is not genuine and fresh under Standard Webhooks.
    #[error(transparent)]
    Rejected(#[from] Rejection),
}

/// Verifies a delivery against the secret, over the body exactly as
/// received, with its timestamp checked against `now_unix` (the simulator
/// clock), by the scheme the simulator signs with. Returns the `webhook-id`.
pub fn verify<'a>(
    secret: Option<&str>,
    headers: &'a BTreeMap<String, String>,
    body: &str,
    now_unix: i64,
) -> Result<&'a str, Refusal> {
    let secret = secret.ok_or(Refusal::NoWebhooks)?;
    Ok(standard_webhooks::verify(secret, headers, body, now_unix)?)
}

/// A genuine event, as far as the adapter reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `tickets.created`, `tickets.succeeded`, ...
    pub kind: String,
    /// The object at the moment of the event.
    pub object: Value,
}

impl Event {
    /// Reads a delivery body; `None` when it is not an event with an object.
    pub fn parse(body: &str) -> Option<Event> {
        let value: Value = serde_json::from_str(body).ok()?;
        let kind = value.get("type").and_then(Value::as_str)?.to_owned();
        let object = value.get("data").filter(|d| d.is_object())?.clone();
        Some(Event { kind, object })
    }

    /// The operation the object belongs to: its `client_reference`, else its
    /// `metadata.operation_id`.
    pub fn operation_id(&self) -> Option<&str> {
        self.object
            .get("client_reference")
            .and_then(Value::as_str)
            .or_else(|| {
                self.object
                    .pointer("/metadata/operation_id")
                    .and_then(Value::as_str)
            })
    }

    /// The object's id.
    pub fn object_id(&self) -> Option<&str> {
        self.object.get("id").and_then(Value::as_str)
    }

    /// The object's status word.
    pub fn status(&self) -> &str {
        self.object
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: &str = "1614265330";
    const BODY: &str = r#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers(signature: &str) -> BTreeMap<String, String> {
        [
            ("webhook-id", ID),
            ("webhook-timestamp", TS),
            ("webhook-signature", signature),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[test]
    fn genuine_deliveries_are_accepted_and_others_refused() {
        let now = 1_614_265_330;
        assert_eq!(verify(Some(SECRET), &headers(SIGNATURE), BODY, now), Ok(ID));
        let wrong = "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA==";
        assert_eq!(
            verify(Some(wrong), &headers(SIGNATURE), BODY, now),
            Err(Refusal::Rejected(Rejection::NoMatch))
        );
        assert!(matches!(
            verify(Some(SECRET), &headers(SIGNATURE), BODY, now + 301),
            Err(Refusal::Rejected(Rejection::Stale { .. }))
        ));
        assert_eq!(
            verify(None, &headers(SIGNATURE), BODY, now),
            Err(Refusal::NoWebhooks)
        );
    }

    #[test]
    fn events_correlate_by_reference_then_metadata() {
        let by_reference = Event::parse(
            r#"{"type":"tickets.created","data":{"id":"tkt_1","status":"processing","client_reference":"op-1"}}"#,
        );
        assert_eq!(
            by_reference.as_ref().and_then(Event::operation_id),
            Some("op-1")
        );
        let by_metadata = Event::parse(
            r#"{"type":"tickets.created","data":{"id":"tkt_1","client_reference":null,"metadata":{"operation_id":"op-2"}}}"#,
        );
        assert_eq!(
            by_metadata.as_ref().and_then(Event::operation_id),
            Some("op-2")
        );
        assert_eq!(Event::parse("not json"), None);
    }
}
