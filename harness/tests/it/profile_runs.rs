//! A scenario under the Stripe profile, run: the adapter is given the
//! operation's arguments as a form body carries them (strings), sends them
//! as a form, and the ledger's effect then holds the very same arguments;
//! its webhooks, genuine and forged, arrive signed in Stripe's scheme.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use lostreply_harness::adapter::{Adapter, AdapterFactory, AdapterFailure};
use lostreply_harness::driver::AdapterUnderTest;
use lostreply_harness::protocol::{
    Contract, ExecuteRequest, OperationRequest, OutcomeKind, OutcomeReply, ResolveRequest,
    SharedStr, WebhookReply, WebhookRequest, WebhookScheme,
};
use lostreply_harness::scenario;
use lostreply_reports::model::Verdict;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const STRIPE_RUN: &str = "\
version: 1
id: stripe-run
title: A Stripe create, then its event genuine and forged
provider:
  profile: stripe
  webhooks: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
operations:
  - {id: op-1, resource: customers, args: {name: Jenny, balance: 1200}}
steps:
  - execute: op-1
  - {webhook: op-1, event: created}
  - {webhook: op-1, event: created, forged: true}
expect:
  final: {op-1: succeeded}
";

/// What the adapter was given, across its instances.
#[derive(Debug, Default)]
struct Seen {
    args: Vec<Map<String, Value>>,
    contracts: Vec<Contract>,
    deliveries: Vec<BTreeMap<String, String>>,
    replies: BTreeMap<String, OutcomeReply>,
}

#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

impl AdapterFactory for Recorder {
    fn name(&self) -> String {
        "form-recorder".to_owned()
    }

    fn build(&self, _state_dir: &Path) -> Result<Box<dyn Adapter>, AdapterFailure> {
        Ok(Box::new(self.clone()))
    }
}

/// A form body of plain words and numbers (nothing to percent-encode here).
fn form(args: &Map<String, Value>) -> String {
    args.iter()
        .map(|(key, value)| format!("{key}={}", value.as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join("&")
}

/// `POST {path}` as a form over one plain TCP connection; the answer's JSON body.
async fn post_form(base_url: &str, credential: &str, path: &str, body: &str) -> Value {
    let address = base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer {credential}\r\n\
         content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{answer}");
    let json = &rest[rest.find('{').unwrap()..=rest.rfind('}').unwrap()];
    serde_json::from_str(json).unwrap()
}

fn stored(seen: &Seen, op: &str) -> OutcomeReply {
    seen.replies.get(op).cloned().unwrap_or_else(|| {
        OutcomeReply::new(
            SharedStr::from(op),
            OutcomeKind::Unknown,
            SharedStr::from("no record"),
        )
    })
}

#[async_trait::async_trait]
impl Adapter for Recorder {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let provider = &request.common.provider;
        let path = format!("/v1/{}", request.operation.resource);
        let object = post_form(
            &provider.base_url,
            &provider.credential,
            &path,
            &form(&request.operation.args),
        )
        .await;
        let reply = OutcomeReply::new(
            SharedStr::from(request.operation.id.as_str()),
            OutcomeKind::Succeeded,
            SharedStr::from("created"),
        )
        .with_provider_ref(object["id"].as_str().map(SharedStr::from));
        let mut seen = self.0.lock().unwrap();
        seen.args.push(request.operation.args.clone());
        seen.contracts.push(provider.contract.clone());
        seen.replies
            .insert(request.operation.id.clone(), reply.clone());
        Ok(reply)
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        Ok(stored(&self.0.lock().unwrap(), &request.operation_id))
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        self.0.lock().unwrap().deliveries.push(request.headers);
        // Verifying is not what this adapter is for: it refuses every delivery.
        Ok(WebhookReply::REJECTED)
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        Ok(stored(&self.0.lock().unwrap(), &request.operation_id))
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        Ok(stored(&self.0.lock().unwrap(), &request.operation_id))
    }
}

#[test]
fn a_stripe_scenario_gives_the_adapter_string_arguments_that_match_the_ledger() {
    let scenario = scenario::parse(STRIPE_RUN, "stripe-run.yaml").unwrap();
    let recorder = Recorder::default();
    let report = support::run_with(
        AdapterUnderTest::InProcess(Arc::new(recorder.clone())),
        &scenario,
    );
    assert_eq!(report.verdict, Verdict::Passed, "{:#?}", report.violations);
    let seen = recorder.0.lock().unwrap();
    assert_eq!(
        Value::Object(seen.args[0].clone()),
        json!({"name": "Jenny", "balance": "1200"})
    );
    let contract = &seen.contracts[0];
    assert_eq!(contract.profile, "stripe");
    assert_eq!(
        contract.webhooks.as_ref().map(|w| w.scheme),
        Some(WebhookScheme::Stripe)
    );
    // One effect, a Stripe customer, attributed to op-1 by its arguments.
    let ledger = &report.ledger;
    assert_eq!(ledger.len(), 1);
    assert!(ledger[0].id.starts_with("cus_"), "{}", ledger[0].id);
    assert_eq!(
        Value::Object(ledger[0].args.to_map()),
        Value::Object(seen.args[0].clone())
    );
    assert_eq!(report.operations[0].effects.len(), 1);

    // The genuine delivery and the forgery are both in Stripe's scheme;
    // only the signature tells them apart.
    let signatures: Vec<&str> = seen
        .deliveries
        .iter()
        .map(|headers| {
            assert!(!headers.contains_key("webhook-signature"), "{headers:?}");
            headers.get("stripe-signature").unwrap().as_str()
        })
        .collect();
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    let (genuine, forged) = (signatures[0], signatures[1]);
    assert!(
        genuine.starts_with("t=") && genuine.contains(",v1="),
        "{genuine}"
    );
    assert!(
        forged.starts_with("t=") && forged.contains(",v1="),
        "{forged}"
    );
    assert_ne!(genuine, forged, "the forgery carries another signature");
}
