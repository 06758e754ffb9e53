//! What a provider documents about itself, as the adapter receives it in
//! every call (`provider.contract`).

use serde::{Deserialize, Serialize};

/// The provider's documented capabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Contract {
    /// The wire the provider speaks: `generic` (docs/provider-api.md), a
    /// built-in profile (`stripe`, `openai`, `anthropic`) or a profile
    /// file's name. An addition to v1: read as `generic` where absent.
    #[serde(default = "generic_profile")]
    pub profile: String,
    /// Idempotency support.
    pub idempotency: ContractIdempotency,
    /// Which lookups exist.
    pub lookup: ContractLookup,
    /// True when created objects start `processing`.
    pub asynchronous: bool,
    /// Webhook signing secret, when the provider sends events.
    pub webhooks: Option<ContractWebhooks>,
    /// Present when the provider is (also) an MCP server: where it is, what
    /// it offers and which client windows the adapter must apply. An addition
    /// to v1: absent (not `null`) for plain HTTP scenarios, so adapters that
    /// do not know MCP never see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<ContractMcp>,
}

/// The provider as an MCP server (docs/mcp.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractMcp {
    /// The Streamable HTTP endpoint: `http://127.0.0.1:PORT/mcp`. The bearer
    /// credential is [`ProviderInfo::credential`](crate::ProviderInfo::credential), sent as `Authorization`.
    pub url: String,
    /// The protocol revision to ask for in `initialize` (`2025-11-25`).
    pub revision: String,
    /// The paid tools.
    pub tools: Vec<ContractTool>,
    /// The read-only retrieval tools; `None` when the server has none.
    pub retrieval: Option<ContractRetrieval>,
    /// Whether `tools/call` may be turned into a background task (`params.task`).
    pub tasks: bool,
    /// The client windows the adapter must give its MCP client.
    pub client: ClientWindows,
}

/// A paid tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractTool {
    /// Tool name (`create_ticket`).
    pub name: String,
    /// The collection its effects go to.
    pub resource: String,
    /// The argument that carries an idempotency key, when the tool takes one.
    pub key_argument: Option<String>,
    /// How long the server remembers a key (simulator clock), when the tool takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_retention_s: Option<u64>,
}

/// The retrieval tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractRetrieval {
    /// `get_operation`: `{id}` → status and the original payload.
    pub get: String,
    /// `list_recent_operations`: `{}` → this credential's recent ids, newest first.
    pub list_recent: String,
    /// How long ids retrieve (simulator clock).
    pub retention_s: u64,
}

/// A client's time limits, scaled for the scenario (real time, ms). `None`:
/// the client has no such limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientWindows {
    /// The named profile they come from (`claude-code-http`, `typescript-sdk`…, or `custom`).
    pub profile: String,
    /// The factor applied to the profile's real figures (`0.001`: a minute is 60 ms).
    pub scale: f64,
    /// Wall-clock limit per call, from the request.
    pub wall_clock_ms: Option<u64>,
    /// Idle limit: silence on the stream; restarts as `idle_resets_on` says.
    pub idle_ms: Option<u64>,
    /// What restarts the idle window: `bytes` (any byte) or `progress` (progress notifications only).
    pub idle_resets_on: String,
    /// First-byte limit: stops at the first response byte.
    pub first_byte_ms: Option<u64>,
    /// Calls running past this are moved to the background (the client stops waiting and reports later).
    pub background_after_ms: Option<u64>,
}

/// Idempotency as documented. Known-bad servers document the mode they claim to be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractIdempotency {
    /// `none`, `stripe` or `ietf`.
    pub mode: String,
    /// Header name: `Idempotency-Key`.
    pub header: String,
    /// How long the provider remembers a key.
    pub retention_s: u64,
}

/// Lookups as documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractLookup {
    /// `GET /v1/{resource}/{id}`.
    pub retrieve: bool,
    /// Search by `client_reference`.
    pub client_reference: bool,
    /// List recent objects.
    pub list_recent: bool,
}

fn generic_profile() -> String {
    "generic".to_owned()
}

/// Webhooks as documented.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContractWebhooks {
    /// `whsec_…`.
    pub secret: String,
    /// How deliveries are signed. An addition to v1: read as
    /// `standard_webhooks` where absent.
    #[serde(default)]
    pub scheme: WebhookScheme,
}

/// How a provider signs its webhook deliveries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebhookScheme {
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp` and
    /// `webhook-signature: v1,<base64 HMAC-SHA256>` keyed by the decoded `whsec_` secret.
    #[default]
    StandardWebhooks,
    /// Stripe: `stripe-signature: t=<unix>,v1=<hex HMAC-SHA256>` keyed by
    /// the secret's own bytes.
    Stripe,
}

impl Contract {
    /// A provider speaking the wire `profile` with `idempotency` and
    /// `lookup`, creating objects `processing` when `asynchronous`; no
    /// webhooks and no MCP face (see [`Contract::with_webhooks`] and
    /// [`Contract::with_mcp`]).
    pub fn new(
        profile: impl Into<String>,
        idempotency: ContractIdempotency,
        lookup: ContractLookup,
        asynchronous: bool,
    ) -> Contract {
        Contract {
            profile: profile.into(),
            idempotency,
            lookup,
            asynchronous,
            webhooks: None,
            mcp: None,
        }
    }

    /// The same provider, sending signed webhooks (or not).
    pub fn with_webhooks(mut self, webhooks: Option<ContractWebhooks>) -> Contract {
        self.webhooks = webhooks;
        self
    }

    /// The same provider, also an MCP server (or not).
    pub fn with_mcp(mut self, mcp: Option<ContractMcp>) -> Contract {
        self.mcp = mcp;
        self
    }
}

impl ContractMcp {
    /// The MCP server at `url`, asked for `revision`, offering `tools` and,
    /// when it has them, the `retrieval` tools; `tasks` when a call may run
    /// in the background; the adapter's MCP client applies `client`.
    pub fn new(
        url: impl Into<String>,
        revision: impl Into<String>,
        tools: Vec<ContractTool>,
        retrieval: Option<ContractRetrieval>,
        tasks: bool,
        client: ClientWindows,
    ) -> ContractMcp {
        ContractMcp {
            url: url.into(),
            revision: revision.into(),
            tools,
            retrieval,
            tasks,
            client,
        }
    }
}

impl ContractTool {
    /// The paid tool `name`, whose effects go to `resource`, taking no key
    /// (see [`ContractTool::with_key`]).
    pub fn new(name: impl Into<String>, resource: impl Into<String>) -> ContractTool {
        ContractTool {
            name: name.into(),
            resource: resource.into(),
            key_argument: None,
            key_retention_s: None,
        }
    }

    /// The same tool, taking an idempotency key in `argument` that the
    /// server remembers for `retention_s` (when it says).
    pub fn with_key(
        mut self,
        argument: impl Into<String>,
        retention_s: Option<u64>,
    ) -> ContractTool {
        self.key_argument = Some(argument.into());
        self.key_retention_s = retention_s;
        self
    }
}

impl ContractRetrieval {
    /// The retrieval tools `get` and `list_recent`, whose ids retrieve for `retention_s`.
    pub fn new(
        get: impl Into<String>,
        list_recent: impl Into<String>,
        retention_s: u64,
    ) -> ContractRetrieval {
        ContractRetrieval {
            get: get.into(),
            list_recent: list_recent.into(),
            retention_s,
        }
    }
}

impl ClientWindows {
    /// The windows of the named client `profile`, scaled by `scale`, with
    /// none of its limits set (each is a `with_…` of its own) and the idle
    /// window restarted by any byte.
    pub fn new(profile: impl Into<String>, scale: f64) -> ClientWindows {
        ClientWindows {
            profile: profile.into(),
            scale,
            wall_clock_ms: None,
            idle_ms: None,
            idle_resets_on: "bytes".to_owned(),
            first_byte_ms: None,
            background_after_ms: None,
        }
    }

    /// The same windows with a wall-clock limit per call (or none).
    pub fn with_wall_clock_ms(mut self, ms: Option<u64>) -> ClientWindows {
        self.wall_clock_ms = ms;
        self
    }

    /// The same windows with an idle limit (or none), restarted by
    /// `resets_on` (`bytes` or `progress`).
    pub fn with_idle_ms(mut self, ms: Option<u64>, resets_on: impl Into<String>) -> ClientWindows {
        self.idle_ms = ms;
        self.idle_resets_on = resets_on.into();
        self
    }

    /// The same windows with a first-byte limit (or none).
    pub fn with_first_byte_ms(mut self, ms: Option<u64>) -> ClientWindows {
        self.first_byte_ms = ms;
        self
    }

    /// The same windows moving calls to the background after a time (or never).
    pub fn with_background_after_ms(mut self, ms: Option<u64>) -> ClientWindows {
        self.background_after_ms = ms;
        self
    }
}

impl ContractIdempotency {
    /// Idempotency of `mode` (`none`, `stripe`, `ietf`) under the key
    /// `header`, remembered for `retention_s`.
    pub fn new(
        mode: impl Into<String>,
        header: impl Into<String>,
        retention_s: u64,
    ) -> ContractIdempotency {
        ContractIdempotency {
            mode: mode.into(),
            header: header.into(),
            retention_s,
        }
    }
}

impl ContractLookup {
    /// No lookup at all; each one is added by its `with_…`.
    pub const NONE: ContractLookup = ContractLookup {
        retrieve: false,
        client_reference: false,
        list_recent: false,
    };

    /// The same lookups, with retrieval by id (or without).
    pub const fn with_retrieve(mut self, retrieve: bool) -> ContractLookup {
        self.retrieve = retrieve;
        self
    }

    /// The same lookups, with search by client reference (or without).
    pub const fn with_client_reference(mut self, client_reference: bool) -> ContractLookup {
        self.client_reference = client_reference;
        self
    }

    /// The same lookups, with a list of recent objects (or without).
    pub const fn with_list_recent(mut self, list_recent: bool) -> ContractLookup {
        self.list_recent = list_recent;
        self
    }
}

impl ContractWebhooks {
    /// Webhooks signed with `secret` by `scheme`.
    pub fn new(secret: impl Into<String>, scheme: WebhookScheme) -> ContractWebhooks {
        ContractWebhooks {
            secret: secret.into(),
            scheme,
        }
    }
}
