//! The soak: `lostreply serve` under a long load of mixed faults (FIN, RST,
//! stalls, holds, 500 and 503, cut bodies, delays), replayed and reused
//! keys, a moving clock and webhook deliveries; then its records are read
//! and held against what the clients did.
//!
//! - [`traffic`]: the clients and their mix;
//! - [`control`]: the clock and the webhooks, as a harness moves and
//!   delivers them;
//! - [`records`]: the journal and the ledger, and their comparison.
//!
//! Checks, each a [`Check`]: the ledger and the journal agree; every request
//! sent is journaled and none is left in progress; no key has two effects and
//! no replay named another object; webhooks verify (and a forged one does
//! not); memory is flat after the warm-up ([`memory_rule`]); the server is
//! alive at the end, printed no panic and exits cleanly on SIGTERM.

pub mod control;
pub mod print;
pub mod records;
pub mod traffic;

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::client;
use crate::procfs;
use crate::serve_mem;
use crate::Error;

/// The plan (`lostreply serve --scenario`).
pub const SCENARIO: &str = include_str!("scenario.yaml");
/// Keep-alive client connections.
pub const CLIENTS: usize = 16;
/// `lostreply serve --max-objects`: small, so the store reaches its bound in
/// the first seconds and the soak measures it bounded, not growing.
pub const MAX_OBJECTS: u64 = 100_000;
/// Resident memory is read this often.
const SAMPLE_EVERY: Duration = Duration::from_secs(2);
/// Memory after the warm-up may exceed the warm-up's peak by this factor.
pub const FLAT_FACTOR: f64 = 1.1;
/// After the clients stop, the records are read again until nothing is in
/// progress (the plan's longest hold is its 1 s stall cap), for at most this
/// long: past it, the in-progress check fails and says how many are left.
const QUIESCE: Duration = Duration::from_secs(30);
/// How often the records are read while requests are still in progress.
const QUIESCE_POLL: Duration = Duration::from_millis(250);

/// Webhook deliveries during the soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Webhooks {
    /// Deliver a sample of events, signed by the simulator, verified by a receiver.
    On,
    /// No webhooks: the plan's secret is left out, so no event is made.
    Off,
}

/// One reading of the server's resident memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RssSample {
    /// Since the clients started.
    pub at: Duration,
    /// `VmRSS`, KiB.
    pub rss_kib: u64,
    /// Requests the clients had sent by then.
    pub sent: u64,
}

/// What [`memory_rule`] concluded.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryVerdict {
    /// When the warm-up ended.
    pub warm_end: Option<Duration>,
    /// The peak up to then, KiB.
    pub warm_peak_kib: u64,
    /// The peak over the second half of the run, KiB.
    pub late_peak_kib: u64,
    /// `None`: not judged (the note says why).
    pub flat: Option<bool>,
    /// Why it was not judged, or what it compared.
    pub note: String,
}

/// Memory is flat after the warm-up when the peak over the second half of
/// the run is at most [`FLAT_FACTOR`] times the peak of the warm-up. The
/// warm-up lasts a quarter of the run, and at least until the clients had
/// sent `journal_bound` requests: until then the journal grows by design (it
/// holds every request up to its bound). A warm-up past half the run leaves
/// nothing to judge.
pub fn memory_rule(samples: &[RssSample], run: Duration, journal_bound: u64) -> MemoryVerdict {
    let filled = samples
        .iter()
        .find(|s| s.sent >= journal_bound)
        .map(|s| s.at);
    let warm_end = filled.map(|at| at.max(run / 4));
    let peak = |keep: &dyn Fn(&RssSample) -> bool| {
        samples
            .iter()
            .filter(|s| keep(s))
            .map(|s| s.rss_kib)
            .max()
            .unwrap_or(0)
    };
    let late_peak_kib = peak(&|s| s.at >= run / 2);
    let Some(end) = warm_end.filter(|end| *end <= run / 2) else {
        let sent = samples.last().map_or(0, |s| s.sent);
        return MemoryVerdict {
            warm_end,
            warm_peak_kib: 0,
            late_peak_kib,
            flat: None,
            note: format!(
                "not judged: the journal holds every request up to {journal_bound}, and the \
                 clients had sent {sent} (reached by half the run: {})",
                filled.is_some_and(|at| at <= run / 2)
            ),
        };
    };
    let warm_peak_kib = peak(&|s| s.at <= end);
    let flat = late_peak_kib as f64 <= FLAT_FACTOR * warm_peak_kib as f64;
    MemoryVerdict {
        warm_end: Some(end),
        warm_peak_kib,
        late_peak_kib,
        flat: Some(flat),
        note: format!(
            "peak over the second half {late_peak_kib} KiB against {FLAT_FACTOR} x the warm-up's \
             peak {warm_peak_kib} KiB (warm-up {:.0} s)",
            end.as_secs_f64()
        ),
    }
}

/// What a check is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CheckName {
    /// The ledger and the journal agree entry for entry, and in their counts.
    LedgerMatchesJournal,
    /// Every request the clients sent is in the journal.
    EveryRequestJournaled,
    /// No journal entry is left in progress after the clients stopped.
    NoneInProgress,
    /// No key made two effects; no replay named another object.
    OneEffectPerKey,
    /// Every genuine delivery verified, every forged one refused.
    Webhooks,
    /// Memory flat after the warm-up.
    MemoryFlat,
    /// The server still serves at the end, exits 0 on SIGTERM, printed no panic.
    ServerHealthy,
}

impl CheckName {
    /// Its name in figures.
    pub fn name(self) -> &'static str {
        match self {
            CheckName::LedgerMatchesJournal => "ledger_matches_journal",
            CheckName::EveryRequestJournaled => "every_request_journaled",
            CheckName::NoneInProgress => "none_in_progress",
            CheckName::OneEffectPerKey => "one_effect_per_key",
            CheckName::Webhooks => "webhooks_verified",
            CheckName::MemoryFlat => "memory_flat",
            CheckName::ServerHealthy => "server_healthy",
        }
    }
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What it is about.
    pub name: CheckName,
    /// `None`: not judged.
    pub passed: Option<bool>,
    /// What it compared.
    pub detail: String,
}

/// Everything the soak saw.
#[derive(Debug, Clone)]
pub struct SoakReport {
    /// How long the clients ran.
    pub ran: Duration,
    /// What the clients did.
    pub traffic: traffic::Traffic,
    /// What the harness side did.
    pub control: control::ControlFigures,
    /// The records' comparison.
    pub agreement: records::Agreement,
    /// Resident memory over the run.
    pub samples: Vec<RssSample>,
    /// The memory rule's verdict.
    pub memory: MemoryVerdict,
    /// How the server exited after SIGTERM (`None`: killed).
    pub exit_code: Option<i32>,
    /// Lines of its stderr that say it panicked, and the first.
    pub panics: u64,
    /// See `panics`.
    pub first_panic: Option<String>,
    /// The verdicts.
    pub checks: Vec<Check>,
}

impl SoakReport {
    /// No check failed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed != Some(false))
    }
}

/// Runs the soak against `binary serve` for `duration`.
pub async fn run(
    binary: &Path,
    duration: Duration,
    webhooks: Webhooks,
) -> Result<SoakReport, Error> {
    let dir = std::env::temp_dir().join(format!("lostreply-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Io(format!("creating {}", dir.display()), e))?;
    let scenario = dir.join("soak.yaml");
    let plan = match webhooks {
        Webhooks::On => SCENARIO.to_owned(),
        // Without the secret the simulator makes no events at all, so a run
        // without webhooks measures the rest without the events' memory.
        Webhooks::Off => SCENARIO
            .lines()
            .filter(|line| !line.trim_start().starts_with("webhooks:"))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    std::fs::write(&scenario, plan)
        .map_err(|e| Error::Io(format!("writing {}", scenario.display()), e))?;
    let args = [
        "--scenario".to_owned(),
        scenario.display().to_string(),
        "--max-objects".to_owned(),
        MAX_OBJECTS.to_string(),
    ];
    let mut server = serve_mem::start(binary, &args, Stdio::piped()).await?;
    let panics = watch_stderr(&mut server.child);
    let receiver = control::Receiver::start().await?;
    let started = Instant::now();
    let until = started + duration;
    let sent = Arc::new(AtomicU64::new(0));
    let clients = traffic::start(server.addr, CLIENTS, until, sent.clone());
    let sampler = tokio::spawn(sample_memory(server.pid, started, until, sent));
    let control = control::run(server.addr, &receiver, webhooks == Webhooks::On, until).await;
    let traffic = traffic::join(clients).await;
    let ran = started.elapsed();
    let samples = sampler.await.unwrap_or_default();
    let records = read_settled_records(server.addr).await;
    let alive = server.child.try_wait().ok().flatten().is_none();
    let exit_code = serve_mem::stop(&mut server.child, server.pid).await;
    server.drain.abort();
    let _ = std::fs::remove_dir_all(&dir);
    let (journal, ledger) = records?;
    let agreement = records::compare(&journal, &ledger);
    let memory = memory_rule(
        &samples,
        duration,
        lostreply_simulator::MAX_JOURNAL_ENTRIES as u64,
    );
    let (panic_count, first_panic) = panics
        .lock()
        .map(|p| (p.0, p.1.clone()))
        .unwrap_or((0, None));
    let mut report = SoakReport {
        ran,
        traffic,
        control,
        agreement,
        samples,
        memory,
        exit_code,
        panics: panic_count,
        first_panic,
        checks: Vec::new(),
    };
    report.checks = checks(&report, &journal, &ledger, alive, webhooks);
    Ok(report)
}

/// Counts the server's stderr lines that say it panicked, keeping the first.
fn watch_stderr(child: &mut tokio::process::Child) -> Arc<Mutex<(u64, Option<String>)>> {
    let found = Arc::new(Mutex::new((0u64, None)));
    if let Some(stderr) = child.stderr.take() {
        let found = found.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains("panicked") {
                    if let Ok(mut found) = found.lock() {
                        found.0 += 1;
                        found.1.get_or_insert(line);
                    }
                }
            }
        });
    }
    found
}

async fn sample_memory(
    pid: u32,
    started: Instant,
    until: Instant,
    sent: Arc<AtomicU64>,
) -> Vec<RssSample> {
    let mut samples = Vec::new();
    loop {
        if let Some(memory) = procfs::memory(Some(pid)) {
            samples.push(RssSample {
                at: started.elapsed(),
                rss_kib: memory.rss_kib,
                sent: sent.load(Ordering::Relaxed),
            });
        }
        if Instant::now() + SAMPLE_EVERY > until {
            return samples;
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}

/// The records once no request is in progress, or as they stand at
/// `QUIESCE` after the clients stopped.
async fn read_settled_records(
    addr: std::net::SocketAddr,
) -> Result<(records::Journal, records::Ledger), Error> {
    let until = Instant::now() + QUIESCE;
    loop {
        let records = read_records(addr).await?;
        let busy = records.0.data.iter().any(|e| e.fate == "in_progress");
        if !busy || Instant::now() >= until {
            return Ok(records);
        }
        tokio::time::sleep(QUIESCE_POLL).await;
    }
}

async fn read_records(
    addr: std::net::SocketAddr,
) -> Result<(records::Journal, records::Ledger), Error> {
    let (mut sender, _task) = client::connect(addr).await?;
    let journal = control::read_json(&mut sender, addr, "/_lostreply/journal")
        .await
        .map_err(Error::Unsupported)?;
    let ledger = control::read_json(&mut sender, addr, "/_lostreply/ledger")
        .await
        .map_err(Error::Unsupported)?;
    Ok((journal, ledger))
}

fn checks(
    report: &SoakReport,
    journal: &records::Journal,
    ledger: &records::Ledger,
    alive: bool,
    webhooks: Webhooks,
) -> Vec<Check> {
    let a = &report.agreement;
    let t = &report.traffic;
    let c = &report.control;
    let agree = a.holds(journal.dropped_summary.committed, ledger.summarised);
    let webhooks = match webhooks {
        Webhooks::Off => (None, "no webhooks (--soak-webhooks off)".to_owned()),
        Webhooks::On => (
            Some(c.webhooks_hold()),
            format!(
                "{} genuine deliveries, {} verified; {} forged, {} refused; {} pages listing {} events",
                c.genuine, c.accepted, c.forged, c.rejected, c.listings, c.events_listed
            ),
        ),
    };
    let healthy = alive && report.exit_code == Some(0) && report.panics == 0;
    vec![
        Check {
            name: CheckName::LedgerMatchesJournal,
            passed: Some(agree),
            detail: format!(
                "effects: {} by the journal ({} of them in entries it summarised out), {} by the \
                 ledger ({} summarised out); {} pairs matched entry for entry, {} disagreements{}",
                a.committed_by_journal,
                journal.dropped_summary.committed,
                a.committed_by_ledger,
                ledger.summarised,
                a.matched,
                a.disagreements,
                a.first.as_ref().map(|f| format!(" (first: {f})")).unwrap_or_default()
            ),
        },
        Check {
            name: CheckName::EveryRequestJournaled,
            passed: Some(a.journaled == t.sent),
            detail: format!("{} sent by the clients, {} journaled", t.sent, a.journaled),
        },
        Check {
            name: CheckName::NoneInProgress,
            passed: Some(a.in_progress == 0),
            detail: format!(
                "{} entries in progress up to {} s after the clients stopped",
                a.in_progress,
                QUIESCE.as_secs()
            ),
        },
        Check {
            name: CheckName::OneEffectPerKey,
            passed: Some(a.keys_with_two_effects == 0 && t.replay_mismatches == 0),
            detail: format!(
                "{} keys with two effects; {} replays answered another object than their original",
                a.keys_with_two_effects, t.replay_mismatches
            ),
        },
        Check {
            name: CheckName::Webhooks,
            passed: webhooks.0,
            detail: webhooks.1,
        },
        Check {
            name: CheckName::MemoryFlat,
            passed: report.memory.flat,
            detail: report.memory.note.clone(),
        },
        Check {
            name: CheckName::ServerHealthy,
            passed: Some(healthy),
            detail: format!(
                "alive at the end: {alive}; exit after SIGTERM: {}; stderr lines with \"panicked\": {}{}",
                report.exit_code.map_or("killed".to_owned(), |c| c.to_string()),
                report.panics,
                report.first_panic.as_ref().map(|p| format!(" (first: {p})")).unwrap_or_default()
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(rss: &[u64], sent_per_sample: u64) -> Vec<RssSample> {
        rss.iter()
            .enumerate()
            .map(|(i, &rss_kib)| RssSample {
                at: Duration::from_secs(i as u64 * 10),
                rss_kib,
                sent: (i as u64 + 1) * sent_per_sample,
            })
            .collect()
    }

    #[test]
    fn memory_that_levels_off_is_flat_and_memory_that_grows_is_not() {
        let run = Duration::from_secs(100);
        let level = samples(&[100, 200, 300, 310, 305, 300, 310, 320, 315, 310], 1000);
        let verdict = memory_rule(&level, run, 2000);
        assert_eq!(verdict.flat, Some(true), "{verdict:?}");
        assert_eq!(verdict.warm_end, Some(Duration::from_secs(25)));
        let growing = samples(&[100, 200, 300, 400, 500, 600, 700, 800, 900, 1000], 1000);
        assert_eq!(memory_rule(&growing, run, 2000).flat, Some(false));
    }

    #[test]
    fn a_journal_short_of_its_bound_leaves_memory_unjudged() {
        let run = Duration::from_secs(100);
        let few = samples(&[100, 110, 120, 130, 140, 150, 160, 170, 180, 190], 10);
        assert_eq!(memory_rule(&few, run, 1_000_000).flat, None);
    }
}
