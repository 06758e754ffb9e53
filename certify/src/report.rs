//! The certification report: plain data, written by [`crate::write`].
//! JSON schema_version 1 is documented in docs/certify.md.

use serde::Serialize;

use crate::verdict::{Evidence, Verdict};

/// The JSON report's schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// One probe's result.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    /// Stable name (`concurrent_duplicates`).
    pub name: String,
    /// What it checks, in one line.
    pub title: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one line.
    pub summary: String,
    /// Requests, answers, counts.
    pub evidence: Vec<Evidence>,
    /// Real time the probe took, in ms.
    pub duration_ms: u64,
}

/// A whole certification.
#[derive(Debug, Clone, Serialize)]
pub struct Certification {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The contract's name.
    pub contract_name: String,
    /// Where the contract came from.
    pub contract_source: String,
    /// The endpoint certified.
    pub base_url: String,
    /// The seed of markers and keys.
    pub seed: u64,
    /// A command that reproduces the run.
    pub reproduce: String,
    /// Requests sent.
    pub requests_sent: u32,
    /// The budget.
    pub budget: u32,
    /// Real time, in ms.
    pub duration_ms: u64,
    /// One per probe, in the documented order.
    pub probes: Vec<ProbeResult>,
}

/// Counts by verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Passed.
    pub pass: usize,
    /// Failed against the declaration.
    pub fail: usize,
    /// Failed whatever the declaration.
    pub hard_fail: usize,
    /// Not run.
    pub skipped: usize,
    /// Could not conclude.
    pub error: usize,
}

impl Certification {
    /// Counts by verdict.
    pub fn totals(&self) -> Totals {
        let mut t = Totals::default();
        for p in &self.probes {
            match p.verdict {
                Verdict::Pass => t.pass += 1,
                Verdict::Fail => t.fail += 1,
                Verdict::HardFail => t.hard_fail += 1,
                Verdict::Skipped => t.skipped += 1,
                Verdict::Error => t.error += 1,
            }
        }
        t
    }

    /// The exit code: 1 when a probe failed, else 3 when one could not conclude, else 0.
    pub fn exit_code(&self) -> i32 {
        let t = self.totals();
        if t.fail + t.hard_fail > 0 {
            1
        } else if t.error > 0 {
            3
        } else {
            0
        }
    }

    /// The names of the probes that failed.
    pub fn failed(&self) -> Vec<&str> {
        self.probes
            .iter()
            .filter(|p| p.verdict.failed())
            .map(|p| p.name.as_str())
            .collect()
    }
}
