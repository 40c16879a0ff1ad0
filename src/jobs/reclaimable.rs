//! Reclaimable pods (gate `ReclaimablePods`): the pods of a running job whose quota its Workload
//! may give back before the job ends, as Kueue's integrations count them into
//! `status.reclaimablePods`.

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;

use super::pod_group::role_hash;
use crate::api::Workload;
use crate::api::common::DEFAULT_POD_SET_NAME;
use crate::api::workload_status::ReclaimablePod;

/// A batch Job's: once fewer completions remain than pods run in parallel, the difference. None
/// while a single pod runs or none has succeeded.
pub fn job_reclaimable_pods(job: &Job) -> Vec<ReclaimablePod> {
    let spec = job.spec.as_ref();
    let parallelism = spec.and_then(|s| s.parallelism).unwrap_or(1);
    let succeeded = job.status.as_ref().and_then(|s| s.succeeded).unwrap_or(0);
    if parallelism == 1 || succeeded == 0 {
        return Vec::new();
    }
    let remaining = spec
        .and_then(|s| s.completions)
        .unwrap_or(parallelism)
        .saturating_sub(succeeded);
    if remaining >= parallelism {
        return Vec::new();
    }
    vec![ReclaimablePod {
        name: DEFAULT_POD_SET_NAME.to_owned(),
        count: parallelism.saturating_sub(remaining),
    }]
}

/// A pod group's: its succeeded pods, per role (the pod set each role hash names).
pub fn group_reclaimable_pods(pods: &[Pod]) -> Vec<ReclaimablePod> {
    let mut per_role: BTreeMap<String, i32> = BTreeMap::new();
    for pod in pods {
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if phase == Some("Succeeded") {
            *per_role.entry(role_hash(pod)).or_default() += 1;
        }
    }
    per_role
        .into_iter()
        .map(|(name, count)| ReclaimablePod { name, count })
        .collect()
}

/// `pods`, when the Workload does not show them yet (in any order): the write to make.
pub fn to_write(workload: &Workload, pods: Vec<ReclaimablePod>) -> Option<Vec<ReclaimablePod>> {
    let written = workload.status.as_ref().map(|s| &s.reclaimable_pods[..]);
    (!same_counts(&pods, written.unwrap_or_default())).then_some(pods)
}

/// Whether two lists give each pod set the same count, in any order.
fn same_counts(a: &[ReclaimablePod], b: &[ReclaimablePod]) -> bool {
    let counts = |list: &[ReclaimablePod]| -> BTreeMap<String, i32> {
        list.iter().map(|p| (p.name.clone(), p.count)).collect()
    };
    a.len() == b.len() && counts(a) == counts(b)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::api::keys::annotations;

    fn job(mut spec: Value, succeeded: i32) -> Job {
        spec["template"] = json!({"spec": {"containers": [{"name": "c"}]}});
        serde_json::from_value(json!({
            "metadata": {"name": "j", "namespace": "ns"},
            "spec": spec,
            "status": {"succeeded": succeeded},
        }))
        .unwrap()
    }

    fn counts(list: Vec<ReclaimablePod>) -> Vec<(String, i32)> {
        list.into_iter().map(|p| (p.name, p.count)).collect()
    }

    /// Kueue's count: none for one pod in parallel or before a success; then as many as fewer
    /// completions remain than pods run in parallel.
    #[test]
    fn a_jobs_reclaimable_pods_follow_the_remaining_completions() {
        let counted = |spec: Value, succeeded| counts(job_reclaimable_pods(&job(spec, succeeded)));
        let main = |count: i32| vec![(DEFAULT_POD_SET_NAME.to_owned(), count)];
        assert!(counted(json!({"parallelism": 1, "completions": 5}), 4).is_empty());
        assert!(counted(json!({"parallelism": 4, "completions": 10}), 0).is_empty());
        // 10 completions, 4 in parallel: 6 left after 4 successes, still 4 pods needed.
        assert!(counted(json!({"parallelism": 4, "completions": 10}), 4).is_empty());
        assert_eq!(
            counted(json!({"parallelism": 4, "completions": 10}), 7),
            main(1)
        );
        assert_eq!(
            counted(json!({"parallelism": 4, "completions": 10}), 9),
            main(3)
        );
        // Without completions, as many as the parallelism: each success frees one pod.
        assert_eq!(counted(json!({"parallelism": 3}), 1), main(1));
    }

    #[test]
    fn a_groups_reclaimable_pods_are_its_succeeded_pods_per_role() {
        let pod = |role: &str, phase: &str| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"annotations": {(annotations::ROLE_HASH): role}},
                "status": {"phase": phase},
            }))
            .unwrap()
        };
        let pods = [
            pod("driver", "Succeeded"),
            pod("worker", "Succeeded"),
            pod("worker", "Succeeded"),
            pod("worker", "Running"),
            pod("worker", "Failed"),
        ];
        assert_eq!(
            counts(group_reclaimable_pods(&pods)),
            vec![("driver".to_owned(), 1), ("worker".to_owned(), 2)]
        );
    }

    #[test]
    fn counts_compare_in_any_order() {
        let list = |entries: &[(&str, i32)]| -> Vec<ReclaimablePod> {
            entries
                .iter()
                .map(|(n, c)| ReclaimablePod {
                    name: n.to_string(),
                    count: *c,
                })
                .collect()
        };
        assert!(same_counts(
            &list(&[("a", 1), ("b", 2)]),
            &list(&[("b", 2), ("a", 1)])
        ));
        assert!(!same_counts(&list(&[("a", 1)]), &list(&[("a", 2)])));
        assert!(!same_counts(&list(&[("a", 1)]), &[]));
    }
}
