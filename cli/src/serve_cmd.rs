//! `lostreply serve`: a simulator started by hand, for exploring an adapter or
//! for test suites in other languages. The first stdout line is one JSON object
//! (base_url, control_url, credentials, and mcp_url with `--mcp`) so scripts
//! can read where it is.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::values;
use lostreply_harness::scenario::provider_profile::{ProfileChoice, ProfileChoiceError};
use lostreply_simulator::mcp::{AnswerStyle, Defect, ErrorStyle, McpPlan};
use lostreply_simulator::{IdempotencyMode, Plan, ServeOptions, Simulator, MAX_READ_TIMEOUT};

use lostreply_harness::exit;

#[derive(Debug, Args)]
pub(super) struct ServeArgs {
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Address to bind. Anything but loopback requires --control-token.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// Bearer token guarding the control API (required off loopback).
    #[arg(long, value_name = "TOKEN", env = "LOSTREPLY_CONTROL_TOKEN")]
    control_token: Option<String>,
    /// The wire the provider speaks: generic, stripe, openai, anthropic, or a profile file (a path with `/`, or ending .yaml or .yml). Default generic.
    #[arg(long, value_name = "NAME|FILE", value_parser = ProfileChoice::parse, conflicts_with = "scenario")]
    profile: Option<ProfileChoice>,
    /// Idempotency mode: none, stripe, ietf, or a known-bad one (fingerprint_in_key, no_fingerprint, racy, global_scope, stuck_in_flight, release_on_error). Default: the profile's (none for generic).
    #[arg(long, value_name = "MODE", value_parser = values::idempotency_mode())]
    idempotency: Option<IdempotencyMode>,
    /// How long keys are kept, by the simulator clock (e.g. 24h). Default: the profile's (24h).
    #[arg(long, value_name = "DURATION")]
    retention: Option<String>,
    /// Take the provider (its profile included), faults and mcp sections of a scenario file.
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Longest a client may take to send a request's head, and again its body (e.g. 5s, 500ms). A late head closes the connection (so does a kept-alive connection idle that long); a late body answers 408. At most 5m. Default 5s.
    #[arg(long, value_name = "DURATION")]
    read_timeout: Option<String>,
    /// Also serve the fake MCP server at /mcp on the same port: the --scenario file's mcp section (tools, faults, limits) when it has one, else the default tools.
    #[arg(long)]
    mcp: bool,
    /// Give the MCP server a known-bad behaviour (repeatable): result_without_id, timeout_as_parameter, retrieval_not_read_only, not_yours_distinct, empty_list_is_error, key_in_arguments, payload_mismatch, list_shows_other_tenants, not_yours_echo_leaks.
    #[arg(long = "mcp-defect", value_name = "NAME", value_parser = values::mcp_defect(), requires = "mcp")]
    mcp_defects: Vec<Defect>,
    /// How the MCP server answers when the client accepts both: json or sse.
    #[arg(
        long = "mcp-answer",
        value_name = "STYLE",
        value_enum,
        requires = "mcp"
    )]
    mcp_answer: Option<Answer>,
    /// How the MCP server answers an unknown tool and an id the caller cannot
    /// read: spec (a JSON-RPC error; a `found: false` result) or sdk (tool
    /// error results, as servers on the official SDKs raise them). Default spec.
    #[arg(
        long = "mcp-errors",
        value_name = "STYLE",
        value_enum,
        requires = "mcp"
    )]
    mcp_errors: Option<Errors>,
    /// Seed for object and event ids.
    #[arg(long, default_value_t = lostreply_harness::seed::DEFAULT_SEED)]
    seed: u64,
    /// Most objects kept, all credentials together; past it the oldest are summarised out with their events (counted in /_lostreply/ledger and /_lostreply/events, retrieved as not found) and creates go on. Also bounds the attempt counts. Default 1000000.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_objects: Option<u64>,
    /// Most objects one credential may hold; past it creates answer 507. Default: no such cap.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    hard_cap_objects: Option<u64>,
}

pub(super) async fn serve(args: ServeArgs) -> i32 {
    let mut plan = match base_plan(&args) {
        Ok(plan) => plan,
        Err(code) => return code,
    };
    if let Err(message) = apply_flags(&mut plan, &args) {
        eprintln!("lostreply serve: {message}");
        return exit::BAD_INPUT;
    }
    object_limits(&mut plan, &args);
    let options = ServeOptions {
        bind: SocketAddr::new(args.bind, args.port),
        control_token: args.control_token.clone(),
    };
    let summary = Summary::of(&plan);
    let sim = match Simulator::start(plan, options).await {
        Ok(sim) => sim,
        Err(e) => {
            eprintln!("lostreply serve: {e}");
            return match e {
                lostreply_simulator::StartError::Bind { .. } => exit::ADAPTER_OR_INFRA,
                lostreply_simulator::StartError::InvalidPlan(_)
                | lostreply_simulator::StartError::ControlUnguarded(_)
                | lostreply_simulator::StartError::BadControlToken => exit::BAD_INPUT,
            };
        }
    };
    // Handlers first: a supervisor that reads the banner and at once sends
    // SIGTERM must find them installed, not kill a process that ignores nothing.
    let stop = stop_signals();
    print_banner(&sim, &summary);
    stop.await;
    sim.shutdown().await;
    println!("lostreply simulator stopped");
    exit::OK
}

/// The plan before the flags: the scenario's, the profile's, or the default.
/// `Err` is the exit code, the reason already printed.
fn base_plan(args: &ServeArgs) -> Result<Plan, i32> {
    match (&args.scenario, &args.profile) {
        (Some(path), _) => match lostreply_harness::scenario::load(path) {
            Ok(s) => Ok(s.plan),
            Err(e) => {
                eprintln!("{e}");
                Err(exit::BAD_INPUT)
            }
        },
        (None, None) => Ok(Plan::default()),
        (None, Some(choice)) => plan_for(choice).map_err(|e| {
            eprintln!("lostreply serve: --profile: {e}");
            exit::BAD_INPUT
        }),
    }
}

/// The flags that change the plan: seed, keys, read deadline and the MCP
/// face. `Err` is what is wrong with a flag's value.
fn apply_flags(plan: &mut Plan, args: &ServeArgs) -> Result<(), String> {
    plan.seed = args.seed;
    if let Some(mode) = args.idempotency {
        plan.idempotency.mode = mode;
    }
    if let Some(text) = &args.retention {
        match humantime::parse_duration(text) {
            Ok(d) if d > Duration::ZERO => plan.idempotency.retention = d,
            Ok(_) => return Err("--retention must be longer than zero".to_owned()),
            Err(e) => {
                return Err(format!(
                    "--retention {text:?}: {e} (examples: 24h, 90m, 30s)"
                ))
            }
        }
    }
    if let Some(text) = &args.read_timeout {
        plan.limits.read_timeout = read_timeout(text)?;
    }
    if args.mcp {
        // A scenario's own MCP face (its tools, faults and limits) is served
        // as the file says; the flags only add defects or change the styles.
        let base = plan.mcp.take().unwrap_or_default();
        plan.mcp = Some(mcp_plan(base, args));
    }
    Ok(())
}

/// `--read-timeout`: more than zero, at most the simulator's bound.
fn read_timeout(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if d > Duration::ZERO && d <= MAX_READ_TIMEOUT => Ok(d),
        Ok(_) => Err(format!(
            "--read-timeout must be longer than zero and at most {}",
            humantime::format_duration(MAX_READ_TIMEOUT)
        )),
        Err(e) => Err(format!(
            "--read-timeout {text:?}: {e} (examples: 5s, 500ms)"
        )),
    }
}

/// What the banner says about the plan, taken before the simulator owns it.
struct Summary {
    credentials: Vec<String>,
    profile: String,
    mode: IdempotencyMode,
    retention: Duration,
    read_timeout: Duration,
    faults: usize,
    step_scoped: usize,
    mcp_faults: usize,
    mcp_step_scoped: usize,
}

impl Summary {
    fn of(plan: &Plan) -> Summary {
        // Nothing runs steps under `serve`, so a rule scoped to a step never
        // fires: the banner says so rather than let a hand-run scenario look
        // fault-free by surprise.
        let step_scoped = plan
            .faults
            .iter()
            .filter(|r| r.when.steps.is_some())
            .count();
        let (mcp_faults, mcp_step_scoped) = plan.mcp.as_ref().map_or((0, 0), |mcp| {
            let scoped = mcp.faults.iter().filter(|r| r.when.steps.is_some()).count();
            (mcp.faults.len(), scoped)
        });
        Summary {
            credentials: plan.tenants.clone(),
            profile: plan.profile.name.clone(),
            mode: plan.idempotency.mode,
            retention: plan.idempotency.retention,
            read_timeout: plan.limits.read_timeout,
            faults: plan.faults.len(),
            step_scoped,
            mcp_faults,
            mcp_step_scoped,
        }
    }
}

/// The JSON line scripts read, then the lines people read.
fn print_banner(sim: &Simulator, summary: &Summary) {
    let mut banner = serde_json::json!({
        "base_url": sim.base_url(),
        "control_url": sim.control_url(),
        "credentials": summary.credentials,
        "profile": summary.profile,
    });
    if let Some(mcp_url) = sim.mcp_url() {
        banner["mcp_url"] = serde_json::Value::String(mcp_url);
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{banner}");
    let _ = writeln!(out, "lostreply simulator listening on {}", sim.base_url());
    let _ = writeln!(out, "  profile: {}", summary.profile);
    let _ = writeln!(
        out,
        "  idempotency: {} (retention {})",
        summary.mode.name(),
        humantime::format_duration(summary.retention)
    );
    let _ = writeln!(
        out,
        "  read timeout: {} (a request's head, then its body)",
        humantime::format_duration(summary.read_timeout)
    );
    let _ = writeln!(out, "  fault rules: {}", summary.faults);
    never_fire_note(&mut out, summary.step_scoped);
    let _ = writeln!(
        out,
        "  control API: {} (ledger, journal, events, clock, health)",
        sim.control_url()
    );
    if let Some(mcp_url) = sim.mcp_url() {
        let _ = writeln!(out, "  MCP server: {mcp_url} (Streamable HTTP)");
        let _ = writeln!(out, "  MCP fault rules: {}", summary.mcp_faults);
        never_fire_note(&mut out, summary.mcp_step_scoped);
    }
    let _ = writeln!(out, "  stop with Ctrl-C or SIGTERM");
    let _ = out.flush();
}

fn never_fire_note(out: &mut impl Write, step_scoped: usize) {
    if step_scoped > 0 {
        let _ = writeln!(
            out,
            "  ({step_scoped} of them scoped to scenario steps: they never fire here, nothing runs steps)"
        );
    }
}

/// `--max-objects` and `--hard-cap-objects`.
fn object_limits(plan: &mut Plan, args: &ServeArgs) {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(n) = args.max_objects {
        plan.limits.max_objects = size(n);
    }
    if let Some(n) = args.hard_cap_objects {
        plan.limits.hard_cap_objects = Some(size(n));
    }
}

/// The default plan under a profile: its keys as the profile's defaults
/// (the flags that follow may change them). A file is read from the
/// working directory, as a scenario's is from the scenario's.
fn plan_for(choice: &ProfileChoice) -> Result<Plan, ProfileChoiceError> {
    let profile = choice.load(Path::new(""))?;
    let mut plan = Plan::default();
    plan.idempotency.mode = profile.keys.default_mode;
    plan.idempotency.retention = profile.keys.default_retention;
    plan.profile = Arc::new(profile);
    Ok(plan)
}

/// `base` (the scenario's MCP plan, or the default one) with the flags'
/// defects, answer and error styles. It cannot fail: clap has already read
/// each defect and style into its value.
fn mcp_plan(base: McpPlan, args: &ServeArgs) -> McpPlan {
    let mut mcp = base;
    mcp.defects.extend(args.mcp_defects.iter().copied());
    if let Some(answer) = args.mcp_answer {
        mcp.answer = match answer {
            Answer::Json => AnswerStyle::Json,
            Answer::Sse => AnswerStyle::Sse,
        };
    }
    if let Some(errors) = args.mcp_errors {
        mcp.errors = match errors {
            Errors::Spec => ErrorStyle::Spec,
            Errors::Sdk => ErrorStyle::Sdk,
        };
    }
    mcp
}

/// `--mcp-answer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Answer {
    Json,
    Sse,
}

/// `--mcp-errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Errors {
    Spec,
    Sdk,
}

/// Installs the Ctrl-C and SIGTERM handlers now and returns the wait for either.
pub(super) fn stop_signals() -> futures::future::BoxFuture<'static, ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut interrupt), Ok(mut term)) => Box::pin(async move {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = term.recv() => {}
                }
            }),
            _ => Box::pin(async {
                let _ = tokio::signal::ctrl_c().await;
            }),
        }
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
