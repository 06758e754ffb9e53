//! One `tools/call`, from its intake to how its answer leaves: the paid
//! tool's arguments and key, the rule that decides its fate, the commit (or a
//! task, or a retrieval), and the fault acting relative to the commit, with
//! `notifications/cancelled` reaching it while it is held.
//!
//! Answers without a stream go through `provider::ctx` like `/v1`'s (the
//! journal fate is written by the body or the connection task); answers with
//! a stream (keep-alive, progress, headers then silence, a priming event) are
//! written by a driver task of their own, which writes the fate once the
//! provider is done with the call.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use lostreply_text::SharedStr;
use serde_json::{Map, Value};
use tokio::sync::watch;

use super::jsonrpc::{self, INVALID_PARAMS};
use super::plan::{
    CancelPolicy, CommitPoint, ErrorStyle, McpFault, McpPlan, McpRule, PaidTool, Revision, Stream,
    TaskEnd,
};
use super::retrieval;
use super::sse::{self, SseWriter};
use super::tasks::{self, PendingCommit};
use super::tools::{self, GET_OPERATION, LIST_RECENT};
use super::wire::{self, Form};
use crate::canonical::canonical_shared;
use crate::conn::{hold_until_client_leaves, Ending, HoldEnd, SharedSocket};
use crate::idempotency::{Decision, MAX_KEY_BYTES};
use crate::plan::{IdempotencyMode, Release, RequestKind, StallThen};
use crate::provider::commit::run_commit_hook;
use crate::provider::ctx::{Ctx, Outcome, Shape};
use crate::record::McpFaultSeen;
use crate::responses;
use crate::shared::mcp_state::{HeldCall, HeldSignal};
use crate::shared::Shared;
use crate::store::NewObject;

/// Where a call came from and how its answer travels.
#[derive(Debug, Clone)]
pub(crate) struct CallSite {
    /// The JSON-RPC id.
    pub id: Value,
    pub session: String,
    pub revision: Revision,
    pub tenant: String,
    pub form: Form,
    /// The harness step running when the call arrived.
    pub step: Option<u32>,
}

/// What the call asks for once read.
enum Work {
    /// A paid tool's commit.
    Paid(PendingCommit),
    /// A paid tool's commit, as a background task that ends as given.
    Task {
        pending: PendingCommit,
        end: (TaskEnd, u64),
        ttl_ms: Option<u64>,
    },
    /// Nothing to commit: a replay, a key conflict, bad arguments.
    Fixed(Answer),
    /// `get_operation`.
    Get(Map<String, Value>),
    /// `list_recent_operations`.
    List(Map<String, Value>),
}

/// A call's answer before it is framed.
enum Answer {
    /// A `CallToolResult` (or `CreateTaskResult`).
    Result(Value),
    /// A JSON-RPC error.
    Error(i64, String),
}

fn plan_of(shared: &Shared) -> Option<&McpPlan> {
    shared.plan.mcp.as_ref()
}

fn ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// `tools/call`.
pub(crate) async fn tools_call(ctx: Ctx, site: CallSite, params: Map<String, Value>) -> Outcome {
    let shared = ctx.shared.clone();
    let Some(mcp) = plan_of(&shared) else {
        return ctx.respond(
            responses::not_found(crate::profile::Profile::generic_ref()),
            Shape::Full,
        );
    };
    let Some(tool) = params.get("name").and_then(Value::as_str) else {
        let error = Answer::Error(INVALID_PARAMS, "tools/call needs params.name".to_owned());
        return answer(&ctx, &site, error);
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => {
            let error = Answer::Error(INVALID_PARAMS, "arguments must be an object".to_owned());
            return answer(&ctx, &site, error);
        }
    };
    let paid = mcp.tools.iter().find(|t| t.name == tool);
    let retrieval_tool = mcp.retrieval.enabled && (tool == GET_OPERATION || tool == LIST_RECENT);
    if paid.is_none() && !retrieval_tool {
        let error = match mcp.errors {
            ErrorStyle::Spec => Answer::Error(INVALID_PARAMS, format!("unknown tool: {tool}")),
            ErrorStyle::Sdk => Answer::Result(tools::raised(&format!("Unknown tool: {tool}"))),
        };
        return answer(&ctx, &site, error);
    }
    let rule = {
        let mut state = shared.state();
        let rule = state.mcp.counters.select(&mcp.faults, tool, site.step);
        if let Some((index, rule)) = &rule {
            let seen = McpFaultSeen {
                rule: *index,
                name: super::faults::fault_name(&rule.fault).to_owned(),
            };
            state.journal.update(ctx.seq, |entry| {
                if let Some(rpc) = entry.rpc.as_mut() {
                    rpc.fault = Some(seen);
                }
            });
        }
        rule.map(|(_, rule)| rule)
    };
    let mut work = match paid {
        Some(paid) => intake_paid(&ctx, mcp, paid, arguments, &site.tenant),
        None => {
            let kind = if tool == GET_OPERATION {
                RequestKind::Retrieve
            } else {
                RequestKind::List
            };
            shared
                .state()
                .journal
                .update(ctx.seq, |entry| entry.kind = Some(kind));
            if tool == GET_OPERATION {
                Work::Get(arguments)
            } else {
                Work::List(arguments)
            }
        }
    };
    let task_asked = params.get("task").and_then(Value::as_object);
    if let (Work::Paid(_), Some(task)) = (&work, task_asked) {
        if mcp.tasks.enabled && site.revision == Revision::V2025_11_25 {
            let end = match rule.as_ref().map(|r| &r.fault) {
                Some(McpFault::Task { then, after }) => (*then, ms(*after)),
                _ => (TaskEnd::Complete, ms(mcp.tasks.work)),
            };
            let ttl_ms = task.get("ttl").and_then(Value::as_u64);
            if let Work::Paid(pending) = work {
                work = Work::Task {
                    pending,
                    end,
                    ttl_ms,
                };
            }
        }
    }
    let progress_token = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"))
        .cloned();
    let held = Held::register(&shared, &site, ctx.seq);
    run(ctx, site, work, rule, held, progress_token).await
}

/// A paid call's arguments and key, up to the commit point.
fn intake_paid(
    ctx: &Ctx,
    mcp: &McpPlan,
    tool: &PaidTool,
    mut args: Map<String, Value>,
    tenant: &str,
) -> Work {
    let key = match &tool.key_argument {
        None => None,
        Some(name) => match args.remove(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(key)) if !key.is_empty() && key.len() <= MAX_KEY_BYTES => Some(key),
            Some(_) => {
                return Work::Fixed(Answer::Result(tools::failure(
                    400,
                    &format!(
                        "`{name}` must be a non-empty string of at most {MAX_KEY_BYTES} bytes"
                    ),
                )))
            }
        },
    };
    if let Some((name, _)) = args.iter().find(|(_, v)| v.is_array() || v.is_object()) {
        return Work::Fixed(Answer::Result(tools::failure(
            400,
            &format!("argument `{name}` must be a string, number, boolean or null"),
        )));
    }
    // One copy, shared by the journal entry, the attempt count and the object.
    let fingerprint: SharedStr = canonical_shared(&Value::Object(args.clone()));
    // The arguments' text as the object keeps it, written before the lock.
    let args_text = crate::JsonText::of(&args);
    let retention_ms = i64::try_from(mcp.retrieval.retention.as_millis()).unwrap_or(i64::MAX);
    let mut state = ctx.shared.state();
    let now_ms = state.now_ms;
    // One copy of the key, shared by the journal entry and the object.
    let shared_key = key.as_deref().map(SharedStr::from);
    state.journal.update(ctx.seq, |entry| {
        entry.kind = Some(RequestKind::Create);
        entry.resource = Some(SharedStr::from(&tool.resource));
        entry.idempotency_key = shared_key.clone();
    });
    state.journal.set_fingerprint(ctx.seq, fingerprint.clone());
    let interned_tenant = state.store.strings.intern(tenant);
    let interned_resource = state.store.strings.intern(&tool.resource);
    let attempt = state.attempts.count((
        interned_tenant.clone(),
        interned_resource.clone(),
        fingerprint.clone(),
    ));
    let decision = state.mcp.keys.check(
        IdempotencyMode::Stripe,
        retention_ms,
        tenant,
        &format!("/mcp/tools/{}", tool.name),
        key.as_deref(),
        &fingerprint,
        now_ms,
    );
    let ticket = match decision {
        Decision::Untracked => None,
        Decision::Proceed(scope) => Some(scope),
        Decision::Replay(saved) => {
            state.journal.set_replayed(ctx.seq);
            let first = serde_json::from_slice(&saved.body).unwrap_or(Value::Null);
            return Work::Fixed(Answer::Result(first));
        }
        Decision::Mismatch => {
            return Work::Fixed(Answer::Result(tools::failure(
                400,
                "this idempotency key was used with other arguments",
            )))
        }
        Decision::InFlight => {
            return Work::Fixed(Answer::Result(tools::failure(
                409,
                "a call with this idempotency key is still in progress",
            )))
        }
    };
    Work::Paid(PendingCommit {
        tool: tool.name.clone(),
        new: NewObject {
            tenant: interned_tenant,
            resource: interned_resource,
            args: args_text,
            client_reference: None,
            metadata: None,
            idempotency_key: shared_key,
            fingerprint,
            attempt,
            request_seq: Some(ctx.seq),
        },
        ticket,
    })
}

/// Does the work: commits (and runs the commit hook), creates the task, or
/// reads for a retrieval.
async fn perform(ctx: &Ctx, site: &CallSite, work: Work) -> Answer {
    let shared = &ctx.shared;
    let Some(mcp) = plan_of(shared) else {
        return Answer::Error(jsonrpc::INTERNAL_ERROR, "no MCP plan".to_owned());
    };
    match work {
        Work::Paid(pending) => {
            let committed = {
                let mut state = shared.state();
                tasks::commit_pending(&mut state, &shared.plan, mcp, pending, ctx.seq)
            };
            shared.announce_commit();
            match committed {
                Ok((effect, result)) => {
                    run_commit_hook(ctx, &effect).await;
                    Answer::Result(result)
                }
                Err(refusal) => Answer::Result(refusal),
            }
        }
        Work::Task {
            pending,
            end,
            ttl_ms,
        } => {
            let mut state = shared.state();
            match tasks::create(&mut state, mcp, pending.clone(), end, ttl_ms, ctx.seq) {
                Ok((id, created)) => {
                    state.journal.update(ctx.seq, |entry| {
                        if let Some(rpc) = entry.rpc.as_mut() {
                            rpc.task = Some(id);
                        }
                    });
                    // A task whose end is due at once ends now.
                    tasks::settle(&mut state, &shared.plan);
                    Answer::Result(created)
                }
                Err(refusal) => {
                    tasks::release(&mut state, &pending);
                    Answer::Result(refusal)
                }
            }
        }
        Work::Fixed(answer) => answer,
        Work::Get(args) => {
            let state = shared.state();
            Answer::Result(retrieval::get_operation(
                &state,
                &shared.plan,
                mcp,
                &site.tenant,
                &args,
            ))
        }
        Work::List(args) => {
            let state = shared.state();
            Answer::Result(retrieval::list_recent(
                &state,
                &shared.plan,
                mcp,
                &site.tenant,
                &args,
            ))
        }
    }
}

/// The work will never be done: a claimed key is let go.
fn abandon(ctx: &Ctx, work: Work) {
    match work {
        Work::Paid(pending) | Work::Task { pending, .. } => {
            tasks::release(&mut ctx.shared.state(), &pending);
        }
        Work::Fixed(_) | Work::Get(_) | Work::List(_) => {}
    }
}

/// What a cancel, or the client leaving, does to work not done yet.
async fn on_interrupt(ctx: &Ctx, site: &CallSite, work: Work, policy: CancelPolicy) {
    match policy {
        CancelPolicy::Honour => abandon(ctx, work),
        // The cancel came just after the commit.
        CancelPolicy::Race => drop(perform(ctx, site, work).await),
        // Never reached: under `ignore` nothing interrupts a wait (see
        // `wait_or_cancel` and `wait_before_commit`).
        CancelPolicy::Ignore => abandon(ctx, work),
    }
}

/// Whether the policy hears the client: a cancel, and its leaving before the
/// commit point.
fn hears(policy: CancelPolicy) -> bool {
    match policy {
        CancelPolicy::Honour | CancelPolicy::Race => true,
        CancelPolicy::Ignore => false,
    }
}

/// The journal fate of a call that a cancel or its client leaving ended
/// before any answer: `cancelled` when the notification came first,
/// `stalled` (the client left) when the leaving did, so the journal tells
/// the two orders apart while the effect is the same either way.
fn finish_interrupted(ctx: &Ctx, interrupt: Interrupt) {
    match interrupt {
        Interrupt::Cancel => ctx.finish_cancelled(),
        Interrupt::ClientLeft => ctx.finish_stalled(true),
    }
}

/// Before or after the commit: does the work or lets it go.
async fn at_point(ctx: &Ctx, site: &CallSite, work: Work, at: CommitPoint) {
    match at {
        CommitPoint::BeforeCommit => abandon(ctx, work),
        CommitPoint::AfterCommit => drop(perform(ctx, site, work).await),
    }
}

fn message(site: &CallSite, answer: Answer) -> Value {
    match answer {
        Answer::Result(result) => jsonrpc::result(&site.id, result),
        Answer::Error(code, text) => jsonrpc::error(&site.id, code, &text),
    }
}

fn answer(ctx: &Ctx, site: &CallSite, answer: Answer) -> Outcome {
    ctx.respond(
        wire::answer(site.form, ctx.seq, &message(site, answer)),
        Shape::Full,
    )
}

/// A held call's registration, so that `notifications/cancelled` and the
/// end of its session can reach it.
struct Held {
    shared: Arc<Shared>,
    key: (String, String),
    seq: u64,
    signal: watch::Receiver<HeldSignal>,
}

/// What ended a held call's wait from outside the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupt {
    /// Its `notifications/cancelled` arrived.
    Cancel,
    /// Its client left: the connection closed or reset, or the session ended.
    ClientLeft,
}

impl Held {
    fn register(shared: &Arc<Shared>, site: &CallSite, seq: u64) -> Held {
        let (tx, rx) = watch::channel(HeldSignal::Nothing);
        let key = (site.session.clone(), site.id.to_string());
        shared
            .state()
            .mcp
            .held
            .insert(key.clone(), HeldCall { seq, signal: tx });
        Held {
            shared: shared.clone(),
            key,
            seq,
            signal: rx,
        }
    }

    /// Resolves with the first signal `wanted` accepts; never, when the
    /// registration was replaced (a second call with the same id in the session).
    async fn signalled(&mut self, wanted: fn(HeldSignal) -> bool) -> HeldSignal {
        let seen = self
            .signal
            .wait_for(|signal| wanted(*signal))
            .await
            .map(|s| *s);
        match seen {
            Ok(signal) => signal,
            Err(_) => std::future::pending().await,
        }
    }

    /// Resolves once a cancel arrived (never, when the policy ignores it).
    async fn cancelled(&mut self, policy: CancelPolicy) {
        if !hears(policy) {
            return std::future::pending().await;
        }
        self.signalled(|signal| signal == HeldSignal::Cancelled)
            .await;
    }

    /// Resolves once the call's cancel arrived or its client left (its
    /// connection closed or reset, or its session ended), whichever came first.
    async fn interrupted(&mut self, ctx: &Ctx) -> Interrupt {
        let bound = ctx
            .shared
            .plan
            .limits
            .hold_cap
            .max(ctx.shared.plan.limits.stall_cap);
        let gone = async {
            match hold_until_client_leaves(&ctx.conn, bound, ctx.shared.shutdown.clone()).await {
                HoldEnd::ClientLeft => {}
                // The wait beside this one has its own bound.
                HoldEnd::Cap | HoldEnd::Shutdown => std::future::pending().await,
            }
        };
        let signal = self.signalled(|signal| signal != HeldSignal::Nothing);
        tokio::select! {
            // A cancel that is already there is the first word.
            biased;
            signal = signal => match signal {
                HeldSignal::Cancelled => Interrupt::Cancel,
                HeldSignal::SessionEnded | HeldSignal::Nothing => Interrupt::ClientLeft,
            },
            () = gone => Interrupt::ClientLeft,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        if state
            .mcp
            .held
            .get(&self.key)
            .is_some_and(|held| held.seq == self.seq)
        {
            state.mcp.held.remove(&self.key);
        }
    }
}

/// How a wait ended.
enum Waited<T> {
    Done(T),
    Ended(Interrupt),
}

/// A wait after the commit point: only a cancel the policy hears ends it
/// early (a client that left changes nothing that is still to be done).
async fn wait_or_cancel<T>(
    wait: impl Future<Output = T>,
    held: &mut Held,
    policy: CancelPolicy,
) -> Waited<T> {
    tokio::select! {
        value = wait => Waited::Done(value),
        () = held.cancelled(policy) => Waited::Ended(Interrupt::Cancel),
    }
}

/// A wait before the commit point. Under `honour` and `race` a client that
/// leaves (connection closed or reset, session ended) counts as one that
/// cancelled, whichever of the two arrives first: a cancel is a POST of its
/// own and may come after the call's connection closed, or never, and the
/// call's fate must not hang on that order.
async fn wait_before_commit<T>(
    wait: impl Future<Output = T>,
    held: &mut Held,
    ctx: &Ctx,
    policy: CancelPolicy,
) -> Waited<T> {
    if !hears(policy) {
        return Waited::Done(wait.await);
    }
    tokio::select! {
        // Polled first: a wait that itself ends when the client leaves (a
        // stall released by `ClientGone`) must not get there before it.
        biased;
        interrupt = held.interrupted(ctx) => Waited::Ended(interrupt),
        value = wait => Waited::Done(value),
    }
}

/// The parts of a fault that need a stream.
enum Streamed {
    Slow {
        work: Duration,
        stream: Stream,
    },
    Stall {
        then: StallThen,
        until: Release,
        stream: Stream,
    },
    Prime {
        then: StallThen,
    },
}

async fn run(
    ctx: Ctx,
    site: CallSite,
    work: Work,
    rule: Option<McpRule>,
    mut held: Held,
    progress_token: Option<Value>,
) -> Outcome {
    let (fault, policy) = rule.map_or((McpFault::Ok, CancelPolicy::Ignore), |r| {
        (r.fault, r.cancel)
    });
    let hold_cap = ctx.shared.plan.limits.hold_cap;
    match fault {
        // A task's end was decided at intake; without `params.task` it is served normally.
        McpFault::Ok | McpFault::Task { .. } => {
            let result = perform(&ctx, &site, work).await;
            answer(&ctx, &site, result)
        }
        McpFault::Slow {
            work: duration,
            stream: Stream::Nothing,
        } => {
            let sleep = tokio::time::sleep(duration.min(hold_cap));
            match wait_before_commit(sleep, &mut held, &ctx, policy).await {
                Waited::Done(()) => {
                    let result = perform(&ctx, &site, work).await;
                    answer(&ctx, &site, result)
                }
                Waited::Ended(interrupt) => {
                    on_interrupt(&ctx, &site, work, policy).await;
                    finish_interrupted(&ctx, interrupt);
                    Outcome::End(Ending::Close)
                }
            }
        }
        McpFault::Slow {
            work: duration,
            stream,
        } => stream_call(
            ctx,
            site,
            work,
            Streamed::Slow {
                work: duration,
                stream,
            },
            policy,
            held,
            progress_token,
        ),
        McpFault::Stall {
            then,
            until,
            stream: Stream::Nothing,
        } => {
            stall_without_stream(&ctx, &site, work, then, until, policy, &mut held).await;
            Outcome::End(Ending::Close)
        }
        McpFault::Stall {
            then,
            until,
            stream,
        } => stream_call(
            ctx,
            site,
            work,
            Streamed::Stall {
                then,
                until,
                stream,
            },
            policy,
            held,
            progress_token,
        ),
        McpFault::Late { after } => {
            let result = perform(&ctx, &site, work).await;
            match wait_or_cancel(ctx.delay(after), &mut held, policy).await {
                Waited::Done(()) => answer(&ctx, &site, result),
                Waited::Ended(interrupt) => {
                    finish_interrupted(&ctx, interrupt);
                    Outcome::End(Ending::Close)
                }
            }
        }
        McpFault::Never => {
            drop(perform(&ctx, &site, work).await);
            match wait_or_cancel(ctx.hold(Release::ClientGone), &mut held, policy).await {
                Waited::Done(client_left) => ctx.finish_stalled(client_left),
                Waited::Ended(interrupt) => finish_interrupted(&ctx, interrupt),
            }
            Outcome::End(Ending::Close)
        }
        McpFault::IsError {
            status,
            at,
            message,
        } => {
            at_point(&ctx, &site, work, at).await;
            answer(
                &ctx,
                &site,
                Answer::Result(tools::failure(status, &message)),
            )
        }
        McpFault::RpcError { code, message } => {
            drop(perform(&ctx, &site, work).await);
            answer(&ctx, &site, Answer::Error(code, message))
        }
        McpFault::Http { status, at } => {
            at_point(&ctx, &site, work, at).await;
            ctx.respond(
                responses::fault_status(crate::profile::Profile::generic_ref(), status, None),
                Shape::Full,
            )
        }
        McpFault::Drop { at } => {
            at_point(&ctx, &site, work, at).await;
            Outcome::End(Ending::Drop { seq: ctx.seq })
        }
        McpFault::Reset { at } => {
            at_point(&ctx, &site, work, at).await;
            Outcome::End(Ending::Reset { seq: ctx.seq })
        }
        McpFault::PrimeThenClose { then } => stream_call(
            ctx,
            site,
            work,
            Streamed::Prime { then },
            policy,
            held,
            progress_token,
        ),
    }
}

/// A stall that sends nothing: held until `until`, or until the policy hears
/// the client (its cancel, or its leaving), then the journal fate.
async fn stall_without_stream(
    ctx: &Ctx,
    site: &CallSite,
    work: Work,
    then: StallThen,
    until: Release,
    policy: CancelPolicy,
    held: &mut Held,
) {
    match wait_before_commit(ctx.hold(until), held, ctx, policy).await {
        // The hold saw the client leave before `interrupted` did: the same
        // leaving, so the policy decides, not `then`.
        Waited::Done(true) if hears(policy) => {
            on_interrupt(ctx, site, work, policy).await;
            finish_interrupted(ctx, Interrupt::ClientLeft);
        }
        Waited::Done(client_left) => {
            match then {
                StallThen::Commit => drop(perform(ctx, site, work).await),
                StallThen::Abandon => abandon(ctx, work),
            }
            ctx.finish_stalled(client_left);
        }
        Waited::Ended(interrupt) => {
            on_interrupt(ctx, site, work, policy).await;
            finish_interrupted(ctx, interrupt);
        }
    }
}

/// Opens an SSE answer now and hands the rest of the call to a driver task.
fn stream_call(
    ctx: Ctx,
    site: CallSite,
    work: Work,
    streamed: Streamed,
    policy: CancelPolicy,
    held: Held,
    progress_token: Option<Value>,
) -> Outcome {
    let (response, writer) = sse::open(ctx.seq, &[]);
    let shared = ctx.shared.clone();
    shared.tasks.spawn(drive(
        ctx,
        site,
        work,
        streamed,
        policy,
        held,
        progress_token,
        writer,
    ));
    Outcome::Respond(response.map(http_body_util::Either::Right))
}

/// Feeds the stream what `stream` says, until dropped.
async fn feed(writer: &mut SseWriter, stream: Stream, token: Option<&Value>) {
    let every = match stream {
        Stream::Nothing | Stream::HeadersThenSilence => return std::future::pending().await,
        Stream::KeepAlive { every } | Stream::Progress { every } => every,
    };
    let mut progress = 0u64;
    loop {
        tokio::time::sleep(every).await;
        let bytes = match (stream, token) {
            (Stream::Progress { .. }, Some(token)) => {
                progress += 1;
                let note = jsonrpc::notification(
                    "notifications/progress",
                    serde_json::json!({"progressToken": token, "progress": progress, "message": "working"}),
                );
                wire::event(&writer.next_id(), &note)
            }
            (Stream::Progress { .. }, None)
            | (Stream::KeepAlive { .. }, _)
            | (Stream::Nothing | Stream::HeadersThenSilence, _) => wire::keep_alive(),
        };
        if !writer.offer(bytes) {
            // The body is gone: nobody reads any more.
            return std::future::pending().await;
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn drive(
    ctx: Ctx,
    site: CallSite,
    work: Work,
    streamed: Streamed,
    policy: CancelPolicy,
    mut held: Held,
    progress_token: Option<Value>,
    mut writer: SseWriter,
) {
    let stall_cap = ctx.shared.plan.limits.stall_cap;
    let hold_cap = ctx.shared.plan.limits.hold_cap;
    let token = progress_token.as_ref();
    let client_left = match streamed {
        Streamed::Slow {
            work: duration,
            stream,
        } => {
            let waited = {
                let wait = async {
                    tokio::select! {
                        () = tokio::time::sleep(duration.min(hold_cap)) => {}
                        () = feed(&mut writer, stream, token) => {}
                    }
                };
                wait_before_commit(wait, &mut held, &ctx, policy).await
            };
            match waited {
                Waited::Done(()) => {
                    let result = perform(&ctx, &site, work).await;
                    let event = wire::event(&writer.next_id(), &message(&site, result));
                    // Asked before the answer is handed over: a client gone
                    // by then is one the answer was written to in vain.
                    let left = ctx.conn.stream.has_left();
                    writer.answered = writer.send(event, stall_cap).await;
                    left || writer.body_gone()
                }
                Waited::Ended(interrupt) => {
                    on_interrupt(&ctx, &site, work, policy).await;
                    interrupt == Interrupt::ClientLeft || writer.body_gone()
                }
            }
        }
        Streamed::Stall {
            then,
            until,
            stream,
        } => {
            let waited = {
                let wait = async {
                    let hold = ctx.hold(until);
                    tokio::pin!(hold);
                    tokio::select! {
                        client_left = &mut hold => client_left,
                        () = feed(&mut writer, stream, token) => hold.await,
                    }
                };
                wait_before_commit(wait, &mut held, &ctx, policy).await
            };
            match waited {
                // As for a stall without a stream: the policy decides.
                Waited::Done(true) if hears(policy) => {
                    on_interrupt(&ctx, &site, work, policy).await;
                    true
                }
                Waited::Done(client_left) => {
                    match then {
                        StallThen::Commit => drop(perform(&ctx, &site, work).await),
                        StallThen::Abandon => abandon(&ctx, work),
                    }
                    client_left
                }
                Waited::Ended(interrupt) => {
                    on_interrupt(&ctx, &site, work, policy).await;
                    interrupt == Interrupt::ClientLeft
                }
            }
        }
        Streamed::Prime { then } => {
            let priming = wire::priming_event(&writer.next_id());
            let _ = writer.send(priming, stall_cap).await;
            // The stream ends without the response; the work goes on.
            writer.close();
            match then {
                StallThen::Commit => drop(perform(&ctx, &site, work).await),
                StallThen::Abandon => abandon(&ctx, work),
            }
            false
        }
    };
    let fate = writer.finish(stall_cap, client_left).await;
    drop(held);
    ctx.shared.finish(ctx.seq, fate);
}
