//! `design <name> <call>`: serves one design of the family over the process
//! protocol (one JSON request on stdin, one JSON reply on stdout, state in
//! `LOSTREPLY_STATE_DIR`), so every design can be tried as a process, and
//! races between processes exercise its OS file locks.

use std::process::ExitCode;

const USAGE: &str = "usage: design <name> <execute|reconcile|webhook|resolve|status>";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, call] = args.as_slice() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let Some(factory) = lostreply_examples::design(name) else {
        let known: Vec<String> = lostreply_examples::correct_designs()
            .iter()
            .chain(lostreply_examples::flawed_designs().iter())
            .map(|f| f.name())
            .collect();
        eprintln!(
            "no design named {name:?}; known: {}\n{USAGE}",
            known.join(", ")
        );
        return ExitCode::from(2);
    };
    let code = lostreply_harness::serve_call::serve_stdio(
        factory.as_ref(),
        call,
        &format!("design {name}"),
    )
    .await;
    ExitCode::from(u8::try_from(code).unwrap_or(3))
}
