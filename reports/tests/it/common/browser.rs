//! Headless Chromium for the tests of HTML pages: the browser (found by
//! `chromium.rs`), the DOM it builds from a page after its scripts ran, and
//! that DOM and the browser's log read back.
//!
//! Shared without copying: `reports/tests/it/html_browser.rs` reaches it as
//! `common::browser`, `certify/tests/it/html_browser.rs` by `#[path]`. So it
//! names no crate of the workspace, only std and `tempfile`.

#[path = "chromium.rs"]
mod chromium;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Chromium normally dumps a small page in a second or two; this bound only
/// stops a hung browser from hanging the test suite.
pub const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

/// The browser. A test that calls this is ignored when the build found no
/// browser (cfg `lostreply_no_browser`), so a browser missing here went away
/// after the build, or the test was run with `--ignored`: either way it fails.
pub fn chromium() -> PathBuf {
    chromium::find_chromium().unwrap_or_else(|| {
        panic!(
            "this test needs headless Chromium and found none (looked at LOSTREPLY_CHROMIUM, /usr/bin/chromium, chromium and chromium-browser on PATH): install Debian's chromium, or set LOSTREPLY_CHROMIUM"
        )
    })
}

/// What the browser made of a page.
pub struct Rendered {
    pub dom: String,
    pub stderr: String,
}

/// Writes `html` to a fresh directory and dumps the DOM Chromium builds from
/// it, after its scripts ran.
pub fn render_html_in_browser(chromium: &Path, html: &[u8]) -> Rendered {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
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
pub fn console_problems(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Content Security Policy")
        })
        .collect()
}

/// The serialized DOM with every attribute value removed. A serialized DOM
/// escapes `<` in text, so any `<` left here opens a real element.
pub fn without_attribute_values(dom: &str) -> String {
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

/// An attribute of the `<body>` element, as the script left it.
pub fn body_attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let body = &dom[dom.find("<body")?..];
    let body = &body[..body.find('>')?];
    let start = body.find(&format!("{name}=\""))? + name.len() + 2;
    let len = body[start..].find('"')?;
    Some(&body[start..start + len])
}

/// What every page must show after loading: nothing on the console (no CSP
/// refusal, no script error), and its script's mark that it ran to the end.
#[track_caller]
pub fn assert_rendered_cleanly(rendered: &Rendered) {
    let problems = console_problems(&rendered.stderr);
    assert!(
        problems.is_empty(),
        "browser console reported:\n{}",
        problems.join("\n")
    );
    assert_eq!(
        body_attr(&rendered.dom, "data-rendered"),
        Some("yes"),
        "the page's script did not run to the end\n{}",
        rendered.stderr
    );
}
