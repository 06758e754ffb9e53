//! `lostreply serve --max-objects N --hard-cap-objects M`: the store keeps at
//! most N objects (the oldest summarised out, creates going on), and only the
//! hard cap answers 507.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lostreply");

#[test]
fn serve_summarises_past_max_objects_and_refuses_only_past_the_hard_cap() {
    let mut child = Command::new(BIN)
        .args(["serve", "--max-objects", "3", "--hard-cap-objects", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let stdout = child.stdout.take().expect("stdout");
    let first = BufReader::new(stdout)
        .lines()
        .next()
        .expect("a first line")
        .expect("utf8");
    let banner: serde_json::Value = serde_json::from_str(&first).expect("the first line is JSON");
    let base_url = banner["base_url"].as_str().expect("base_url").to_owned();
    let control_url = banner["control_url"]
        .as_str()
        .expect("control_url")
        .to_owned();
    let a = banner["credentials"][0]
        .as_str()
        .expect("a credential")
        .to_owned();
    let b = banner["credentials"][1]
        .as_str()
        .expect("a second credential")
        .to_owned();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let statuses = rt.block_on(async {
        let client = reqwest::Client::new();
        let mut statuses = Vec::new();
        // A, A, A (the hard cap: 507), B, B (past --max-objects: A's oldest
        // goes), then A again (A holds one object now).
        for tenant in [&a, &a, &a, &b, &b, &a] {
            let created = client
                .post(format!("{base_url}/v1/tickets"))
                .bearer_auth(tenant)
                .json(&serde_json::json!({"title": "by hand"}))
                .send()
                .await
                .expect("create answers");
            statuses.push(created.status().as_u16());
        }
        let ledger: serde_json::Value = client
            .get(format!("{control_url}/ledger"))
            .send()
            .await
            .expect("ledger answers")
            .json()
            .await
            .expect("ledger JSON");
        (statuses, ledger)
    });
    let _ = child.kill();
    let _ = child.wait();
    let (statuses, ledger) = statuses;
    assert_eq!(statuses, [201, 201, 507, 201, 201, 201]);
    assert_eq!(ledger["data"].as_array().map(Vec::len), Some(3));
    assert_eq!(ledger["summarised"], 2);
    assert_eq!(ledger["summarised_summary"]["by_tenant"][&a], 2);
}
