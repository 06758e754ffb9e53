//! `cargo test` integration for Rust adapter authors: one test per scenario,
//! listed by name and filterable, each failure showing its evidence.
//!
//! In your crate's `Cargo.toml`:
//! ```toml
//! [[test]]
//! name = "lostreply"
//! harness = false
//! ```
//! and in `tests/lostreply.rs`:
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     lostreply_harness::testing::main(std::sync::Arc::new(my_crate::MyAdapterFactory))
//! }
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use lostreply_reports::model::{AdapterInfo, Report, SCHEMA_VERSION};

use crate::adapter::AdapterFactory;
use crate::driver::AdapterUnderTest;
use crate::scenario::model::Scenario;
use crate::scenario::select::SelectionError;
use crate::seed::DEFAULT_SEED;
use crate::suite::{run_scenario, RunOptions};

/// What to run: `TestConfig::default()`, then what differs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TestConfig {
    /// Scenario files or directories; empty: the built-in library.
    pub paths: Vec<PathBuf>,
    /// Only scenarios with one of these tags; empty: every scenario but the
    /// opt-in ones. Scenarios tagged `mcp` run only when `mcp` is named here
    /// (or their file is named in `paths`): see [`crate::scenario::select`].
    pub tags: Vec<String>,
    /// The seed (default [`DEFAULT_SEED`]; `LOSTREPLY_SEED` overrides it).
    pub seed: Option<u64>,
}

impl TestConfig {
    /// Scenario files or directories to run instead of the built-in library.
    pub fn paths(mut self, paths: impl IntoIterator<Item = impl Into<PathBuf>>) -> TestConfig {
        self.paths = paths.into_iter().map(Into::into).collect();
        self
    }

    /// Only the scenarios with one of these tags (`mcp` opts the MCP ones in).
    pub fn tags(mut self, tags: impl IntoIterator<Item = impl Into<String>>) -> TestConfig {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The run's seed (`LOSTREPLY_SEED` still overrides it).
    pub fn seed(mut self, seed: u64) -> TestConfig {
        self.seed = Some(seed);
        self
    }
}

/// Runs the built-in library against `factory` as libtest-style tests.
pub fn main(factory: Arc<dyn AdapterFactory>) -> std::process::ExitCode {
    main_with(factory, TestConfig::default())
}

/// Like [`main`], with a configuration.
pub fn main_with(factory: Arc<dyn AdapterFactory>, config: TestConfig) -> std::process::ExitCode {
    let args = Arguments::from_args();
    match trials(factory, &config) {
        Ok(trials) => libtest_mimic::run(&args, trials).exit_code(),
        Err(message) => {
            eprintln!("{message}");
            std::process::ExitCode::from(crate::exit::BAD_INPUT as u8)
        }
    }
}

/// Why no trials could be made.
#[derive(Debug, thiserror::Error)]
pub enum TrialsError {
    /// The scenarios could not be selected.
    #[error(transparent)]
    Selection(#[from] SelectionError),
    /// `LOSTREPLY_SEED` is not a number.
    #[error("LOSTREPLY_SEED={text:?}: {source}")]
    Seed {
        /// The variable's text.
        text: String,
        /// Why it does not parse.
        #[source]
        source: std::num::ParseIntError,
    },
}

/// One trial per scenario, named `case02::lost-after-commit` (or `extra::…`).
pub fn trials(
    factory: Arc<dyn AdapterFactory>,
    config: &TestConfig,
) -> Result<Vec<Trial>, TrialsError> {
    let selected = crate::scenario::select::take(&config.paths, &config.tags)?;
    if let Some(note) = selected.left_out_note() {
        eprintln!("lostreply: {note} (TestConfig::tags)");
    }
    let scenarios = selected.scenarios;
    let seed = match std::env::var("LOSTREPLY_SEED") {
        Ok(text) => text
            .parse()
            .map_err(|source| TrialsError::Seed { text, source })?,
        Err(_) => config.seed.unwrap_or(DEFAULT_SEED),
    };
    let adapter = AdapterUnderTest::InProcess(factory);
    Ok(scenarios
        .into_iter()
        .map(|s| trial(s, adapter.clone(), seed))
        .collect())
}

fn trial(scenario: Scenario, adapter: AdapterUnderTest, seed: u64) -> Trial {
    let name = match scenario.case {
        Some(c) => format!("case{c:02}::{}", scenario.id),
        None => format!("scenarios::{}", scenario.id),
    };
    let reproduce = format!("LOSTREPLY_SEED={seed} cargo test -- {name} --exact");
    Trial::test(name, move || run_one(&scenario, adapter, seed, reproduce))
}

fn run_one(
    scenario: &Scenario,
    adapter: AdapterUnderTest,
    seed: u64,
    reproduce: String,
) -> Result<(), Failed> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failed::from(format!("cannot start a runtime: {e}")))?;
    let options = RunOptions::new(adapter.clone())
        .seed(seed)
        .jobs(1)
        .command_prefix("");
    let mut report = runtime.block_on(run_scenario(scenario, &options));
    report.reproduce = reproduce;
    match report.verdict.failed() {
        false => Ok(()),
        true => {
            let full = Report::builder()
                .schema_version(SCHEMA_VERSION)
                .tool_version(env!("CARGO_PKG_VERSION").to_owned())
                .adapter(
                    AdapterInfo::builder()
                        .name(adapter.display_name())
                        .kind(adapter.kind())
                        .build(),
                )
                .seed(seed)
                .duration_ms(report.duration_ms)
                .scenarios(vec![report])
                .build();
            let mut text = Vec::new();
            let _ = lostreply_reports::terminal::write_summary(
                &mut text,
                &full,
                lostreply_reports::terminal::TerminalStyle { color: false },
            );
            Err(Failed::from(String::from_utf8_lossy(&text).into_owned()))
        }
    }
}
