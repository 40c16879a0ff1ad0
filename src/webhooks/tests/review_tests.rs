use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::*;
use crate::webhooks::review::{Operation, PatchOp};

#[test]
fn a_review_is_read_with_its_uid_operation_and_objects() {
    let object = cluster_queue("cq", json!({}));
    let request = request("UPDATE", &object, Some(&object));
    assert_eq!(request.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(request.operation, Operation::Update);
    assert_eq!(request.kind.kind, "ClusterQueue");
    assert_eq!(request.name, "cq");
    let read = |raw: &Option<Box<serde_json::value::RawValue>>| {
        raw.as_ref()
            .map(|r| serde_json::from_str::<serde_json::Value>(r.get()).unwrap())
    };
    assert_eq!(read(&request.object), Some(object.clone()));
    assert_eq!(read(&request.old_object), Some(object));
}

#[test]
fn a_missing_or_null_old_object_reads_as_absent() {
    let object = cluster_queue("cq", json!({}));
    let request = request("CREATE", &object, None);
    assert!(request.old_object.is_none());
    let refused = request.decode::<crate::api::ClusterQueue>("ClusterQueue", true);
    assert!(
        matches!(&refused, Err(Verdict::Invalid(why)) if why.contains("request.oldObject is missing")),
        "{refused:?}"
    );
}

#[test]
fn a_body_that_is_not_an_admission_review_is_refused_with_the_reason() {
    for (body, fragment) in [
        ("not json", "the body is not an AdmissionReview"),
        ("{\"apiVersion\": \"admission.k8s.io/v1\"}", "kind"),
        (
            "{\"apiVersion\": \"admission.k8s.io/v1beta1\", \"kind\": \"AdmissionReview\"}",
            "expected apiVersion admission.k8s.io/v1",
        ),
        (
            "{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\"}",
            "has no request",
        ),
        (
            "{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\", \"request\": {\"uid\": \"u\", \"operation\": \"PATCH\"}}",
            "request.operation",
        ),
    ] {
        let message = review::parse(body.as_bytes()).expect_err(body);
        assert!(
            message.contains(fragment),
            "{fragment:?} not in {message:?}"
        );
    }
}

#[test]
fn bytes_after_the_review_refuse_the_body() {
    let valid = review_body("CREATE", &cluster_queue("cq", json!({})), None).to_string();
    assert!(review::parse(valid.as_bytes()).is_ok());
    assert!(review::parse(format!("{valid} \n").as_bytes()).is_ok());
    for trailing in [&b"\xff"[..], b"x", b"{}", b"]"] {
        let mut body = valid.clone().into_bytes();
        body.extend_from_slice(trailing);
        let message = review::parse(&body).expect_err("trailing bytes");
        assert!(
            message.starts_with("the body is not one AdmissionReview: after it"),
            "{message}"
        );
    }
}

#[test]
fn answers_carry_the_uid_and_the_verdict() {
    let allowed = review::respond("u1", &Verdict::Allow);
    assert_eq!(
        allowed,
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "u1", "allowed": true}})
    );
    let denied = review::respond("u2", &Verdict::Deny("no".into()));
    assert_eq!(
        denied["response"],
        json!({"uid": "u2", "allowed": false,
            "status": {"code": 403, "reason": "Forbidden", "message": "no"}})
    );
    let invalid = review::respond("u3", &Verdict::Invalid("unreadable".into()));
    assert_eq!(invalid["response"]["status"]["code"], 400);
    assert_eq!(invalid["response"]["allowed"], false);
}

#[test]
fn a_patch_is_sent_as_base64_json_patch() {
    let ops = vec![
        PatchOp::add("/metadata/finalizers", json!(["f"])),
        PatchOp::remove("/x"),
    ];
    let answer = review::respond("u", &Verdict::Patch(ops));
    let response = &answer["response"];
    assert_eq!(response["allowed"], true);
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = STANDARD
        .decode(response["patch"].as_str().expect("a string"))
        .expect("base64");
    let patch: serde_json::Value = serde_json::from_slice(&patch).expect("json");
    assert_eq!(
        patch,
        json!([{"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
               {"op": "remove", "path": "/x"}])
    );
    let empty = review::respond("u", &Verdict::Patch(Vec::new()));
    assert!(empty["response"].get("patch").is_none());
}

#[test]
fn an_object_of_the_wrong_shape_is_unreadable_not_a_panic() {
    let broken = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
        "metadata": {"name": "cq"}, "spec": {"queueingStrategy": "Sometimes"}});
    match validate(KueueValidating::ClusterQueue, &broken, None) {
        Verdict::Invalid(message) => {
            assert!(
                message
                    .contains("request.object is not a valid ClusterQueue: spec.queueingStrategy"),
                "{message}"
            );
        }
        other => panic!("expected an unreadable object, got {other:?}"),
    }
    let no_object = review::parse(
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"UPDATE","object":{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Cohort","metadata":{"name":"c"},"spec":{}}}}"#,
    )
    .expect("well-formed");
    let verdict =
        Endpoint::Validate(KueueValidating::Cohort).decide(&Webhooks::default(), &no_object);
    assert_eq!(
        verdict,
        Verdict::Invalid("request.oldObject is missing; a Cohort is expected".into())
    );
}
