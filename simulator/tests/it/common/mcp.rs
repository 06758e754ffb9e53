//! A small MCP client over reqwest for the MCP tests: sessions, JSON-RPC
//! requests, and answers read as JSON or as an SSE stream.

use std::time::Duration;

use lostreply_simulator::mcp::{CancelPolicy, McpFault, McpMatch, McpPlan, McpRule};
use lostreply_simulator::{Plan, Simulator};
use serde_json::{json, Value};

use super::{client, start, A};

/// A rule on every `create_ticket` call: `fault`, with the cancel `policy`.
pub fn on_tickets(fault: McpFault, policy: CancelPolicy) -> McpRule {
    McpRule::builder()
        .when({
            let mut changed = McpMatch::default();
            changed.tool = Some("create_ticket".to_owned());
            changed
        })
        .fault(fault)
        .cancel(policy)
        .build()
}

/// A plan with the default MCP face and small caps.
pub fn mcp_plan(faults: Vec<McpRule>) -> Plan {
    let mut plan = super::plan();
    plan.mcp = Some({
        let mut changed = McpPlan::default();
        changed.faults = faults;
        changed
    });
    plan
}

pub async fn mcp_sim(faults: Vec<McpRule>) -> Simulator {
    start(mcp_plan(faults)).await
}

/// One HTTP answer of the MCP endpoint.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub session: Option<String>,
    pub text: String,
}

impl Answer {
    /// The JSON-RPC message: the body, or the last `data:` of the stream.
    pub fn message(&self) -> Value {
        if self.content_type.starts_with("text/event-stream") {
            let data = self
                .text
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .rfind(|d| !d.trim().is_empty())
                .unwrap();
            serde_json::from_str(data).unwrap()
        } else {
            serde_json::from_str(&self.text).unwrap()
        }
    }

    pub fn result(&self) -> Value {
        self.message()["result"].clone()
    }
}

/// A session-holding client.
pub struct Mcp {
    pub url: String,
    pub tenant: String,
    pub session: Option<String>,
    pub version: Option<String>,
    pub accept: String,
    pub http: reqwest::Client,
    next_id: u64,
}

impl Mcp {
    pub fn new(sim: &Simulator, tenant: &str) -> Mcp {
        Mcp {
            url: sim.mcp_url().unwrap(),
            tenant: tenant.to_owned(),
            session: None,
            version: None,
            accept: "application/json, text/event-stream".to_owned(),
            http: client(5000),
            next_id: 0,
        }
    }

    /// Initializes with `version` and keeps the session.
    pub async fn connect(sim: &Simulator, tenant: &str, version: &str) -> Mcp {
        let mut mcp = Mcp::new(sim, tenant);
        let answer = mcp
            .request(
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
            )
            .await;
        assert_eq!(answer.status, 200, "{answer:?}");
        mcp.session = answer.session.clone();
        mcp.version = Some(
            answer.result()["protocolVersion"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        mcp.notify("notifications/initialized", json!({})).await;
        mcp
    }

    pub fn request_builder(&self, http: &reqwest::Client, body: &Value) -> reqwest::RequestBuilder {
        let mut request = http
            .post(&self.url)
            .bearer_auth(&self.tenant)
            .header("accept", &self.accept)
            .json(body);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(version) = &self.version {
            request = request.header("mcp-protocol-version", version);
        }
        request
    }

    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub async fn send(&self, http: &reqwest::Client, body: &Value) -> reqwest::Result<Answer> {
        let response = self.request_builder(http, body).send().await?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = header("content-type").unwrap_or_default();
        let session = header("mcp-session-id");
        let text = response.text().await?;
        Ok(Answer {
            status,
            content_type,
            session,
            text,
        })
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Answer {
        let id = self.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send(&self.http.clone(), &body).await.unwrap()
    }

    pub async fn notify(&self, method: &str, params: Value) -> Answer {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let answer = self.send(&self.http, &body).await.unwrap();
        assert_eq!(answer.status, 202, "{answer:?}");
        answer
    }

    pub async fn call(&mut self, tool: &str, arguments: Value) -> Answer {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// A call through a client that gives up after `timeout_ms`.
    pub async fn call_with_timeout(
        &mut self,
        tool: &str,
        arguments: Value,
        timeout_ms: u64,
    ) -> reqwest::Result<Answer> {
        let id = self.next_id();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        self.send(&client(timeout_ms), &body).await
    }
}

/// Opens an MCP session for tenant A on the newest revision.
pub async fn session(sim: &Simulator) -> Mcp {
    Mcp::connect(sim, A, "2025-11-25").await
}

/// Bounded wait for the simulator to go quiet.
pub async fn quiet(sim: &Simulator) {
    let busy = sim.wait_quiet(Duration::from_secs(10)).await;
    assert!(busy.is_empty(), "still busy: {busy:?}");
}
