//! The wire a situation's provider speaks: the generic API, or a built-in
//! provider profile (`--profile`), so that an adapter built on the
//! provider's own SDK is explored unchanged. Each profile's collections are
//! a closed set, and each knows what a real SDK call to it carries: the
//! arguments are the ones that SDK's adapters are written for, not the
//! generic API's `title` and `amount`.

use crate::tag::Tag;

/// A provider profile explore can draw situations in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    /// Stripe's wire (`profile: stripe`).
    Stripe,
    /// OpenAI's wire (`profile: openai`).
    Openai,
    /// Anthropic's wire (`profile: anthropic`).
    Anthropic,
}

impl Profile {
    /// Every profile, in the order `--profile` lists them.
    pub const ALL: [Profile; 3] = [Profile::Stripe, Profile::Openai, Profile::Anthropic];

    /// As the scenario format and `--profile` write it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Stripe => "stripe",
            Profile::Openai => "openai",
            Profile::Anthropic => "anthropic",
        }
    }

    /// Its tag.
    pub fn tag(self) -> Tag {
        match self {
            Profile::Stripe => Tag::Stripe,
            Profile::Openai => Tag::Openai,
            Profile::Anthropic => Tag::Anthropic,
        }
    }

    /// The profile named `name`.
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its collections a situation may create in.
    pub fn collections(self) -> &'static [Collection] {
        match self {
            Profile::Stripe => &[
                Collection::StripeCustomers,
                Collection::StripePaymentIntents,
            ],
            Profile::Openai => &[
                Collection::OpenaiChatCompletions,
                Collection::OpenaiResponses,
            ],
            Profile::Anthropic => &[Collection::AnthropicMessages],
        }
    }

    /// Whether the provider keys creates (its profile's default mode): a
    /// situation keeps the provider's own contract, never another's.
    pub fn keys_creates(self) -> bool {
        matches!(self, Profile::Stripe)
    }
}

/// A name `--profile` does not know: explore draws only on the built-in
/// profiles, whose SDK calls it knows the arguments of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownProfile;

impl std::fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "explore draws situations on the built-in profiles {} \
             (it must know what each collection's SDK call carries)",
            Profile::ALL.map(Profile::name).join(", ")
        )
    }
}

impl std::error::Error for UnknownProfile {}

/// The profile named `name`, or why explore cannot draw on it (what
/// `--profile` reads).
impl std::str::FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(name: &str) -> Result<Profile, UnknownProfile> {
        Profile::from_name(name).ok_or(UnknownProfile)
    }
}

/// The collection a situation's operations create in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Collection {
    /// The generic API's `tickets`.
    Tickets,
    /// Stripe's customers (no status: never asynchronous).
    StripeCustomers,
    /// Stripe's payment intents.
    StripePaymentIntents,
    /// OpenAI's stored chat completions (no status).
    OpenaiChatCompletions,
    /// OpenAI's background responses.
    OpenaiResponses,
    /// Anthropic's messages (no lookup, no status).
    AnthropicMessages,
}

impl Collection {
    /// The profile it belongs to; none for the generic API.
    pub fn profile(self) -> Option<Profile> {
        match self {
            Collection::Tickets => None,
            Collection::StripeCustomers | Collection::StripePaymentIntents => Some(Profile::Stripe),
            Collection::OpenaiChatCompletions | Collection::OpenaiResponses => {
                Some(Profile::Openai)
            }
            Collection::AnthropicMessages => Some(Profile::Anthropic),
        }
    }

    /// As operations name it (`resource:`).
    pub fn resource(self) -> &'static str {
        match self {
            Collection::Tickets => "tickets",
            Collection::StripeCustomers => "customers",
            Collection::StripePaymentIntents => "payment_intents",
            Collection::OpenaiChatCompletions => "chat_completions",
            Collection::OpenaiResponses => "responses",
            Collection::AnthropicMessages => "messages",
        }
    }

    /// Whether its objects carry a status, so that they can be `processing`
    /// and settle later.
    pub fn has_status(self) -> bool {
        matches!(
            self,
            Collection::Tickets | Collection::StripePaymentIntents | Collection::OpenaiResponses
        )
    }

    /// The lookups its profile offers for it (the generic API offers all).
    pub fn offers(self) -> Lookups {
        let (retrieve, client_reference, list_recent) = match self {
            Collection::Tickets
            | Collection::StripeCustomers
            | Collection::StripePaymentIntents
            | Collection::OpenaiChatCompletions => (true, true, true),
            Collection::OpenaiResponses => (true, false, false),
            Collection::AnthropicMessages => (false, false, false),
        };
        Lookups {
            retrieve,
            client_reference,
            list_recent,
        }
    }

    /// An operation's `args` in flow YAML; operations with equal `amount`
    /// have identical arguments.
    pub fn args_yaml(self, amount: u32) -> String {
        match self {
            Collection::Tickets => format!("{{title: Generated order, amount: {amount}}}"),
            Collection::StripeCustomers => {
                format!("{{email: buyer-{amount}@example.com, name: Generated customer}}")
            }
            Collection::StripePaymentIntents => format!("{{amount: {amount}, currency: usd}}"),
            Collection::OpenaiChatCompletions => format!(
                "{{model: gpt-5, messages: [{{role: user, content: Draft reply {amount}}}]}}"
            ),
            Collection::OpenaiResponses => {
                format!("{{model: gpt-5, input: Summarise ticket {amount}, background: true}}")
            }
            Collection::AnthropicMessages => format!(
                "{{model: claude-sonnet-4-5, max_tokens: 64, messages: [{{role: user, content: Tag ticket {amount}}}]}}"
            ),
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
