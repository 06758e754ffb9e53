//! The protocol's five calls for the reference adapter: each operation goes
//! to the provider's HTTP calls ([`crate::calls`]) or, when it is a paid MCP
//! tool call, to the MCP side (`crate::mcp::calls`). This is the one module
//! that names both, so the MCP side builds on the core and the core never
//! reaches into the MCP side.

use jiff::Timestamp;
use lostreply_harness::adapter::{Adapter, AdapterFailure};
use lostreply_harness::protocol::{
    Common, ExecuteRequest, OperationRequest, OutcomeReply, ResolveRequest, WebhookReply,
    WebhookRequest,
};

use crate::calls::{
    invalid_id_reply, no_record_reply, parse_time, valid_resource, ReferenceAdapter,
};
use crate::mcp::{self, CALL_TOOL};
use crate::store::{OpId, OpRecord};

impl ReferenceAdapter {
    /// Steps a–e of reconcile, on a record whose lock the caller holds, by
    /// the record's kind of operation.
    async fn reconcile_locked(
        &self,
        record: OpRecord,
        common: &Common,
        now: Timestamp,
    ) -> Result<OutcomeReply, AdapterFailure> {
        if record.is_terminal() {
            return Ok(record.reply());
        }
        if record.operation.action == CALL_TOOL {
            return mcp::calls::reconcile(self, record, common, now).await;
        }
        self.reconcile_create_locked(record, common, now).await
    }
}

#[async_trait::async_trait]
impl Adapter for ReferenceAdapter {
    async fn execute(&self, request: ExecuteRequest) -> Result<OutcomeReply, AdapterFailure> {
        let operation = request.operation;
        let id = match OpId::parse(&operation.id) {
            Ok(id) => id,
            Err(e) => return Ok(invalid_id_reply(&e)),
        };
        if operation.action == CALL_TOOL {
            let now = parse_time("now", &request.common.now)?;
            let _lock = self.lock(&id).await?;
            if let Some(record) = self.load(&id).await? {
                return self.reconcile_locked(record, &request.common, now).await;
            }
            return mcp::calls::execute(self, operation, &request.common, now).await;
        }
        if !valid_resource(&operation.resource) {
            return Err(AdapterFailure::new(format!(
                "operation {}: resource {:?} is not a collection name ([a-z][a-z0-9_]{{0,39}})",
                id.as_str(),
                operation.resource
            )));
        }
        let now = parse_time("now", &request.common.now)?;
        let _lock = self.lock(&id).await?;
        if let Some(record) = self.load(&id).await? {
            // Never re-execute: a known operation is only ever reconciled.
            return self.reconcile_locked(record, &request.common, now).await;
        }
        self.execute_create(&id, operation, &request.common, now)
            .await
    }

    async fn reconcile(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        let id = match OpId::parse(&request.operation_id) {
            Ok(id) => id,
            Err(e) => return Ok(invalid_id_reply(&e)),
        };
        let now = parse_time("now", &request.common.now)?;
        let _lock = self.lock(&id).await?;
        match self.load(&id).await? {
            None => Ok(no_record_reply(&id)),
            Some(record) => self.reconcile_locked(record, &request.common, now).await,
        }
    }

    async fn webhook(&self, request: WebhookRequest) -> Result<WebhookReply, AdapterFailure> {
        self.accept_webhook(request).await
    }

    async fn resolve(&self, request: ResolveRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.apply_resolution(request).await
    }

    async fn status(&self, request: OperationRequest) -> Result<OutcomeReply, AdapterFailure> {
        self.read_status(request).await
    }
}
