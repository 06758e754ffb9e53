//! The seven invariants checked in every scenario (docs/scenario-format.md,
//! "Invariants checked in every scenario"), as a closed set. The harness's
//! checks name one, every writer shows it, and a new one makes each of them
//! decide. Its numbers, names and meanings are held against that document by a
//! test, so the two cannot drift apart.

use serde::{Deserialize, Serialize};

/// One of the invariants that hold for a correct adapter whatever a scenario expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "InvariantJson", try_from = "InvariantJson")]
#[non_exhaustive]
pub enum Invariant {
    /// 1, `at-most-once`.
    AtMostOnce,
    /// 2, `no-success-without-effect`.
    NoSuccessWithoutEffect,
    /// 3, `no-failure-with-effect`.
    NoFailureWithEffect,
    /// 4, `terminal-is-final`.
    TerminalIsFinal,
    /// 5, `same-key-same-args`.
    SameKeySameArgs,
    /// 6, `status-is-read-only`.
    StatusIsReadOnly,
    /// 7, `forged-webhook-inert`.
    ForgedWebhookInert,
}

impl Invariant {
    /// Every invariant, in the order of their numbers.
    pub const ALL: [Invariant; 7] = [
        Invariant::AtMostOnce,
        Invariant::NoSuccessWithoutEffect,
        Invariant::NoFailureWithEffect,
        Invariant::TerminalIsFinal,
        Invariant::SameKeySameArgs,
        Invariant::StatusIsReadOnly,
        Invariant::ForgedWebhookInert,
    ];

    /// 1..=7, as docs/scenario-format.md numbers them.
    pub fn number(self) -> u8 {
        match self {
            Invariant::AtMostOnce => 1,
            Invariant::NoSuccessWithoutEffect => 2,
            Invariant::NoFailureWithEffect => 3,
            Invariant::TerminalIsFinal => 4,
            Invariant::SameKeySameArgs => 5,
            Invariant::StatusIsReadOnly => 6,
            Invariant::ForgedWebhookInert => 7,
        }
    }

    /// The short name reports use: `at-most-once`.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::AtMostOnce => "at-most-once",
            Invariant::NoSuccessWithoutEffect => "no-success-without-effect",
            Invariant::NoFailureWithEffect => "no-failure-with-effect",
            Invariant::TerminalIsFinal => "terminal-is-final",
            Invariant::SameKeySameArgs => "same-key-same-args",
            Invariant::StatusIsReadOnly => "status-is-read-only",
            Invariant::ForgedWebhookInert => "forged-webhook-inert",
        }
    }

    /// What it demands, in one sentence: the first sentence of its entry in
    /// docs/scenario-format.md, word for word.
    pub fn meaning(self) -> &'static str {
        match self {
            Invariant::AtMostOnce => {
                "At most one effect per logical operation (effects are attributed to \
                 operations by their arguments; where a scenario repeats arguments on \
                 purpose, a group's effects may not outnumber its operations)."
            }
            Invariant::NoSuccessWithoutEffect => {
                "No success without its effect: `succeeded` names a `provider_ref` that is \
                 the id of an effect attributed to that operation."
            }
            Invariant::NoFailureWithEffect => {
                "No failure with an effect: `failed` while an effect of that operation \
                 exists (after asynchronous work settles) is a violation."
            }
            Invariant::TerminalIsFinal => "Terminal outcomes never change once reported.",
            Invariant::SameKeySameArgs => {
                "Every create attempt of one operation carries the same idempotency key \
                 (where the contract has keys) and the same arguments."
            }
            Invariant::StatusIsReadOnly => "`status` sends nothing to the provider.",
            Invariant::ForgedWebhookInert => "A forged webhook changes nothing.",
        }
    }

    /// The invariant with this number, if there is one.
    pub fn from_number(number: u8) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.number() == number)
    }
}

/// A number and a name that are not one invariant (a JSON report written by
/// something else, or edited by hand).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no invariant {number} is named {name:?}: the invariants are numbered 1 to 7, each with its documented name")]
pub struct UnknownInvariant {
    /// The number as read.
    pub number: u8,
    /// The name as read.
    pub name: String,
}

/// The JSON form, inside a `Check` of kind `invariant` (docs/report-json.md):
/// `{"number": 1, "name": "at-most-once"}`. Both are written so that a reader
/// needs no table; both are read, and must agree.
#[derive(Serialize, Deserialize)]
struct InvariantJson {
    number: u8,
    name: String,
}

impl From<Invariant> for InvariantJson {
    fn from(invariant: Invariant) -> InvariantJson {
        InvariantJson {
            number: invariant.number(),
            name: invariant.name().to_owned(),
        }
    }
}

impl TryFrom<InvariantJson> for Invariant {
    type Error = UnknownInvariant;

    fn try_from(json: InvariantJson) -> Result<Invariant, UnknownInvariant> {
        Invariant::from_number(json.number)
            .filter(|i| i.name() == json.name)
            .ok_or(UnknownInvariant {
                number: json.number,
                name: json.name,
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn numbers_run_from_one_in_order() {
        for (i, invariant) in Invariant::ALL.into_iter().enumerate() {
            assert_eq!(usize::from(invariant.number()), i + 1);
            assert_eq!(Invariant::from_number(invariant.number()), Some(invariant));
        }
        assert_eq!(Invariant::from_number(0), None);
        assert_eq!(Invariant::from_number(8), None);
    }

    #[test]
    fn json_is_number_and_name_and_reads_back() {
        for invariant in Invariant::ALL {
            let json = serde_json::to_value(invariant).unwrap();
            assert_eq!(
                json,
                serde_json::json!({"number": invariant.number(), "name": invariant.name()})
            );
            assert_eq!(
                serde_json::from_value::<Invariant>(json).unwrap(),
                invariant
            );
        }
    }

    #[test]
    fn a_number_and_a_name_that_disagree_are_refused() {
        let err = serde_json::from_value::<Invariant>(
            serde_json::json!({"number": 1, "name": "terminal-is-final"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("no invariant 1"), "{err}");
        assert!(serde_json::from_value::<Invariant>(
            serde_json::json!({"number": 8, "name": "at-most-once"})
        )
        .is_err());
    }
}
