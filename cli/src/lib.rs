//! The `lostreply` command line: flags parsed by clap into low-level args, then
//! turned into the library's configuration. `main` only maps the result to an
//! exit code.
//!
//! The command line is a package of its own, apart from the `lostreply`
//! library an adapter author adds: clap, indicatif, the binary's allocator,
//! certification and the bundled adapters are the binary's, and a
//! `dev-dependencies` line on `lostreply` compiles none of them.

mod adapter_cmd;
pub mod allocator;
pub mod bundled;
mod certify_cmd;
mod explore_cmd;
mod list_cmd;
mod output;
mod profile_cmd;
mod proxy_cmd;
mod report_cmd;
mod run_cmd;
mod select;
mod serve_cmd;
mod upstream_cmd;
mod validate_cmd;
mod values;

use clap::{Parser, Subcommand};

use lostreply_harness::exit;

/// When the response is lost, does your code still do each thing at most once,
/// and does it tell the truth about what happened?
#[derive(Debug, Parser)]
#[command(
    name = "lostreply",
    version,
    about,
    long_about = None,
    after_help = "Exit codes: 0 everything held, 1 a violation, 2 bad input or usage, 3 an adapter or infrastructure error.\nvalidate --prove: 1 a scenario is impossible or design-bound, 2 also when a scenario cannot be judged (a provider profile other than generic), 3 the harness failed on a run."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios against an adapter (default: the built-in library against the reference adapter).
    Run(run_cmd::RunArgs),
    /// Generate situations nobody wrote, judge them by the invariants, and shrink each
    /// violation to a scenario file.
    Explore(explore_cmd::ExploreArgs),
    /// Check scenario and profile files without running them; with --prove, run them against
    /// the bundled designs to show whether each asks only what the contract asks.
    Validate(validate_cmd::ValidateArgs),
    /// Print the JSON Schema of the scenario format (for editors).
    Schema,
    /// List the scenarios a run would take (default: the built-in library), without running them.
    List(list_cmd::ListArgs),
    /// Work with written reports: `lostreply report merge DIR...` joins the reports of a sharded run.
    Report(report_cmd::ReportArgs),
    /// Start a simulator by hand; its first stdout line is JSON with base_url, control_url and credentials.
    Serve(serve_cmd::ServeArgs),
    /// Serve one adapter-protocol call with a bundled adapter: `lostreply adapter reference execute`.
    Adapter(adapter_cmd::AdapterArgs),
    /// Certify an API's idempotency contract from the outside (a contract file, or --simulator MODE).
    Certify(certify_cmd::CertifyArgs),
    /// A fault-injecting reverse proxy in front of a real service (a contract, a scenario's
    /// faults); its first stdout line is JSON with its url.
    Proxy(proxy_cmd::ProxyArgs),
    /// Provider profiles: `lostreply profile show stripe` prints a built-in one to adapt.
    Profile(profile_cmd::ProfileArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::BAD_INPUT
            } else {
                exit::OK
            };
            let _ = e.print();
            return code;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lostreply: cannot start the async runtime: {e}");
            return exit::ADAPTER_OR_INFRA;
        }
    };
    runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run_cmd::run(args).await,
            Command::Explore(args) => explore_cmd::explore_cmd(args).await,
            Command::Validate(args) => validate_cmd::validate(args).await,
            Command::Schema => {
                match serde_json::to_string_pretty(&lostreply_harness::scenario::schema()) {
                    Ok(text) => println!("{text}"),
                    Err(e) => {
                        eprintln!("lostreply: cannot print the schema: {e}");
                        return exit::ADAPTER_OR_INFRA;
                    }
                }
                exit::OK
            }
            Command::List(args) => list_cmd::list(args),
            Command::Report(args) => report_cmd::report(args),
            Command::Serve(args) => serve_cmd::serve(args).await,
            Command::Adapter(args) => adapter_cmd::adapter(args).await,
            Command::Certify(args) => certify_cmd::certify_cmd(args).await,
            Command::Proxy(args) => proxy_cmd::proxy_cmd(args).await,
            Command::Profile(args) => profile_cmd::profile(args),
        }
    })
}
