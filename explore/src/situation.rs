//! A generated situation: the provider, the operations, the fault rules and
//! the steps, in the terms of the scenario format, and its scenario file.
//! Every fault rule is scoped to one step, so that what it strikes is a
//! situation (the first create of step 2), not a request count of one
//! design; the file it writes reads back through the scenario reader like a
//! hand-written one.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use crate::mcp::McpSide;
use crate::shape::Collection;
pub use crate::shape::Lookups;
use crate::tag::Tag;

/// The provider's idempotency, as a correct adapter may meet it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keys {
    /// Keys are ignored.
    None,
    /// Stripe-like keys.
    Stripe,
    /// The IETF draft's keys.
    Ietf,
}

impl Keys {
    fn name(self) -> &'static str {
        match self {
            Keys::None => "none",
            Keys::Stripe => "stripe",
            Keys::Ietf => "ietf",
        }
    }
}

/// How an asynchronous object ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settles {
    /// It settles `succeeded`.
    Succeeded,
    /// It settles `failed`: a confirmed failure, not an effect.
    Failed,
}

impl Settles {
    /// As the scenario format writes it (`result`, and the settling event).
    pub fn name(self) -> &'static str {
        match self {
            Settles::Succeeded => "succeeded",
            Settles::Failed => "failed",
        }
    }
}

/// Asynchronous work: objects are `processing` until they settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Asynchronous {
    /// How long after its creation an object settles (simulator clock).
    pub after: Duration,
    /// What it settles to.
    pub result: Settles,
}

/// The provider side of a situation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// Its idempotency mode.
    pub keys: Keys,
    /// How long a key is remembered (simulator clock).
    pub retention: Duration,
    /// Its lookups.
    pub lookups: Lookups,
    /// Objects settle later, when set.
    pub asynchronous: Option<Asynchronous>,
    /// It signs events, so `webhook` steps deliver them.
    pub webhooks: bool,
}

/// The kind of request a fault rule strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A create.
    Create,
    /// A retrieve by id.
    Retrieve,
    /// A search by reference.
    Search,
    /// A list of recent objects.
    List,
}

impl Kind {
    /// As the scenario format writes it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Create => "create",
            Kind::Retrieve => "retrieve",
            Kind::Search => "search",
            Kind::List => "list",
        }
    }
}

/// Where a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum At {
    /// Before the request is read.
    BeforeRead,
    /// Read, not yet committed.
    BeforeCommit,
    /// Committed, the answer not yet sent.
    AfterCommit,
}

impl At {
    /// As the scenario format writes it.
    pub fn name(self) -> &'static str {
        match self {
            At::BeforeRead => "before_read",
            At::BeforeCommit => "before_commit",
            At::AfterCommit => "after_commit",
        }
    }
}

/// What the fault does to the response. None of them waits in real time
/// except a hold, which outlasts its client's timeout (`HOLD_CLIENT_TIMEOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Response {
    /// FIN without a byte.
    Drop,
    /// RST without a byte.
    Reset,
    /// An error status instead of the answer.
    Status(u16),
    /// The first N body bytes, then FIN (after the commit only).
    Partial(u16),
    /// A create held unread-into-the-ledger, its key in flight, until step N
    /// has ended, whether or not its client is still there; then committed.
    Hold {
        /// The step whose end releases it (from 1).
        until_step: u32,
    },
}

impl Response {
    /// The response as the scenario format writes it.
    pub fn yaml(self) -> String {
        match self {
            Response::Drop => "drop".to_owned(),
            Response::Reset => "reset".to_owned(),
            Response::Status(code) => format!("{{status: {code}}}"),
            Response::Partial(bytes) => format!("{{partial: {bytes}}}"),
            Response::Hold { until_step } => {
                format!("{{stall: {{then: commit, until: {{end_of_step: {until_step}}}}}}}")
            }
        }
    }

    /// A short name for summaries: `drop`, `status`, `partial`.
    pub fn kind_name(self) -> &'static str {
        match self {
            Response::Drop => "drop",
            Response::Reset => "reset",
            Response::Status(_) => "status",
            Response::Partial(_) => "partial",
            Response::Hold { .. } => "hold in flight",
        }
    }
}

/// One fault rule: in step `step`, the `nth` request of `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fault {
    /// The step (from 1).
    pub step: u32,
    /// The kind of request.
    pub kind: Kind,
    /// Which of that step's requests of that kind (from 1).
    pub nth: u32,
    /// Where it strikes.
    pub at: At,
    /// What it does.
    pub response: Response,
}

impl Fault {
    /// What the rule holds, in the library's words.
    fn tags(&self) -> Vec<Tag> {
        let mut tags = vec![match self.at {
            At::BeforeRead => Tag::BeforeRead,
            At::BeforeCommit => Tag::BeforeCommit,
            At::AfterCommit => Tag::AfterCommit,
        }];
        if self.kind != Kind::Create {
            tags.push(Tag::LookupFailure);
        }
        tags.push(match self.response {
            Response::Drop => Tag::Drop,
            Response::Reset => Tag::Reset,
            Response::Status(429) => Tag::RateLimited,
            Response::Status(_) => Tag::ServerError,
            Response::Partial(_) => Tag::Partial,
            Response::Hold { .. } => Tag::InFlight,
        });
        tags
    }
}

/// One step of a situation; operations by their index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// `execute`.
    Execute(usize),
    /// An execute killed when the provider commits the operation's effect.
    ExecuteCrash(usize),
    /// `reconcile`.
    Reconcile(usize),
    /// `status`.
    Status(usize),
    /// Two reconcilers of one operation at once; when a lookup kind is
    /// given, the step's lookups of that kind wait for each other
    /// (`gather`), so both reconcilers see the provider as it was before
    /// either acted.
    RacingReconcilers(usize, Option<Kind>),
    /// The provider's event about the operation's object is delivered.
    Webhook(usize, Delivery),
    /// An operator's decision about the operation.
    Resolve(usize, Decision),
    /// The clock moves (simulator time, never real time).
    Advance(Duration),
}

/// Which of the provider's events a `webhook` step delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// `created`: the object exists (possibly still `processing`).
    Created,
    /// The settling event, as the provider's `result` says.
    Settled,
}

/// One `webhook` step's delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// The event.
    pub event: Event,
    /// Signed with a wrong secret.
    pub forged: bool,
    /// How many times it is delivered (a duplicate from 2).
    pub deliveries: u8,
}

/// What an operator decides in a `resolve` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Decision {
    /// `succeeded`, naming the operation's effect in the ledger (none when
    /// it has none yet: a person may be wrong).
    SucceededLedger,
    /// `succeeded` without an id.
    SucceededWithoutId,
    /// `failed`.
    Failed,
}

impl Step {
    /// The operation a step is about, if one.
    pub fn op(self) -> Option<usize> {
        match self {
            Step::Execute(op)
            | Step::ExecuteCrash(op)
            | Step::Reconcile(op)
            | Step::Status(op)
            | Step::RacingReconcilers(op, _)
            | Step::Webhook(op, _)
            | Step::Resolve(op, _) => Some(op),
            Step::Advance(_) => None,
        }
    }

    /// A short name for summaries.
    pub fn kind_name(self) -> &'static str {
        match self {
            Step::Execute(_) => "execute",
            Step::ExecuteCrash(_) => "crash",
            Step::Reconcile(_) => "reconcile",
            Step::Status(_) => "status",
            Step::RacingReconcilers(_, None) => "racing reconcilers",
            Step::RacingReconcilers(_, Some(_)) => "racing reconcilers, lookups gathered",
            Step::Webhook(_, d) if d.forged => "webhook, forged",
            Step::Webhook(_, d) if d.deliveries > 1 => "webhook, duplicated",
            Step::Webhook(..) => "webhook",
            Step::Resolve(..) => "resolve",
            Step::Advance(_) => "advance",
        }
    }
}

/// A whole generated situation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Situation {
    /// The provider.
    pub provider: Provider,
    /// The collection every operation creates in (and so the wire).
    pub collection: Collection,
    /// Operations' amounts (their titles follow from their index); equal
    /// amounts are operations with identical arguments on purpose.
    pub amounts: Vec<u32>,
    /// Fault rules, in order.
    pub faults: Vec<Fault>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The MCP side, when the operations are paid tools called over MCP
    /// (the fault rules are then its call rules).
    pub mcp: Option<McpSide>,
}

fn op_id(op: usize) -> String {
    format!("op-{}", op + 1)
}

fn duration(d: Duration) -> String {
    humantime::format_duration(d).to_string().replace(' ', "")
}

/// The client timeout of a situation with a request held in flight: the
/// adapter gives up on it after this much real time, which is what a hold
/// costs.
const HOLD_CLIENT_TIMEOUT: &str = "500ms";

/// The client timeout of every other situation: none of its answers waits.
const CLIENT_TIMEOUT: &str = "2s";

/// How long a situation's gathered lookups wait for each other at most
/// (real time), which a design that sends only one of them (a reconciler
/// that waits for a lock first) pays in full. Exploring runs thousands of
/// situations and waits little; a finding is shrunk and written at the
/// reproducing pace, so that its race is still met on a loaded machine,
/// where the second lookup may come late. Either way shorter than the
/// client's timeout and within the stall cap (1 s), as a gather must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// 150 ms.
    Exploring,
    /// 900 ms; 400 ms where a hold shortens the client's timeout to 500 ms.
    Reproducing,
}

impl Pace {
    fn gather_at_most(self, holds: bool) -> &'static str {
        match (self, holds) {
            (Pace::Exploring, _) => "150ms",
            (Pace::Reproducing, true) => "400ms",
            (Pace::Reproducing, false) => "900ms",
        }
    }
}

/// The provider's webhook secret (a fixed one: the run's seed derives the
/// forger's).
const WEBHOOK_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

impl Situation {
    /// The scenario file: `id`, the `comment` lines first, its gathers at
    /// `pace`.
    pub fn to_yaml(&self, id: &str, comment: &[String], pace: Pace) -> String {
        let mut out = String::new();
        for line in comment {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(
            out,
            "version: 1\nid: {id}\ntitle: A situation lostreply explore generated"
        );
        let tags: Vec<&str> = std::iter::once("explore")
            .chain(self.tags().into_iter().map(Tag::name))
            .collect();
        let _ = writeln!(
            out,
            "tags: [{}]\nclient_timeout: {}",
            tags.join(", "),
            self.client_timeout()
        );
        self.write_provider(&mut out);
        if let Some(side) = &self.mcp {
            side.write_section(&mut out);
        }
        let _ = writeln!(out, "operations:");
        for (op, amount) in self.amounts.iter().enumerate() {
            if let Some(side) = &self.mcp {
                let tool = side.tools[op];
                let _ = writeln!(
                    out,
                    "  - {{id: {}, tool: {}, args: {}}}",
                    op_id(op),
                    tool.name(),
                    tool.args_yaml(*amount)
                );
                continue;
            }
            let _ = writeln!(
                out,
                "  - {{id: {}, resource: {}, args: {}}}",
                op_id(op),
                self.collection.resource(),
                self.collection.args_yaml(*amount)
            );
        }
        self.write_faults(&mut out, pace);
        let _ = writeln!(out, "steps:");
        for step in &self.steps {
            let _ = writeln!(out, "  - {}", self.step_yaml(*step));
        }
        out
    }

    /// What the situation holds, in the library's words (`--tag`).
    pub fn tags(&self) -> BTreeSet<Tag> {
        let mut tags = BTreeSet::new();
        if let Some(profile) = self.collection.profile() {
            tags.insert(profile.tag());
        }
        if let Some(side) = &self.mcp {
            tags.extend(side.tags());
        } else {
            tags.extend(self.provider_tags());
        }
        let mut amounts = self.amounts.clone();
        amounts.sort_unstable();
        amounts.dedup();
        if amounts.len() < self.amounts.len() {
            tags.insert(Tag::RepeatedArguments);
        }
        for f in &self.faults {
            tags.extend(f.tags());
        }
        for step in &self.steps {
            tags.extend(self.step_tag(*step));
        }
        tags
    }

    /// What the HTTP provider holds, in the library's words.
    fn provider_tags(&self) -> BTreeSet<Tag> {
        let p = &self.provider;
        let mut tags = BTreeSet::new();
        tags.insert(match p.keys {
            Keys::None => Tag::NoKeys,
            Keys::Stripe => Tag::StripeMode,
            Keys::Ietf => Tag::Ietf,
        });
        if p.keys != Keys::None {
            tags.insert(Tag::IdempotencyKey);
        }
        if !(p.lookups.retrieve || p.lookups.client_reference || p.lookups.list_recent) {
            tags.insert(Tag::NoLookup);
        }
        if p.asynchronous.is_some() {
            tags.insert(Tag::Asynchronous);
        }
        if p.webhooks {
            tags.insert(Tag::Webhooks);
        }
        tags
    }

    fn step_tag(&self, step: Step) -> Option<Tag> {
        match step {
            Step::ExecuteCrash(_) => Some(Tag::Crash),
            Step::RacingReconcilers(..) => Some(Tag::Race),
            Step::Resolve(..) => Some(Tag::Resolution),
            Step::Webhook(_, d) if d.forged => Some(Tag::Forged),
            Step::Webhook(_, d) if d.deliveries > 1 => Some(Tag::Duplicate),
            Step::Advance(by) if by > self.key_retention()? => Some(Tag::Retention),
            _ => None,
        }
    }

    /// How long a key is remembered, when some operation has one.
    fn key_retention(&self) -> Option<Duration> {
        match &self.mcp {
            Some(side) => side
                .tools
                .contains(&crate::mcp::Tool::Charge)
                .then_some(crate::mcp::KEY_RETENTION),
            None => (self.provider.keys != Keys::None).then_some(self.provider.retention),
        }
    }

    /// Whether racing reconcilers have their lookups gathered somewhere.
    pub fn gathers(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step, Step::RacingReconcilers(_, Some(_))))
    }

    /// How many racing steps leave their overlap to the scheduler (no
    /// gather): their outcome may differ from run to run.
    pub fn ungathered_races(&self) -> usize {
        self.steps
            .iter()
            .filter(|step| matches!(step, Step::RacingReconcilers(_, None)))
            .count()
    }

    /// Whether a request is held in flight somewhere.
    fn holds(&self) -> bool {
        self.faults
            .iter()
            .any(|f| matches!(f.response, Response::Hold { .. }))
            || self.mcp.as_ref().is_some_and(McpSide::holds)
    }

    fn client_timeout(&self) -> &'static str {
        if self.holds() {
            HOLD_CLIENT_TIMEOUT
        } else {
            CLIENT_TIMEOUT
        }
    }

    /// The fault rules, then each racing step's gather (after them, so that
    /// a rule made for one request of the step strikes it first).
    fn write_faults(&self, out: &mut String, pace: Pace) {
        let gathers: Vec<(usize, Kind)> = self
            .steps
            .iter()
            .enumerate()
            .filter_map(|(i, step)| match step {
                Step::RacingReconcilers(_, Some(kind)) => Some((i + 1, *kind)),
                _ => None,
            })
            .collect();
        let mcp_faults = self.mcp.as_ref().filter(|side| !side.faults.is_empty());
        if self.faults.is_empty() && gathers.is_empty() && mcp_faults.is_none() {
            return;
        }
        let _ = writeln!(out, "faults:");
        if let Some(side) = mcp_faults {
            side.write_faults(out);
        }
        for f in &self.faults {
            let _ = writeln!(
                out,
                "  - when: {{step: {}, kind: {}, nth: {}}}\n    at: {}\n    response: {}",
                f.step,
                f.kind.name(),
                f.nth,
                f.at.name(),
                f.response.yaml()
            );
        }
        let at_most = pace.gather_at_most(self.holds());
        for (step, kind) in gathers {
            let _ = writeln!(
                out,
                "  - when: {{step: {step}, kind: {}}}\n    response: {{gather: {{requests: 2, at_most: {at_most}}}}}",
                kind.name()
            );
        }
    }

    fn write_provider(&self, out: &mut String) {
        let p = &self.provider;
        let _ = writeln!(out, "provider:");
        if self.mcp.is_some() {
            // The HTTP face is there, but nothing calls it.
            let _ = writeln!(out, "  limits: {{stall_cap: 1s}}");
            return;
        }
        if let Some(profile) = self.collection.profile() {
            let _ = writeln!(out, "  profile: {}", profile.name());
        }
        match p.keys {
            Keys::None => {
                let _ = writeln!(out, "  idempotency: {{mode: none}}");
            }
            keys => {
                let _ = writeln!(
                    out,
                    "  idempotency: {{mode: {}, retention: {}}}",
                    keys.name(),
                    duration(p.retention)
                );
            }
        }
        let l = p.lookups;
        let _ = writeln!(
            out,
            "  lookup: {{retrieve: {}, client_reference: {}, list_recent: {}}}",
            l.retrieve, l.client_reference, l.list_recent
        );
        if let Some(a) = p.asynchronous {
            let _ = writeln!(
                out,
                "  asynchronous: {{settle_after: {}, result: {}}}",
                duration(a.after),
                a.result.name()
            );
        }
        if p.webhooks {
            let _ = writeln!(out, "  webhooks: {{secret: {WEBHOOK_SECRET}}}");
        }
        let _ = writeln!(out, "  limits: {{stall_cap: 1s}}");
    }

    fn step_yaml(&self, step: Step) -> String {
        match step {
            Step::Execute(op) => format!("execute: {}", op_id(op)),
            Step::ExecuteCrash(op) => format!("{{execute: {}, crash: after_commit}}", op_id(op)),
            Step::Reconcile(op) => format!("reconcile: {}", op_id(op)),
            Step::Status(op) => format!("status: {}", op_id(op)),
            Step::RacingReconcilers(op, _) => {
                let id = op_id(op);
                format!("parallel: [{{reconcile: {id}}}, {{reconcile: {id}}}]")
            }
            Step::Webhook(op, d) => self.webhook_yaml(op, d),
            Step::Resolve(op, decision) => {
                let (outcome, provider_ref) = match decision {
                    Decision::SucceededLedger => ("succeeded", "ledger"),
                    Decision::SucceededWithoutId => ("succeeded", "null"),
                    Decision::Failed => ("failed", "null"),
                };
                format!(
                    "{{resolve: {}, outcome: {outcome}, provider_ref: {provider_ref}, evidence: an operator decided}}",
                    op_id(op)
                )
            }
            Step::Advance(by) => format!("advance: {}", duration(by)),
        }
    }

    fn webhook_yaml(&self, op: usize, d: Delivery) -> String {
        let event = match (d.event, self.provider.asynchronous) {
            (Event::Settled, Some(a)) => a.result.name(),
            (Event::Created, _) | (Event::Settled, None) => "created",
        };
        let mut yaml = format!("{{webhook: {}, event: {event}", op_id(op));
        if d.deliveries > 1 {
            let _ = write!(yaml, ", duplicate: {}", d.deliveries);
        }
        if d.forged {
            yaml.push_str(", forged: true");
        }
        yaml.push('}');
        yaml
    }
}
