//! `integrations.labelKeysToCopy`: the labels of a job, or of a pod group's pods, that Kueue
//! copies onto the Workload it creates for them (only at creation).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use thiserror::Error;

use crate::api::Workload;

/// Kueue's wording for a pod group whose pods disagree on a copied label.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("constructing workload: pods have different label values")]
pub struct LabelMismatch;

/// The entries of `labels` whose key is among `keys`.
pub fn copied_labels(
    labels: Option<&BTreeMap<String, String>>,
    keys: &[String],
) -> BTreeMap<String, String> {
    keys.iter()
        .filter_map(|key| Some((key.clone(), labels?.get(key)?.clone())))
        .collect()
}

/// The copied labels of pods (one pod, or a group's members): a key some pod has, with the value
/// every pod that has it agrees on.
pub fn group_labels(
    pods: &[&Pod],
    keys: &[String],
) -> Result<BTreeMap<String, String>, LabelMismatch> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for pod in pods {
        for (key, value) in copied_labels(pod.metadata.labels.as_ref(), keys) {
            match out.get(&key) {
                Some(seen) if *seen != value => return Err(LabelMismatch),
                Some(_) => {}
                None => {
                    out.insert(key, value);
                }
            }
        }
    }
    Ok(out)
}

/// Adds `copied` to the Workload's labels, never over one it has: the labels Kueue sets itself
/// (such as `kueue.x-k8s.io/job-uid`) stay.
pub fn add_labels(workload: &mut Workload, copied: BTreeMap<String, String>) {
    let labels = workload.metadata.labels.get_or_insert_default();
    for (key, value) in copied {
        labels.entry(key).or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::WorkloadSpec;

    fn labels(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn pod(entries: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.labels = Some(labels(entries));
        pod
    }

    #[test]
    fn only_the_listed_keys_that_are_present_are_copied() {
        let keys = vec!["team".to_string(), "cost-center".to_string()];
        let job = labels(&[("team", "a"), ("other", "x")]);
        assert_eq!(copied_labels(Some(&job), &keys), labels(&[("team", "a")]));
        assert!(copied_labels(None, &keys).is_empty());
        assert!(copied_labels(Some(&job), &[]).is_empty());
    }

    #[test]
    fn a_copied_label_never_replaces_one_the_workload_has() {
        let mut workload = Workload::new("w", WorkloadSpec::default());
        workload.metadata.labels = Some(labels(&[("kueue.x-k8s.io/job-uid", "u1")]));
        add_labels(
            &mut workload,
            labels(&[("kueue.x-k8s.io/job-uid", "forged"), ("team", "a")]),
        );
        assert_eq!(
            workload.metadata.labels,
            Some(labels(&[("kueue.x-k8s.io/job-uid", "u1"), ("team", "a")]))
        );
    }

    #[test]
    fn a_pod_group_must_agree_on_each_copied_label() {
        let keys = vec!["team".to_string(), "tier".to_string()];
        let (a, b, c) = (
            pod(&[("team", "a")]),
            pod(&[("team", "a"), ("tier", "gold")]),
            pod(&[("team", "b")]),
        );
        assert_eq!(
            group_labels(&[&a, &b], &keys),
            Ok(labels(&[("team", "a"), ("tier", "gold")]))
        );
        assert_eq!(group_labels(&[&a, &c], &keys), Err(LabelMismatch));
        assert_eq!(
            LabelMismatch.to_string(),
            "constructing workload: pods have different label values"
        );
    }
}
