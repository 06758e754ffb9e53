//! From the `before_commit` fault to the response: the effect commits, the
//! commit hook runs, the idempotency key's result is saved for replays; when
//! nothing commits, the key table hears why (`fail_key`) and the mode decides
//! what the key remembers.

use http::HeaderValue;
use lostreply_text::SharedStr;

use super::ctx::{Ctx, Delivery, Outcome, Shape};
use super::idempotency_replies::saved_of;
use crate::conn::Ending;
use crate::idempotency::{Failure, Scope};
use crate::plan::{FaultResponse, Position, StallThen};
use crate::profile::{IdempotencyMode, Objects, Profile};
use crate::record::Effect;
use crate::responses::{self, Prepared};
use crate::scratch;
use crate::store::{effect_body, NewObject, StoreFull};

/// A validated create, ready to commit.
pub(super) struct Intake {
    /// Inline: the create's future that holds it through the faults before
    /// the commit is boxed on its own and stays inside the allocator's
    /// small-size cache with it (a box of its own would be one more
    /// allocation per create).
    pub(super) new: NewObject,
    /// The idempotency key's scope when the key is tracked: the key table
    /// hears how the work ended once that is known.
    pub(super) ticket: Option<Scope>,
}

/// From the `before_commit` fault to the response.
///
/// An `async` block rather than an `async fn`: an `async fn` keeps its
/// by-value arguments twice in its future (the argument and the local it is
/// moved into), and this future is part of every create's.
#[allow(clippy::manual_async_fn)]
pub(super) fn commit_stage(
    ctx: &Ctx,
    intake: Intake,
) -> impl std::future::Future<Output = Outcome> + Send + '_ {
    async move {
        if let Some(rule) = ctx.rule_at(Position::BeforeCommit) {
            match rule.response {
                FaultResponse::Ok => {}
                FaultResponse::Delay { delay } => ctx.delay(delay).await,
                FaultResponse::Drop => {
                    fail_key(ctx, &intake, Failure::Abandoned);
                    return Outcome::End(Ending::Drop { seq: ctx.seq });
                }
                FaultResponse::Reset => {
                    fail_key(ctx, &intake, Failure::Abandoned);
                    return Outcome::End(Ending::Reset { seq: ctx.seq });
                }
                FaultResponse::Stall { then, until } => {
                    let client_left = ctx.hold(until).await;
                    match then {
                        StallThen::Abandon => fail_key(ctx, &intake, Failure::Abandoned),
                        // The provider kept working after the client left.
                        StallThen::Commit => {
                            if let Err(hook) = commit_now(ctx, intake) {
                                hook.await;
                            }
                        }
                    }
                    // Only now is the provider done with it: whoever waits for this
                    // request's end (the harness between steps) sees the commit.
                    ctx.finish_stalled(client_left);
                    return Outcome::End(Ending::Close);
                }
                FaultResponse::Gather { requests, at_most } => ctx.gather(requests, at_most).await,
                FaultResponse::Status {
                    code,
                    retry_after_s,
                } => {
                    let reply =
                        responses::fault_status(&ctx.shared.plan.profile, code, retry_after_s);
                    fail_key(ctx, &intake, Failure::Status(saved_of(&reply)));
                    return ctx.respond(reply, Shape::Full);
                }
                // Rejected by plan validation: nothing to cut before the commit.
                FaultResponse::Partial { .. } | FaultResponse::Idle => {}
            }
        }
        let reply = match commit_now(ctx, intake) {
            Ok(reply) => reply,
            Err(hook) => hook.await,
        };
        let wait = match ctx.deliver(reply, ctx.rule_at(Position::AfterCommit)) {
            Delivery::Now(outcome) => return outcome,
            Delivery::Wait(wait) => wait,
        };
        wait.await
    }
}

/// The rest of a commit that must wait for the commit hook, boxed.
type HookThenSave<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Prepared> + Send + 'a>>;

/// Commits with no future at all: `Ok` is the answer; `Err` is the boxed rest
/// when a commit hook must run first (only runs that inject a crash have
/// one), so the committed effect never sits in the create's future.
fn commit_now(ctx: &Ctx, intake: Intake) -> Result<Prepared, HookThenSave<'_>> {
    match commit_effect(ctx, intake) {
        Err(reply) => Ok(reply),
        Ok(committed) if ctx.shared.hook().is_none() => Ok(committed.save(ctx)),
        Ok(committed) => Err(Box::pin(hook_then_save(ctx, committed))),
    }
}

fn fail_key(ctx: &Ctx, intake: &Intake, failure: Failure) {
    fail_scope(ctx, intake.ticket.clone(), &intake.new.fingerprint, failure);
}

fn fail_scope(ctx: &Ctx, ticket: Option<Scope>, fingerprint: &str, failure: Failure) {
    let Some(scope) = ticket else {
        return;
    };
    let plan = &ctx.shared.plan;
    let mut state = ctx.shared.state();
    let now_ms = state.now_ms;
    state
        .keys
        .fail(plan.idempotency.mode, scope, fingerprint, failure, now_ms);
}

/// Runs the harness's commit hook, then saves the answer (boxed by
/// `commit_now`, so that its wait is never part of a create's future).
async fn hook_then_save(ctx: &Ctx, committed: Committed) -> Prepared {
    run_commit_hook(ctx, &committed.effect).await;
    committed.save(ctx)
}

/// An effect just committed, before its answer is saved for replays.
struct Committed {
    effect: Effect,
    reply: Prepared,
    ticket: Option<Scope>,
    fingerprint: SharedStr,
}

impl Committed {
    /// Saves the answer under the key (if any) and returns it.
    fn save(self, ctx: &Ctx) -> Prepared {
        if let Some(scope) = self.ticket {
            let mut state = ctx.shared.state();
            let now_ms = state.now_ms;
            if releases_after_commit(ctx) {
                state.keys.forget(&scope);
            } else {
                state
                    .keys
                    .succeed(scope, &self.fingerprint, saved_of(&self.reply), now_ms);
            }
        }
        self.reply
    }
}

/// Known-bad `release_on_error`: the server error an `after_commit` fault is
/// about to send releases the key, though the work is done.
fn releases_after_commit(ctx: &Ctx) -> bool {
    ctx.shared.plan.idempotency.mode == IdempotencyMode::ReleaseOnError
        && matches!(
            ctx.rule_at(Position::AfterCommit).map(|r| &r.response),
            Some(FaultResponse::Status { code, .. }) if *code >= 500
        )
}

/// The commit itself: the effect into the store and the journal. `Err` is
/// the answer when the store is full (nothing committed).
fn commit_effect(ctx: &Ctx, intake: Intake) -> Result<Committed, Prepared> {
    let plan = &ctx.shared.plan;
    // The new object moves into the store; only what a failed commit or the
    // saved result still needs is kept (one shared fingerprint, the key's scope).
    let Intake { new, ticket } = intake;
    let fingerprint = new.fingerprint.clone();
    let committed = {
        let mut state = ctx.shared.state();
        let now_ms = state.now_ms;
        let result = state.store.commit(plan, new, now_ms);
        result.map(|(effect, id)| {
            state.journal.set_effect(ctx.seq, id);
            effect
        })
    };
    if committed.is_ok() {
        ctx.shared.announce_commit();
    }
    match committed {
        Ok(effect) => Ok(Committed {
            reply: created(&plan.profile, plan.asynchronous.is_some(), &effect),
            effect,
            ticket,
            fingerprint,
        }),
        Err(StoreFull { max_objects }) => {
            let message = format!("this tenant already holds {max_objects} objects");
            let reply = responses::failure(
                &plan.profile,
                507,
                crate::profile::ErrorKind::InsufficientStorage,
                &message,
            );
            fail_scope(ctx, ticket, &fingerprint, Failure::Status(saved_of(&reply)));
            Err(reply)
        }
    }
}

/// Runs the harness's commit hook (if any) between a commit and its answer.
pub(crate) async fn run_commit_hook(ctx: &Ctx, effect: &Effect) {
    let Some(hook) = ctx.shared.hook() else {
        return;
    };
    let mut shutdown = ctx.shared.shutdown.clone();
    tokio::select! {
        () = hook(effect.clone()) => {}
        _ = shutdown.wait_for(|down| *down) => {}
    }
}

fn created(profile: &Profile, asynchronous: bool, effect: &Effect) -> Prepared {
    let (status, location_header) = match &profile.objects {
        Objects::Generic => (if asynchronous { 202 } else { 201 }, true),
        Objects::Shaped(shape) => (
            if asynchronous {
                shape.accepted_status
            } else {
                shape.created_status
            },
            shape.location,
        ),
    };
    let reply = Prepared::json_body(status, effect_body(profile, effect));
    if !location_header {
        return reply;
    }
    let path = match profile.resource(&effect.resource) {
        Some(resource) => location_under(&resource.path, &effect.id),
        None => location(&effect.resource, &effect.id),
    };
    match path {
        Some(location) => reply.with_header_value("location", location),
        None => reply,
    }
}

/// `{path}/{id}`: a declared collection's object's address.
fn location_under(path: &str, id: &str) -> Option<HeaderValue> {
    HeaderValue::try_from(format!("{path}/{id}")).ok()
}

/// `/v1/{resource}/{id}`, the new object's address, made in one allocation
/// (a `format!`, a copy into a header value and back again would be three
/// per create). Always a valid header value: a resource name and an id are
/// letters, digits and `_`.
fn location(resource: &str, id: &str) -> Option<HeaderValue> {
    let text = scratch::bytes(|out| {
        out.extend_from_slice(b"/v1/");
        out.extend_from_slice(resource.as_bytes());
        out.push(b'/');
        out.extend_from_slice(id.as_bytes());
    });
    HeaderValue::from_maybe_shared(text).ok()
}
