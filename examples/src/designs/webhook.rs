//! Standard Webhooks: is a delivery genuine and fresh, and which operation
//! is it about. Pure: the caller decides what an accepted event changes.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// A delivery whose timestamp is further than this from `now` is refused:
/// a captured delivery cannot be replayed later.
pub const TOLERANCE_S: i64 = 300;

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The contract has no webhooks: nothing can be genuine.
    NoWebhooks,
    /// A `webhook-*` header is absent.
    MissingHeader(&'static str),
    /// The secret is not `whsec_` + base64.
    BadSecret,
    /// `webhook-timestamp` is not Unix seconds.
    BadTimestamp,
    /// The timestamp is more than [`TOLERANCE_S`] from `now`.
    Stale,
    /// No `v1` signature matches.
    BadSignature,
}

fn key_of(secret: &str) -> Result<Vec<u8>, Refusal> {
    let encoded = secret.strip_prefix("whsec_").unwrap_or(secret);
    STANDARD.decode(encoded).map_err(|_| Refusal::BadSecret)
}

fn mac(key: &[u8], id: &str, timestamp: &str, body: &str) -> Result<Hmac<Sha256>, Refusal> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).map_err(|_| Refusal::BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    Ok(mac)
}

/// `v1,<base64 HMAC-SHA256>` of a delivery.
pub fn sign(secret: &str, id: &str, timestamp: &str, body: &str) -> Result<String, Refusal> {
    let tag = mac(&key_of(secret)?, id, timestamp, body)?
        .finalize()
        .into_bytes();
    Ok(format!("v1,{}", STANDARD.encode(tag)))
}

fn header<'a>(
    headers: &'a BTreeMap<String, String>,
    name: &'static str,
) -> Result<&'a str, Refusal> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
        .ok_or(Refusal::MissingHeader(name))
}

/// Verifies a delivery against the secret, over the body exactly as
/// received, with its timestamp checked against `now_unix` (the simulator
/// clock). Returns the `webhook-id`.
pub fn verify<'a>(
    secret: Option<&str>,
    headers: &'a BTreeMap<String, String>,
    body: &str,
    now_unix: i64,
) -> Result<&'a str, Refusal> {
    let secret = secret.ok_or(Refusal::NoWebhooks)?;
    let id = header(headers, "webhook-id")?;
    let timestamp = header(headers, "webhook-timestamp")?;
    let signatures = header(headers, "webhook-signature")?;
    let sent_at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Refusal::BadTimestamp)?;
    if now_unix.abs_diff(sent_at) > TOLERANCE_S.unsigned_abs() {
        return Err(Refusal::Stale);
    }
    let expected = mac(&key_of(secret)?, id, timestamp, body)?;
    // Several space-separated signatures are allowed (key rotation); any
    // one matching suffices. verify_slice compares in constant time.
    let genuine = signatures
        .split_whitespace()
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| STANDARD.decode(s).ok())
        .any(|tag| expected.clone().verify_slice(&tag).is_ok());
    if genuine {
        Ok(id)
    } else {
        Err(Refusal::BadSignature)
    }
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
    fn the_published_vector_signs_and_verifies() {
        assert_eq!(sign(SECRET, ID, TS, BODY).as_deref(), Ok(SIGNATURE));
        let now = 1_614_265_330;
        assert_eq!(verify(Some(SECRET), &headers(SIGNATURE), BODY, now), Ok(ID));
        // One of several signatures is enough.
        let rotated = format!("v1,AAAA {SIGNATURE}");
        assert_eq!(
            verify(Some(SECRET), &headers(&rotated), BODY, now + 300),
            Ok(ID)
        );
    }

    #[test]
    fn forged_stale_or_incomplete_deliveries_are_refused() {
        let now = 1_614_265_330;
        let wrong = "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA==";
        assert_eq!(
            verify(Some(wrong), &headers(SIGNATURE), BODY, now),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify(
                Some(SECRET),
                &headers(SIGNATURE),
                "{\"test\":2432232314}",
                now
            ),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            verify(Some(SECRET), &headers(SIGNATURE), BODY, now + 301),
            Err(Refusal::Stale)
        );
        assert_eq!(
            verify(None, &headers(SIGNATURE), BODY, now),
            Err(Refusal::NoWebhooks)
        );
        let mut missing = headers(SIGNATURE);
        missing.remove("webhook-signature");
        assert_eq!(
            verify(Some(SECRET), &missing, BODY, now),
            Err(Refusal::MissingHeader("webhook-signature"))
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
