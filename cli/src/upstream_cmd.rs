//! `lostreply run --upstream URL --contract FILE`: the selection run against
//! the adapter with a real service behind lostreply's proxy instead of the
//! simulator (docs/proxy.md). The scenarios the proxy cannot stage are left
//! out with their reasons; the rest run one at a time, and the report is the
//! run report, written and exited on as any run's.

use std::path::PathBuf;

use lostreply_certify::proxy;
use lostreply_certify::upstream::{self, fit, Upstream, UpstreamRun};
use lostreply_harness::driver::{shell_quote, AdapterUnderTest};
use lostreply_harness::exit;

use super::output::Output;
use super::select::{SelectArgs, Selection};

const COMMAND: &str = "lostreply run";

/// The flags an upstream run adds to `lostreply run`.
#[derive(Debug)]
pub(super) struct Given {
    pub upstream: String,
    pub contract: PathBuf,
    pub ca_cert: Option<PathBuf>,
    pub seed: u64,
}

fn usage(message: &str) -> i32 {
    eprintln!("{COMMAND}: {message}");
    exit::BAD_INPUT
}

pub(super) async fn run_upstream(
    given: Given,
    select: &SelectArgs,
    adapter: AdapterUnderTest,
    output: &Output,
) -> i32 {
    if let Err(e) = proxy::upstream_origin(&given.upstream) {
        return usage(&e.to_string());
    }
    let contract = match super::proxy_cmd::load_contract(&given.contract, &given.upstream, COMMAND)
    {
        Ok(contract) => contract,
        Err(code) => return code,
    };
    let trust = match super::proxy_cmd::trust_of(given.ca_cert.as_deref(), COMMAND) {
        Ok(trust) => trust,
        Err(code) => return code,
    };
    let clock = match contract.clock {
        Some(_) => fit::Clock::Declared,
        None => fit::Clock::Absent,
    };
    let Selection {
        scenarios,
        shard,
        left_out_note,
        ..
    } = match select.select() {
        Ok(s) => s,
        Err(e) => return e.report(COMMAND),
    };
    if let Some(note) = left_out_note {
        eprintln!("{COMMAND}: {note}");
    }
    let (fitting, unfit): (Vec<_>, Vec<_>) = scenarios
        .into_iter()
        .map(|s| (fit::unfit(&s, clock), s))
        .partition(|(why, _)| why.is_none());
    for (why, scenario) in &unfit {
        eprintln!(
            "{COMMAND}: left out {} ({}): {}",
            scenario.id,
            scenario.path,
            why.as_deref().unwrap_or_default()
        );
    }
    let scenarios: Vec<_> = fitting.into_iter().map(|(_, s)| s).collect();
    if scenarios.is_empty() {
        return usage("none of the selected scenarios can run behind --upstream (each is named above with its reason)");
    }
    eprintln!(
        "{COMMAND}: {} scenario(s) against {} through the proxy, one at a time; the invariants are judged from the contract's read-back, the scenarios' `expect` sections are not (they describe the simulator's provider)",
        scenarios.len(),
        given.upstream
    );
    let run = UpstreamRun {
        command_prefix: command_prefix(&given, &adapter),
        adapter,
        seed: given.seed,
    };
    let target = Upstream {
        url: given.upstream.clone(),
        contract,
        trust,
    };
    let style = output.style;
    let report = upstream::run(&scenarios, &target, &run, |s| {
        let mut line = Vec::new();
        if lostreply_reports::terminal::write_progress_line(&mut line, s, style).is_ok() {
            print!("{}", String::from_utf8_lossy(&line));
        }
    })
    .await;
    match report {
        Ok(report) => output.finish(&report, shard.as_ref()),
        Err(e) => {
            eprintln!("{COMMAND}: {e}");
            e.exit_code()
        }
    }
}

/// `lostreply run --upstream URL --contract FILE [--ca-cert FILE] ADAPTER`:
/// what reruns one scenario, before its `--seed` and path.
fn command_prefix(given: &Given, adapter: &AdapterUnderTest) -> String {
    let mut prefix = format!(
        "{COMMAND} --upstream {} --contract {}",
        shell_quote(&given.upstream),
        shell_quote(&given.contract.display().to_string())
    );
    if let Some(ca) = &given.ca_cert {
        prefix.push_str(&format!(
            " --ca-cert {}",
            shell_quote(&ca.display().to_string())
        ));
    }
    prefix.push(' ');
    prefix.push_str(&adapter.cli_flags());
    prefix
}
