//! The one place the selection is made: tags, and the opt-in `mcp` tag.

use std::path::{Path, PathBuf};

use lostreply_harness::scenario::select::{self, OPT_IN_TAGS};

fn scenario(id: &str, tags: &str, mcp: bool) -> String {
    let (section, op) = if mcp {
        (
            "mcp:\n  client: {profile: cline, scale: 0.01}\n",
            "tool: create_ticket",
        )
    } else {
        ("", "resource: tickets")
    };
    format!(
        "version: 1\nid: {id}\ntitle: t\ntags: [{tags}]\n{section}operations: [{{id: op-1, {op}}}]\nsteps: [{{execute: op-1}}]\n"
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn ids(scenarios: &[lostreply_harness::scenario::model::Scenario]) -> Vec<&str> {
    scenarios.iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn mcp_is_opt_in() {
    assert_eq!(OPT_IN_TAGS, ["mcp", "stripe", "openai", "anthropic"]);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        &scenario("http-a", "lost-response", false),
    );
    let b = write(
        dir.path(),
        "b.yaml",
        &scenario("mcp-b", "mcp, lost-response", true),
    );
    let paths = vec![dir.path().to_path_buf()];

    // Default: the MCP scenario is left out, and the note says how to take it.
    let got = select::take(&paths, &[]).unwrap();
    assert_eq!(ids(&got.scenarios), ["http-a"]);
    assert_eq!(got.left_out.len(), 1);
    assert_eq!(got.left_out[0].1, ["mcp"]);
    let note = got.left_out_note().unwrap();
    assert!(note.contains("1 scenario tagged mcp left out"), "{note}");
    assert!(note.contains("--tag mcp takes them"), "{note}");

    // Another tag the MCP scenario also has does not take it: the opt-in tag must be named.
    let got = select::take(&paths, &["lost-response".to_owned()]).unwrap();
    assert_eq!(ids(&got.scenarios), ["http-a"]);
    let got = select::take(&paths, &["mcp".to_owned()]).unwrap();
    assert_eq!(ids(&got.scenarios), ["mcp-b"]);
    assert!(got.left_out.is_empty());
    let both = ["mcp".to_owned(), "lost-response".to_owned()];
    let got = select::take(&paths, &both).unwrap();
    assert_eq!(ids(&got.scenarios), ["http-a", "mcp-b"]);

    // A file named by itself is taken.
    let got = select::take(std::slice::from_ref(&b), &[]).unwrap();
    assert_eq!(ids(&got.scenarios), ["mcp-b"]);

    // Nothing selected: an error that names the flag, or the tags.
    let only = tempfile::tempdir().unwrap();
    write(only.path(), "b.yaml", &scenario("mcp-b", "mcp", true));
    let err = select::take(&[only.path().to_path_buf()], &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no scenario selected") && err.contains("--tag mcp"),
        "{err}"
    );
    let err = select::take(&paths, &["nope".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("no scenario has any of the tags"), "{err}");
}

#[test]
fn the_default_library_has_no_opt_in_scenario() {
    let library = select::default_library().unwrap();
    assert!(!library.is_empty());
    assert!(library.iter().all(select::in_default_selection));
}
