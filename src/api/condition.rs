//! The condition of a Kueue object: the fields of Kubernetes' `metav1.Condition`, with its texts
//! held as [`Text`] so that the many Workloads with the same condition share them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition as WireCondition, Time};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};

use super::text::Text;

/// One condition; reads and writes as `metav1.Condition` and has its JSON schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    pub last_transition_time: Time,
    #[serde(default, deserialize_with = "text_or_null")]
    pub message: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, deserialize_with = "text_or_null")]
    pub reason: Text,
    #[serde(default, deserialize_with = "text_or_null")]
    pub status: Text,
    #[serde(default, rename = "type", deserialize_with = "text_or_null")]
    pub type_: Text,
}

/// `metav1.Condition` takes a null text as an empty one.
fn text_or_null<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
    Ok(Option::<Text>::deserialize(deserializer)?.unwrap_or_default())
}

impl JsonSchema for Condition {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        WireCondition::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        WireCondition::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_condition_reads_and_writes_as_kubernetes_condition() {
        for wire in [
            json!({"lastTransitionTime": "2026-11-27T18:38:57Z", "message": "Quota reserved",
                   "observedGeneration": 3, "reason": "QuotaReserved", "status": "True",
                   "type": "QuotaReserved"}),
            json!({"lastTransitionTime": "2026-11-27T18:38:57.5Z", "message": null,
                   "reason": "R", "status": "False", "type": "Admitted", "extra": 1}),
            json!({"lastTransitionTime": "2026-11-27T18:38:57Z"}),
        ] {
            let ours: Condition = serde_json::from_value(wire.clone()).expect("ours reads it");
            let theirs: WireCondition = serde_json::from_value(wire).expect("theirs reads it");
            let ours_texts = [&ours.type_, &ours.status, &ours.reason, &ours.message];
            let theirs_texts = [
                &theirs.type_,
                &theirs.status,
                &theirs.reason,
                &theirs.message,
            ];
            assert_eq!(
                ours_texts.map(|t| t.as_str()),
                theirs_texts.map(String::as_str)
            );
            assert_eq!(
                (&ours.last_transition_time, ours.observed_generation),
                (&theirs.last_transition_time, theirs.observed_generation)
            );
            assert_eq!(
                serde_json::to_string(&ours).expect("ours writes"),
                serde_json::to_string(&theirs).expect("theirs writes")
            );
        }
        assert!(serde_json::from_value::<Condition>(json!({"type": "A"})).is_err());
        assert_eq!(
            serde_json::to_value(schemars::schema_for!(Condition)).expect("ours"),
            serde_json::to_value(schemars::schema_for!(WireCondition)).expect("theirs")
        );
    }
}
