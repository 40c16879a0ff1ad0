//! The `admission.k8s.io/v1` AdmissionReview wire format: the request the API server posts, and
//! the review sent back with the same `uid`, `allowed`, a `status` for refusals and a base64
//! JSONPatch for defaulting.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

const API_VERSION: &str = "admission.k8s.io/v1";
const KIND: &str = "AdmissionReview";

/// The operation an admission request is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

/// The kind of the object in a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

/// The part of an AdmissionReview request the webhooks read; the objects stay as the bytes that
/// came until a webhook decodes them as its kind, so a body is never held as a JSON tree (many
/// times its size) on the way.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    pub uid: String,
    #[serde(default)]
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: Option<String>,
    pub operation: Operation,
    #[serde(default)]
    pub object: Option<Box<RawValue>>,
    #[serde(default)]
    pub old_object: Option<Box<RawValue>>,
}

impl AdmissionRequest {
    /// `object` (or `oldObject` when `old`) as a `T`, or why it cannot be read.
    pub fn decode<T: DeserializeOwned>(&self, kind: &str, old: bool) -> Result<T, Verdict> {
        let (field, value) = if old {
            ("oldObject", &self.old_object)
        } else {
            ("object", &self.object)
        };
        let Some(raw) = value else {
            return Err(Verdict::Invalid(format!(
                "request.{field} is missing; a {kind} is expected"
            )));
        };
        let mut decoder = serde_json::Deserializer::from_str(raw.get());
        serde_path_to_error::deserialize(&mut decoder).map_err(|e| {
            Verdict::Invalid(format!(
                "request.{field} is not a valid {kind}: {}: {}",
                e.path(),
                e.inner()
            ))
        })
    }

    /// The namespace of the object with `meta`: its own, else the request's (an object being
    /// created may not carry it yet).
    pub fn namespace_of<'a>(&'a self, meta: &'a ObjectMeta) -> &'a str {
        meta.namespace
            .as_deref()
            .filter(|ns| !ns.is_empty())
            .or(self.namespace.as_deref())
            .unwrap_or_default()
    }

    /// Gives `meta` the identity the API server has not set yet on CREATE (a name for one still
    /// to be generated, the request's namespace, a UID), so the Workload the object would get can
    /// be built before it exists.
    pub fn fill_identity(&self, meta: &mut ObjectMeta) {
        if meta.name.as_deref().is_none_or(str::is_empty) {
            meta.name = Some(format!(
                "{}webhook",
                meta.generate_name.clone().unwrap_or_default()
            ));
        }
        if meta.namespace.as_deref().is_none_or(str::is_empty) {
            meta.namespace = Some(self.namespace.clone().unwrap_or_else(|| "default".into()));
        }
        if meta.uid.as_deref().is_none_or(str::is_empty) {
            meta.uid = Some("not-yet-created".into());
        }
    }

    /// What a validating webhook reads of a write: the new object, and on UPDATE the stored
    /// one; `None` on DELETE and CONNECT, which job webhooks allow unread.
    pub fn written<T: DeserializeOwned>(
        &self,
        kind: &str,
    ) -> Option<Result<(T, Option<T>), Verdict>> {
        let update = match self.operation {
            Operation::Create => false,
            Operation::Update => true,
            Operation::Delete | Operation::Connect => return None,
        };
        let objects = self.decode(kind, false).and_then(|new| {
            let old = if update {
                Some(self.decode(kind, true)?)
            } else {
                None
            };
            Ok((new, old))
        });
        Some(objects)
    }
}

pub use crate::api::json_patch::PatchOp;

/// What a webhook answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Allowed as it is.
    Allow,
    /// Allowed once these operations are applied (a defaulting webhook's changes).
    Patch(Vec<PatchOp>),
    /// Refused: the object breaks a rule (`403 Forbidden`, the reason as the message).
    Deny(String),
    /// Refused: the request's object cannot be read as the webhook's kind (`400`).
    Invalid(String),
}

impl Verdict {
    /// A validating webhook's answer from its field errors, joined as Kubernetes aggregates
    /// them: each distinct message once, one as it is, several as `[a, b]`.
    pub fn from_field_errors(mut errors: Vec<String>) -> Verdict {
        let mut seen = std::collections::BTreeSet::new();
        errors.retain(|message| seen.insert(message.clone()));
        match errors.len() {
            0 => Verdict::Allow,
            1 => Verdict::Deny(errors.remove(0)),
            _ => Verdict::Deny(format!("[{}]", errors.join(", "))),
        }
    }
}

/// The request inside an AdmissionReview body, or why the body is not one.
pub fn parse(body: &[u8]) -> Result<AdmissionRequest, String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Review {
        api_version: String,
        kind: String,
        request: Option<AdmissionRequest>,
    }
    let mut decoder = serde_json::Deserializer::from_slice(body);
    let review: Review = serde_path_to_error::deserialize(&mut decoder).map_err(|e| {
        format!(
            "the body is not an AdmissionReview: {}: {}",
            e.path(),
            e.inner()
        )
    })?;
    // One JSON document and nothing after it, as the API server's decoder reads one: bytes after
    // the review (garbage, a second document) would otherwise be ignored unread.
    decoder
        .end()
        .map_err(|e| format!("the body is not one AdmissionReview: after it, {e}"))?;
    if review.api_version != API_VERSION || review.kind != KIND {
        return Err(format!(
            "expected apiVersion {API_VERSION} and kind {KIND}, found {:?} and {:?}",
            review.api_version, review.kind
        ));
    }
    review
        .request
        .ok_or_else(|| "the AdmissionReview has no request".to_string())
}

/// The AdmissionReview that answers the request with `uid`.
pub fn respond(uid: &str, verdict: &Verdict) -> Value {
    let response = match verdict {
        Verdict::Allow => json!({"uid": uid, "allowed": true}),
        Verdict::Patch(ops) if ops.is_empty() => json!({"uid": uid, "allowed": true}),
        Verdict::Patch(ops) => {
            // Serialising plain strings and JSON values cannot fail.
            let patch = serde_json::to_vec(ops).unwrap_or_default();
            json!({
                "uid": uid,
                "allowed": true,
                "patchType": "JSONPatch",
                "patch": STANDARD.encode(patch),
            })
        }
        Verdict::Deny(message) => json!({
            "uid": uid,
            "allowed": false,
            "status": {"code": 403, "reason": "Forbidden", "message": message},
        }),
        Verdict::Invalid(message) => json!({
            "uid": uid,
            "allowed": false,
            "status": {"code": 400, "reason": "BadRequest", "message": message},
        }),
    };
    json!({"apiVersion": API_VERSION, "kind": KIND, "response": response})
}
