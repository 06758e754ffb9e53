//! What one run found against a file, kept small: the step, the check and
//! its message, read from the run's report before the report is dropped.

use lostreply_reports::model::{Check, Evidence, ScenarioReport, Verdict};
use serde::Serialize;

/// The rule a run broke.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Broken {
    /// One of the seven invariants.
    Invariant {
        /// 1..=7.
        number: u8,
        /// Its short name (`at-most-once`).
        name: &'static str,
    },
    /// A key of the file's `expect` section.
    Expectation {
        /// `final`, `after_step`, `effects`, `needs_review`, ...
        key: String,
    },
    /// A rule of the adapter protocol beyond the seven invariants.
    Rule {
        /// Its name (`review-after-contradiction`).
        name: &'static str,
    },
    /// The adapter did not answer a call within the file's limits.
    AdapterError,
}

impl Broken {
    fn of(check: &Check) -> Broken {
        match check {
            Check::Invariant(invariant) => Broken::Invariant {
                number: invariant.number(),
                name: invariant.name(),
            },
            Check::Expectation { key } => Broken::Expectation { key: key.clone() },
            Check::Rule { rule } => Broken::Rule { name: rule.name() },
        }
    }
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Invariant { number, name } => write!(f, "invariant {number} ({name})"),
            Broken::Expectation { key } => write!(f, "expect.{key}"),
            Broken::Rule { name } => write!(f, "rule {name}"),
            Broken::AdapterError => f.write_str("adapter error"),
        }
    }
}

/// Where in the scenario a finding shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum At {
    /// A step of the file, numbered from 1.
    Step {
        /// Its number.
        number: u32,
        /// Its label as reports show it (`execute op-1 (crash after_commit)`).
        label: String,
    },
    /// The harness's final `status` of every operation.
    FinalStatus,
    /// Nothing the report points at names a step (a count of effects).
    WholeRun,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Step { number, label } => write!(f, "step {number} ({label})"),
            At::FinalStatus => f.write_str("the final status"),
            At::WholeRun => f.write_str("the whole run"),
        }
    }
}

/// One broken rule in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Where it shows.
    pub at: At,
    /// What was broken.
    pub check: Broken,
    /// The operation concerned, if one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// The report's sentence.
    pub message: String,
}

/// How one run ended, as `prove` needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Every invariant and expectation held.
    Passed,
    /// A rule was broken, or the adapter failed to answer.
    Failed(Vec<Finding>),
    /// The harness or the simulator failed: the run says nothing of the file.
    Infrastructure(String),
}

/// Reads what `prove` keeps of a run's report.
pub fn run_end(report: &ScenarioReport) -> RunEnd {
    match report.verdict {
        Verdict::Passed => RunEnd::Passed,
        Verdict::InfraError => RunEnd::Infrastructure(
            report
                .errors
                .iter()
                .map(|e| e.message.as_str())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Verdict::Violated | Verdict::AdapterError => RunEnd::Failed(findings(report)),
    }
}

fn findings(report: &ScenarioReport) -> Vec<Finding> {
    let violations = report.violations.iter().map(|v| Finding {
        at: v
            .evidence
            .iter()
            .find_map(|e| evidence_step(report, e))
            .map_or(At::WholeRun, |step| step_at(report, step)),
        check: Broken::of(&v.check),
        operation_id: v.operation_id.clone(),
        message: v.message.clone(),
    });
    let errors = report.errors.iter().map(|e| Finding {
        at: step_at(report, u32::try_from(e.step).unwrap_or(u32::MAX)),
        check: Broken::AdapterError,
        operation_id: e
            .call_index
            .and_then(|i| report.call(i))
            .and_then(|c| c.operation_id.as_ref().map(|id| id.to_string())),
        message: e.message.clone(),
    });
    violations.chain(errors).collect()
}

/// The step a piece of evidence happened in (0: the final status), if it says.
fn evidence_step(report: &ScenarioReport, evidence: &Evidence) -> Option<u32> {
    match evidence {
        Evidence::Call { index } => report.call(*index).map(|c| c.step),
        Evidence::Delivery { call_index } => report.call(*call_index).map(|c| c.step),
        Evidence::Request { seq } => request_step(report, *seq),
        Evidence::Effect { id } => report
            .effect(id)
            .and_then(|e| e.request_seq)
            .and_then(|seq| request_step(report, seq)),
    }
}

/// Steps run one after another, so a request belongs to the last step that
/// had started when it arrived.
fn request_step(report: &ScenarioReport, seq: u64) -> Option<u32> {
    let request = report.request(seq)?;
    report
        .steps
        .iter()
        .rev()
        .find(|s| u64::from(s.start_ms) <= request.start_ms)
        .map(|s| s.number)
}

fn step_at(report: &ScenarioReport, number: u32) -> At {
    if number == 0 {
        return At::FinalStatus;
    }
    match report.steps.iter().find(|s| s.number == number) {
        Some(step) => At::Step {
            number,
            label: step.label.to_string(),
        },
        None => At::Step {
            number,
            label: String::new(),
        },
    }
}
