//! CA bundles where the API server reads them: the `clientConfig.caBundle` of every webhook in a
//! Mutating- or ValidatingWebhookConfiguration, of a CRD's conversion webhook, and the
//! `spec.caBundle` of an APIService. Objects are
//! edited as JSON so that fields this build does not know survive the round trip.

use k8s_openapi::ByteString;
use serde_json::{Map, Value};
use time::OffsetDateTime;

use super::material::{CertInfo, pem_encode, read_bundle};

/// Where an object keeps its client configs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `webhooks[*].clientConfig` of a webhook configuration.
    Webhooks,
    /// `spec.conversion.webhook.clientConfig` of a CRD, when `spec.conversion.strategy` is
    /// `Webhook`.
    Conversion,
    /// `spec` of an APIService, which holds its `caBundle` itself.
    ApiService,
}

fn client_configs(object: &mut Value, target: Target) -> Vec<&mut Map<String, Value>> {
    match target {
        Target::Webhooks => match object.get_mut("webhooks").and_then(Value::as_array_mut) {
            Some(webhooks) => webhooks
                .iter_mut()
                .filter_map(|w| w.get_mut("clientConfig").and_then(Value::as_object_mut))
                .collect(),
            None => Vec::new(),
        },
        Target::Conversion => {
            let conversion = object
                .get_mut("spec")
                .and_then(|s| s.get_mut("conversion"))
                .filter(|c| c.get("strategy").and_then(Value::as_str) == Some("Webhook"));
            conversion
                .and_then(|c| c.get_mut("webhook"))
                .and_then(|w| w.get_mut("clientConfig"))
                .and_then(Value::as_object_mut)
                .into_iter()
                .collect()
        }
        Target::ApiService => object
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .into_iter()
            .collect(),
    }
}

/// A `caBundle` value's bytes (base64 in JSON); `None` when absent or not base64.
fn bundle_bytes(config: &Map<String, Value>) -> Option<Vec<u8>> {
    let value = config.get("caBundle")?.clone();
    serde_json::from_value::<ByteString>(value)
        .ok()
        .map(|b| b.0)
}

/// The CAs a client config should trust, given those it trusts now: `trust` (ours, newest
/// first), then any valid CA it holds that is newer than ours. Such a CA comes from a replica
/// that rotated the CA before this one read the Secret; keeping it means a replica that is behind
/// never takes trust away from one that is ahead. Anything else it holds is dropped.
pub fn merge(existing: &[CertInfo], trust: &[&CertInfo], now: OffsetDateTime) -> Vec<CertInfo> {
    let mut merged: Vec<CertInfo> = trust.iter().map(|c| (*c).clone()).collect();
    let Some(newest) = trust.first().map(|c| c.not_before) else {
        return merged;
    };
    for cert in existing {
        let newer = cert.is_ca && cert.is_valid_at(now) && cert.not_before > newest;
        if newer && !merged.iter().any(|m| m.der == cert.der) {
            merged.push(cert.clone());
        }
    }
    merged
}

/// Sets the `caBundle` of every client config in `object` that does not already hold exactly the
/// merged set. Returns whether anything changed.
pub fn inject(
    object: &mut Value,
    target: Target,
    trust: &[&CertInfo],
    now: OffsetDateTime,
) -> bool {
    let mut changed = false;
    for config in client_configs(object, target) {
        let (existing, clean) = bundle_bytes(config)
            .map(|bytes| read_bundle(&bytes))
            .unwrap_or_default();
        let merged = merge(&existing, trust, now);
        let same = clean
            && existing.len() == merged.len()
            && merged
                .iter()
                .all(|m| existing.iter().any(|e| e.der == m.der));
        if same {
            continue;
        }
        let pem: String = merged
            .iter()
            .map(|c| pem_encode("CERTIFICATE", &c.der))
            .collect();
        if let Ok(value) = serde_json::to_value(ByteString(pem.into_bytes())) {
            config.insert("caBundle".into(), value);
            changed = true;
        }
    }
    changed
}

/// Makes a CRD convert through the webhook `service` in `namespace` serves, keeping any CA bundle
/// it holds. The CRD files leave `spec.conversion` out (a chart's `crds/` is not templated, and
/// Helm re-applies them on every install), so the release serving the webhook writes it. Returns
/// whether anything changed.
pub fn point_conversion_at(object: &mut Value, service: &str, namespace: &str) -> bool {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return false;
    };
    let mut wanted = crate::v1beta1::conversion_webhook(service, namespace);
    let bundle = spec
        .get("conversion")
        .and_then(|c| c.pointer("/webhook/clientConfig/caBundle"))
        .cloned();
    if let Some(bundle) = bundle {
        wanted["webhook"]["clientConfig"]["caBundle"] = bundle;
    }
    if spec.get("conversion") == Some(&wanted) {
        return false;
    }
    spec.insert("conversion".into(), wanted);
    true
}

/// Whether every client config in `object` trusts `ca` (true when it has none).
pub fn trusts(object: &Value, target: Target, ca: &CertInfo) -> bool {
    let mut object = object.clone();
    client_configs(&mut object, target)
        .into_iter()
        .all(|config| {
            bundle_bytes(config)
                .map(|bytes| read_bundle(&bytes).0)
                .is_some_and(|certs| certs.iter().any(|c| c.der == ca.der))
        })
}

#[cfg(test)]
mod tests;
