//! Profile files: every built-in profile written out reads back to itself,
//! the published files in `profiles/` are exactly the built-ins, the example
//! parses to what docs/profiles.md says, and the JSON Schema accepts what the
//! parser accepts.

use crate::json_schema;

use std::path::{Path, PathBuf};

use lostreply_harness::profile_file::{
    builtin_file, parse_profile, profile_schema, read_profile_file, write_profile,
};
use lostreply_simulator::profile::{
    Auth, Encoding, ErrorKind, Errors, Pages, Profile, Routes, SearchSyntax, BUILTIN_PROFILES,
    PROFILE_NAMES,
};
use lostreply_simulator::IdempotencyMode;
use serde_json::{json, Value};

fn profiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles")
}

#[test]
fn every_builtin_round_trips() {
    for (name, make) in BUILTIN_PROFILES {
        let profile = make();
        let text = write_profile(&profile);
        let back = parse_profile(&text, Path::new(name))
            .unwrap_or_else(|e| panic!("{name} does not parse:\n{e}\n{text}"));
        assert_eq!(back, profile, "{name} does not read back:\n{text}");
    }
}

/// `profiles/NAME.yaml` is what `lostreply profile show NAME` prints, and
/// reads to exactly the built-in. `LOSTREPLY_BLESS=1 cargo test` rewrites
/// the files after a change to a built-in profile.
#[test]
fn published_files_are_the_builtins() {
    assert_eq!(
        BUILTIN_PROFILES.map(|(name, _)| name),
        PROFILE_NAMES,
        "a built-in without a file"
    );
    let bless = std::env::var_os("LOSTREPLY_BLESS").is_some();
    for (name, make) in BUILTIN_PROFILES {
        let path = profiles_dir().join(format!("{name}.yaml"));
        let expected = builtin_file(name).unwrap();
        if bless {
            std::fs::write(&path, &expected).unwrap();
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            text,
            expected,
            "{} differs from the code (LOSTREPLY_BLESS=1 rewrites it)",
            path.display()
        );
        let read = read_profile_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read, make(), "{}", path.display());
        assert!(text.starts_with("# The built-in"), "{name}: no header");
    }
    assert_eq!(builtin_file("paypal"), None);
}

#[test]
fn the_tracker_example_reads_as_documented() {
    let path = profiles_dir().join("examples/tracker.yaml");
    let tracker = read_profile_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(tracker.name, "tracker");
    let Routes::Declared(resources) = &tracker.routes else {
        panic!("the tracker declares its resources")
    };
    assert_eq!(resources.len(), 1);
    let issues = &resources[0];
    assert_eq!(
        (issues.name.as_str(), issues.path.as_str()),
        ("issues", "/api/v2/issues")
    );
    assert_eq!(issues.id_prefix, "ISS-");
    assert_eq!(tracker.auth, Auth::Header("x-api-key".to_owned()));
    assert_eq!(tracker.body.encoding, Encoding::Json);
    assert_eq!(tracker.body.metadata.as_deref(), Some("labels"));
    assert_eq!(tracker.keys.default_mode, IdempotencyMode::None);
    assert_eq!(tracker.keys.replay_header, None);
    let Errors::Shaped(errors) = &tracker.errors else {
        panic!("the tracker has its own errors")
    };
    assert_eq!(
        errors.envelope,
        json!({"errors": [{"code": "{type}", "detail": "{message}"}]})
    );
    assert!(errors.kinds.contains_key(&ErrorKind::NotFound));
    let Pages::Shaped(pages) = &tracker.pages else {
        panic!("the tracker has its own pages")
    };
    assert_eq!(pages.search, SearchSyntax::MetadataParams);
    // Written out and read again, the example is the same profile.
    let again = parse_profile(&write_profile(&tracker), Path::new("again")).unwrap();
    assert_eq!(again, tracker);
}

#[test]
fn a_file_that_only_renames_errors_keeps_the_generic_rest() {
    let text = "\
version: 1
name: renamed
routes: generic
errors:
  envelope: {message: \"{message}\", kind: \"{type}\"}
  fallback: {type: bad_request}
";
    let profile = parse_profile(text, Path::new("renamed.yaml")).unwrap();
    let generic = Profile::generic();
    assert_eq!(profile.routes, Routes::Generic);
    assert_eq!(profile.objects, generic.objects);
    assert_eq!(profile.pages, generic.pages);
    assert_eq!(profile.keys, generic.keys);
    assert_eq!(profile.body, generic.body);
    let Errors::Shaped(errors) = &profile.errors else {
        panic!("shaped errors")
    };
    assert!(errors.kinds.is_empty());
    assert_eq!(errors.fallback.kind, "bad_request");
}

#[test]
fn header_names_are_kept_in_lower_case() {
    let text = "\
version: 1
name: cased
routes: generic
auth: {header: X-Api-Key}
keys: {header: Idempotency-Key, replay_header: {Idempotent-Replayed: true}}
retry_hints: {header: X-Should-Retry, retry: [server_error]}
";
    let profile = parse_profile(text, Path::new("cased.yaml")).unwrap();
    assert_eq!(profile.auth, Auth::Header("x-api-key".to_owned()));
    assert_eq!(profile.keys.header, "idempotency-key");
    assert_eq!(
        profile.keys.replay_header,
        Some(("idempotent-replayed".to_owned(), "true".to_owned()))
    );
    assert_eq!(profile.retry_hints.unwrap().header, "x-should-retry");
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap()
}

#[test]
fn the_schema_accepts_every_published_file() {
    let schema = profile_schema();
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["title"], "lostreply provider profile (format v1)",
        "{schema:#}"
    );
    let mut files: Vec<PathBuf> = PROFILE_NAMES
        .iter()
        .map(|name| profiles_dir().join(format!("{name}.yaml")))
        .collect();
    files.push(profiles_dir().join("examples/tracker.yaml"));
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        if let Err(why) = json_schema::check(&schema, &schema, &yaml(&text), "$") {
            panic!("the schema rejects {}: {why}", path.display());
        }
    }
}

#[test]
fn the_schema_rejects_shapes_the_parser_rejects() {
    let schema = profile_schema();
    let base = builtin_file("stripe").unwrap();
    for (from, to) in [
        ("name: stripe\n", "name: stripe\nbogus: 1\n"),
        ("auth: bearer", "auth: basic"),
        ("  encoding: form", "  encoding: xml"),
        ("  args: flatten", "  args: spread"),
        ("  default_limit: 10", "  default_limit: 500"),
        ("  created_status: 200", "  created_status: 404"),
        ("    not_found:", "    not_a_kind:"),
        ("  default_mode: stripe", "  default_mode: maybe"),
        ("  default_retention: 24h", "  default_retention: 24"),
        ("  retry: [key_in_flight]", "  retry: [soon]"),
        ("  scheme: stripe", "  scheme: hmac"),
        (
            "    offers: {retrieve: true, list: true, search: false}",
            "    offers: {retrieve: true, lists: true}",
        ),
    ] {
        let text = base.replace(from, to);
        assert_ne!(text, base, "{from:?} not in the stripe file");
        assert!(
            parse_profile(&text, Path::new("x.yaml")).is_err(),
            "the parser accepts {to:?}"
        );
        assert!(
            json_schema::check(&schema, &schema, &yaml(&text), "$").is_err(),
            "the schema accepts {to:?}"
        );
    }
}

/// ARCHITECTURE.md: no fault rule, invariant, expectation or report knows
/// which provider profile served a request. The checks and the report
/// writers name no profile type at all.
#[test]
fn no_check_or_report_writer_knows_the_profile() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace");
    let mut offenders = Vec::new();
    for dir in ["harness/src/check", "reports/src"] {
        let mut stack = vec![root.join(dir)];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                for entry in std::fs::read_dir(&path).expect("a readable folder") {
                    stack.push(entry.expect("an entry").path());
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a readable file");
                if text.contains("Profile") || text.contains("profile::") {
                    offenders.push(path.display().to_string());
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these know the profile: {offenders:?}"
    );
}
