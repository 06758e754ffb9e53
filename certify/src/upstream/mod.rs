//! `lostreply run --upstream URL --contract FILE`: the lost-response library
//! run against a user's adapter with a real service behind the proxy
//! (docs/proxy.md, "Judging an adapter in front of a real service"). Each
//! scenario the proxy can stage (`fit`) gets a proxy of its own with the
//! scenario's fault rules, scoped to its steps; the adapter is driven through
//! it (`drive`); the invariants are judged from the contract's read-back of
//! each operation's marker and from the proxy's journal (`judge`); the result
//! is the run report's model (`record`), so every report writer shows it.
//!
//! Scenarios run one at a time: they share one real service, and a second
//! scenario's requests in the middle of the first's would change what the
//! first's rules count.

mod clock;
mod drive;
pub mod fit;
mod judge;
mod record;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::protocol::{Contract as AdapterContract, OutcomeKind};
use lostreply_harness::scenario::model::Scenario;
use lostreply_harness::seed::scenario_seed;
use lostreply_reports::model::{AdapterInfo, ErrorRecord, Report, ScenarioReport, SCHEMA_VERSION};
use lostreply_simulator::IdempotencyMode;

use crate::client::{Client, Request};
use crate::contract::{Contract, KeySyntax};
use crate::proxy::{self, Entry, Fate, Proxy, ProxyConfig, ProxyError};
use crate::readback::{self, Found};
use crate::tls::Trust;

/// The real service and how to reach and read it.
#[derive(Debug, Clone)]
pub struct Upstream {
    /// `http://host:port` or `https://host:port`.
    pub url: String,
    /// The contract: allowlist, credential and key headers, the read-back.
    pub contract: Contract,
    /// Whose CAs an `https://` upstream must be signed by.
    pub trust: Trust,
}

/// How the run is made and reproduced.
#[derive(Debug, Clone)]
pub struct UpstreamRun {
    /// The adapter under test.
    pub adapter: AdapterUnderTest,
    /// The run's seed: markers derive from it and each scenario's id.
    pub seed: u64,
    /// The command that reruns one scenario, without `--seed` and its path
    /// (`lostreply run --upstream URL --contract FILE --builtin reference`).
    pub command_prefix: String,
}

/// Runs every scenario in order through a proxy of its own. Fails before
/// any scenario runs when the upstream cannot be reached (or its TLS
/// handshake fails): a proxy for the first scenario would fail the same way.
pub async fn run(
    scenarios: &[Scenario],
    upstream: &Upstream,
    run: &UpstreamRun,
    mut on_done: impl FnMut(&ScenarioReport),
) -> Result<Report, ProxyError> {
    let started = Instant::now();
    start_proxy(upstream, Vec::new(), lostreply_simulator::Limits::default())
        .await?
        .shutdown()
        .await;
    let mut reports = Vec::with_capacity(scenarios.len());
    for scenario in scenarios {
        let report = run_scenario(scenario, upstream, run).await;
        on_done(&report);
        reports.push(report);
    }
    Ok(Report::builder()
        .schema_version(SCHEMA_VERSION)
        .tool_version(env!("CARGO_PKG_VERSION").to_owned())
        .adapter(
            AdapterInfo::builder()
                .name(run.adapter.display_name())
                .kind(run.adapter.kind())
                .build(),
        )
        .seed(run.seed)
        .duration_ms(started.elapsed().as_millis() as u64)
        .scenarios(reports)
        .build())
}

async fn start_proxy(
    upstream: &Upstream,
    faults: Vec<lostreply_simulator::FaultRule>,
    limits: lostreply_simulator::Limits,
) -> Result<Proxy, ProxyError> {
    proxy::start_driven(ProxyConfig {
        upstream: upstream.url.clone(),
        contract: upstream.contract.clone(),
        faults,
        stall_cap: limits.stall_cap,
        hold_cap: limits.hold_cap,
        port: 0,
        trust: upstream.trust.clone(),
    })
    .await
}

/// The reference adapter's `reproduce` line for one scenario.
fn reproduce(run: &UpstreamRun, scenario: &Scenario) -> String {
    format!(
        "{} --seed {} {}",
        run.command_prefix,
        run.seed,
        lostreply_harness::driver::shell_quote(&scenario.path)
    )
}

/// One scenario: markers checked unused, the steps driven through a proxy,
/// the proxy quiet, the markers read back, the invariants judged.
async fn run_scenario(
    scenario: &Scenario,
    upstream: &Upstream,
    run: &UpstreamRun,
) -> ScenarioReport {
    let started = Instant::now();
    let seed = scenario_seed(run.seed, &scenario.id);
    let markers = drive::markers(&scenario.operations, seed);
    let credential = upstream.contract.primary.clone();
    let mut errors = Vec::new();
    let mut driven = drive::Driven::default();
    let mut journal = Vec::new();
    let mut found = Vec::new();
    let mut retrieved = BTreeMap::new();
    match reader(upstream) {
        Err(why) => errors.push(infra(why)),
        Ok(client) => {
            if let Err(why) = markers_unused(&client, upstream, &markers).await {
                errors.push(infra(why));
            } else {
                match drive_through_proxy(&client, scenario, upstream, run, &markers, started).await
                {
                    Ok((d, j)) => (driven, journal) = (d, j),
                    Err(why) => errors.push(infra(why)),
                }
                if errors.is_empty() {
                    match read_back(&client, upstream, &markers).await {
                        Ok(f) => found = f,
                        Err(why) => errors.push(infra(why)),
                    }
                    retrieved = retrieve_claims(&client, upstream, &driven.calls, &found).await;
                }
            }
        }
    }
    let (violations, findings) = if errors.is_empty() {
        judge::judge(&judge::Seen {
            scenario,
            markers: &markers,
            calls: &driven.calls,
            journal: &journal,
            found: &found,
            retrieved: &retrieved,
            keyed: scenario.plan.idempotency.mode != IdempotencyMode::None,
        })
    } else {
        (Vec::new(), Vec::new())
    };
    record::scenario_report(record::Parts {
        scenario,
        seed,
        reproduce: reproduce(run, scenario),
        started,
        credential: &credential,
        markers: &markers,
        driven,
        journal,
        found,
        violations,
        findings,
        errors,
    })
}

fn infra(message: String) -> ErrorRecord {
    ErrorRecord::builder().step(0).message(message).build()
}

/// The read-back's own client: straight to the upstream, never through the
/// fault rules, within the contract's allowlist.
fn reader(upstream: &Upstream) -> Result<Client, String> {
    let contract = &upstream.contract;
    Client::trusting(
        &upstream.url,
        contract.timeout,
        contract.max_response_bytes,
        u32::MAX,
        u32::MAX,
        &upstream.trust,
    )
    .map_err(|e| format!("the read-back's client: {e}"))
}

/// Refuses markers the service already holds: a run with the same seed
/// against the same service would count the earlier run's objects.
async fn markers_unused(
    client: &Client,
    upstream: &Upstream,
    markers: &[String],
) -> Result<(), String> {
    for marker in markers {
        let found = readback::effects(
            client,
            &upstream.contract,
            &upstream.contract.primary,
            marker,
        )
        .await
        .map_err(|e| format!("reading back marker {marker} before the run: {e}"))?;
        if found.count > 0 {
            return Err(format!(
                "the service already holds {} object(s) carrying marker {marker} before the run \
                 (an earlier run with this seed?): run again with another --seed",
                found.count
            ));
        }
    }
    Ok(())
}

/// The steps through a proxy of the scenario's own, then the proxy's
/// journal once no request is still being served.
async fn drive_through_proxy(
    client: &Client,
    scenario: &Scenario,
    upstream: &Upstream,
    run: &UpstreamRun,
    markers: &[String],
    started: Instant,
) -> Result<(drive::Driven, Vec<Entry>), String> {
    let limits = scenario.plan.limits;
    let proxy = start_proxy(upstream, scenario.plan.faults.clone(), limits)
        .await
        .map_err(|e| format!("cannot start the proxy: {e}"))?;
    let state = tempfile::Builder::new()
        .prefix("lostreply-state-")
        .tempdir()
        .map_err(|e| format!("cannot create a state directory: {e}"))?;
    let session = run
        .adapter
        .session(state.path())
        .map_err(|e| format!("cannot build the adapter: {e}"))?;
    let clock = upstream
        .contract
        .clock
        .as_ref()
        .map(|path| clock::ServiceClock {
            client,
            contract: &upstream.contract,
            path,
        });
    let bound = limits.stall_cap.max(limits.hold_cap) + upstream.contract.timeout;
    let driver = drive::Driver {
        scenario,
        proxy: &proxy,
        session: &session,
        markers,
        contract: adapter_contract(scenario, &upstream.contract),
        credential: upstream.contract.primary.clone(),
        started,
        clock,
        now: std::sync::Mutex::new(None),
        quiet_bound: bound,
    };
    let driven = driver.run().await;
    drop(session);
    // A request held until its client left may still be forwarded (a
    // `stall then commit`): its effect belongs to the run.
    let journal = quiet_journal(&proxy, bound).await;
    proxy.shutdown().await;
    Ok((driven, journal))
}

/// The journal once no entry is still pending, or at `bound`.
async fn quiet_journal(proxy: &Proxy, bound: Duration) -> Vec<Entry> {
    let give_up = Instant::now() + bound;
    loop {
        let entries = proxy.journal().entries();
        if Instant::now() >= give_up || entries.iter().all(|e| e.fate != Fate::Pending) {
            return entries;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The contract the adapter is told: the scenario's provider, with the
/// service's key header, and no webhooks (nobody signs events here).
fn adapter_contract(scenario: &Scenario, contract: &Contract) -> AdapterContract {
    let mut told = lostreply_harness::run::contract_for_plan(&scenario.plan);
    match &contract.key {
        KeySyntax::Token { header } | KeySyntax::SfString { header } => {
            told.idempotency.header.clone_from(header);
        }
        KeySyntax::BodyField { .. } => {}
    }
    told.webhooks = None;
    told
}

/// Every operation's marker, read back after the run.
async fn read_back(
    client: &Client,
    upstream: &Upstream,
    markers: &[String],
) -> Result<Vec<Found>, String> {
    let mut found = Vec::with_capacity(markers.len());
    for marker in markers {
        let f = readback::effects(
            client,
            &upstream.contract,
            &upstream.contract.primary,
            marker,
        )
        .await
        .map_err(|e| format!("reading back marker {marker} after the run: {e}"))?;
        found.push(f);
    }
    Ok(found)
}

/// Where the read-back only counts, every object a `succeeded` names is
/// retrieved through the contract's `retrieve`: found (true) or 404 (false).
/// Any other answer proves nothing and is left out.
async fn retrieve_claims(
    client: &Client,
    upstream: &Upstream,
    calls: &[drive::Made],
    found: &[Found],
) -> BTreeMap<String, bool> {
    let mut retrieved = BTreeMap::new();
    let Some(retrieve) = &upstream.contract.retrieve else {
        return retrieved;
    };
    let contract = &upstream.contract;
    for call in calls {
        let counted = found.get(call.op).is_some_and(|f| f.ids.is_none());
        let Some(named) = call
            .outcome
            .as_ref()
            .filter(|o| counted && o.outcome == OutcomeKind::Succeeded)
            .and_then(|o| o.provider_ref.as_deref().map(str::to_owned))
        else {
            continue;
        };
        if retrieved.contains_key(&named) {
            continue;
        }
        let mut headers = Vec::new();
        if retrieve.auth {
            headers.push((
                contract.auth_header.clone(),
                format!("{}{}", contract.auth_prefix, contract.primary),
            ));
        }
        let request = Request {
            method: "GET".to_owned(),
            path: retrieve.path.replace("{id}", &readback::percent(&named)),
            headers,
            body: Vec::new(),
        };
        match client.send(&request).await.map(|r| r.status) {
            Ok(200..=299) => {
                retrieved.insert(named, true);
            }
            Ok(404) => {
                retrieved.insert(named, false);
            }
            _ => {}
        }
    }
    retrieved
}
