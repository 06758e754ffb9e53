//! What an adapter author writes to get one `cargo test` per scenario (the
//! README's snippet): `cargo test -p lostreply-examples --test
//! reference_scenarios -- case02` runs the case-2 scenarios against the
//! bundled reference adapter.

fn main() -> std::process::ExitCode {
    lostreply::testing::main(std::sync::Arc::new(lostreply_reference::ReferenceFactory))
}
