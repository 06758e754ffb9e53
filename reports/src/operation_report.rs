//! A logical operation of the scenario as the report shows it: the
//! scenario's own operation, shared, with what became of it.
//!
//! Why shared: a million-operation run's report holds a million of these
//! beside the run's records. Holding the operation (one reference count)
//! rather than its id, resource and arguments (three) makes a record 48
//! bytes, not 80; the JSON is the same, field for field.

use std::ops::Deref;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};

use crate::call_request::{OperationFields, OperationSpec};
use crate::outcome::Outcome;
use crate::shared_json::SharedJson;
use crate::shared_str::SharedStr;

/// A logical operation of the scenario. Its id, resource and arguments are
/// read through it (`op.id`), as the scenario's operation's.
#[derive(bon::Builder, Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "OperationReportFields")]
#[non_exhaustive]
pub struct OperationReport {
    /// The scenario's operation (`op-1`, its collection, the arguments the
    /// harness gave it).
    pub operation: OperationSpec,
    /// Ids of ledger effects attributed to it.
    pub effects: Box<[SharedStr]>,
    /// The final `status` reply, if the adapter gave one.
    pub final_outcome: Option<Outcome>,
}

impl Deref for OperationReport {
    type Target = OperationFields;

    fn deref(&self) -> &OperationFields {
        &self.operation
    }
}

/// The JSON's fields, in its order: `id`, `resource`, `args`, `effects`,
/// `final_outcome` (the tool of an MCP operation is not among them).
impl Serialize for OperationReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("OperationReport", 5)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("resource", &self.resource)?;
        s.serialize_field("args", &self.args)?;
        s.serialize_field("effects", &self.effects)?;
        s.serialize_field("final_outcome", &self.final_outcome)?;
        s.end()
    }
}

/// [`OperationReport`] as its JSON reads back.
#[derive(Deserialize)]
struct OperationReportFields {
    id: SharedStr,
    resource: SharedStr,
    args: SharedJson,
    effects: Box<[SharedStr]>,
    final_outcome: Option<Outcome>,
}

impl From<OperationReportFields> for OperationReport {
    fn from(fields: OperationReportFields) -> OperationReport {
        OperationReport {
            operation: OperationSpec::new(OperationFields {
                id: fields.id,
                resource: fields.resource,
                tool: None,
                args: fields.args,
            }),
            effects: fields.effects,
            final_outcome: fields.final_outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use super::*;
    use crate::model::OutcomeKind;

    #[test]
    fn written_as_its_fields_and_read_back_the_same() {
        let args = json!({"title": "t", "n": 1});
        let report = OperationReport {
            operation: OperationSpec::new(OperationFields {
                id: "op-1".into(),
                resource: "tickets".into(),
                tool: None,
                args: SharedJson::from_map(args.as_object().unwrap()),
            }),
            effects: vec![SharedStr::from("tkt_1")].into(),
            final_outcome: Some(Outcome {
                outcome: OutcomeKind::Succeeded,
                provider_ref: Some("tkt_1".into()),
                needs_review: false,
                evidence: "lookup".into(),
            }),
        };
        let text = serde_json::to_string(&report).unwrap();
        assert_eq!(
            text,
            r#"{"id":"op-1","resource":"tickets","args":{"title":"t","n":1},"effects":["tkt_1"],"final_outcome":{"outcome":"succeeded","provider_ref":"tkt_1","needs_review":false,"evidence":"lookup"}}"#
        );
        let back: OperationReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, report);
        assert_eq!(back.id.as_str(), "op-1");
        assert_eq!(std::mem::size_of::<OperationReport>(), 48);
    }
}
