//! Webhook deliveries, signed in the profile's scheme. Standard Webhooks:
//! `v1,<base64 HMAC-SHA256(key, "{id}.{ts}.{body}")>`, where the key is the
//! base64-decoded part of a `whsec_` secret, computed by
//! [`crate::standard_webhooks`], which the adapters verify with. Stripe:
//! `Stripe-Signature: t={ts},v1=<hex HMAC-SHA256(secret, "{ts}.{body}")>`,
//! keyed by the secret string's own bytes, as Stripe's SDKs verify it.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::standard_webhooks;

/// Why a webhook secret cannot be used: the Standard Webhooks secret's error,
/// which the Stripe scheme shares for its one case (an empty secret).
pub use crate::standard_webhooks::SecretError as WebhookSecretError;

/// The HMAC key a scheme signs with: the decoded `whsec_` key for Standard
/// Webhooks, the secret's own bytes for Stripe (any non-empty secret).
pub fn signing_key(
    scheme: crate::profile::SignatureScheme,
    secret: &str,
) -> Result<Vec<u8>, WebhookSecretError> {
    match scheme {
        crate::profile::SignatureScheme::StandardWebhooks => standard_webhooks::secret_key(secret),
        crate::profile::SignatureScheme::Stripe if secret.is_empty() => {
            Err(WebhookSecretError::EmptyKey)
        }
        crate::profile::SignatureScheme::Stripe => Ok(secret.as_bytes().to_vec()),
    }
}

/// The `Stripe-Signature` header value for one delivery: `t={ts},v1={hex}`.
pub fn stripe_signature(key: &[u8], timestamp_s: i64, body: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return String::new();
    };
    mac.update(timestamp_s.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("t={timestamp_s},v1={hex}")
}

/// The `webhook-signature` header value for one delivery: `v1,<base64>`.
pub fn signature(
    secret: &str,
    msg_id: &str,
    timestamp_s: i64,
    body: &str,
) -> Result<String, WebhookSecretError> {
    let key = standard_webhooks::secret_key(secret)?;
    Ok(standard_webhooks::sign(&key, msg_id, timestamp_s, body))
}

/// Signs one delivery of `event` at `now_ms` (simulator clock), in `scheme`.
pub(crate) fn delivery(
    scheme: crate::profile::SignatureScheme,
    key: &[u8],
    event: &crate::record::Event,
    now_ms: i64,
) -> crate::record::Delivery {
    let timestamp_s = now_ms.div_euclid(1000);
    let mut headers = std::collections::BTreeMap::new();
    headers.insert("content-type".to_owned(), "application/json".to_owned());
    if scheme == crate::profile::SignatureScheme::Stripe {
        headers.insert(
            "stripe-signature".to_owned(),
            stripe_signature(key, timestamp_s, &event.body),
        );
        return crate::record::Delivery {
            headers,
            body: event.body.clone(),
        };
    }
    headers.insert("webhook-id".to_owned(), event.id.clone());
    headers.insert("webhook-timestamp".to_owned(), timestamp_s.to_string());
    headers.insert(
        "webhook-signature".to_owned(),
        standard_webhooks::sign(key, &event.id, timestamp_s, &event.body),
    );
    crate::record::Delivery {
        headers,
        body: event.body.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripe_signature_is_hex_hmac_of_timestamp_and_body_keyed_by_the_secret() {
        // Stripe's scheme, checked against an HMAC-SHA256 made by hand in
        // Python: hmac.new(b"whsec_test", b"1614265330.{}", sha256).hexdigest().
        assert_eq!(
            stripe_signature(b"whsec_test", 1_614_265_330, "{}"),
            "t=1614265330,v1=5790023bd77209313f2e32e36caf5921bdd2fac398095f83dc2d2ecd5f696f50"
        );
    }
}
