//! The real provider SDKs (stripe-python, openai-python, anthropic-python in
//! `target/sdk-venv`; stripe-node and openai-node under
//! examples/sdk-adapters/node). A test that needs one is ignored, with the
//! reason, when the build finds it missing (examples/build.rs), unless
//! `LOSTREPLY_REQUIRE_SDKS=1` (which `.ci/run` sets): then it runs, and a
//! missing SDK fails it.

use lostreply_harness::driver::{AdapterUnderTest, ProcessCommand};

use super::installed;

/// Which runtime an SDK adapter runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// The venv with the pinned Python SDKs.
    Python,
    /// Node with the pinned npm SDKs.
    Node,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Runtime::Python => "python",
            Runtime::Node => "node",
        }
    }
}

/// The argv that runs `script` (a file under examples/sdk-adapters/<runtime>/)
/// on `runtime`. A test that calls this is ignored when the build found the
/// SDKs missing (cfgs `lostreply_no_sdk_python`, `lostreply_no_sdk_node`), so
/// SDKs missing here went away after the build, or the test was run with
/// `--ignored`: either way it fails.
pub fn argv(runtime: Runtime, script: &str) -> Vec<String> {
    let interpreter = match runtime {
        Runtime::Python => installed::sdk_python(),
        Runtime::Node => installed::sdk_node(),
    };
    let interpreter = interpreter.unwrap_or_else(|why| {
        panic!(
            "this test needs the {} SDKs, which are not installed: {why}",
            runtime.name()
        )
    });
    vec![
        interpreter.to_string_lossy().into_owned(),
        installed::sdk_adapters_dir()
            .join(runtime.name())
            .join(script)
            .to_string_lossy()
            .into_owned(),
    ]
}

/// An SDK adapter as a process adapter.
pub fn adapter(argv: Vec<String>) -> AdapterUnderTest {
    AdapterUnderTest::Process(ProcessCommand::new(argv).expect("an adapter command"))
}
