//! The proof that verdicts judge the contract, not a design.
//!
//! - Correct adapters of different designs (the bundled reference; `eager`,
//!   `lazy`, `lookup-first` and `try-lock` from `examples/src/designs`; the
//!   Python adapter in three strategies) pass every built-in scenario: the
//!   in-process ones on 20 seeds, with `--jobs 1` and `--jobs 8`; the Python
//!   one on 3 seeds (python_adapter.rs; like every module of this binary it
//!   runs alone, so its processes never starve the in-process runs of this one).
//! - Flawed adapters (the ten naive ones, one per case, and five flawed
//!   variants of the `eager` design) are each caught, on every one of the 20
//!   seeds, by the scenarios named for them, with a violation of the check
//!   named for them, which no correct adapter gets on that scenario.
//! - The matrix (adapters × scenarios, seed 1) is printed and must equal
//!   docs/verdict-matrix.md; `LOSTREPLY_BLESS=1` rewrites that file, up to
//!   its section on the provider SDK libraries (sdk_verdicts.rs's).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::common;
use futures::stream::{self, StreamExt};
use lostreply_harness::adapter::AdapterFactory;
use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::{Report, Verdict};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=20;
/// Suite runs in flight at once, across the three tests of this file (they
/// run in parallel threads): most of a run is waiting (client timeouts,
/// stalls, a gather's bound), so they overlap well, but a starved machine
/// would turn slow answers into lost ones and test itself, not the adapters.
const CONCURRENT_RUNS: usize = 6;

/// Shared by the tests of this file, so that together they never exceed
/// [`CONCURRENT_RUNS`].
static RUNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(CONCURRENT_RUNS);

/// Catching a race needs a machine that is not starved: under thousands of
/// correct runs at once, the racing partner of case 7 can start later than
/// its gather's bound, the race never happens, and the flaw goes unseen (it
/// did, once, in CI). So the flaw-catching test holds this exclusively and
/// the others share it: it never overlaps them.
static CPU: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared_cpu() -> std::sync::RwLockReadGuard<'static, ()> {
    CPU.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn whole_cpu() -> std::sync::RwLockWriteGuard<'static, ()> {
    CPU.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A flawed adapter, the scenarios that must catch it, and the check (its
/// name's prefix) that must be among the violations.
struct Flawed {
    name: &'static str,
    factory: Arc<dyn AdapterFactory>,
    caught_by: CaughtBy,
}

fn correct() -> Vec<(String, Arc<dyn AdapterFactory>)> {
    let reference: Arc<dyn AdapterFactory> = Arc::new(lostreply_reference::ReferenceFactory);
    let mut adapters = vec![("reference".to_owned(), reference)];
    for factory in lostreply_examples::designs::correct_designs() {
        adapters.push((factory.name(), Arc::from(factory)));
    }
    adapters
}

/// What a flawed adapter's mistake is caught by: (scenario, check) pairs.
type CaughtBy = &'static [(&'static str, &'static str)];

/// The naive adapters, one per case: (case, name, what catches it).
const NAIVE: &[(u8, &str, CaughtBy)] = &[
    (
        1,
        "naive case 1: a timeout is a failure",
        &[
            ("case01-lost-before-receipt-no-keys", "expect.final"),
            ("case01-timeout-before-receipt", "invariant 3"),
        ],
    ),
    (
        2,
        "naive case 2: a fresh key per attempt",
        &[
            ("case02-lost-after-commit", "invariant 1"),
            ("case02-timeout-after-commit", "invariant 1"),
            ("extra-retries-of-retries", "invariant 1"),
        ],
    ),
    (
        3,
        "naive case 3: processing is done",
        &[
            ("case03-processing-settles-failed", "invariant 3"),
            ("case03-still-processing", "invariant 2"),
        ],
    ),
    (
        4,
        "naive case 4: tagged retries",
        &[
            ("case04-replay-identical-arguments", "invariant 5"),
            ("case04-replay-on-reconcile", "invariant 5"),
        ],
    ),
    (
        5,
        "naive case 5: one key per action",
        &[
            ("case05-identical-arguments-on-purpose", "invariant 2"),
            ("case05-key-collision-different-arguments", "invariant 2"),
        ],
    ),
    (
        6,
        "naive case 6: trusts every webhook",
        &[
            ("case06-webhook-around-reconcile", "invariant 7"),
            ("extra-webhook-beside-held-create", "invariant 7"),
        ],
    ),
    (
        7,
        "naive case 7: unlocked reconciler",
        &[
            ("case07-racing-reconcilers", "invariant 1"),
            ("extra-resolve-during-reconcile-search", "invariant 4"),
        ],
    ),
    (
        8,
        "naive case 8: key and intent in memory",
        &[("case08-crash-after-remote-success", "invariant 1")],
    ),
    (
        9,
        "naive case 9: keys never expire",
        &[("case09-key-retention-expired", "invariant 1")],
    ),
    (
        10,
        "naive case 10: re-executes after review",
        &[("case10-review-then-late-event", "invariant 1")],
    ),
];

/// The flawed designs: (design, name, what catches it).
const FLAWED_DESIGNS: &[(&str, &str, CaughtBy)] = &[
    (
        "flawed-in-flight-is-failure",
        "eager, but a 409 in flight is a failure",
        &[
            ("case01-timeout-before-receipt", "invariant 3"),
            ("extra-retry-meets-request-in-flight", "invariant 3"),
            ("extra-retry-meets-request-in-flight-ietf", "invariant 3"),
        ],
    ),
    (
        "flawed-unlocked",
        "eager, but reconcilers take no lock",
        &[
            ("case07-racing-reconcilers", "invariant 1"),
            ("extra-webhook-beside-held-create", "expect.final"),
        ],
    ),
    (
        "flawed-replays-expired-keys",
        "eager, but expired keys are replayed",
        &[
            ("case09-key-retention-expired", "invariant 1"),
            ("extra-retention-from-first-use", "invariant 1"),
        ],
    ),
    (
        "flawed-last-writer-wins",
        "eager, but the last writer wins",
        &[("case10-review-then-late-event", "invariant 4")],
    ),
    (
        "flawed-refused-retry-is-failure",
        "eager, but a refused retry is a failure",
        &[
            ("extra-refused-retry-after-commit", "invariant 3"),
            ("extra-refused-replay-while-lookups-fail", "invariant 3"),
        ],
    ),
    (
        "flawed-same-call-absence",
        "eager, but a same-call absence is proof",
        &[("extra-same-call-absence-unkeyed", "invariant 1")],
    ),
    (
        "flawed-ignores-contradiction",
        "eager, but a contradicted resolution is left alone",
        &[
            (
                "extra-operator-failed-against-ledger",
                "rule review-after-contradiction",
            ),
            (
                "extra-operator-names-another-object",
                "rule review-after-contradiction",
            ),
            (
                "extra-operator-succeeded-without-id",
                "rule review-after-contradiction",
            ),
        ],
    ),
    (
        "flawed-failed-lookup-is-absence",
        "eager, but a failed lookup is proof of absence",
        &[
            ("extra-lookups-fail-themselves", "invariant 1"),
            ("extra-refused-replay-while-lookups-fail", "invariant 3"),
        ],
    ),
    (
        "flawed-never-escalates",
        "eager, but never asks a person",
        &[
            (
                "case10-review-then-late-event",
                "expect.needs_review_from_step",
            ),
            ("extra-no-keys-no-lookup", "expect.needs_review_from_step"),
        ],
    ),
];

fn flawed() -> Vec<Flawed> {
    let naive = NAIVE.iter().map(|&(case, name, caught_by)| {
        let f = lostreply_examples::naive_adapter(case).expect("a naive adapter per case");
        let factory: Arc<dyn AdapterFactory> = Arc::new(lostreply_examples::naive::kit::Factory {
            name: f.name,
            build: f.build,
        });
        Flawed {
            name,
            factory,
            caught_by,
        }
    });
    let designs = FLAWED_DESIGNS.iter().map(|&(design, name, caught_by)| {
        let factory: Arc<dyn AdapterFactory> =
            Arc::from(lostreply_examples::designs::design(design).expect("a flawed design"));
        Flawed {
            name,
            factory,
            caught_by,
        }
    });
    naive.chain(designs).collect()
}

/// One suite run to make.
struct Job {
    label: String,
    adapter: AdapterUnderTest,
    scenarios: Vec<Scenario>,
    seed: u64,
    jobs: usize,
}

/// Runs every job, several at once; results in the jobs' order.
fn run_all(jobs: Vec<Job>) -> Vec<(String, Report)> {
    let rt = common::runtime();
    rt.block_on(async {
        let mut done: Vec<(usize, String, Report)> = stream::iter(jobs.into_iter().enumerate())
            .map(|(i, job)| async move {
                // Never closed, so acquiring cannot fail; a permit per suite run.
                let _permit = RUNS.acquire().await.ok();
                let options = RunOptions::new(job.adapter).seed(job.seed).jobs(job.jobs);
                let report = run_suite(&job.scenarios, &options, |_| {}).await;
                (i, job.label, report)
            })
            .buffer_unordered(CONCURRENT_RUNS * 4)
            .collect()
            .await;
        done.sort_by_key(|(i, _, _)| *i);
        done.into_iter().map(|(_, l, r)| (l, r)).collect()
    })
}

fn failures(label: &str, report: &Report) -> Vec<String> {
    report
        .scenarios
        .iter()
        .filter(|s| s.verdict != Verdict::Passed)
        .map(|s| format!("{label}: {}", common::explain(s)))
        .collect()
}

#[test]
fn correct_designs_pass_every_scenario_on_every_seed() {
    let _alone = common::module_alone(module_path!());
    let _cpu = shared_cpu();
    let library = common::library();
    let mut jobs = Vec::new();
    for (name, factory) in correct() {
        for seed in SEEDS {
            for concurrency in [1, 8] {
                jobs.push(Job {
                    label: format!("{name} seed {seed} jobs {concurrency}"),
                    adapter: AdapterUnderTest::InProcess(factory.clone()),
                    scenarios: library.clone(),
                    seed,
                    jobs: concurrency,
                });
            }
        }
    }
    let problems: Vec<String> = run_all(jobs)
        .iter()
        .flat_map(|(label, report)| failures(label, report))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_flawed_design_is_caught_on_every_seed() {
    let _alone = common::module_alone(module_path!());
    let _cpu = whole_cpu();
    let library = common::library();
    let by_id: BTreeMap<&str, &Scenario> = library.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut jobs = Vec::new();
    let subjects = flawed();
    for subject in &subjects {
        let scenarios: Vec<Scenario> = subject
            .caught_by
            .iter()
            .map(|(id, _)| (*by_id.get(id).unwrap_or_else(|| panic!("no scenario {id}"))).clone())
            .collect();
        for seed in SEEDS {
            jobs.push(Job {
                label: format!("{} seed {seed}", subject.name),
                adapter: AdapterUnderTest::InProcess(subject.factory.clone()),
                scenarios: scenarios.clone(),
                seed,
                jobs: 4,
            });
        }
    }
    // What the correct designs get on each scenario (nothing, as the test
    // above proves): a flaw must be caught by something they never get.
    let correct_checks = checks_of_correct(&library);
    let mut problems = Vec::new();
    for (label, report) in run_all(jobs) {
        let Some(subject) = subjects.iter().find(|s| label.starts_with(s.name)) else {
            continue;
        };
        for (id, check) in subject.caught_by {
            let Some(scenario) = report.scenarios.iter().find(|s| s.id == *id) else {
                problems.push(format!("{label}: {id} did not run"));
                continue;
            };
            let caught: BTreeSet<String> = scenario
                .violations
                .iter()
                .map(|v| common::check_name(&v.check))
                .filter(|c| !correct_checks.get(*id).is_some_and(|set| set.contains(c)))
                .collect();
            if scenario.verdict != Verdict::Violated || !caught.iter().any(|c| c.starts_with(check))
            {
                problems.push(format!(
                    "{label}: not caught by {check} on {id}: {}",
                    common::explain(scenario)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks correct designs violate on each scenario, seed 1.
fn checks_of_correct(library: &[Scenario]) -> BTreeMap<String, BTreeSet<String>> {
    let jobs = correct()
        .into_iter()
        .map(|(name, factory)| Job {
            label: name,
            adapter: AdapterUnderTest::InProcess(factory),
            scenarios: library.to_vec(),
            seed: 1,
            jobs: 8,
        })
        .collect();
    let mut checks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, report) in run_all(jobs) {
        for s in &report.scenarios {
            checks
                .entry(s.id.clone())
                .or_default()
                .extend(s.violations.iter().map(|v| common::check_name(&v.check)));
        }
    }
    checks
}

#[test]
fn the_matrix_in_the_docs_is_the_matrix_the_harness_produces() {
    let _alone = common::module_alone(module_path!());
    let _cpu = shared_cpu();
    let library = common::library();
    let mut jobs: Vec<Job> = correct()
        .into_iter()
        .map(|(name, factory)| Job {
            label: format!("{name} (correct)"),
            adapter: AdapterUnderTest::InProcess(factory),
            scenarios: library.clone(),
            seed: 1,
            jobs: 8,
        })
        .collect();
    jobs.push(Job {
        label: "python (correct)".to_owned(),
        adapter: common::python_adapter("replay-once"),
        scenarios: library.clone(),
        seed: 1,
        jobs: 2,
    });
    for subject in flawed() {
        jobs.push(Job {
            label: subject.name.to_owned(),
            adapter: AdapterUnderTest::InProcess(subject.factory),
            scenarios: library.clone(),
            seed: 1,
            jobs: 8,
        });
    }
    let results = run_all(jobs);
    let matrix = render(&library, &results);
    println!("{matrix}");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/verdict-matrix.md");
    if std::env::var_os("LOSTREPLY_BLESS").is_some() {
        // The section on the provider SDK libraries is sdk_verdicts.rs's: kept as it is.
        let existing = std::fs::read_to_string(path).unwrap_or_default();
        let kept = existing
            .find("\n## Provider SDK libraries")
            .map_or("", |at| &existing[at..]);
        std::fs::write(path, format!("{matrix}{kept}")).expect("write docs/verdict-matrix.md");
    }
    // The documented matrix must make the claims this suite proves: every
    // correct design passes every scenario, and each flawed adapter is caught
    // where the table above says, by the check it names. (Other cells show
    // what else a flawed adapter trips over at seed 1; a naive adapter with
    // no retries may trip over a slow answer on a loaded machine, so they are
    // not compared cell for cell.)
    let documented = std::fs::read_to_string(path).unwrap_or_default();
    let mut problems = claims_broken(&documented, &library);
    problems.extend(
        claims_broken(&matrix, &library)
            .into_iter()
            .map(|p| format!("produced: {p}")),
    );
    assert!(
        problems.is_empty(),
        "docs/verdict-matrix.md (rerun with LOSTREPLY_BLESS=1 to regenerate it):\n{}",
        problems.join("\n")
    );
}

/// What in a rendered matrix contradicts the proven claims.
fn claims_broken(matrix: &str, library: &[Scenario]) -> Vec<String> {
    let correct_columns = correct().len() + 1; // the Python adapter too
    let subjects = flawed();
    let mut problems = Vec::new();
    for scenario in library {
        let Some(row) = matrix
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", scenario.id)))
        else {
            problems.push(format!("no row for {}", scenario.id));
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).skip(2).collect();
        for (column, cell) in cells.iter().enumerate().take(correct_columns) {
            if *cell != "pass" {
                problems.push(format!(
                    "{}: A{} (correct) shows {cell}",
                    scenario.id,
                    column + 1
                ));
            }
        }
        for (i, subject) in subjects.iter().enumerate() {
            let column = correct_columns + i;
            for (id, check) in subject.caught_by {
                if *id != scenario.id {
                    continue;
                }
                let wanted = common::short_check(check);
                let cell = cells.get(column).copied().unwrap_or("");
                if !cell.split(", ").any(|c| c.starts_with(&wanted)) {
                    problems.push(format!(
                        "{id}: A{} ({}) shows {cell:?}, not {wanted}",
                        column + 1,
                        subject.name
                    ));
                }
            }
        }
    }
    problems
}

/// The matrix as Markdown: a row per scenario, a column per adapter; a cell is
/// `pass` or the checks that caught the adapter there.
fn render(library: &[Scenario], results: &[(String, Report)]) -> String {
    let mut out = String::from(
        "# Verdict matrix\n\n\
         Generated by `examples/tests/it/verdict_matrix.rs` (seed 1; the test also runs every\n\
         correct adapter on 20 seeds and checks that each flawed one is caught on all of\n\
         them). Columns: the correct designs first (reference, eager, lazy, lookup-first,\n\
         try-lock, the Python adapter), then the flawed adapters. The same matrix for your\n\
         own scenario files: `lostreply validate --prove FILES` (docs/scenario-format.md).\n\n",
    );
    for (i, (label, _)) in results.iter().enumerate() {
        out.push_str(&format!("- **A{}**: {label}\n", i + 1));
    }
    out.push_str(
        "\nA cell is `pass`, or the checks the adapter broke there (`inv N` is invariant N,\n\
         `expect.K` an expectation, `rule R` a protocol rule). Every correct design passes every scenario; every flawed\n\
         one is caught by at least the scenario its row names in the test.\n\n| scenario |",
    );
    for i in 0..results.len() {
        out.push_str(&format!(" A{} |", i + 1));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(results.len()));
    out.push('\n');
    for scenario in library {
        out.push_str(&format!("| {} |", scenario.id));
        for (_, report) in results {
            let cell = report
                .scenarios
                .iter()
                .find(|s| s.id == scenario.id)
                .map(common::matrix_cell)
                .unwrap_or_default();
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out
}
