//! `lostreply validate --prove`: is a scenario file fair? A file can parse
//! and still expect what no correct adapter can do (*impossible*), or what
//! only some designs do (*design-bound*). Both show only when the file is
//! run: so each file is run against every correct design of its family
//! ([`family`]) on seeds `1..=N`, in process. A file every correct design
//! passes is *sound*, and is then run against the flawed adapters, which
//! says which mistakes it catches: the verdict matrix of the user's own
//! files.
//!
//! A run is exactly what `lostreply run --builtin NAME --seed S FILE` makes
//! (the scenario's seed derives from the run's seed and its id), so every
//! finding comes with that command. Runs overlap (`Config::jobs`); a
//! correct design's failed run is run again alone, and counts only if it
//! fails again, so that a machine's load never makes a file look unfair.
//!
//! Map: [`family`] the adapters that judge a file; [`finding`] what a run
//! found, read from its report; [`write`](mod@write) the text and JSON outputs.

use std::collections::BTreeMap;

use futures::stream::{self, StreamExt};
use lostreply_harness::driver::{shell_quote, AdapterUnderTest};
use lostreply_harness::exit;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_scenario, RunOptions};
use serde::Serialize;

pub mod family;
pub mod finding;
pub mod write;

use family::{Family, Member};
use finding::{Broken, Finding, RunEnd};

/// The seeds a file is proven on when none are asked for: `1..=3`.
pub const DEFAULT_SEEDS: u64 = 3;
/// At most this many seeds: each is a run per adapter per file.
pub const MAX_SEEDS: u64 = 1000;
/// At most this many runs at once: each has its own simulator and sockets.
pub const MAX_JOBS: usize = 64;

/// How a proof runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Seeds `1..=seeds`, for every adapter.
    pub seeds: u64,
    /// Runs in flight at once (most of a run waits on sockets and client
    /// timeouts, so a few per core overlap well).
    pub jobs: usize,
}

/// What the proof found, file by file, in the order the files were given.
#[derive(Debug, Clone, Serialize)]
pub struct Proof {
    /// Every adapter ran on seeds `1..=seeds`.
    pub seeds: u64,
    /// One entry per scenario file.
    pub files: Vec<FileProof>,
}

/// One file's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct FileProof {
    /// The path as given.
    pub path: String,
    /// The scenario's id.
    pub id: String,
    /// The family that judged it (absent when none could).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub family: Option<Family>,
    /// The verdict and what supports it.
    #[serde(flatten)]
    pub verdict: FileVerdict,
}

/// Whether a file asks only what the contract asks.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum FileVerdict {
    /// Every correct design passes it on every seed.
    Sound {
        /// The correct designs that passed.
        correct: Vec<String>,
        /// What each flawed adapter did against it.
        flaws: Vec<FlawRecord>,
    },
    /// Some correct designs fail it, others pass: it demands one design's
    /// choice, not the contract.
    DesignBound {
        /// The correct designs that fail it.
        failing: Vec<DesignFailure>,
        /// The correct designs that pass it on every seed.
        passing: Vec<String>,
    },
    /// Every correct design fails it: no correct adapter can meet it.
    Impossible {
        /// Every correct design, with how it fails.
        failing: Vec<DesignFailure>,
    },
    /// The bundled adapters cannot judge it.
    NotJudged {
        /// Why.
        why: NotJudged,
    },
}

/// Why a file was not judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotJudged {
    /// The provider speaks another wire (`provider.profile`): the bundled
    /// adapters call the generic API only, so every run would fail on the
    /// wire, not on what the file expects.
    Profile {
        /// The profile's name.
        profile: String,
    },
    /// The harness or the simulator failed on a correct design's run.
    Infrastructure {
        /// The design.
        design: String,
        /// The run's seed.
        seed: u64,
        /// What failed.
        message: String,
        /// The command that reruns it.
        reproduce: String,
    },
}

/// How one correct design fails a file.
#[derive(Debug, Clone, Serialize)]
pub struct DesignFailure {
    /// The design's name (`lostreply adapter NAME` serves it).
    pub design: String,
    /// The seeds it fails on.
    pub failed_seeds: Vec<u64>,
    /// The first of them, which `findings` and the commands are about.
    pub seed: u64,
    /// What that run broke.
    pub findings: Vec<Finding>,
    /// The command that reruns it in process.
    pub reproduce: String,
    /// The same run with the design served as a process adapter.
    pub reproduce_process: String,
}

/// What one flawed adapter did against a sound file.
#[derive(Debug, Clone, Serialize)]
pub struct FlawRecord {
    /// The adapter's name.
    pub adapter: String,
    /// The seeds it was caught on.
    pub caught_seeds: Vec<u64>,
    /// Each check that caught it, and on how many seeds.
    pub checks: Vec<CheckCount>,
    /// Seeds where the harness failed instead: nothing was shown either way.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub infrastructure_seeds: Vec<u64>,
}

/// A check, and on how many seeds it caught an adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckCount {
    /// The check.
    pub check: Broken,
    /// On how many seeds.
    pub seeds: u64,
}

/// How far a proof has got, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Which runs are under way.
    pub phase: Phase,
    /// Runs of this phase finished.
    pub done: usize,
    /// Runs of this phase in all.
    pub total: usize,
}

/// The two rounds of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Every file against the correct designs.
    Correct,
    /// The correct designs' failed runs again, one at a time.
    Confirm,
    /// The sound files against the flawed adapters.
    Flawed,
}

impl Proof {
    /// The exit code: 1 when a file is impossible or design-bound; else 2
    /// when a file could not be judged for its profile (asking to prove it
    /// is a usage error, and it stays one on every rerun); else 3 when the
    /// harness failed on a run; else 0.
    pub fn exit_code(&self) -> i32 {
        let verdicts = || self.files.iter().map(|f| &f.verdict);
        let unsound = verdicts().any(|v| {
            matches!(
                v,
                FileVerdict::DesignBound { .. } | FileVerdict::Impossible { .. }
            )
        });
        let profile = verdicts().any(|v| {
            matches!(
                v,
                FileVerdict::NotJudged {
                    why: NotJudged::Profile { .. }
                }
            )
        });
        let infrastructure = verdicts().any(|v| match v {
            FileVerdict::NotJudged { why } => matches!(why, NotJudged::Infrastructure { .. }),
            FileVerdict::Sound { flaws, .. } => {
                flaws.iter().any(|f| !f.infrastructure_seeds.is_empty())
            }
            FileVerdict::DesignBound { .. } | FileVerdict::Impossible { .. } => false,
        });
        if unsound {
            exit::VIOLATION
        } else if profile {
            exit::BAD_INPUT
        } else if infrastructure {
            exit::ADAPTER_OR_INFRA
        } else {
            exit::OK
        }
    }
}

/// One run to make.
#[derive(Clone, Copy)]
struct Unit<'a> {
    file: usize,
    scenario: &'a Scenario,
    member: &'a Member,
    seed: u64,
}

/// What `prove` keeps of one run.
struct Outcome {
    end: RunEnd,
    reproduce: String,
}

/// A file after the correct designs' runs.
enum Judged {
    /// Its verdict is known.
    Done(FileVerdict),
    /// Every correct design of its family passed: the flawed ones run next.
    Sound(Family),
}

/// The adapters of both families, made once.
struct Roster {
    http: (Vec<Member>, Vec<Member>),
    mcp: (Vec<Member>, Vec<Member>),
}

impl Roster {
    fn new() -> Roster {
        Roster {
            http: (family::correct(Family::Http), family::flawed(Family::Http)),
            mcp: (family::correct(Family::Mcp), family::flawed(Family::Mcp)),
        }
    }

    fn correct(&self, family: Family) -> &[Member] {
        match family {
            Family::Http => &self.http.0,
            Family::Mcp => &self.mcp.0,
        }
    }

    fn flawed(&self, family: Family) -> &[Member] {
        match family {
            Family::Http => &self.http.1,
            Family::Mcp => &self.mcp.1,
        }
    }
}

/// Proves every scenario: the correct designs first, then, on the files
/// they all pass, the flawed adapters. `progress` hears of every finished run.
pub async fn prove(
    scenarios: &[Scenario],
    config: Config,
    mut progress: impl FnMut(Progress),
) -> Proof {
    let roster = Roster::new();
    let seeds = config.seeds.clamp(1, MAX_SEEDS);
    let families: Vec<Result<Family, NotJudged>> = scenarios
        .iter()
        .map(|scenario| {
            family::family_of(scenario)
                .map_err(|family::OtherWire { profile }| NotJudged::Profile { profile })
        })
        .collect();
    let units = |pick: fn(&Roster, Family) -> &[Member], wanted: &dyn Fn(usize) -> bool| {
        let mut units = Vec::new();
        for (file, scenario) in scenarios.iter().enumerate() {
            let Ok(family) = &families[file] else {
                continue;
            };
            if !wanted(file) {
                continue;
            }
            for member in pick(&roster, *family) {
                for seed in 1..=seeds {
                    units.push(Unit {
                        file,
                        scenario,
                        member,
                        seed,
                    });
                }
            }
        }
        units
    };
    let correct_units = units(Roster::correct, &|_| true);
    let mut correct_runs =
        run_units(&correct_units, config.jobs, Phase::Correct, &mut progress).await;
    confirm_failures(&correct_units, &mut correct_runs, &mut progress).await;
    let judged: Vec<Judged> = families
        .iter()
        .enumerate()
        .map(|(file, family)| match family {
            Err(why) => Judged::Done(FileVerdict::NotJudged { why: why.clone() }),
            Ok(family) => judge_correct(
                &correct_runs,
                file,
                scenarios[file].path.as_str(),
                roster.correct(*family),
            )
            .map_or(Judged::Sound(*family), Judged::Done),
        })
        .collect();
    let flawed_units = units(Roster::flawed, &|file| {
        matches!(judged[file], Judged::Sound(_))
    });
    let flawed_runs = run_units(&flawed_units, config.jobs, Phase::Flawed, &mut progress).await;
    let files = scenarios
        .iter()
        .zip(judged)
        .enumerate()
        .map(|(file, (scenario, judged))| {
            let verdict = match judged {
                Judged::Done(verdict) => verdict,
                Judged::Sound(family) => FileVerdict::Sound {
                    correct: names(roster.correct(family)),
                    flaws: roster
                        .flawed(family)
                        .iter()
                        .map(|m| flaw_record(&flawed_runs, file, m))
                        .collect(),
                },
            };
            FileProof {
                path: scenario.path.clone(),
                id: scenario.id.clone(),
                family: families[file].as_ref().ok().copied(),
                verdict,
            }
        })
        .collect();
    Proof { seeds, files }
}

/// The runs of one phase, several at once; keyed by (file, adapter, seed).
type Runs = BTreeMap<(usize, String, u64), Outcome>;

async fn run_units(
    units: &[Unit<'_>],
    jobs: usize,
    phase: Phase,
    progress: &mut impl FnMut(Progress),
) -> Runs {
    let total = units.len();
    let mut runs = Runs::new();
    let mut done = stream::iter(units.iter().copied())
        .map(|unit| async move {
            let options = RunOptions::new(AdapterUnderTest::InProcess(unit.member.factory.clone()))
                .seed(unit.seed)
                .jobs(1);
            let report = run_scenario(unit.scenario, &options).await;
            let outcome = Outcome {
                end: finding::run_end(&report),
                reproduce: report.reproduce,
            };
            (unit, outcome)
        })
        .buffer_unordered(jobs.clamp(1, MAX_JOBS));
    while let Some((unit, outcome)) = done.next().await {
        runs.insert((unit.file, unit.member.name.clone(), unit.seed), outcome);
        progress(Progress {
            phase,
            done: runs.len(),
            total,
        });
    }
    runs
}

/// Runs each failed run of a correct design again, alone, and keeps what
/// that run shows: a loaded machine can turn a slow answer into a lost one,
/// and a file is not unfair for that. A failure that repeats alone is the
/// file's; one that does not is the load's.
async fn confirm_failures(
    units: &[Unit<'_>],
    runs: &mut Runs,
    progress: &mut impl FnMut(Progress),
) {
    let failed: Vec<Unit> = units
        .iter()
        .filter(|u| {
            runs.get(&(u.file, u.member.name.clone(), u.seed))
                .is_some_and(|o| matches!(o.end, RunEnd::Failed(_)))
        })
        .copied()
        .collect();
    let confirmed = run_units(&failed, 1, Phase::Confirm, progress).await;
    runs.extend(confirmed);
}

fn names(members: &[Member]) -> Vec<String> {
    members.iter().map(|m| m.name.clone()).collect()
}

/// One adapter's runs on one file, in seed order.
fn runs_of<'r>(
    runs: &'r Runs,
    file: usize,
    member: &Member,
) -> impl Iterator<Item = (u64, &'r Outcome)> {
    runs.range((file, member.name.clone(), 0)..=(file, member.name.clone(), u64::MAX))
        .map(|((_, _, seed), outcome)| (*seed, outcome))
}

/// The verdict the correct designs give a file; `None` when it is sound
/// (its verdict then waits for the flawed adapters).
fn judge_correct(runs: &Runs, file: usize, path: &str, correct: &[Member]) -> Option<FileVerdict> {
    for member in correct {
        for (seed, outcome) in runs_of(runs, file, member) {
            if let RunEnd::Infrastructure(message) = &outcome.end {
                return Some(FileVerdict::NotJudged {
                    why: NotJudged::Infrastructure {
                        design: member.name.clone(),
                        seed,
                        message: message.clone(),
                        reproduce: outcome.reproduce.clone(),
                    },
                });
            }
        }
    }
    let mut failing = Vec::new();
    let mut passing = Vec::new();
    for member in correct {
        match design_failure(runs, file, path, member) {
            Some(failure) => failing.push(failure),
            None => passing.push(member.name.clone()),
        }
    }
    if failing.is_empty() {
        None
    } else if passing.is_empty() {
        Some(FileVerdict::Impossible { failing })
    } else {
        Some(FileVerdict::DesignBound { failing, passing })
    }
}

fn design_failure(runs: &Runs, file: usize, path: &str, member: &Member) -> Option<DesignFailure> {
    let mut first: Option<(u64, &Outcome, &[Finding])> = None;
    let mut failed_seeds = Vec::new();
    for (seed, outcome) in runs_of(runs, file, member) {
        if let RunEnd::Failed(findings) = &outcome.end {
            failed_seeds.push(seed);
            first.get_or_insert((seed, outcome, findings));
        }
    }
    let (seed, outcome, findings) = first?;
    Some(DesignFailure {
        design: member.name.clone(),
        failed_seeds,
        seed,
        findings: findings.to_vec(),
        reproduce: outcome.reproduce.clone(),
        reproduce_process: process_command(&member.name, seed, path),
    })
}

/// `lostreply run --adapter 'lostreply adapter NAME' --seed S FILE`: the
/// same run with the design served as a process (the run's own command
/// names it `--builtin NAME`).
fn process_command(name: &str, seed: u64, path: &str) -> String {
    format!(
        "lostreply run --adapter {} --seed {seed} {}",
        shell_quote(&format!("lostreply adapter {name}")),
        shell_quote(path)
    )
}

fn flaw_record(runs: &Runs, file: usize, member: &Member) -> FlawRecord {
    let mut caught_seeds = Vec::new();
    let mut infrastructure_seeds = Vec::new();
    let mut checks: BTreeMap<Broken, u64> = BTreeMap::new();
    for (seed, outcome) in runs_of(runs, file, member) {
        match &outcome.end {
            RunEnd::Passed => {}
            RunEnd::Infrastructure(_) => infrastructure_seeds.push(seed),
            RunEnd::Failed(findings) => {
                caught_seeds.push(seed);
                let mut seen: Vec<&Broken> = findings.iter().map(|f| &f.check).collect();
                seen.sort();
                seen.dedup();
                for check in seen {
                    *checks.entry(check.clone()).or_default() += 1;
                }
            }
        }
    }
    FlawRecord {
        adapter: member.name.clone(),
        caught_seeds,
        checks: checks
            .into_iter()
            .map(|(check, seeds)| CheckCount { check, seeds })
            .collect(),
        infrastructure_seeds,
    }
}

#[cfg(test)]
mod tests;
