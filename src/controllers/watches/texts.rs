//! Condition texts shared between the Workloads read with equal ones. Thousands of Workloads carry
//! the same few condition types, statuses and reasons, and messages that differ only by their
//! ClusterQueue; each Workload read keeps a reference to one copy of each instead of its own.

use std::hash::{BuildHasher, RandomState};

use super::weak_pool::WeakPool;
use crate::api::{Text, Workload};

/// The condition texts of the Workloads read so far.
#[derive(Debug, Default)]
pub struct ConditionTexts {
    pool: WeakPool<str>,
    hasher: RandomState,
}

impl ConditionTexts {
    /// `workload` with each condition text replaced by an equal one already held, when there is
    /// one.
    pub fn share(&mut self, mut workload: Workload) -> Workload {
        if let Some(status) = workload.status.as_mut() {
            for condition in &mut status.conditions {
                self.text(&mut condition.type_);
                self.text(&mut condition.status);
                self.text(&mut condition.reason);
                self.text(&mut condition.message);
            }
        }
        workload
    }

    fn text(&mut self, text: &mut Text) {
        let hash = self.hasher.hash_one(text.as_str());
        *text = Text::from(self.pool.share(hash, std::mem::take(text).into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str, message: &str) -> Workload {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"podSets": []},
            "status": {"conditions": [{"type": "QuotaReserved", "status": "True",
                "reason": "QuotaReserved", "message": message,
                "lastTransitionTime": "2026-11-27T18:38:57Z"}]},
        }))
        .expect("test workload")
    }

    fn message(workload: &Workload) -> &Text {
        &workload.status.as_ref().expect("status").conditions[0].message
    }

    #[test]
    fn workloads_with_equal_condition_texts_share_them_and_unequal_ones_do_not() {
        let mut texts = ConditionTexts::default();
        let a = texts.share(workload("a", "Quota reserved in ClusterQueue cq-1"));
        let b = texts.share(workload("b", "Quota reserved in ClusterQueue cq-1"));
        let c = texts.share(workload("c", "Quota reserved in ClusterQueue cq-2"));
        assert!(message(&a).shares(message(&b)));
        assert!(!message(&a).shares(message(&c)));
        let (ca, cb) = (
            &a.status.as_ref().expect("status").conditions[0],
            &b.status.as_ref().expect("status").conditions[0],
        );
        assert!(ca.type_.shares(&cb.type_) && ca.reason.shares(&cb.reason));
        assert_eq!(a, workload("a", "Quota reserved in ClusterQueue cq-1"));
        assert_eq!(message(&c), "Quota reserved in ClusterQueue cq-2");
    }
}
