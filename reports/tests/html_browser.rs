//! The HTML report opened in a real browser (headless Chromium): the page
//! renders, its script runs to the end without a console error, every scenario
//! has its timeline, violations are marked, and hostile text stays text.
//!
//! Without Chromium the test says so and passes, unless
//! `LOSTREPLY_REQUIRE_BROWSER=1` (CI sets it), which makes a missing browser a failure.
#![allow(clippy::unwrap_used)]

mod common;

use std::env;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::fixtures;
use lostreply_reports::model::Report;
use lostreply_reports::write_html;

/// Chromium normally dumps a small page in a second or two; this bound only
/// stops a hung browser from hanging the test suite.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = env::var_os("LOSTREPLY_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    if Path::new("/usr/bin/chromium").is_file() {
        return Some(PathBuf::from("/usr/bin/chromium"));
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The browser, or `None` when the test should be skipped.
fn chromium_or_skip() -> Option<PathBuf> {
    let found = find_chromium();
    if found.is_none() {
        let required = env::var("LOSTREPLY_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "LOSTREPLY_REQUIRE_BROWSER=1 but no Chromium found (looked at LOSTREPLY_CHROMIUM, /usr/bin/chromium, chromium and chromium-browser on PATH)"
        );
        println!(
            "skipped: no Chromium found (install Debian's chromium; LOSTREPLY_REQUIRE_BROWSER=1 makes this a failure)"
        );
    }
    found
}

/// What the browser made of a page.
struct Rendered {
    dom: String,
    stderr: String,
}

/// Writes the report's HTML to a fresh directory and dumps the DOM Chromium
/// builds from it, after its scripts ran.
fn render_in_browser(chromium: &Path, report: &Report) -> Rendered {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let mut html = Vec::new();
    write_html(&mut html, report).unwrap();
    std::fs::write(&page, html).unwrap();
    let profile = dir.path().join("profile");

    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", chromium.display()));

    // Each pipe is read to its end on its own thread; the ends arrive on one
    // channel, so the wait below is on events, bounded by the deadline.
    let (done_tx, done_rx) = mpsc::channel();
    let mut pipes: Vec<Box<dyn Read + Send>> = vec![
        Box::new(child.stdout.take().unwrap()),
        Box::new(child.stderr.take().unwrap()),
    ];
    for (which, mut pipe) in pipes.drain(..).enumerate() {
        let done_tx = done_tx.clone();
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let read = pipe.read_to_end(&mut bytes);
            let _ = done_tx.send((which, read.map(|_| bytes)));
        });
    }
    drop(done_tx);

    let deadline = Instant::now() + BROWSER_TIMEOUT;
    let mut outputs: [Option<Vec<u8>>; 2] = [None, None];
    for _ in 0..2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(left) {
            Ok((which, bytes)) => outputs[which] = Some(bytes.unwrap()),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("Chromium did not finish within {BROWSER_TIMEOUT:?}; killed it");
            }
        }
    }
    let status = child.wait().unwrap();
    let [dom, stderr] =
        outputs.map(|o| String::from_utf8_lossy(&o.unwrap_or_default()).into_owned());
    assert!(
        status.success(),
        "Chromium exited with {status}\nstderr:\n{stderr}"
    );
    Rendered { dom, stderr }
}

/// Browser log lines that mean the page misbehaved: console errors, uncaught
/// exceptions, and Content-Security-Policy refusals.
fn console_problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Content Security Policy")
        })
        .collect()
}

/// The serialized DOM with every attribute value removed. A serialized DOM
/// escapes `<` in text, so any `<` left here opens a real element.
fn without_attribute_values(dom: &str) -> String {
    let mut out = String::with_capacity(dom.len());
    let mut in_tag = false;
    let mut in_value = false;
    let mut previous = '\0';
    for c in dom.chars() {
        if in_value {
            if c == '"' {
                in_value = false;
                out.push(c);
            }
        } else {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                '"' if in_tag && previous == '=' => in_value = true,
                _ => {}
            }
            out.push(c);
        }
        previous = c;
    }
    out
}

fn body_attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let start = body.find(&format!("{name}=\""))? + name.len() + 2;
    let len = body[start..].find('"')?;
    Some(&body[start..start + len])
}

fn check_rendered(rendered: &Rendered, report: &Report) {
    let dom = &rendered.dom;
    let problems = console_problems(&rendered.stderr);
    assert!(
        problems.is_empty(),
        "browser console reported:\n{}",
        problems.join("\n")
    );
    assert_eq!(
        body_attr(dom, "data-rendered"),
        Some("yes"),
        "the page's script did not run to the end\n{}",
        rendered.stderr
    );
    let scenarios = report.scenarios.len().to_string();
    assert_eq!(body_attr(dom, "data-timelines"), Some(scenarios.as_str()));
    let evidence_items: usize = report
        .scenarios
        .iter()
        .flat_map(|s| &s.violations)
        .map(|v| v.evidence.len())
        .sum();
    let linked: usize = body_attr(dom, "data-linked-evidence")
        .unwrap()
        .parse()
        .unwrap();
    assert!(linked > 0 || evidence_items == 0);
    assert!(linked <= evidence_items);

    let structure = without_attribute_values(dom);
    assert!(
        !structure.contains("<img"),
        "an injected element reached the DOM"
    );
    assert_eq!(structure.matches("<script").count(), 1);
    assert_eq!(structure.matches("<svg").count(), report.scenarios.len());
}

#[test]
fn violations_render_with_timelines_and_markers() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let report = fixtures::violations_run();
    let rendered = render_in_browser(&chromium, &report);
    check_rendered(&rendered, &report);
    let dom = &rendered.dom;

    for (position, scenario) in report.scenarios.iter().enumerate() {
        let svg = format!(
            "<svg class=\"timeline\" id=\"scenario-{position}-timeline\" data-scenario=\"{}\"",
            scenario.id
        );
        assert!(dom.contains(&svg), "no timeline for {}", scenario.id);
    }
    let violations: usize = report.scenarios.iter().map(|s| s.violations.len()).sum();
    assert_eq!(dom.matches("<li class=\"violation\"").count(), violations);
    // Every evidence item points at something drawn in this fixture.
    let evidence_items: usize = report
        .scenarios
        .iter()
        .flat_map(|s| &s.violations)
        .map(|v| v.evidence.len())
        .sum();
    assert_eq!(
        body_attr(dom, "data-linked-evidence"),
        Some(evidence_items.to_string().as_str())
    );
    // The evidence is drawn red on the timeline: the two requests and effects of
    // the case 2 duplicate, for a start.
    for id in [
        "scenario-0-req-1",
        "scenario-0-req-2",
        "scenario-0-effect-0",
        "scenario-0-effect-1",
    ] {
        let element = format!("id=\"{id}\" data-violations=");
        assert!(dom.contains(&element), "{id} is not marked as evidence");
    }
    for lane in [
        "steps", "clock", "calls", "requests", "commits", "webhooks", "outcomes",
    ] {
        assert!(
            dom.contains(&format!("data-lane=\"{lane}\"")),
            "lane {lane} missing"
        );
    }
    assert!(dom.contains("class=\"item request fault lost evidence\""));
    assert!(dom.contains("class=\"item webhook forged evidence\""));
}

#[test]
fn passing_and_error_runs_render() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    for report in [fixtures::passing_run(), fixtures::adapter_error_run()] {
        let rendered = render_in_browser(&chromium, &report);
        check_rendered(&rendered, &report);
        assert!(!rendered.dom.contains("<li class=\"violation\""));
    }
}

#[test]
fn hostile_text_stays_text_in_the_browser() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let report = fixtures::hostile_run();
    let rendered = render_in_browser(&chromium, &report);
    check_rendered(&rendered, &report);
    assert!(rendered
        .dom
        .contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
}
