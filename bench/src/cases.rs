//! Wall time of the lost-response cases, run as `lostreply run` runs them
//! (`lostreply_harness::suite::run_suite`, one simulator per scenario, `jobs` at once),
//! with the in-process reference adapter and with the Python one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::seed::DEFAULT_SEED;
use lostreply_harness::suite::{run_suite, RunOptions};
use lostreply_reports::model::Verdict;

use crate::stats::median;
use crate::Error;

/// The tag of the ten lost-response cases.
pub const TAG: &str = "lost-response";

/// The scenarios to time and where they came from.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The scenarios.
    pub scenarios: Vec<Scenario>,
    /// One line saying where they came from and how they were chosen.
    pub note: String,
}

/// The scenarios tagged `lost-response`, from `dir` (every `*.yaml` file in it)
/// or from the built-in library; all of them, said so, when none is tagged.
pub fn select(dir: Option<&Path>) -> Result<Selection, Error> {
    let (all, source) = match dir {
        Some(dir) => (load_dir(dir)?, format!("{}", dir.display())),
        None => (
            lostreply_harness::builtin::scenarios().map_err(|e| Error::Scenario(e.to_string()))?,
            "the built-in library".to_owned(),
        ),
    };
    // The opt-in (MCP) scenarios need an adapter that speaks MCP; the bench's do not.
    let all: Vec<Scenario> = all
        .into_iter()
        .filter(lostreply_harness::scenario::select::in_default_selection)
        .collect();
    let tagged: Vec<Scenario> = all
        .iter()
        .filter(|s| s.tags.iter().any(|t| t == TAG))
        .cloned()
        .collect();
    if !tagged.is_empty() {
        let note = format!("{} scenarios tagged {TAG} from {source}", tagged.len());
        return Ok(Selection {
            scenarios: tagged,
            note,
        });
    }
    let note = format!(
        "no scenario tagged {TAG} in {source}: all {} scenarios used instead",
        all.len()
    );
    Ok(Selection {
        scenarios: all,
        note,
    })
}

fn load_dir(dir: &Path) -> Result<Vec<Scenario>, Error> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::Io(format!("reading {}", dir.display()), e))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| lostreply_harness::scenario::load(p).map_err(|e| Error::Scenario(e.to_string())))
        .collect()
}

/// Which adapter a timing used.
#[derive(Debug, Clone)]
pub enum AdapterChoice {
    /// `lostreply_reference::ReferenceFactory`, in this process.
    Reference,
    /// `python3 <path>`, one process per call.
    Python(PathBuf),
    /// `python3 <path> serve`: the persistent form, one process per lane.
    PythonPersistent(PathBuf),
}

impl AdapterChoice {
    /// The adapter as the runner takes it.
    pub fn adapter(&self) -> Result<AdapterUnderTest, Error> {
        match self {
            AdapterChoice::Reference => Ok(AdapterUnderTest::InProcess(Arc::new(
                lostreply_reference::ReferenceFactory,
            ))),
            AdapterChoice::Python(path) | AdapterChoice::PythonPersistent(path) => {
                if !path.is_file() {
                    return Err(Error::Unsupported(format!(
                        "no Python adapter at {}",
                        path.display()
                    )));
                }
                let command =
                    ProcessCommand::new(vec!["python3".to_owned(), path.display().to_string()])
                        .map_err(|e| Error::Unsupported(e.to_string()))?;
                Ok(match self {
                    AdapterChoice::PythonPersistent(_) => AdapterUnderTest::Persistent(command),
                    AdapterChoice::Reference | AdapterChoice::Python(_) => {
                        AdapterUnderTest::Process(command)
                    }
                })
            }
        }
    }
}

/// Several timed runs of one selection with one adapter.
#[derive(Debug, Clone, PartialEq)]
pub struct CasesTiming {
    /// `builtin:reference` or the command line (`--persistent` appended for that form).
    pub adapter: String,
    /// Scenarios per run.
    pub scenarios: usize,
    /// Scenarios run at once.
    pub jobs: usize,
    /// Wall time of each run, ms.
    pub runs_ms: Vec<f64>,
    /// Verdicts of the last run: (passed, violated, adapter error, infrastructure error).
    pub verdicts: (usize, usize, usize, usize),
}

impl CasesTiming {
    /// The median run.
    pub fn median_ms(&self) -> f64 {
        median(&self.runs_ms)
    }
}

/// Runs the selection `runs` times with `choice`.
pub async fn time_cases(
    selection: &Selection,
    choice: &AdapterChoice,
    runs: usize,
    jobs: usize,
) -> Result<CasesTiming, Error> {
    let adapter = choice.adapter()?;
    let options = RunOptions::new(adapter.clone())
        .seed(DEFAULT_SEED)
        .jobs(jobs);
    let mut timing = CasesTiming {
        adapter: match choice {
            AdapterChoice::PythonPersistent(_) => {
                format!("{} --persistent", adapter.display_name())
            }
            AdapterChoice::Reference | AdapterChoice::Python(_) => adapter.display_name(),
        },
        scenarios: selection.scenarios.len(),
        jobs,
        runs_ms: Vec::new(),
        verdicts: (0, 0, 0, 0),
    };
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let report = run_suite(&selection.scenarios, &options, |_| {}).await;
        timing
            .runs_ms
            .push(started.elapsed().as_secs_f64() * 1000.0);
        let mut verdicts = (0, 0, 0, 0);
        for s in &report.scenarios {
            match s.verdict {
                Verdict::Passed => verdicts.0 += 1,
                Verdict::Violated => verdicts.1 += 1,
                Verdict::AdapterError => verdicts.2 += 1,
                Verdict::InfraError => verdicts.3 += 1,
            }
        }
        timing.verdicts = verdicts;
    }
    Ok(timing)
}
