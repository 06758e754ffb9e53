//! The tags of a situation: the built-in library's words for what it holds
//! (`--tag`, and a finding's `tags:`).

/// What a situation holds, in the library's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    /// Stripe's wire.
    Stripe,
    /// OpenAI's wire.
    Openai,
    /// Anthropic's wire.
    Anthropic,
    /// Paid tools called over MCP.
    Mcp,
    /// The provider keys no create.
    NoKeys,
    /// The provider keys creates (either mode).
    IdempotencyKey,
    /// Stripe-mode keys.
    StripeMode,
    /// The IETF draft's keys.
    Ietf,
    /// The provider answers no lookup.
    NoLookup,
    /// A fault strikes a lookup.
    LookupFailure,
    /// An answer closed without a byte.
    Drop,
    /// An answer aborted (RST).
    Reset,
    /// A 5xx in place of an answer.
    ServerError,
    /// A 429 before the commit.
    RateLimited,
    /// Another "not done" answer (a 4xx) before the commit (MCP).
    Rejection,
    /// A cut answer.
    Partial,
    /// A call left unanswered until the client's own limit (MCP).
    Timeout,
    /// A call that becomes a background task (MCP).
    Task,
    /// A request held in flight across a retry.
    InFlight,
    /// A fault before the request is read.
    BeforeRead,
    /// A fault after the request is read, before its commit.
    BeforeCommit,
    /// A fault after the commit.
    AfterCommit,
    /// Objects settle later.
    Asynchronous,
    /// Signed events are delivered.
    Webhooks,
    /// A forged event.
    Forged,
    /// An event delivered twice.
    Duplicate,
    /// The adapter is killed at the commit.
    Crash,
    /// Two reconcilers of one operation at once.
    Race,
    /// A person decides an operation's outcome.
    Resolution,
    /// The clock moves past the key retention.
    Retention,
    /// Operations with identical arguments on purpose.
    RepeatedArguments,
    /// A call leaves before its answer and says it cancels (MCP).
    Cancel,
    /// A paid tool that takes a key argument (MCP).
    KeyedTool,
    /// Retrieval tools are offered (MCP).
    Retrieval,
}

impl Tag {
    /// Every tag, in the order `--tag` lists them.
    pub const ALL: [Tag; 34] = [
        Tag::Stripe,
        Tag::Openai,
        Tag::Anthropic,
        Tag::Mcp,
        Tag::NoKeys,
        Tag::IdempotencyKey,
        Tag::StripeMode,
        Tag::Ietf,
        Tag::NoLookup,
        Tag::LookupFailure,
        Tag::Drop,
        Tag::Reset,
        Tag::ServerError,
        Tag::RateLimited,
        Tag::Rejection,
        Tag::Partial,
        Tag::Timeout,
        Tag::Task,
        Tag::InFlight,
        Tag::BeforeRead,
        Tag::BeforeCommit,
        Tag::AfterCommit,
        Tag::Asynchronous,
        Tag::Webhooks,
        Tag::Forged,
        Tag::Duplicate,
        Tag::Crash,
        Tag::Race,
        Tag::Resolution,
        Tag::Retention,
        Tag::RepeatedArguments,
        Tag::Cancel,
        Tag::KeyedTool,
        Tag::Retrieval,
    ];

    /// As a scenario's `tags:` and `--tag` write it.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Stripe => "stripe",
            Tag::Openai => "openai",
            Tag::Anthropic => "anthropic",
            Tag::Mcp => "mcp",
            Tag::NoKeys => "no-keys",
            Tag::IdempotencyKey => "idempotency-key",
            Tag::StripeMode => "stripe-mode",
            Tag::Ietf => "ietf",
            Tag::NoLookup => "no-lookup",
            Tag::LookupFailure => "lookup-failure",
            Tag::Drop => "drop",
            Tag::Reset => "reset",
            Tag::ServerError => "server-error",
            Tag::RateLimited => "rate-limited",
            Tag::Rejection => "rejection",
            Tag::Partial => "partial",
            Tag::Timeout => "timeout",
            Tag::Task => "task",
            Tag::InFlight => "in-flight",
            Tag::BeforeRead => "before-read",
            Tag::BeforeCommit => "before-commit",
            Tag::AfterCommit => "after-commit",
            Tag::Asynchronous => "asynchronous",
            Tag::Webhooks => "webhooks",
            Tag::Forged => "forged",
            Tag::Duplicate => "duplicate",
            Tag::Crash => "crash",
            Tag::Race => "race",
            Tag::Resolution => "resolution",
            Tag::Retention => "retention",
            Tag::RepeatedArguments => "repeated-arguments",
            Tag::Cancel => "cancel",
            Tag::KeyedTool => "keyed-tool",
            Tag::Retrieval => "retrieval",
        }
    }

    /// The tag named `name`.
    pub fn from_name(name: &str) -> Option<Tag> {
        Tag::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Every tag's name, comma-separated (for error messages).
    pub fn names() -> String {
        Tag::ALL.map(Tag::name).join(", ")
    }
}
