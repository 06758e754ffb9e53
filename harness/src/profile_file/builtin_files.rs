//! The built-in profiles as files: a header saying what each is written
//! from, then [`write_profile`]'s text. `profiles/*.yaml` hold exactly these
//! (a test compares them), and `lostreply profile show NAME` prints them, so
//! the published files and the code cannot drift apart.

use lostreply_simulator::profile::BUILTIN_PROFILES;

use super::write::write_profile;

/// What each built-in profile is written from, as its file's header says.
const SOURCES: [(&str, &str); 4] = [
    (
        "generic",
        "The simulator's own API (docs/provider-api.md): `/v1/{resource}` for any\n\
         valid collection name, JSON bodies, `client_reference` and `metadata`.\n\
         Written from lostreply's own contract; no provider speaks it.",
    ),
    (
        "stripe",
        "Stripe, as its SDKs see it: form bodies in bracket notation, objects with\n\
         `object`, `created` (unix seconds) and `livemode`, `Idempotency-Key` kept\n\
         24 hours, `Stripe-Should-Retry`, the search query language on\n\
         `/v1/{collection}/search`, events signed with `Stripe-Signature`.\n\
         Written from the API reference (docs.stripe.com/api) and from what\n\
         stripe-python 16 and stripe-node 23 send, parse and retry.",
    ),
    (
        "openai",
        "OpenAI: every answered create is a billed effect and no idempotency key\n\
         is honoured; chat completions are stored (retrieve by id, list by\n\
         `metadata[key]=value`), responses retrieved by id; `x-should-retry`.\n\
         Written from the API reference (platform.openai.com/docs/api-reference)\n\
         and from what openai-python 3 and openai-node 7 send, parse and retry.",
    ),
    (
        "anthropic",
        "Anthropic: `POST /v1/messages` is a billed effect with no key and no way\n\
         to look a message up afterwards; the credential is `x-api-key`, or a\n\
         bearer token (which anthropic-python 2.x sends).\n\
         Written from the API reference (docs.anthropic.com/en/api) and from\n\
         what anthropic-python 2 sends, parses and retries.",
    ),
];

/// The file of the built-in profile `name` (one of
/// `lostreply_simulator::profile::PROFILE_NAMES`), or `None` for another name.
pub fn builtin_file(name: &str) -> Option<String> {
    let (_, make) = BUILTIN_PROFILES.iter().find(|(known, _)| *known == name)?;
    let source = SOURCES
        .iter()
        .find(|(known, _)| *known == name)
        .map_or("", |(_, text)| text);
    let mut out = format!("# The built-in `{name}` profile (lostreply profile show {name}).\n#\n");
    for line in source.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(
        "#\n# Copy it and adapt it to describe another provider: docs/profiles.md\n\
         # explains every key. This file is generated; a test keeps it equal to the code.\n\n",
    );
    out.push_str(&write_profile(&make()));
    Some(out)
}
