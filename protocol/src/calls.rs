//! The five calls of the protocol by name, and which reply fields each defines.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The fields of a reply to `name` that the protocol does not define, in the
/// order the adapter wrote them (ignored, and shown in the report).
pub fn unknown_reply_fields(name: CallName, reply: &serde_json::Value) -> Vec<String> {
    let known: &[&str] = match name {
        CallName::Webhook => &["accepted", "operation_id"],
        CallName::Execute | CallName::Reconcile | CallName::Resolve | CallName::Status => &[
            "operation_id",
            "outcome",
            "provider_ref",
            "needs_review",
            "evidence",
        ],
    };
    reply
        .as_object()
        .map(|fields| {
            fields
                .keys()
                .filter(|k| !known.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// The five calls, by name. In JSON (the report's call records) each is its
/// name, as on a process adapter's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallName {
    /// `execute`.
    Execute,
    /// `reconcile`.
    Reconcile,
    /// `webhook`.
    Webhook,
    /// `resolve`.
    Resolve,
    /// `status`.
    Status,
}

impl CallName {
    /// The name on the command line of a process adapter.
    pub fn as_str(self) -> &'static str {
        match self {
            CallName::Execute => "execute",
            CallName::Reconcile => "reconcile",
            CallName::Webhook => "webhook",
            CallName::Resolve => "resolve",
            CallName::Status => "status",
        }
    }

    /// Every call.
    pub const ALL: [CallName; 5] = [
        CallName::Execute,
        CallName::Reconcile,
        CallName::Webhook,
        CallName::Resolve,
        CallName::Status,
    ];

    /// Parses a call name.
    pub fn parse(name: &str) -> Option<CallName> {
        CallName::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// A name that is not one of the five calls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown call `{0}`: expected one of execute, reconcile, webhook, resolve, status")]
pub struct UnknownCallName(pub String);

impl std::str::FromStr for CallName {
    type Err = UnknownCallName;

    fn from_str(name: &str) -> Result<CallName, UnknownCallName> {
        CallName::parse(name).ok_or_else(|| UnknownCallName(name.to_owned()))
    }
}

impl fmt::Display for CallName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name equals its text, so that code that filters records by a call
/// written as text (a test, a caller's filter) reads plainly.
impl PartialEq<str> for CallName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CallName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_call_is_its_name_everywhere() {
        for call in CallName::ALL {
            let json = serde_json::to_string(&call).unwrap();
            assert_eq!(json, format!("\"{}\"", call.as_str()));
            assert_eq!(serde_json::from_str::<CallName>(&json).unwrap(), call);
            assert_eq!(call.to_string().parse::<CallName>().unwrap(), call);
            assert!(call == call.as_str());
        }
        assert_eq!(
            "Execute".parse::<CallName>().unwrap_err().to_string(),
            "unknown call `Execute`: expected one of execute, reconcile, webhook, resolve, status"
        );
    }

    #[test]
    fn unknown_fields_are_named_in_the_adapters_order() {
        let reply =
            serde_json::json!({"operation_id": "op-1", "z": 1, "outcome": "failed", "a": 2});
        assert_eq!(unknown_reply_fields(CallName::Execute, &reply), ["z", "a"]);
        assert!(
            unknown_reply_fields(CallName::Webhook, &serde_json::json!({"accepted": true}))
                .is_empty()
        );
    }
}
