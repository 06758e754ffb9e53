//! The soak, briefly: ten seconds of its mixed faults against `lostreply
//! serve` (the copy built with this package), then every check it makes must
//! hold. A correctness check, not a timing: the memory rule needs the
//! journal full, which ten seconds do not reach, so it is left unjudged.

use std::path::PathBuf;
use std::time::Duration;

use lostreply_bench::soak::{self, CheckName, Webhooks};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_seconds_of_mixed_faults_keep_every_check() {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_lostreply-bench-serve"));
    let report = soak::run(&binary, Duration::from_secs(10), Webhooks::On)
        .await
        .unwrap();
    for check in &report.checks {
        let judged = check.name != CheckName::MemoryFlat;
        if judged {
            assert_eq!(check.passed, Some(true), "{check:?}\n{report:#?}");
        }
    }
    assert_eq!(report.checks.len(), 7);
    let t = &report.traffic;
    // The mix reached the faults: lost answers of each kind, and replays.
    for seen in [
        soak::traffic::Seen::Closed,
        soak::traffic::Seen::Reset,
        soak::traffic::Seen::CutBody,
    ] {
        assert!(
            t.by_seen.get(&seen).copied().unwrap_or(0) > 0,
            "{seen:?}: {t:?}"
        );
    }
    assert!(t.by_action[&soak::traffic::Action::Replay] > 0, "{t:?}");
    assert!(report.agreement.matched > 0);
    assert!(report.control.genuine > 0 && report.control.forged > 0);
    assert!(!report.samples.is_empty());
}
