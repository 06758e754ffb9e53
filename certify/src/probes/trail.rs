//! What one check gathers as it runs (evidence, what held, what failed) and
//! the verdict it comes to. The HTTP probes and the MCP findings both keep one.

use crate::client::ClientError;
use crate::readback::ReadbackError;
use crate::report::ProbeResult;
use crate::verdict::{Evidence, Verdict};

/// Why a probe stopped without a verdict of its own (becomes [`Verdict::Error`]).
#[derive(Debug)]
pub struct Stop(pub String);

impl From<ClientError> for Stop {
    fn from(e: ClientError) -> Self {
        Stop(e.to_string())
    }
}

impl From<ReadbackError> for Stop {
    fn from(e: ReadbackError) -> Self {
        Stop(e.to_string())
    }
}

/// What one probe gathers: evidence and findings.
#[derive(Debug, Default)]
pub struct Trail {
    evidence: Vec<Evidence>,
    fails: Vec<String>,
    hard: Vec<String>,
    skipped: Option<String>,
    passed: Vec<String>,
}

impl Trail {
    /// A finding against the contract's declaration.
    pub fn fail(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.note(format!("FAIL: {text}"));
        self.fails.push(text);
    }
    /// A duplicate effect or a leak.
    pub fn hard(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.note(format!("HARD FAIL: {text}"));
        self.hard.push(text);
    }
    /// Something that held.
    pub fn held(&mut self, text: impl Into<String>) {
        self.passed.push(text.into());
    }
    /// A remark.
    pub fn note(&mut self, text: impl Into<String>) {
        self.evidence.push(Evidence::Note { text: text.into() });
    }
    /// The probe does not apply.
    pub fn skip(&mut self, why: impl Into<String>) {
        self.skipped = Some(why.into());
    }
}

impl Trail {
    /// The result of a check that ended with `outcome`: an error when it
    /// stopped, else skipped, hard-failed, failed or passed, in that order.
    pub fn finish(
        mut self,
        name: &str,
        title: &str,
        outcome: Result<(), Stop>,
        duration_ms: u64,
    ) -> ProbeResult {
        let (verdict, summary) = match outcome {
            Err(Stop(why)) => (Verdict::Error, format!("could not conclude: {why}")),
            Ok(()) => {
                if let Some(why) = self.skipped.take() {
                    (Verdict::Skipped, why)
                } else if !self.hard.is_empty() {
                    (Verdict::HardFail, self.hard.join("; "))
                } else if !self.fails.is_empty() {
                    (Verdict::Fail, self.fails.join("; "))
                } else {
                    (Verdict::Pass, self.passed.join("; "))
                }
            }
        };
        ProbeResult {
            name: name.to_owned(),
            title: title.to_owned(),
            verdict,
            summary,
            evidence: self.evidence,
            duration_ms,
        }
    }

    /// Adds a piece of evidence.
    pub fn push(&mut self, evidence: Evidence) {
        self.evidence.push(evidence);
    }
}
