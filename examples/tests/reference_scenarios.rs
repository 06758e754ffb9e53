//! What an adapter author writes to get one `cargo test` per scenario:
//! `cargo test -p lostreply-examples --test reference_scenarios -- case02` runs
//! the case-2 scenarios against the bundled reference adapter.

fn main() -> std::process::ExitCode {
    let factory = harness::builtin::adapter("reference").expect("the reference adapter is bundled");
    harness::testing::main(factory)
}
