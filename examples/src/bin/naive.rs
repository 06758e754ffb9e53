//! `naive <case> <call>`: serves one naive adapter over the process protocol
//! (one JSON request on stdin, one JSON reply on stdout, state in
//! `LOSTREPLY_STATE_DIR`), so the naive adapters can be tried as processes.

use std::process::ExitCode;

const USAGE: &str = "usage: naive <case 1-10> <execute|reconcile|webhook|resolve|status>";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [case, call] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Some(factory) = case
        .parse::<u8>()
        .ok()
        .and_then(lostreply_examples::naive_adapter)
    else {
        eprintln!("no naive adapter for case {case:?}\n{USAGE}");
        return ExitCode::from(2);
    };
    let code =
        lostreply_harness::serve_call::serve_stdio(factory, call, &format!("naive {case}")).await;
    ExitCode::from(u8::try_from(code).unwrap_or(3))
}
