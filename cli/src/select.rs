//! Which scenarios a command takes, shared by `run` and `list`: files or
//! directories (default: the built-in library), then `--tag` filters, then
//! `--shard K/N`. Sharding comes last, so a shard is a stable part of whatever
//! the filters selected.

use std::path::PathBuf;

use clap::Args;
use lostreply_harness::exit;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::scenario::select::take;
use lostreply_reports::model::Shard;

/// The selection flags as clap parses them.
#[derive(Debug, Args)]
pub(super) struct SelectArgs {
    /// Only scenarios with this tag (repeatable: any of them). `lost-response` selects the ten cases; scenarios tagged `mcp` run only with `--tag mcp` (or when their file is named).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Only shard K of N (1 ≤ K ≤ N): a stable part of the selection, chosen by scenario id, for splitting a run across CI jobs.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Scenario files or directories (default: the built-in library).
    paths: Vec<PathBuf>,
}

/// `--shard K/N`, validated: `1 <= index <= total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ShardSpec {
    /// K, from 1.
    pub index: u32,
    /// N, at least 1.
    pub total: u32,
}

/// Why a `--shard` value is not a shard; each keeps the value as given,
/// which its message starts with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ShardSpecError {
    /// Not two whole numbers around one `/`.
    #[error("--shard {raw}: expected K/N, two whole numbers such as 2/4 (the second of 4 shards)")]
    NotKOfN {
        /// The value as given.
        raw: String,
    },
    /// K or N does not fit in a `u32`.
    #[error("--shard {raw}: {part} is too large (at most {})", u32::MAX)]
    TooLarge {
        /// The value as given.
        raw: String,
        /// The number that does not fit, as written.
        part: String,
    },
    /// N is zero.
    #[error("--shard {raw}: N must be at least 1 (N is how many shards the run is split into)")]
    NoShards {
        /// The value as given.
        raw: String,
    },
    /// K is zero or above N.
    #[error(
        "--shard {raw}: K must be from 1 to N: the shards of {total} are 1/{total} to {total}/{total}"
    )]
    IndexOutOfRange {
        /// The value as given.
        raw: String,
        /// N.
        total: u32,
    },
}

impl ShardSpec {
    /// Parses `K/N`; the error says what is wrong with it.
    pub fn parse(raw: &str) -> Result<ShardSpec, ShardSpecError> {
        let not_k_of_n = || ShardSpecError::NotKOfN {
            raw: raw.to_owned(),
        };
        let whole = |part: &str| -> Result<u32, ShardSpecError> {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(not_k_of_n());
            }
            part.parse::<u32>().map_err(|_| ShardSpecError::TooLarge {
                raw: raw.to_owned(),
                part: part.to_owned(),
            })
        };
        let Some((k, n)) = raw.split_once('/') else {
            return Err(not_k_of_n());
        };
        let (index, total) = (whole(k)?, whole(n)?);
        if total == 0 {
            return Err(ShardSpecError::NoShards {
                raw: raw.to_owned(),
            });
        }
        if index == 0 || index > total {
            return Err(ShardSpecError::IndexOutOfRange {
                raw: raw.to_owned(),
                total,
            });
        }
        Ok(ShardSpec { index, total })
    }

    /// True when the scenario with this id belongs to this shard.
    pub fn takes(self, scenario_id: &str) -> bool {
        shard_of(scenario_id, self.total) == self.index
    }
}

/// The shard (1..=total) a scenario belongs to: a stable hash of its id only
/// (FNV-1a 64 over the id's UTF-8 bytes, then the splitmix64 finalizer so that
/// every bit counts), modulo `total`, plus one. Never `std`'s hasher, which is
/// seeded at random: every CI job must compute the same assignment. This is the
/// function docs/ci.md documents; changing it moves scenarios between shards.
pub(super) fn shard_of(scenario_id: &str, total: u32) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scenario_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    // total >= 1, and the remainder is below total, so it fits in u32.
    (h % u64::from(total.max(1))) as u32 + 1
}

/// What a command takes: the scenarios, and the shard they are, if any.
#[derive(Debug)]
pub(super) struct Selection {
    /// The scenarios to run or list, in selection order.
    pub scenarios: Vec<Scenario>,
    /// Scenarios left out for an opt-in tag the run did not name (`mcp`),
    /// with the tags they lack; before sharding.
    pub left_out: Vec<(Scenario, Vec<String>)>,
    /// One line saying what was left out and how to take it.
    pub left_out_note: Option<String>,
    /// Which shard they are, with the size of the selection they were cut from.
    pub shard: Option<Shard>,
}

/// Why nothing could be selected; each maps to exit code 2.
#[derive(Debug)]
pub(super) enum SelectError {
    /// A flag is wrong (printed after the command's name).
    Usage(String),
    /// `--shard` is not a shard (printed after the command's name).
    Shard(ShardSpecError),
    /// A scenario file is missing or invalid (printed as it is: it names the file).
    Scenarios(String),
}

impl SelectError {
    /// Prints the error for `command` (`lostreply run`) and returns its exit code.
    pub fn report(self, command: &str) -> i32 {
        match self {
            SelectError::Usage(message) => eprintln!("{command}: {message}"),
            SelectError::Shard(e) => eprintln!("{command}: {e}"),
            SelectError::Scenarios(message) => eprintln!("{message}"),
        }
        exit::BAD_INPUT
    }
}

impl SelectArgs {
    /// The flags checked (before any file is read), then the scenarios loaded,
    /// filtered by tag, and cut to the shard.
    pub fn select(&self) -> Result<Selection, SelectError> {
        let spec = match &self.shard {
            Some(raw) => Some(ShardSpec::parse(raw).map_err(SelectError::Shard)?),
            None => None,
        };
        let selected = take(&self.paths, &self.tags).map_err(|e| {
            if e.nothing_selected() {
                SelectError::Usage(e.to_string())
            } else {
                SelectError::Scenarios(e.to_string())
            }
        })?;
        let left_out_note = selected.left_out_note();
        let mut scenarios = selected.scenarios;
        let left_out = selected.left_out;
        let shard = spec.map(|spec| {
            let selected = scenarios.len();
            scenarios.retain(|s| spec.takes(&s.id));
            Shard::builder()
                .index(spec.index)
                .total(spec.total)
                .selected(selected)
                .build()
        });
        Ok(Selection {
            scenarios,
            left_out,
            left_out_note,
            shard,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn good_specs_parse() {
        assert_eq!(
            ShardSpec::parse("1/1"),
            Ok(ShardSpec { index: 1, total: 1 })
        );
        assert_eq!(
            ShardSpec::parse("4/7"),
            Ok(ShardSpec { index: 4, total: 7 })
        );
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (raw, says) in [
            ("", "expected K/N"),
            ("3", "expected K/N"),
            ("a/4", "expected K/N"),
            ("1/4/2", "expected K/N"),
            ("-1/4", "expected K/N"),
            (" 1/4", "expected K/N"),
            ("1/", "expected K/N"),
            ("1/0", "N must be at least 1"),
            ("0/0", "N must be at least 1"),
            (
                "0/4",
                "K must be from 1 to N: the shards of 4 are 1/4 to 4/4",
            ),
            ("5/4", "K must be from 1 to N"),
            ("1/99999999999", "99999999999 is too large"),
        ] {
            let err = ShardSpec::parse(raw).unwrap_err().to_string();
            assert!(err.contains(says), "{raw:?}: {err}");
            assert!(
                err.starts_with(&format!("--shard {raw}:")),
                "{raw:?}: {err}"
            );
        }
    }

    #[test]
    fn errors_keep_the_value_as_given() {
        let raw = |raw: &str| raw.to_owned();
        assert_eq!(
            ShardSpec::parse("2"),
            Err(ShardSpecError::NotKOfN { raw: raw("2") })
        );
        assert_eq!(
            ShardSpec::parse("1/99999999999"),
            Err(ShardSpecError::TooLarge {
                raw: raw("1/99999999999"),
                part: raw("99999999999"),
            })
        );
        assert_eq!(
            ShardSpec::parse("3/0"),
            Err(ShardSpecError::NoShards { raw: raw("3/0") })
        );
        assert_eq!(
            ShardSpec::parse("5/4"),
            Err(ShardSpecError::IndexOutOfRange {
                raw: raw("5/4"),
                total: 4,
            })
        );
    }

    /// The documented assignment, pinned: a change here moves scenarios between shards.
    #[test]
    fn the_assignment_is_pinned() {
        let ids = ["a", "case02-lost-after-commit", "extra-weak-evidence"];
        let got: Vec<u32> = ids.iter().map(|id| shard_of(id, 4)).collect();
        assert_eq!(got, [1, 4, 4]);
        for id in ids {
            assert_eq!(shard_of(id, 1), 1);
        }
    }

    #[test]
    fn every_id_lands_in_exactly_one_shard() {
        for total in 1..=9 {
            for i in 0..200 {
                let id = format!("scenario-{i}");
                let owners: Vec<u32> = (1..=total)
                    .filter(|&k| ShardSpec { index: k, total }.takes(&id))
                    .collect();
                assert_eq!(owners.len(), 1, "{id} in {owners:?} of {total}");
            }
        }
    }
}
