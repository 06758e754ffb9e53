//! Standard Webhooks signature verification: HMAC-SHA256 over
//! `{webhook-id}.{webhook-timestamp}.{body}` with the decoded `whsec_` key,
//! compared in constant time, and a timestamp within tolerance of `now`.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How far (either way) a delivery's timestamp may be from `now`.
pub const TOLERANCE_S: i64 = 300;

/// Most signatures considered in one `webhook-signature` header: a sender
/// rotating secrets sends a few, never hundreds.
const MAX_SIGNATURES: usize = 16;

/// Why a delivery was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// A required header is absent.
    #[error("missing header {0}")]
    MissingHeader(&'static str),
    /// The secret is not `whsec_<base64>`.
    #[error("the webhook secret is not whsec_<base64 key>")]
    BadSecret,
    /// `webhook-timestamp` is not Unix seconds.
    #[error("webhook-timestamp {0:?} is not Unix seconds")]
    BadTimestamp(String),
    /// The timestamp is too far from `now`.
    #[error("webhook-timestamp {timestamp} is {age_s} s from now (tolerance {TOLERANCE_S} s)")]
    Stale {
        /// The delivery's timestamp.
        timestamp: i64,
        /// Distance from `now`, in seconds.
        age_s: i64,
    },
    /// No `v1` signature matches.
    #[error("no v1 signature matches")]
    NoMatch,
}

/// The HMAC key from a `whsec_<base64>` secret.
fn key_bytes(secret: &str) -> Result<Vec<u8>, Rejection> {
    let encoded = secret.strip_prefix("whsec_").ok_or(Rejection::BadSecret)?;
    STANDARD.decode(encoded).map_err(|_| Rejection::BadSecret)
}

fn header<'a>(
    headers: &'a BTreeMap<String, String>,
    name: &'static str,
) -> Result<&'a str, Rejection> {
    // Header names are case-insensitive; the protocol sends them lower-case,
    // but a hand-written delivery may not.
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
        .ok_or(Rejection::MissingHeader(name))
}

/// Verifies one delivery. Returns its `webhook-id` when authentic and fresh.
pub fn verify(
    secret: &str,
    headers: &BTreeMap<String, String>,
    body: &str,
    now_unix_s: i64,
) -> Result<String, Rejection> {
    let id = header(headers, "webhook-id")?;
    let timestamp_text = header(headers, "webhook-timestamp")?;
    let signatures = header(headers, "webhook-signature")?;
    let key = key_bytes(secret)?;
    let timestamp: i64 = timestamp_text
        .parse()
        .map_err(|_| Rejection::BadTimestamp(timestamp_text.to_owned()))?;
    let age_s = now_unix_s.saturating_sub(timestamp).saturating_abs();
    if age_s > TOLERANCE_S {
        return Err(Rejection::Stale { timestamp, age_s });
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| Rejection::BadSecret)?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp_text.as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let authentic = signatures
        .split(' ')
        .filter(|s| !s.is_empty())
        .take(MAX_SIGNATURES)
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| STANDARD.decode(s).ok())
        // verify_slice compares in constant time.
        .any(|signature| mac.clone().verify_slice(&signature).is_ok());
    if authentic {
        Ok(id.to_owned())
    } else {
        Err(Rejection::NoMatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TS: i64 = 1_614_265_330;
    const BODY: &str = r#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn headers(signature: &str, ts: i64) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("webhook-id".to_owned(), ID.to_owned()),
            ("webhook-timestamp".to_owned(), ts.to_string()),
            ("webhook-signature".to_owned(), signature.to_owned()),
        ])
    }

    #[test]
    fn the_standard_webhooks_vector_verifies() {
        assert_eq!(
            verify(SECRET, &headers(SIGNATURE, TS), BODY, TS),
            Ok(ID.to_owned())
        );
        // Among several signatures (secret rotation), one match is enough.
        let several = format!("v1,bm90IGl0 v2,abc {SIGNATURE}");
        assert_eq!(
            verify(SECRET, &headers(&several, TS), BODY, TS + 299),
            Ok(ID.to_owned())
        );
    }

    #[test]
    fn forged_signatures_and_altered_bodies_are_rejected() {
        let forged = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF=";
        assert_eq!(
            verify(SECRET, &headers(forged, TS), BODY, TS),
            Err(Rejection::NoMatch)
        );
        let other_secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=";
        assert_eq!(
            verify(other_secret, &headers(SIGNATURE, TS), BODY, TS),
            Err(Rejection::NoMatch)
        );
        let altered = r#"{"test": 2432232315}"#;
        assert_eq!(
            verify(SECRET, &headers(SIGNATURE, TS), altered, TS),
            Err(Rejection::NoMatch)
        );
        // The right signature under another scheme name does not count.
        let v2 = SIGNATURE.replace("v1,", "v2,");
        assert_eq!(
            verify(SECRET, &headers(&v2, TS), BODY, TS),
            Err(Rejection::NoMatch)
        );
    }

    #[test]
    fn stale_or_future_timestamps_are_rejected() {
        assert_eq!(
            verify(SECRET, &headers(SIGNATURE, TS), BODY, TS + 301),
            Err(Rejection::Stale {
                timestamp: TS,
                age_s: 301
            })
        );
        assert_eq!(
            verify(SECRET, &headers(SIGNATURE, TS), BODY, TS - 301),
            Err(Rejection::Stale {
                timestamp: TS,
                age_s: 301
            })
        );
    }

    #[test]
    fn missing_headers_and_bad_secrets_are_rejected() {
        let mut h = headers(SIGNATURE, TS);
        h.remove("webhook-signature");
        assert_eq!(
            verify(SECRET, &h, BODY, TS),
            Err(Rejection::MissingHeader("webhook-signature"))
        );
        let mut h = headers(SIGNATURE, TS);
        h.insert("webhook-timestamp".into(), "soon".into());
        assert!(matches!(
            verify(SECRET, &h, BODY, TS),
            Err(Rejection::BadTimestamp(_))
        ));
        assert_eq!(
            verify(
                "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                &headers(SIGNATURE, TS),
                BODY,
                TS
            ),
            Err(Rejection::BadSecret)
        );
    }
}
