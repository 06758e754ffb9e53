//! Shared by the writer tests: hand-built certifications (no endpoint, no
//! clock) and a helper that renders one in a format.

use lostreply_certify::report::{Certification, ProbeResult, SCHEMA_VERSION};
use lostreply_certify::verdict::{Evidence, Verdict};
use lostreply_certify::write::{write_terminal, Format};

/// Text that would run script, break an attribute or drive a terminal if any
/// writer forgot to escape it.
pub const HOSTILE: &str =
    "</script><img src=x onerror=alert(1)>\"'&<b onmouseover=\"alert(2)\">\u{1b}[31mred\u{0}\u{7}";

fn exchange(label: &str, request: &str, key: Option<&str>, outcome: &str, body: &str) -> Evidence {
    Evidence::Exchange {
        label: label.to_owned(),
        request: request.to_owned(),
        key: key.map(str::to_owned),
        outcome: outcome.to_owned(),
        body: body.to_owned(),
    }
}

fn count(marker: &str, found: usize, expected: usize) -> Evidence {
    Evidence::Count {
        marker: marker.to_owned(),
        method: "ground_truth".to_owned(),
        found,
        expected,
    }
}

fn probe(
    name: &str,
    title: &str,
    verdict: Verdict,
    summary: &str,
    evidence: Vec<Evidence>,
    duration_ms: u64,
) -> ProbeResult {
    ProbeResult {
        name: name.to_owned(),
        title: title.to_owned(),
        verdict,
        summary: summary.to_owned(),
        evidence,
        duration_ms,
    }
}

/// One probe of each verdict, shaped like a real run against a racy endpoint
/// that answers 422 where its contract declares 409.
pub fn every_verdict() -> Certification {
    let body = r#"{"id":"ch_1","amount":1000,"description":"lrm_baseline_5"}"#;
    let probes = vec![
        probe(
            "baseline",
            "a keyed create succeeds and the read-back sees exactly one effect",
            Verdict::Pass,
            "one effect, as declared",
            vec![
                exchange("create", "POST /v1/charges", Some("lrk_baseline_5"), "201 in 4 ms", body),
                count("lrm_baseline_5", 1, 1),
            ],
            12,
        ),
        probe(
            "key_reuse_other_args",
            "the same key with other arguments is refused with the declared status, no new effect",
            Verdict::Fail,
            "other arguments answered 422, declared [409]",
            vec![
                exchange("first", "POST /v1/charges", Some("lrk_other_5"), "201 in 3 ms", body),
                exchange(
                    "other arguments",
                    "POST /v1/charges",
                    Some("lrk_other_5"),
                    "422 in 2 ms",
                    r#"{"error":"key reused with other parameters"}"#,
                ),
                count("lrm_other_5", 1, 1),
            ],
            9,
        ),
        probe(
            "concurrent_duplicates",
            "identical keyed requests released together by a barrier leave one effect",
            Verdict::HardFail,
            "duplicate effect: 4 concurrent identical requests left 2 effects",
            vec![
                exchange("duplicate 1", "POST /v1/charges", Some("lrk_race_5"), "201 in 31 ms", body),
                exchange("duplicate 2", "POST /v1/charges", Some("lrk_race_5"), "201 in 30 ms", body),
                exchange("duplicate 3", "POST /v1/charges", Some("lrk_race_5"), "409 in 2 ms", ""),
                exchange("duplicate 4", "POST /v1/charges", Some("lrk_race_5"), "409 in 2 ms", ""),
                count("lrm_race_5", 2, 1),
                Evidence::Note {
                    text: "answers: 201 x2, 409 x2".to_owned(),
                },
            ],
            48,
        ),
        probe(
            "cross_tenant",
            "the same key from another tenant is separate work and leaks nothing of the first tenant's",
            Verdict::Skipped,
            "no second tenant in the contract (auth.second_tenant)",
            Vec::new(),
            0,
        ),
        probe(
            "retention",
            "a key still replays within the declared retention (sampled, or by the provider's clock)",
            Verdict::Error,
            "could not conclude: budget exhausted (400 requests)",
            vec![exchange(
                "replay after 10s",
                "POST /v1/charges",
                Some("lrk_keep_5"),
                "not sent: budget exhausted",
                "",
            )],
            10_004,
        ),
    ];
    Certification {
        schema_version: SCHEMA_VERSION,
        contract_name: "Example Payments sandbox".to_owned(),
        contract_source: "vendor.yaml".to_owned(),
        base_url: "http://127.0.0.1:7411".to_owned(),
        seed: 5,
        reproduce: "lostreply certify --contract vendor.yaml --seed 5".to_owned(),
        requests_sent: 400,
        budget: 400,
        duration_ms: 10_073,
        probes,
    }
}

/// [`every_verdict`] with [`HOSTILE`] in every string the contract or the
/// endpoint supplies: names, the endpoint, the command, every evidence field.
pub fn hostile() -> Certification {
    let h = |s: &str| format!("{s}{HOSTILE}");
    let mut c = every_verdict();
    c.contract_name = h("name");
    c.contract_source = h("source");
    c.base_url = h("http://127.0.0.1:7411/");
    c.reproduce = h("lostreply certify --contract ");
    for p in &mut c.probes {
        p.name = h(&p.name);
        p.title = h(&p.title);
        p.summary = h(&p.summary);
        for e in &mut p.evidence {
            match e {
                Evidence::Exchange {
                    label,
                    request,
                    key,
                    outcome,
                    body,
                } => {
                    for field in [label, request, outcome, body] {
                        *field = h(field);
                    }
                    *key = Some(h(key.as_deref().unwrap_or("")));
                }
                Evidence::Count { marker, method, .. } => {
                    *marker = h(marker);
                    *method = h(method);
                }
                Evidence::Note { text } => *text = h(text),
            }
        }
    }
    c
}

/// The terminal summary, then every file format, each with its file name.
pub fn render_all(c: &Certification) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut terminal = Vec::new();
    write_terminal(&mut terminal, c).unwrap();
    out.push(("certify.txt", String::from_utf8(terminal).unwrap()));
    for format in Format::ALL {
        out.push((format.file_name(), render(format, c)));
    }
    out
}

/// `c` in `format`.
pub fn render(format: Format, c: &Certification) -> String {
    let mut bytes = Vec::new();
    format.write(&mut bytes, c).unwrap();
    String::from_utf8(bytes).unwrap()
}
