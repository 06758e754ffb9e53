//! The findings of an MCP certification and the book that keeps each one's
//! trail while the steps run: a step records into a finding by its
//! [`FindingId`], never by a name that could be misspelt.

use crate::probes::{Stop, Trail};
use crate::report::ProbeResult;

/// A named, documented check.
#[derive(Debug, Clone, Copy)]
pub struct Finding {
    /// Stable name (reports, docs).
    pub name: &'static str,
    /// What it checks, in one line.
    pub title: &'static str,
}

/// Every finding, in report order.
pub const FINDINGS: [Finding; 14] = [
    Finding { name: "initialize", title: "initialize succeeds on a supported protocol revision (2025-11-25 or 2025-06-18)" },
    Finding { name: "retrieval_reachable", title: "list_recent_operations with no arguments reaches retrieval with the transport's credential (no 401)" },
    Finding { name: "empty_list_is_normal", title: "an empty recent list is a normal answer, never an error" },
    Finding { name: "retrieve_matches_original", title: "a listed id retrieves, with exactly the payload its call returned" },
    Finding { name: "id_in_every_result", title: "every paid tool's result carries an operation id, successes included" },
    Finding { name: "duration_stated", title: "every paid tool's description states its expected duration" },
    Finding { name: "timeout_is_client_setting", title: "descriptions say the timeout is a client setting; no tool takes a timeout parameter" },
    Finding { name: "retrieval_read_only", title: "retrieval tools exist and are annotated readOnlyHint and idempotentHint" },
    Finding { name: "not_yours_rule_written", title: "the retrieval tool's description says a not-yours id answers like an unknown one" },
    Finding { name: "retention_declared", title: "the retention of ids is declared, in a description and in a field" },
    Finding { name: "credentials_host_side", title: "retrieval takes no credential argument: the transport's credential is enough" },
    Finding { name: "not_yours_like_unknown", title: "another tenant's id and an unknown id answer byte-identically (status and message)" },
    Finding { name: "list_is_per_tenant", title: "another tenant's recent list shows none of the primary's operations" },
    Finding { name: "expired_like_unknown", title: "an id past the declared retention answers byte-identically to an unknown one" },
];

/// The names of every finding, in order.
pub fn names() -> Vec<&'static str> {
    FINDINGS.iter().map(|f| f.name).collect()
}

/// One finding, by its place in [`FINDINGS`] (the variants are in that order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingId {
    /// `initialize`.
    Initialize,
    /// `retrieval_reachable`.
    RetrievalReachable,
    /// `empty_list_is_normal`.
    EmptyListIsNormal,
    /// `retrieve_matches_original`.
    RetrieveMatchesOriginal,
    /// `id_in_every_result`.
    IdInEveryResult,
    /// `duration_stated`.
    DurationStated,
    /// `timeout_is_client_setting`.
    TimeoutIsClientSetting,
    /// `retrieval_read_only`.
    RetrievalReadOnly,
    /// `not_yours_rule_written`.
    NotYoursRuleWritten,
    /// `retention_declared`.
    RetentionDeclared,
    /// `credentials_host_side`.
    CredentialsHostSide,
    /// `not_yours_like_unknown`.
    NotYoursLikeUnknown,
    /// `list_is_per_tenant`.
    ListIsPerTenant,
    /// `expired_like_unknown`.
    ExpiredLikeUnknown,
}

impl FindingId {
    /// Every finding, in report order.
    pub const ALL: [FindingId; 14] = [
        FindingId::Initialize,
        FindingId::RetrievalReachable,
        FindingId::EmptyListIsNormal,
        FindingId::RetrieveMatchesOriginal,
        FindingId::IdInEveryResult,
        FindingId::DurationStated,
        FindingId::TimeoutIsClientSetting,
        FindingId::RetrievalReadOnly,
        FindingId::NotYoursRuleWritten,
        FindingId::RetentionDeclared,
        FindingId::CredentialsHostSide,
        FindingId::NotYoursLikeUnknown,
        FindingId::ListIsPerTenant,
        FindingId::ExpiredLikeUnknown,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// The design rules, read from `tools/list`.
pub(super) const DESIGN: [FindingId; 7] = [
    FindingId::IdInEveryResult,
    FindingId::DurationStated,
    FindingId::TimeoutIsClientSetting,
    FindingId::RetrievalReadOnly,
    FindingId::NotYoursRuleWritten,
    FindingId::RetentionDeclared,
    FindingId::CredentialsHostSide,
];

/// The findings that call retrieval.
pub(super) const RETRIEVAL: [FindingId; 6] = [
    FindingId::RetrievalReachable,
    FindingId::EmptyListIsNormal,
    FindingId::RetrieveMatchesOriginal,
    FindingId::NotYoursLikeUnknown,
    FindingId::ListIsPerTenant,
    FindingId::ExpiredLikeUnknown,
];

/// The findings that read what the pre-flight's list opens: when retrieval
/// cannot be reached, they have nothing to judge.
pub(super) const AFTER_PRE_FLIGHT: [FindingId; 5] = [
    FindingId::EmptyListIsNormal,
    FindingId::RetrieveMatchesOriginal,
    FindingId::NotYoursLikeUnknown,
    FindingId::ListIsPerTenant,
    FindingId::ExpiredLikeUnknown,
];

/// One finding's trail, and why it stopped when it could not conclude.
#[derive(Default)]
struct Entry {
    trail: Trail,
    stop: Option<String>,
}

/// The trails of a run, one per finding in [`FINDINGS`] order.
pub(super) struct Book {
    entries: [Entry; FINDINGS.len()],
}

impl Book {
    pub(super) fn new() -> Book {
        Book {
            entries: std::array::from_fn(|_| Entry::default()),
        }
    }

    /// The trail of one finding.
    pub(super) fn t(&mut self, id: FindingId) -> &mut Trail {
        &mut self.entries[id.index()].trail
    }

    /// The findings cannot conclude (exit code 3), unless they already stopped.
    pub(super) fn stop(&mut self, ids: &[FindingId], why: &str) {
        for id in ids {
            let stop = &mut self.entries[id.index()].stop;
            if stop.is_none() {
                *stop = Some(why.to_owned());
            }
        }
    }

    pub(super) fn stopped(&self, id: FindingId) -> bool {
        self.entries[id.index()].stop.is_some()
    }

    pub(super) fn finish(self, duration_ms: u64) -> Vec<ProbeResult> {
        FINDINGS
            .iter()
            .zip(self.entries)
            .map(|(f, entry)| {
                let outcome = entry.stop.map_or(Ok(()), |why| Err(Stop(why)));
                entry.trail.finish(f.name, f.title, outcome, duration_ms)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_finding_has_a_distinct_name() {
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), FINDINGS.len());
    }

    /// Each id names the finding at its place: `RetrievalReachable` is
    /// `retrieval_reachable`.
    #[test]
    fn ids_name_the_findings_in_report_order() {
        for (at, id) in FindingId::ALL.iter().enumerate() {
            assert_eq!(id.index(), at);
            let snake: String = format!("{id:?}")
                .chars()
                .enumerate()
                .flat_map(|(i, c)| {
                    let sep = (c.is_ascii_uppercase() && i > 0).then_some('_');
                    sep.into_iter().chain(c.to_lowercase())
                })
                .collect();
            assert_eq!(snake, FINDINGS[at].name);
        }
    }
}
