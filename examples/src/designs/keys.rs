//! How each documented idempotency mode spells an operation's key (the key
//! itself is `record::OpId::idempotency_key`).

use lostreply_harness::protocol::ContractIdempotency;

/// The idempotency mode the contract documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMode {
    /// Keys are ignored, or the mode is one this adapter does not know:
    /// either way no replay is trusted to deduplicate.
    None,
    /// A bare token; in-flight is a 409 `idempotency_key_in_use`.
    Stripe,
    /// An sf-string (`"lr-op-1"`); in-flight is a 409 problem+json.
    Ietf,
}

impl KeyMode {
    /// Reads the contract's mode.
    pub fn of(idempotency: &ContractIdempotency) -> KeyMode {
        match idempotency.mode.as_str() {
            "stripe" => KeyMode::Stripe,
            "ietf" => KeyMode::Ietf,
            _ => KeyMode::None,
        }
    }

    /// True when a replay of the key is deduplicated by the provider.
    pub fn has_keys(self) -> bool {
        self != KeyMode::None
    }

    /// The header value carrying `key`, or `None` when no header is sent.
    pub fn header_value(self, key: &str) -> Option<String> {
        match self {
            KeyMode::None => None,
            KeyMode::Stripe => Some(key.to_owned()),
            // Op ids are [A-Za-z0-9_.-], so the key needs no escaping inside
            // the quotes of a structured-field string.
            KeyMode::Ietf => Some(format!("\"{key}\"")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_spells_the_key_its_way() {
        assert_eq!(
            KeyMode::Stripe.header_value("lr-op-1").as_deref(),
            Some("lr-op-1")
        );
        assert_eq!(
            KeyMode::Ietf.header_value("lr-op-1").as_deref(),
            Some("\"lr-op-1\"")
        );
        assert_eq!(KeyMode::None.header_value("lr-op-1"), None);
    }
}
