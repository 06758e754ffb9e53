//! The bench's flags: a value it cannot use is refused before any part runs,
//! with a message naming what it takes and exit status 2.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lostreply-bench"))
        .args(args)
        .output()
        .unwrap()
}

/// Refused with status 2, its message holding every one of `words`.
fn assert_refused(args: &[&str], words: &[&str]) {
    let output = bench(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?}: nothing ran");
    for word in words {
        assert!(stderr.contains(word), "{args:?}: {word:?} in {stderr}");
    }
}

#[test]
fn an_unknown_part_is_refused() {
    assert_refused(
        &["--only", "explore,nope"],
        &["--only nope", "unknown part"],
    );
}

#[test]
fn an_unknown_explore_profile_is_refused() {
    assert_refused(
        &[
            "--explore-profile",
            "paypal",
            "--explore-adapter",
            "python3 a.py",
        ],
        &["paypal", "stripe, openai, anthropic"],
    );
}

#[test]
fn an_explore_profile_needs_an_adapter_and_an_adapter_a_profile() {
    assert_refused(
        &["--only", "explore", "--explore-profile", "stripe"],
        &["--explore-adapter"],
    );
    assert_refused(
        &["--only", "explore", "--explore-adapter", "python3 a.py"],
        &["--explore-profile"],
    );
}

#[test]
fn an_explore_adapter_that_is_not_a_command_is_refused() {
    assert_refused(
        &[
            "--explore-profile",
            "stripe",
            "--explore-adapter",
            "python3 'a.py",
        ],
        &["unbalanced quotes"],
    );
    assert_refused(
        &["--explore-profile", "stripe", "--explore-adapter", ""],
        &["empty"],
    );
}
