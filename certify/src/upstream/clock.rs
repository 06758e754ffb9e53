//! The service's clock, where the contract declares one (`readback.clock`,
//! the simulator's `/_lostreply/clock`): the time the adapter is told is the
//! service's (`GET`: `{"now": RFC 3339}`), and an `advance` step moves it
//! (`POST {"advance_ms": N}`). Without one, the adapter is told the real
//! time, and a scenario that moves the clock is left out.

use std::time::Duration;

use crate::client::{Client, Request};
use crate::contract::{Contract, PathSpec};

/// A declared clock endpoint and the client that reaches it.
pub(super) struct ServiceClock<'a> {
    pub client: &'a Client,
    pub contract: &'a Contract,
    pub path: &'a PathSpec,
}

impl ServiceClock<'_> {
    /// The service's time, as it writes it.
    pub async fn now(&self) -> Result<String, String> {
        let json = self.send("GET", Vec::new()).await?;
        json.get("now")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("GET {}: no \"now\" string in the answer", self.path.path))
    }

    /// Moves the service's clock forward by `by`.
    pub async fn advance(&self, by: Duration) -> Result<(), String> {
        let body = serde_json::json!({ "advance_ms": by.as_millis() as u64 });
        self.send("POST", body.to_string().into_bytes())
            .await
            .map(drop)
    }

    async fn send(&self, method: &str, body: Vec<u8>) -> Result<serde_json::Value, String> {
        let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        if self.path.auth {
            headers.push((
                self.contract.auth_header.clone(),
                format!("{}{}", self.contract.auth_prefix, self.contract.primary),
            ));
        }
        let request = Request {
            method: method.to_owned(),
            path: self.path.path.clone(),
            headers,
            body,
        };
        let what = format!("{method} {}", self.path.path);
        let response = self
            .client
            .send(&request)
            .await
            .map_err(|e| format!("the service's clock, {what}: {e}"))?;
        if !(200..300).contains(&response.status) {
            return Err(format!(
                "the service's clock, {what}: answered {}",
                response.status
            ));
        }
        response
            .json()
            .ok_or_else(|| format!("the service's clock, {what}: the answer is not JSON"))
    }
}
