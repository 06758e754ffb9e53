//! Every format, for every fixture run, as insta snapshots. The fixtures use
//! fixed times, ids, seeds and versions, so nothing needs redacting; a change in
//! any writer shows up here as a reviewable diff.

use crate::common::fixtures;
use lostreply_reports::model::Report;
use lostreply_reports::{write, write_progress_line, Format, TerminalStyle};

fn render(format: Format, report: &Report) -> String {
    let mut out = Vec::new();
    write(format, &mut out, report).unwrap();
    String::from_utf8(out).unwrap()
}

fn snapshot_every_format(run: &str, report: &Report) {
    for format in Format::ALL {
        insta::assert_snapshot!(
            format!("{run}.{}", format.extension()),
            render(format, report)
        );
    }
}

#[test]
fn passing_run_in_every_format() {
    snapshot_every_format("passing", &fixtures::passing_run());
}

#[test]
fn violations_run_in_every_format() {
    snapshot_every_format("violations", &fixtures::violations_run());
}

#[test]
fn adapter_error_run_in_every_format() {
    snapshot_every_format("adapter_error", &fixtures::adapter_error_run());
}

#[test]
fn progress_lines_plain_and_coloured() {
    for color in [false, true] {
        let mut out = Vec::new();
        for (_, report) in fixtures::all_runs() {
            for scenario in &report.scenarios {
                write_progress_line(&mut out, scenario, TerminalStyle { color }).unwrap();
            }
        }
        let name = if color {
            "progress_coloured"
        } else {
            "progress_plain"
        };
        insta::assert_snapshot!(name, String::from_utf8(out).unwrap());
    }
}

#[test]
fn coloured_summary() {
    let mut out = Vec::new();
    lostreply_reports::write_summary(
        &mut out,
        &fixtures::violations_run(),
        TerminalStyle { color: true },
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("\u{1b}[31mviolation\u{1b}[0m"), "{out}");
    // Colours only decorate: stripped, the text is the plain summary.
    let stripped = strip_ansi(&out);
    assert_eq!(
        stripped,
        render(Format::Terminal, &fixtures::violations_run())
    );
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
