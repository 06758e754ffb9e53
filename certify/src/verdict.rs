//! A probe's verdict and the evidence behind it.

use serde::Serialize;

/// What a probe concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The endpoint kept what the contract declares.
    Pass,
    /// The endpoint answered other than declared (exit code 1).
    Fail,
    /// A duplicate effect or a cross-tenant leak: failed whatever the contract says (exit code 1).
    HardFail,
    /// Not run: the contract gives it nothing to work with (no second tenant, no slow path, `--only`).
    Skipped,
    /// The endpoint could not be reached, answered nonsense, or the budget ran out (exit code 3).
    Error,
}

impl Verdict {
    /// The word in reports.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::HardFail => "hard_fail",
            Verdict::Skipped => "skipped",
            Verdict::Error => "error",
        }
    }

    /// Whether it counts as a failed probe.
    pub fn failed(self) -> bool {
        match self {
            Verdict::Fail | Verdict::HardFail => true,
            Verdict::Pass | Verdict::Skipped | Verdict::Error => false,
        }
    }
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Evidence {
    /// A request and what came back.
    Exchange {
        /// What the request was for (`first`, `replay`, `retry after 1s`).
        label: String,
        /// Method and path.
        request: String,
        /// The idempotency key sent, if any.
        key: Option<String>,
        /// The answer's status, or how it ended (`aborted by the probe`, an error).
        outcome: String,
        /// The first bytes of the answer's body.
        body: String,
    },
    /// What the read-back counted.
    Count {
        /// The marker counted.
        marker: String,
        /// How (`ground_truth`, `search`, `list`).
        method: String,
        /// Effects found.
        found: usize,
        /// Effects the probe expects.
        expected: usize,
    },
    /// A finding in words.
    Note {
        /// The text.
        text: String,
    },
}
