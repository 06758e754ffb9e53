//! Text from the adapter or the scenario is untrusted. With a hostile string in
//! every field, no writer lets markup or terminal control codes through.

use crate::common::fixtures::{self, HOSTILE};
use lostreply_reports::{write, Format};

fn render(format: Format) -> String {
    let mut out = Vec::new();
    write(format, &mut out, &fixtures::hostile_run()).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn html_escapes_everything() {
    let html = render(Format::Html);
    assert!(!html.contains("<img"), "raw <img in the page");
    assert!(
        !html.contains("onerror=alert(1)>"),
        "an unescaped attribute-ending >"
    );
    // Exactly our own script element, opened and closed once.
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
    assert!(html.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    // No quote from the data can end an attribute early.
    assert!(!html.contains(&format!("data-scenario=\"lost{HOSTILE}")));
    assert!(!html.contains('\u{1b}'));
}

#[test]
fn html_fetches_nothing() {
    let html = render(Format::Html);
    for needle in ["src=\"", "href=\"http", "@import", "url("] {
        assert!(!html.contains(needle), "found {needle}");
    }
    // The one URL is the SVG namespace, which is never fetched.
    assert_eq!(
        html.matches("http://").count(),
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
    assert!(!html.contains("https://"));
}

#[test]
fn markdown_has_no_raw_html_or_broken_tables() {
    let md = render(Format::Markdown);
    // Inside code, `<` is literal; everywhere else it must be escaped.
    for line in outside_code(&md) {
        let raw_angle = line
            .match_indices('<')
            .any(|(i, _)| !line[..i].ends_with('\\'));
        assert!(!raw_angle, "raw HTML in markdown: {line}");
    }
    // Every row of a table has its header's columns: as many unescaped
    // pipes (a table is a run of lines that start with one).
    let mut header_pipes = None;
    for line in md.lines() {
        if !line.starts_with('|') {
            header_pipes = None;
            continue;
        }
        let unescaped = line
            .match_indices('|')
            .filter(|(i, _)| !line[..*i].ends_with('\\'))
            .count();
        let expected = *header_pipes.get_or_insert(unescaped);
        assert_eq!(unescaped, expected, "table row broken: {line}");
    }
}

#[test]
fn openmetrics_label_values_stay_inside_their_quotes() {
    let om = render(Format::OpenMetrics);
    // Each sample is one line: a hostile newline is escaped, and every
    // label value's quotes pair up once escaped quotes are set aside.
    for line in om.lines().filter(|l| !l.starts_with('#')) {
        let unescaped = line.replace("\\\\", "").replace("\\\"", "");
        assert_eq!(unescaped.matches('"').count() % 2, 0, "{line}");
        assert!(line.rsplit_once(' ').is_some(), "{line}");
    }
    assert!(om.ends_with("# EOF\n"));
    // The values themselves, escaped as OpenMetrics says and no more.
    assert!(om.contains(&format!("tool=\"{HOSTILE}\"")), "{om}");
    assert!(
        om.contains(&format!("provider=\"{HOSTILE}\\\"\\\\\\n\"")),
        "{om}"
    );
}

#[test]
fn terminal_shows_control_codes_instead_of_obeying_them() {
    let text = render(Format::Terminal);
    assert!(!text.contains('\u{1b}'), "a raw ESC reached the terminal");
    assert!(text.contains("\\u{1b}[31mred"));
}

/// The markdown's lines with fenced code blocks dropped and code spans removed.
fn outside_code(md: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let ticks: String = line.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(open) if line.trim_end() == open => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => lines.push(strip_code_spans(line)),
        }
    }
    lines
}

fn strip_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        // An escaped backtick is text, not a fence.
        if rest[..start].ends_with('\\') {
            out.push_str(&rest[..=start]);
            rest = &rest[start + 1..];
            continue;
        }
        out.push_str(&rest[..start]);
        let run = rest[start..].chars().take_while(|&c| c == '`').count();
        let fence = "`".repeat(run);
        let after = &rest[start + run..];
        // The closing fence is a run of exactly the same length.
        let mut search = 0;
        let close = loop {
            match after[search..].find(&fence) {
                Some(i) => {
                    let at = search + i;
                    let len = after[at..].chars().take_while(|&c| c == '`').count();
                    if len == run {
                        break Some(at);
                    }
                    search = at + len;
                }
                None => break None,
            }
        };
        match close {
            Some(at) => rest = &after[at + run..],
            None => {
                out.push_str(&fence);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
