//! Profile files that are wrong: each problem is reported at its exact
//! `file:line:column` with a message that says what to do, several in one
//! pass, and no input makes the parser panic.

use std::path::Path;

use lostreply_harness::profile_file::{
    parse_profile, read_profile_file, ProfileFileError, MAX_PROFILE_BYTES, MAX_RESOURCES,
    MAX_TEMPLATE_DEPTH,
};

/// A valid profile to break one line at a time. Line numbers matter: the
/// tests replace text and expect diagnostics at known places.
const BASE: &str = "\
version: 1
name: tracker
resources:
  - name: issues
    path: /api/v2/issues
    id_prefix: ISS-
auth: {header: x-api-key}
body: {encoding: json, client_reference: external_id, metadata: labels}
errors:
  envelope: {errors: [{code: \"{type}\", detail: \"{message}\"}]}
  kinds:
    not_found: {type: not_found}
  fallback: {type: invalid_request}
pages:
  list_envelope: {issues: \"{data}\"}
  default_limit: 25
keys: {replay_header: null, default_mode: none, default_retention: 24h}
webhooks: {event_type: \"{object}.{event}\"}
";

/// BASE with `from` replaced by `to` (which must be in it).
fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} is not in BASE");
    BASE.replacen(from, to, 1)
}

/// The first lines (`file:line:column: message`) of every diagnostic.
fn errors(text: &str) -> Vec<String> {
    match parse_profile(text, Path::new("case.yaml")) {
        Ok(profile) => panic!("expected an error, parsed {profile:?}"),
        Err(err) => {
            assert!(matches!(err, ProfileFileError::Invalid { .. }), "{err:?}");
            err.diagnostics()
                .iter()
                .map(|d| d.to_string().lines().next().unwrap_or("").to_owned())
                .collect()
        }
    }
}

/// Exactly one problem, at `case.yaml:{at}`, whose message holds `needle`.
#[track_caller]
fn one_error(text: &str, at: &str, needle: &str) {
    let found = errors(text);
    assert_eq!(found.len(), 1, "expected one diagnostic, got {found:#?}");
    let prefix = format!("case.yaml:{at}: ");
    assert!(
        found[0].starts_with(&prefix),
        "expected {prefix:?}, got {:?}",
        found[0]
    );
    assert!(found[0].contains(needle), "{:?} lacks {needle:?}", found[0]);
}

#[test]
fn base_is_valid() {
    parse_profile(BASE, Path::new("case.yaml")).unwrap();
}

#[test]
fn display_is_path_line_column_message_then_source_and_caret() {
    let err = parse_profile(
        &with("name: tracker\n", "name: tracker\nbogus: 1\n"),
        Path::new("profiles/t.yaml"),
    )
    .unwrap_err();
    let text = err.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("profiles/t.yaml:3:1: unknown field `bogus`"),
        "{text}"
    );
    assert_eq!(lines[1], "3 | bogus: 1");
    assert_eq!(lines[2], "  | ^");
}

#[test]
fn unknown_key_at_the_top() {
    one_error(
        &with("name: tracker\n", "name: tracker\ncolour: blue\n"),
        "3:1",
        "unknown field `colour`, expected one of version, name, routes, resources",
    );
}

#[test]
fn unknown_key_in_a_resource() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n    colour: blue\n",
        ),
        "7:5",
        "unknown field `colour`",
    );
}

#[test]
fn unknown_key_in_a_shaped_section() {
    one_error(
        &with("  default_limit: 25", "  default_limit: 25\n  page_size: 5"),
        "17:3",
        "unknown field `page_size`",
    );
}

#[test]
fn bad_header_name() {
    one_error(
        &with("auth: {header: x-api-key}", "auth: {header: \"x api key\"}"),
        "7:16",
        "`x api key` is not an HTTP header name",
    );
}

#[test]
fn a_header_the_exchange_owns() {
    one_error(
        &with("keys: {", "keys: {header: Content-Length, "),
        "17:16",
        "is a header the HTTP exchange itself owns",
    );
}

#[test]
fn the_key_header_is_not_the_credential_header() {
    one_error(
        &with("keys: {", "keys: {header: X-Api-Key, "),
        "17:16",
        "keys.header `x-api-key` is also where the credential is",
    );
}

#[test]
fn unknown_auth() {
    one_error(
        &with("auth: {header: x-api-key}", "auth: basic"),
        "7:7",
        "unknown variant `basic`, expected one of bearer, header, header_or_bearer",
    );
}

#[test]
fn duplicate_resource() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n  - name: issues\n    path: /api/v2/tickets\n",
        ),
        "7:11",
        "resource `issues` is declared twice (first at line 4)",
    );
}

#[test]
fn invalid_resource_name() {
    one_error(
        &with("  - name: issues", "  - name: Issues"),
        "4:11",
        "resource name `Issues` is not valid",
    );
}

#[test]
fn a_path_that_is_another_resources_path() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n  - name: tickets\n    path: /api/v2/issues\n",
        ),
        "8:11",
        "`/api/v2/issues` is already resource `issues`'s path (line 5)",
    );
}

#[test]
fn a_search_path_that_is_another_resources_path() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n  - name: tickets\n    path: /api/v2/tickets\n    \
             search_path: /api/v2/issues\n",
        ),
        "9:18",
        "`/api/v2/issues` is already resource `issues`'s path (line 5)",
    );
}

#[test]
fn a_path_that_reads_as_an_id_of_another_resource() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n  - name: labels\n    path: /api/v2/issues/labels\n",
        ),
        "8:11",
        "would read as an id of resource `issues`",
    );
}

#[test]
fn malformed_paths() {
    for (path, needle) in [
        ("api/v2/issues", "must start with `/`"),
        ("/api/v2/issues/", "ends with `/`"),
        ("/api/v2/issues?x=1", "has a query"),
        ("/api/v2/issues/{id}", "holds a placeholder"),
        ("/api//issues", "empty, `.` or `..` segment"),
        ("/api/v2/is sues", "cannot hold unescaped"),
        ("/mcp/issues", "the simulator's own"),
        ("/_lostreply", "the simulator's own"),
    ] {
        let text = with("path: /api/v2/issues", &format!("path: \"{path}\""));
        one_error(&text, "5:11", needle);
    }
}

#[test]
fn bad_error_kind_names_the_valid_ones() {
    one_error(
        &with("    not_found:", "    missing:"),
        "12:5",
        "unknown error kind `missing`: one of unauthorized, forbidden, not_found, \
         method_not_allowed, invalid_request",
    );
}

#[test]
fn bad_retry_hint_kinds() {
    let text = with(
        "keys: {",
        "retry_hints: {header: x-retry, retry: [server_error], no_retry: [server_error, soon]}\nkeys: {",
    );
    let found = errors(&text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("case.yaml:17:66: `server_error` is listed under both"));
    assert!(found[1].starts_with("case.yaml:17:80: unknown error kind `soon`"));
}

#[test]
fn bad_duration() {
    one_error(
        &with("default_retention: 24h", "default_retention: 24 hours ago"),
        "17:68",
        "bad duration `24 hours ago` for default_retention",
    );
    one_error(
        &with("default_retention: 24h", "default_retention: 0s"),
        "17:68",
        "default_retention must be between 1ms and 3650days, not 0s",
    );
}

#[test]
fn bad_placeholder_in_event_type() {
    one_error(
        &with("{object}.{event}", "{object}.{kind}"),
        "18:24",
        "unknown placeholder `{kind}` in event_type: it knows {resource}, {object}, {event}",
    );
    one_error(
        &with("{object}.{event}", "{object}.{event"),
        "18:24",
        "has a brace outside a placeholder",
    );
}

#[test]
fn bad_placeholder_in_an_envelope() {
    one_error(
        &with("detail: \"{message}\"", "detail: \"{mesage}\""),
        "10:48",
        "unknown placeholder `{mesage}` in errors.envelope: it knows {type}, {code}, {message}, {status}",
    );
}

#[test]
fn wrong_type() {
    one_error(
        &with("default_limit: 25", "default_limit: lots"),
        "16:18",
        "expected a whole number",
    );
    one_error(
        &with(
            "  list_envelope: {issues: \"{data}\"}",
            "  list_envelope: [\"{data}\"]",
        ),
        "15:18",
        "pages.list_envelope is a mapping",
    );
    one_error(
        &with("body: {encoding: json,", "body: {encoding: xml,"),
        "8:18",
        "unknown variant `xml`, expected one of json, form",
    );
    one_error(
        &with("errors:\n", "objects: shaped\nerrors:\n"),
        "9:10",
        "objects: expected `generic` or a mapping, not `shaped`",
    );
}

#[test]
fn a_page_without_its_objects() {
    let found = errors(&with(
        "  list_envelope: {issues: \"{data}\"}",
        "  list_envelope: {issues: \"{items}\"}",
    ));
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].starts_with("case.yaml:15:18: pages.list_envelope has no `\"{data}\"` leaf"));
    assert!(found[1].starts_with("case.yaml:15:27: unknown placeholder `{items}`"));
}

#[test]
fn out_of_range_numbers() {
    one_error(
        &with("default_limit: 25", "default_limit: 0"),
        "16:18",
        "default_limit must be from 1 to 100",
    );
    one_error(
        &with("errors:\n", "objects: {created_status: 404}\nerrors:\n"),
        "9:27",
        "created_status must be a success, 200 to 299, not 404",
    );
}

#[test]
fn version_and_name() {
    one_error(
        &with("version: 1", "version: 2"),
        "1:10",
        "unsupported format version 2",
    );
    one_error(
        &with("name: tracker", "name: Tracker!"),
        "2:7",
        "profile name `Tracker!` is not valid",
    );
}

#[test]
fn routes_and_resources() {
    one_error(
        &with("resources:", "routes: generic\nresources:"),
        "3:9",
        "`routes: generic` and `resources:` exclude each other",
    );
    let neither = "version: 1\nname: bare\nauth: bearer\n";
    one_error(neither, "2:7", "a profile needs `resources:`");
    one_error(
        "version: 1\nname: x\nroutes: custom\n",
        "3:9",
        "unknown variant `custom`, expected one of generic",
    );
}

#[test]
fn missing_required_key() {
    one_error(
        &with("  fallback: {type: invalid_request}\n", ""),
        "11:3",
        "missing field `fallback`",
    );
}

#[test]
fn stripe_query_needs_a_search_path() {
    one_error(
        &with(
            "  default_limit: 25",
            "  default_limit: 25\n  search: stripe_query",
        ),
        "4:11",
        "resource `issues` offers search, and stripe_query searches go to a resource's search_path",
    );
}

#[test]
fn status_words_differ_and_fields_do_not_collide() {
    one_error(
        &with(
            "    id_prefix: ISS-\n",
            "    id_prefix: ISS-\n    status: {processing: open, succeeded: open, failed: no}\n",
        ),
        "7:43",
        "the succeeded word `open` is also the processing word (line 7)",
    );
    one_error(
        &with(
            "errors:\n",
            "objects: {id_field: key, type_field: key}\nerrors:\n",
        ),
        "9:38",
        "the type field `key` is also the id field (line 9)",
    );
    one_error(
        &with("metadata: labels}", "metadata: external_id}"),
        "8:65",
        "the metadata field `external_id` is also the reference field",
    );
}

#[test]
fn replay_header_is_one_header() {
    one_error(
        &with("replay_header: null", "replay_header: {a: \"1\", b: \"2\"}"),
        "17:23",
        "replay_header is one header and its value",
    );
}

#[test]
fn templates_are_json_and_bounded() {
    one_error(
        &with("  envelope: {errors:", "  envelope: {n: .nan, errors:"),
        "10:17",
        ".nan",
    );
    let deep = format!(
        "{}1{}",
        "{a: ".repeat(MAX_TEMPLATE_DEPTH + 1),
        "}".repeat(MAX_TEMPLATE_DEPTH + 1)
    );
    let text = with(
        "    id_prefix: ISS-\n",
        &format!("    id_prefix: ISS-\n    constants: {deep}\n"),
    );
    let found = errors(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("nests deeper than 16 levels"),
        "{found:#?}"
    );
    assert!(found[0].starts_with("case.yaml:7:"), "{found:#?}");
}

#[test]
fn too_many_resources() {
    let mut text = String::from("version: 1\nname: many\nresources:\n");
    for index in 0..=MAX_RESOURCES {
        text.push_str(&format!("  - {{name: r{index}, path: /r{index}}}\n"));
    }
    one_error(&text, "4:3", "65 resources; a profile declares at most 64");
}

#[test]
fn several_problems_in_one_pass_in_file_order() {
    let text = with("version: 1", "version: 3")
        .replace("  - name: issues", "  - name: Issues")
        .replace("{object}.{event}", "{what}");
    let found = errors(&text);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("case.yaml:1:10: "));
    assert!(found[1].starts_with("case.yaml:4:11: "));
    assert!(found[2].starts_with("case.yaml:18:24: "));
}

#[test]
fn empty_huge_unreadable_and_not_utf8() {
    one_error("# nothing\n\n", "1:1", "the file is empty");
    let huge = format!("{BASE}#{}\n", "x".repeat(MAX_PROFILE_BYTES as usize));
    let err = parse_profile(&huge, Path::new("case.yaml")).unwrap_err();
    assert!(
        err.to_string().starts_with("case.yaml: the text is"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.yaml");
    assert!(matches!(
        read_profile_file(&missing),
        Err(ProfileFileError::Read { .. })
    ));
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, b"version: 1\nname: \xff\n").unwrap();
    let err = read_profile_file(&bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("bad.yaml:2:7: the file is not UTF-8"),
        "{err}"
    );
}

#[test]
fn junk_never_panics() {
    for text in [
        "[",
        "{",
        "- - -",
        "version: [1]",
        "version: 1\nname: x\nresources: {}",
        "version: 1\nname: x\nresources: [1, 2]",
        "version: 1\nname: x\nroutes: generic\nerrors: {envelope: 1, fallback: {type: x}}",
        "version: 1\nname: x\nroutes: generic\nkeys: {replay_header: {}}",
        "version: 1\nname: x\nroutes: generic\nwebhooks: {envelope: [1]}",
        "&a [*a]",
        "\u{0}\u{1}",
    ] {
        let _ = parse_profile(text, Path::new("junk.yaml"));
    }
}
