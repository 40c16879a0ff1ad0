//! The CRD conversion webhook: the `apiextensions.k8s.io/v1` ConversionReview wire format, each
//! object converted to the desired version by [`crate::v1beta1::convert`], at controller-runtime's
//! path `/convert` where Kueue serves it.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::engine::features::FeatureGates;
use crate::v1beta1::{self, Version};

/// The path the CRDs' `spec.conversion.webhook.clientConfig.service.path` names.
pub const PATH: &str = v1beta1::CONVERSION_PATH;

const API_VERSION: &str = "apiextensions.k8s.io/v1";
const KIND: &str = "ConversionReview";

/// The part of a ConversionReview request the webhook reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConversionRequest {
    uid: String,
    #[serde(rename = "desiredAPIVersion")]
    desired_api_version: String,
    #[serde(default)]
    objects: Vec<Value>,
}

#[derive(Debug, Deserialize)]
struct ConversionReview {
    request: ConversionRequest,
}

/// Answers a ConversionReview body: every object converted, or a `Failure` result naming the first
/// object that cannot be, its field and the reason. A body that is not a ConversionReview request
/// gives the reason it cannot be read.
pub fn review(body: &[u8], gates: &FeatureGates) -> Result<Value, String> {
    let review: ConversionReview = serde_json::from_slice(body)
        .map_err(|e| format!("the body is not a {API_VERSION} {KIND} request: {e}"))?;
    let request = review.request;
    let result = convert_all(&request, gates);
    let response = match result {
        Ok(converted) => json!({
            "uid": request.uid,
            "convertedObjects": converted,
            "result": { "status": "Success" },
        }),
        Err(message) => json!({
            "uid": request.uid,
            "convertedObjects": [],
            "result": { "status": "Failure", "message": message },
        }),
    };
    Ok(json!({ "apiVersion": API_VERSION, "kind": KIND, "response": response }))
}

fn convert_all(request: &ConversionRequest, gates: &FeatureGates) -> Result<Vec<Value>, String> {
    let desired = Version::from_api_version(&request.desired_api_version).ok_or_else(|| {
        format!(
            "desiredAPIVersion: {:?} is not {} nor {}",
            request.desired_api_version,
            Version::V1beta1.api_version(),
            Version::V1beta2.api_version()
        )
    })?;
    request
        .objects
        .iter()
        .enumerate()
        .map(|(i, object)| {
            v1beta1::convert(object.clone(), desired, gates)
                .map_err(|e| format!("objects[{i}]: {e}"))
        })
        .collect()
}
