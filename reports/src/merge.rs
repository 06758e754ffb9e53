//! Joins the reports of one run that was split across machines
//! (`lostreply run --shard K/N`, one report per shard) into the report of the
//! whole run: every input's scenarios, sorted by id, under the run's common
//! fields. Pure: the caller reads the files and writes the result.
//!
//! What makes inputs one run is checked, not assumed: the same adapter, seed,
//! lostreply version and schema; no scenario in two inputs; and, for shards,
//! the same N, the same selection, and every shard from 1 to N exactly once, so
//! that a lost shard can never make a merged run look complete.

use std::collections::BTreeMap;

use crate::model::{Report, Shard, SCHEMA_VERSION};

/// One report to merge and where it came from.
#[derive(bon::Builder, Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MergeInput {
    /// Where the report came from (its directory), as errors name it.
    pub origin: String,
    /// The report.
    pub report: Report,
    /// Its shard, when it is the report of one shard.
    pub shard: Option<Shard>,
}

/// Why reports cannot be merged. Each names the inputs concerned by origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// No report was given.
    #[error("nothing to merge: give at least one report")]
    NoInputs,
    /// A field every report of one run shares differs.
    #[error(
        "{origin}: {field} {value} differs from {first_value} in {first_origin}; only reports of one run (same adapter, seed and lostreply version) can be merged"
    )]
    Differs {
        /// The input that differs.
        origin: String,
        /// `adapter`, `seed`, `lostreply version` or `schema_version`.
        field: &'static str,
        /// Its value there.
        value: String,
        /// The first input, which the others are compared with.
        first_origin: String,
        /// The value there.
        first_value: String,
    },
    /// The same scenario is in two inputs.
    #[error("scenario {id:?} is in both {first_origin} and {origin}: each scenario may come from one report only")]
    DuplicateScenario {
        /// The scenario id.
        id: String,
        /// The input it was first seen in.
        first_origin: String,
        /// The input it was seen in again.
        origin: String,
    },
    /// A `shard` field that no `--shard K/N` could have written.
    #[error("{origin}: shard {index}/{total} is not a shard: K must be from 1 to N")]
    BadShard {
        /// The input.
        origin: String,
        /// Its K.
        index: u32,
        /// Its N.
        total: u32,
    },
    /// Shards and reports of whole selections mixed.
    #[error(
        "{unsharded} is not a shard's report but {sharded} is (shard {index}/{total}): merge either the shards of one run or reports of disjoint runs, not both"
    )]
    MixedShards {
        /// An input without a shard.
        unsharded: String,
        /// An input with one.
        sharded: String,
        /// Its K.
        index: u32,
        /// Its N.
        total: u32,
    },
    /// Shards cut into different numbers of parts.
    #[error(
        "{origin} is shard {index}/{total} but {first_origin} is shard {first_index}/{first_total}: every shard must come from one run split into {first_total}"
    )]
    ShardTotal {
        /// The input that differs.
        origin: String,
        /// Its K.
        index: u32,
        /// Its N.
        total: u32,
        /// The first shard seen.
        first_origin: String,
        /// Its K.
        first_index: u32,
        /// Its N.
        first_total: u32,
    },
    /// Shards cut from different selections (other paths or `--tag` filters).
    #[error(
        "{origin}: shard {index}/{total} was cut from {selected} selected scenarios but {first_origin}'s from {first_selected}: run every shard with the same paths and --tag filters"
    )]
    ShardSelection {
        /// The input that differs.
        origin: String,
        /// Its K.
        index: u32,
        /// Its N.
        total: u32,
        /// Its selection's size.
        selected: usize,
        /// The first shard seen.
        first_origin: String,
        /// Its selection's size.
        first_selected: usize,
    },
    /// The same shard twice.
    #[error("{first_origin} and {origin} are both shard {index}/{total}")]
    ShardTwice {
        /// The shard's K.
        index: u32,
        /// Its N.
        total: u32,
        /// The input it was first seen in.
        first_origin: String,
        /// The input it was seen in again.
        origin: String,
    },
    /// Not every shard of the run is there.
    #[error(
        "{} missing: merge the reports of every shard of the run (rerun a shard whose job wrote no report)",
        shard_list(.missing, *.total)
    )]
    ShardsMissing {
        /// The missing shards' K, in order.
        missing: Vec<u32>,
        /// N.
        total: u32,
    },
}

/// `shard 3/4` or `shards 2/4, 3/4`.
fn shard_list(indexes: &[u32], total: u32) -> String {
    let names: Vec<String> = indexes.iter().map(|k| format!("{k}/{total}")).collect();
    let noun = if names.len() == 1 { "shard" } else { "shards" };
    format!("{noun} {}", names.join(", "))
}

/// Merges the inputs into one report: the first input's adapter, seed and
/// versions; the longest input's duration (shards run side by side); every
/// scenario, sorted by id. The result has no shard: it is the whole run.
pub fn merge(inputs: Vec<MergeInput>) -> Result<Report, MergeError> {
    let Some(first) = inputs.first() else {
        return Err(MergeError::NoInputs);
    };
    for input in &inputs {
        check_same_run(first, input)?;
    }
    check_shards(&inputs)?;

    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for input in &inputs {
        for scenario in &input.report.scenarios {
            if let Some(first_origin) = seen.insert(&scenario.id, &input.origin) {
                return Err(MergeError::DuplicateScenario {
                    id: scenario.id.clone(),
                    first_origin: first_origin.to_owned(),
                    origin: input.origin.clone(),
                });
            }
        }
    }

    let tool_version = first.report.tool_version.clone();
    let adapter = first.report.adapter.clone();
    let seed = first.report.seed;
    let duration_ms = inputs
        .iter()
        .map(|i| i.report.duration_ms)
        .max()
        .unwrap_or(0);
    let mut scenarios: Vec<_> = inputs
        .into_iter()
        .flat_map(|i| i.report.scenarios)
        .collect();
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Report {
        schema_version: SCHEMA_VERSION,
        tool_version,
        adapter,
        seed,
        duration_ms,
        scenarios,
    })
}

fn check_same_run(first: &MergeInput, input: &MergeInput) -> Result<(), MergeError> {
    let (a, b) = (&first.report, &input.report);
    let adapter = |r: &Report| format!("{} ({})", r.adapter.name, r.adapter.kind.as_str());
    let fields = [
        (
            "schema_version",
            a.schema_version.to_string(),
            b.schema_version.to_string(),
        ),
        (
            "lostreply version",
            a.tool_version.clone(),
            b.tool_version.clone(),
        ),
        ("adapter", adapter(a), adapter(b)),
        ("seed", a.seed.to_string(), b.seed.to_string()),
    ];
    for (field, first_value, value) in fields {
        if first_value != value {
            return Err(MergeError::Differs {
                origin: input.origin.clone(),
                field,
                value,
                first_origin: first.origin.clone(),
                first_value,
            });
        }
    }
    Ok(())
}

fn check_shards(inputs: &[MergeInput]) -> Result<(), MergeError> {
    let Some((first, first_shard)) = inputs.iter().find_map(|i| i.shard.as_ref().map(|s| (i, s)))
    else {
        return Ok(());
    };
    // K of each shard seen, with the input it came from.
    let mut present: BTreeMap<u32, &str> = BTreeMap::new();
    for input in inputs {
        let Some(shard) = &input.shard else {
            return Err(MergeError::MixedShards {
                unsharded: input.origin.clone(),
                sharded: first.origin.clone(),
                index: first_shard.index,
                total: first_shard.total,
            });
        };
        if shard.total == 0 || shard.index == 0 || shard.index > shard.total {
            return Err(MergeError::BadShard {
                origin: input.origin.clone(),
                index: shard.index,
                total: shard.total,
            });
        }
        if shard.total != first_shard.total {
            return Err(MergeError::ShardTotal {
                origin: input.origin.clone(),
                index: shard.index,
                total: shard.total,
                first_origin: first.origin.clone(),
                first_index: first_shard.index,
                first_total: first_shard.total,
            });
        }
        if shard.selected != first_shard.selected {
            return Err(MergeError::ShardSelection {
                origin: input.origin.clone(),
                index: shard.index,
                total: shard.total,
                selected: shard.selected,
                first_origin: first.origin.clone(),
                first_selected: first_shard.selected,
            });
        }
        if let Some(first_origin) = present.insert(shard.index, &input.origin) {
            return Err(MergeError::ShardTwice {
                index: shard.index,
                total: shard.total,
                first_origin: first_origin.to_owned(),
                origin: input.origin.clone(),
            });
        }
    }
    let missing: Vec<u32> = (1..=first_shard.total)
        .filter(|k| !present.contains_key(k))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(MergeError::ShardsMissing {
            missing,
            total: first_shard.total,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{AdapterInfo, AdapterKind, ScenarioReport, Verdict};

    fn scenario(id: &str, verdict: Verdict) -> ScenarioReport {
        ScenarioReport {
            id: id.to_owned(),
            title: format!("{id} title"),
            path: format!("scenarios/{id}.yaml"),
            case: None,
            tags: vec![],
            verdict,
            seed: 7,
            reproduce: format!("lostreply run --seed 1 scenarios/{id}.yaml"),
            duration_ms: 5,
            sim_start_ms: 0,
            operations: vec![],
            steps: vec![],
            calls: vec![],
            journal: vec![],
            ledger: vec![],
            deliveries: vec![],
            violations: vec![],
            findings: vec![],
            errors: vec![],
            mcp_client: None,
            signals: Default::default(),
        }
    }

    fn report(ids: &[&str], duration_ms: u64) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            tool_version: "0.1.0".to_owned(),
            adapter: AdapterInfo {
                name: "builtin:reference".to_owned(),
                kind: AdapterKind::InProcess,
            },
            seed: 1,
            duration_ms,
            scenarios: ids.iter().map(|id| scenario(id, Verdict::Passed)).collect(),
        }
    }

    fn shard(origin: &str, ids: &[&str], index: u32, total: u32) -> MergeInput {
        MergeInput {
            origin: origin.to_owned(),
            report: report(ids, 10 * u64::from(index)),
            shard: Some(Shard {
                index,
                total,
                selected: 5,
            }),
        }
    }

    fn ids(report: &Report) -> Vec<&str> {
        report.scenarios.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn shards_join_sorted_by_id_with_the_longest_duration() {
        let merged = merge(vec![
            shard("s2", &["d", "b"], 2, 3),
            shard("s1", &["e", "a"], 1, 3),
            shard("s3", &["c"], 3, 3),
        ])
        .unwrap();
        assert_eq!(ids(&merged), ["a", "b", "c", "d", "e"]);
        assert_eq!(merged.duration_ms, 30);
        assert_eq!(merged.seed, 1);
    }

    #[test]
    fn an_empty_shard_counts_as_present() {
        let merged = merge(vec![shard("s1", &["a"], 1, 2), shard("s2", &[], 2, 2)]).unwrap();
        assert_eq!(ids(&merged), ["a"]);
    }

    #[test]
    fn reports_without_shards_merge_when_disjoint() {
        let a = MergeInput {
            origin: "x".into(),
            report: report(&["b"], 1),
            shard: None,
        };
        let b = MergeInput {
            origin: "y".into(),
            report: report(&["a"], 2),
            shard: None,
        };
        assert_eq!(ids(&merge(vec![a, b]).unwrap()), ["a", "b"]);
    }

    #[test]
    fn a_different_seed_names_the_input() {
        let mut other = shard("out/s2", &["b"], 2, 2);
        other.report.seed = 9;
        let err = merge(vec![shard("out/s1", &["a"], 1, 2), other]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "out/s2: seed 9 differs from 1 in out/s1; only reports of one run (same adapter, seed and lostreply version) can be merged"
        );
    }

    #[test]
    fn a_different_adapter_or_version_is_refused() {
        let mut other = shard("s2", &["b"], 2, 2);
        other.report.adapter.name = "builtin:naive".into();
        let err = merge(vec![shard("s1", &["a"], 1, 2), other]).unwrap_err();
        assert!(
            matches!(
                err,
                MergeError::Differs {
                    field: "adapter",
                    ..
                }
            ),
            "{err}"
        );
        let mut other = shard("s2", &["b"], 2, 2);
        other.report.tool_version = "0.2.0".into();
        let err = merge(vec![shard("s1", &["a"], 1, 2), other]).unwrap_err();
        assert!(
            err.to_string()
                .contains("lostreply version 0.2.0 differs from 0.1.0"),
            "{err}"
        );
    }

    #[test]
    fn a_scenario_in_two_inputs_names_both() {
        let err = merge(vec![
            shard("s1", &["a", "b"], 1, 2),
            shard("s2", &["b"], 2, 2),
        ])
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "scenario \"b\" is in both s1 and s2: each scenario may come from one report only"
        );
    }

    #[test]
    fn a_missing_shard_is_an_error() {
        let err = merge(vec![shard("s1", &["a"], 1, 4), shard("s3", &["c"], 3, 4)]).unwrap_err();
        assert_eq!(
            err,
            MergeError::ShardsMissing {
                missing: vec![2, 4],
                total: 4
            }
        );
        assert!(
            err.to_string().starts_with("shards 2/4, 4/4 missing"),
            "{err}"
        );
    }

    #[test]
    fn shards_must_agree_with_each_other() {
        let err = merge(vec![shard("s1", &["a"], 1, 2), shard("s2", &["b"], 1, 2)]).unwrap_err();
        assert_eq!(err.to_string(), "s1 and s2 are both shard 1/2");
        let err = merge(vec![shard("s1", &["a"], 1, 2), shard("s2", &["b"], 2, 3)]).unwrap_err();
        assert!(matches!(err, MergeError::ShardTotal { .. }), "{err}");
        let mut other = shard("s2", &["b"], 2, 2);
        other.shard = Some(Shard {
            index: 2,
            total: 2,
            selected: 4,
        });
        let err = merge(vec![shard("s1", &["a"], 1, 2), other]).unwrap_err();
        assert!(matches!(err, MergeError::ShardSelection { .. }), "{err}");
        let err = merge(vec![shard("s1", &["a"], 3, 2)]).unwrap_err();
        assert!(matches!(err, MergeError::BadShard { .. }), "{err}");
        let whole = MergeInput {
            origin: "all".into(),
            report: report(&["z"], 1),
            shard: None,
        };
        let err = merge(vec![whole, shard("s1", &["a"], 1, 1)]).unwrap_err();
        assert!(matches!(err, MergeError::MixedShards { .. }), "{err}");
    }

    #[test]
    fn nothing_to_merge_is_an_error() {
        assert_eq!(merge(vec![]), Err(MergeError::NoInputs));
    }
}
