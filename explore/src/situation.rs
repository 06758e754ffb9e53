//! A generated situation: the provider, the operations, the fault rules and
//! the steps, in the terms of the scenario format, and its scenario file.
//! Every fault rule is scoped to one step, so that what it strikes is a
//! situation (the first create of step 2), not a request count of one
//! design; the file it writes reads back through the scenario reader like a
//! hand-written one.

use std::fmt::Write as _;
use std::time::Duration;

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

/// Which lookups the provider answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lookups {
    /// `GET /v1/{resource}/{id}`.
    pub retrieve: bool,
    /// Search by `client_reference`.
    pub client_reference: bool,
    /// The list of recent objects.
    pub list_recent: bool,
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
    /// Objects settle this long after creation, when set (simulator clock).
    pub settle_after: Option<Duration>,
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
/// except a gather that does not fill, bounded by its `at_most`.
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
    /// Two requests held until both arrived (racing reconcilers).
    Gather,
}

impl Response {
    /// The response as the scenario format writes it.
    pub fn yaml(self) -> String {
        match self {
            Response::Drop => "drop".to_owned(),
            Response::Reset => "reset".to_owned(),
            Response::Status(code) => format!("{{status: {code}}}"),
            Response::Partial(bytes) => format!("{{partial: {bytes}}}"),
            Response::Gather => "{gather: {requests: 2, at_most: 300ms}}".to_owned(),
        }
    }

    /// A short name for summaries: `drop`, `status`, `partial`.
    pub fn kind_name(self) -> &'static str {
        match self {
            Response::Drop => "drop",
            Response::Reset => "reset",
            Response::Status(_) => "status",
            Response::Partial(_) => "partial",
            Response::Gather => "gather",
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
    /// Two reconcilers of one operation at once.
    RacingReconcilers(usize),
    /// The clock moves (simulator time, never real time).
    Advance(Duration),
}

impl Step {
    /// The operation a step is about, if one.
    pub fn op(self) -> Option<usize> {
        match self {
            Step::Execute(op)
            | Step::ExecuteCrash(op)
            | Step::Reconcile(op)
            | Step::Status(op)
            | Step::RacingReconcilers(op) => Some(op),
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
            Step::RacingReconcilers(_) => "racing reconcilers",
            Step::Advance(_) => "advance",
        }
    }
}

/// A whole generated situation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Situation {
    /// The provider.
    pub provider: Provider,
    /// Operations' amounts (their titles follow from their index); equal
    /// amounts are operations with identical arguments on purpose.
    pub amounts: Vec<u32>,
    /// Fault rules, in order.
    pub faults: Vec<Fault>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

fn op_id(op: usize) -> String {
    format!("op-{}", op + 1)
}

fn duration(d: Duration) -> String {
    humantime::format_duration(d).to_string().replace(' ', "")
}

impl Situation {
    /// The scenario file: `id`, the `comment` lines first.
    pub fn to_yaml(&self, id: &str, comment: &[String]) -> String {
        let mut out = String::new();
        for line in comment {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(
            out,
            "version: 1\nid: {id}\ntitle: A situation lostreply explore generated"
        );
        let _ = writeln!(out, "tags: [explore]\nclient_timeout: 2s");
        self.write_provider(&mut out);
        let _ = writeln!(out, "operations:");
        for (op, amount) in self.amounts.iter().enumerate() {
            let _ = writeln!(
                out,
                "  - {{id: {}, resource: tickets, args: {{title: Generated order, amount: {amount}}}}}",
                op_id(op)
            );
        }
        if !self.faults.is_empty() {
            let _ = writeln!(out, "faults:");
        }
        for f in &self.faults {
            let nth = match f.response {
                Response::Gather => String::new(),
                _ => format!(", nth: {}", f.nth),
            };
            let _ = writeln!(
                out,
                "  - when: {{step: {}, kind: {}{nth}}}\n    at: {}\n    response: {}",
                f.step,
                f.kind.name(),
                f.at.name(),
                f.response.yaml()
            );
        }
        let _ = writeln!(out, "steps:");
        for step in &self.steps {
            let _ = writeln!(out, "  - {}", step_yaml(*step));
        }
        out
    }

    fn write_provider(&self, out: &mut String) {
        let p = &self.provider;
        let _ = writeln!(out, "provider:");
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
        if let Some(settle) = p.settle_after {
            let _ = writeln!(
                out,
                "  asynchronous: {{settle_after: {}, result: succeeded}}",
                duration(settle)
            );
        }
        let _ = writeln!(out, "  limits: {{stall_cap: 1s}}");
    }
}

fn step_yaml(step: Step) -> String {
    match step {
        Step::Execute(op) => format!("execute: {}", op_id(op)),
        Step::ExecuteCrash(op) => format!("{{execute: {}, crash: after_commit}}", op_id(op)),
        Step::Reconcile(op) => format!("reconcile: {}", op_id(op)),
        Step::Status(op) => format!("status: {}", op_id(op)),
        Step::RacingReconcilers(op) => {
            let id = op_id(op);
            format!("parallel: [{{reconcile: {id}}}, {{reconcile: {id}}}]")
        }
        Step::Advance(by) => format!("advance: {}", duration(by)),
    }
}
