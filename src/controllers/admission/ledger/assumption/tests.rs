use std::collections::BTreeMap;

use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::workload_status::Admission;

fn condition(type_: &str, status: &str, reason: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: Default::default(),
        last_transition_time: Time("2026-11-23T10:00:00Z".parse().unwrap()),
        observed_generation: None,
    }
}

fn admission() -> Admission {
    Admission {
        cluster_queue: "team".into(),
        pod_set_assignments: Vec::new(),
    }
}

#[test]
fn overlay_shows_the_decision_and_keeps_what_others_wrote() {
    let mut read = Workload::new("job", Default::default());
    read.metadata.annotations = Some(BTreeMap::from([
        ("user".to_string(), "keep".to_string()),
        (
            kuota_annotations::FAIR_SHARE_SHIELD.to_string(),
            "old".to_string(),
        ),
    ]));
    read.status = Some(WorkloadStatus {
        conditions: vec![
            condition("QuotaReserved", "False", "WaitingForQuota"),
            condition("PodsReady", "False", "WaitForStart"),
        ],
        ..WorkloadStatus::default()
    });
    let assumption = Assumption {
        effect: Effect::Claim,
        status: WorkloadStatus {
            admission: Some(admission()),
            conditions: vec![
                condition("QuotaReserved", "True", "QuotaReserved"),
                condition("Admitted", "True", "Admitted"),
            ],
            ..WorkloadStatus::default()
        },
        annotations: Some(BTreeMap::from([(
            kuota_annotations::PREEMPTION_CREDIT_SPENT.to_string(),
            "true".to_string(),
        )])),
        frees: false,
    };
    let seen = overlay(&read, &assumption);
    let status = seen.status.expect("status");
    assert_eq!(status.admission, Some(admission()));
    let types: Vec<(&str, &str)> = status
        .conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.status.as_str()))
        .collect();
    assert_eq!(
        types,
        [
            ("PodsReady", "False"),
            ("QuotaReserved", "True"),
            ("Admitted", "True")
        ]
    );
    let annotations = seen.metadata.annotations.expect("annotations");
    assert_eq!(annotations["user"], "keep");
    assert_eq!(
        annotations[kuota_annotations::PREEMPTION_CREDIT_SPENT],
        "true"
    );
    assert!(!annotations.contains_key(kuota_annotations::FAIR_SHARE_SHIELD));
}

#[test]
fn only_a_smaller_revision_is_older() {
    assert!(is_older(Some("9"), Some("10")));
    assert!(!is_older(Some("10"), Some("10")));
    assert!(!is_older(Some("11"), Some("10")));
    assert!(!is_older(Some("opaque"), Some("10")));
    assert!(!is_older(None, Some("10")));
}
