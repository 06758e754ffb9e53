//! The search: situation `i` of a seed is drawn from its own random stream
//! (so the same seed and budget in situations give the same situations,
//! whatever `--jobs`), run against the adapter, judged by the invariants and
//! the protocol's rules alone (never a writer's expectations); the first
//! violation of each is shrunk through its value tree to the smallest
//! situation that still breaks it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use lostreply_harness::scenario::parse;
use lostreply_harness::suite::{run_scenario, RunOptions};
use lostreply_reports::model::{Check, Invariant, Rule, ScenarioReport, Verdict};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::situation::{Pace, Situation};
use crate::space::{situation_on_wire, Space};

/// Most runs spent shrinking one finding.
pub const MAX_SHRINK_RUNS: u32 = 400;

/// How much to explore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// This many situations: the same seed gives the same findings.
    Situations(u64),
    /// Until this much real time has passed (situations already started finish).
    Time(Duration),
}

/// What an exploration is given.
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// The adapter and the run seed every situation's run derives from.
    pub run: RunOptions,
    /// How much to explore.
    pub budget: Budget,
    /// Situations run at once.
    pub jobs: usize,
    /// Only situations `i` with `i % total == index - 1` (`--shard K/N`).
    pub shard: Option<(u64, u64)>,
    /// The wire and the tags situations are drawn with.
    pub space: Space,
}

/// A truth a run broke: an invariant or a rule of the protocol, each
/// checked in every scenario where its situation arises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// One of the seven invariants.
    Invariant(Invariant),
    /// A rule beyond them.
    Rule(Rule),
}

impl Broken {
    /// Its name: `at-most-once`, `review-after-contradiction`.
    pub fn name(self) -> &'static str {
        match self {
            Broken::Invariant(i) => i.name(),
            Broken::Rule(r) => r.name(),
        }
    }

    /// As reports name it: `invariant 1 (at-most-once)`,
    /// `rule review-after-contradiction`.
    pub fn label(self) -> String {
        match self {
            Broken::Invariant(i) => format!("invariant {} ({})", i.number(), i.name()),
            Broken::Rule(r) => format!("rule {}", r.name()),
        }
    }
}

/// A violation found, and the smallest situation that still shows it.
#[derive(Debug, Clone)]
pub struct Finding {
    /// What it broke.
    pub broken: Broken,
    /// The violation's message in the shrunk situation's run.
    pub message: String,
    /// Which situation of the seed first showed it.
    pub index: u64,
    /// The scenario id every run of it had (its seed derives from it).
    pub id: String,
    /// The situation as generated.
    pub original: Situation,
    /// The situation shrunk.
    pub shrunk: Situation,
    /// Runs spent shrinking.
    pub shrink_runs: u32,
    /// The pace its situations were shrunk at, and its file is written at.
    pub pace: Pace,
    /// The shrunk situation's run.
    pub report: ScenarioReport,
}

/// What was explored.
#[derive(Debug, Clone, Default)]
pub struct Explored {
    /// Situations run.
    pub situations: u64,
    /// Situations the scenario reader refused (a generator defect; 0 expected).
    pub invalid: u64,
    /// Situations not drawn: none of `MAX_DRAWS` draws carried the tags
    /// asked for (exploring stops at the first).
    pub undrawn: u64,
    /// Runs the adapter failed to answer in (deadline, crash, bad reply).
    pub adapter_errors: u64,
    /// Runs the harness failed in.
    pub infra_errors: u64,
    /// The first violation of each invariant or rule, shrunk, in the order found.
    pub findings: Vec<Finding>,
    /// How many situations had each feature (`step: reconcile`, `fault: after_commit drop`...).
    pub space: BTreeMap<String, u64>,
    /// How long it took.
    pub elapsed: Duration,
}

/// The random stream of situation `index` of `seed`.
fn runner_for(seed: u64, index: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&index.to_le_bytes());
    bytes[16..24].copy_from_slice(b"explore1");
    TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// A situation's value tree (not `Send`: explore runs on the caller's task).
pub type Tree = Box<dyn ValueTree<Value = Situation>>;

/// Most draws for one situation carrying the tags asked for.
pub const MAX_DRAWS: u32 = 20_000;

/// Situation `index`'s value tree: the first of its stream's draws that
/// carries `space`'s tags, or none within `MAX_DRAWS`.
pub fn tree_for(space: &Space, seed: u64, index: u64) -> Option<Tree> {
    let mut runner = runner_for(seed, index);
    let strategy = situation_on_wire(space.wire);
    (0..MAX_DRAWS).find_map(|_| {
        let tree = strategy.new_tree(&mut runner).ok()?;
        space.admits(&tree.current().tags()).then_some(tree)
    })
}

/// The scenario id of situation `index`: its run's seed derives from it.
pub fn situation_id(seed: u64, index: u64) -> String {
    format!("explore-{seed}-{index}")
}

/// How one run went.
enum Outcome {
    Invalid,
    Judged(Box<ScenarioReport>),
}

/// Runs `situation` as scenario `id`, its gathers at `pace`.
pub async fn judge(
    situation: &Situation,
    id: &str,
    run: &RunOptions,
    pace: Pace,
) -> Option<ScenarioReport> {
    let yaml = situation.to_yaml(id, &[], pace);
    let scenario = parse(&yaml, &format!("{id}.yaml")).ok()?;
    Some(run_scenario(&scenario, run).await)
}

/// The first invariant or rule a run broke, with its message.
pub fn broken(report: &ScenarioReport) -> Option<(Broken, String)> {
    report.violations.iter().find_map(|v| match v.check {
        Check::Invariant(invariant) => Some((Broken::Invariant(invariant), v.message.clone())),
        Check::Rule { rule } => Some((Broken::Rule(rule), v.message.clone())),
        _ => None,
    })
}

/// Explores until the budget is spent; `progress` hears of each finding.
pub async fn explore(options: &ExploreOptions, mut progress: impl FnMut(&Finding)) -> Explored {
    let started = Instant::now();
    let seed = options.run.seed;
    let mut explored = Explored::default();
    let mut next = 0u64;
    while !spent(options.budget, &explored, started) && explored.undrawn == 0 {
        let batch = next_batch(options, &mut explored, &mut next);
        if batch.is_empty() {
            break;
        }
        let runs = batch.iter().map(|(index, tree)| {
            let situation = tree.current();
            let id = situation_id(seed, *index);
            async move {
                match judge(&situation, &id, &options.run, Pace::Exploring).await {
                    Some(report) => Outcome::Judged(Box::new(report)),
                    None => Outcome::Invalid,
                }
            }
        });
        let outcomes = futures::future::join_all(runs).await;
        for ((index, tree), outcome) in batch.into_iter().zip(outcomes) {
            let finding = take(&mut explored, index, tree, outcome, options).await;
            if let Some(finding) = finding {
                progress(&finding);
                explored.findings.push(finding);
            }
        }
    }
    explored.elapsed = started.elapsed();
    explored
}

fn spent(budget: Budget, explored: &Explored, started: Instant) -> bool {
    match budget {
        Budget::Situations(n) => explored.situations + explored.invalid >= n,
        Budget::Time(limit) => started.elapsed() >= limit,
    }
}

/// The next situations to run, at most `jobs`, within the shard and the budget.
fn next_batch(
    options: &ExploreOptions,
    explored: &mut Explored,
    next: &mut u64,
) -> Vec<(u64, Tree)> {
    let room = match options.budget {
        Budget::Situations(n) => n.saturating_sub(explored.situations + explored.invalid),
        Budget::Time(_) => u64::MAX,
    };
    let want = (options.jobs.max(1) as u64).min(room);
    let mut batch = Vec::new();
    while (batch.len() as u64) < want {
        let index = *next;
        *next += 1;
        if let Some((k, n)) = options.shard {
            if index % n != k - 1 {
                continue;
            }
        }
        match tree_for(&options.space, options.run.seed, index) {
            Some(tree) => batch.push((index, tree)),
            None => {
                explored.undrawn += 1;
                break;
            }
        }
    }
    batch
}

/// Counts one run, and shrinks it when it is the first to break what it broke.
async fn take(
    explored: &mut Explored,
    index: u64,
    tree: Tree,
    outcome: Outcome,
    options: &ExploreOptions,
) -> Option<Finding> {
    let report = match outcome {
        Outcome::Invalid => {
            explored.invalid += 1;
            return None;
        }
        Outcome::Judged(report) => report,
    };
    explored.situations += 1;
    count_space(&mut explored.space, &tree.current());
    match report.verdict {
        Verdict::AdapterError => explored.adapter_errors += 1,
        Verdict::InfraError => explored.infra_errors += 1,
        Verdict::Passed | Verdict::Violated => {}
    }
    let (what, _) = broken(&report)?;
    if explored.findings.iter().any(|f| f.broken == what) {
        return None;
    }
    Some(shrink(tree, index, what, *report, options).await)
}

/// Simplifies while the situation still breaks `what`, complicates
/// back where a step too far lost it (proptest's own shrinking loop).
async fn shrink(
    mut tree: Tree,
    index: u64,
    what: Broken,
    report: ScenarioReport,
    options: &ExploreOptions,
) -> Finding {
    let run = &options.run;
    let id = situation_id(run.seed, index);
    let original = tree.current();
    let (pace, report) = reproducing_pace(&original, &id, what, report, run).await;
    let mut best = (original.clone(), report);
    let mut runs = 0;
    if tree.simplify() {
        while runs < MAX_SHRINK_RUNS {
            runs += 1;
            let candidate = tree.current();
            // A gathered race that shrinks to an ungathered one may still
            // break `what` by luck, and its file not on a rerun: a shrunk
            // situation leaves no more to the scheduler than its finding did.
            let kept = options.space.admits(&candidate.tags())
                && candidate.ungathered_races() <= best.0.ungathered_races();
            let still = if kept {
                judge(&candidate, &id, run, pace)
                    .await
                    .filter(|r| broken(r).is_some_and(|(b, _)| b == what))
            } else {
                None
            };
            let moved = match still {
                Some(report) => {
                    best = (candidate, report);
                    tree.simplify()
                }
                // A tuple's value tree gives up once the part it last
                // simplified cannot go back (proptest's own loop stops there),
                // while its other parts could still shrink: go on simplifying.
                // Only a candidate that still breaks `what` is ever kept.
                None => tree.complicate() || tree.simplify(),
            };
            if !moved {
                break;
            }
        }
    }
    let (shrunk, report) = best;
    let message = broken(&report).map(|(_, m)| m).unwrap_or_default();
    Finding {
        broken: what,
        message,
        index,
        id,
        original,
        shrunk,
        shrink_runs: runs,
        pace,
        report,
    }
}

/// The pace a finding is shrunk and written at: the reproducing one when
/// its situation still breaks `what` at it (with that run's report), else
/// the exploring one it was found at. A situation without a gather reads
/// the same at both.
async fn reproducing_pace(
    situation: &Situation,
    id: &str,
    what: Broken,
    report: ScenarioReport,
    run: &RunOptions,
) -> (Pace, ScenarioReport) {
    if !situation.gathers() {
        return (Pace::Reproducing, report);
    }
    match judge(situation, id, run, Pace::Reproducing).await {
        Some(again) if broken(&again).is_some_and(|(b, _)| b == what) => (Pace::Reproducing, again),
        _ => (Pace::Exploring, report),
    }
}

/// One count per feature a situation has.
fn count_space(space: &mut BTreeMap<String, u64>, s: &Situation) {
    let mut features: Vec<String> = vec![
        format!("operations: {}", s.amounts.len()),
        format!("collection: {}", s.collection.resource()),
    ];
    features.extend(s.tags().into_iter().map(|t| format!("tag: {}", t.name())));
    if s.mcp.is_none() {
        features.push(format!("idempotency: {:?}", s.provider.keys).to_lowercase());
    }
    if let Some(a) = s.provider.asynchronous {
        features.push(format!(
            "provider: asynchronous, settles {}",
            a.result.name()
        ));
    }
    for step in &s.steps {
        features.push(format!("step: {}", step.kind_name()));
    }
    for f in &s.faults {
        features.push(format!(
            "fault: {} {} {}",
            f.kind.name(),
            f.at.name(),
            f.response.kind_name()
        ));
    }
    for f in s.mcp.iter().flat_map(|side| &side.faults) {
        features.push(format!(
            "call fault: {} {}",
            f.tool.name(),
            f.call.kind_name()
        ));
    }
    features.sort();
    features.dedup();
    for feature in features {
        *space.entry(feature).or_default() += 1;
    }
}
