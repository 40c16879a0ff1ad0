//! The Workloads of [`ClusterState`] and the priority classes they take their priority from when
//! their spec names none: a class that changes re-prioritises the workloads that name it.

use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;

use super::admission_input::{self, WorkloadDefaults};
use super::cache::Applied;
use super::cluster::{CachedWorkload, ClassRef, ClusterState, fingerprint};
use super::pod_templates::PodTemplates;
use super::queue_order::QueueOrdering;
use crate::api;
use crate::api::workload::{PriorityClassGroup, PriorityClassKind};
use crate::engine::features::Feature;
use crate::engine::model::Workload;
use crate::engine::{ModelError, WorkloadKey};

/// Identity and queue position for a Workload whose metadata lacks them (manifests given to
/// `kuota simulate`); objects read from a cluster always have both.
#[derive(Clone, Debug)]
pub struct Fallback {
    /// Queue order when `metadata.creationTimestamp` is absent.
    pub creation: i64,
    /// Used when `metadata.uid` is absent.
    pub uid: String,
}

impl ClusterState {
    /// A Workload. One the conversion refuses (or whose admission the topology cannot hold) is set
    /// aside and leaves the engine.
    pub fn apply_workload(&mut self, workload: &api::Workload, fallback: Fallback) {
        let key = WorkloadKey::of(workload);
        let (class, templates, converted) = self.convert_workload(workload, fallback);
        let cached = match &converted {
            Ok(model) => Ok(CachedWorkload {
                fingerprint: fingerprint(model),
                priority: model.priority,
                class: class.map(Box::new),
                // A finished Workload never waits again: nothing counts its templates.
                templates: if model.finished {
                    PodTemplates::default()
                } else {
                    templates
                },
            }),
            Err(error) => Err(error.clone()),
        };
        match (self.workloads.apply(key.clone(), cached), converted) {
            (Applied::Changed(_), Ok(model)) => {
                if let Err(error) = self.engine.upsert_workload(model) {
                    self.workloads.apply(key.clone(), Err(error));
                    self.engine.remove_workload(&key);
                }
            }
            (Applied::SetAside { had_valid: true }, _) => {
                self.engine.remove_workload(&key);
            }
            _ => {}
        }
    }

    /// `workload` as the engine would hold it, without giving it to the engine: a Workload kept
    /// out of it (waiting out a requeue backoff) still has its place in its queue's order.
    pub fn workload_model(
        &self,
        workload: &api::Workload,
        fallback: Fallback,
    ) -> Result<Workload, ModelError> {
        self.convert_workload(workload, fallback).2
    }

    /// The one conversion of a Workload: the class its priority comes from, its pod templates,
    /// and the engine's model of it.
    fn convert_workload(
        &self,
        workload: &api::Workload,
        fallback: Fallback,
    ) -> (Option<ClassRef>, PodTemplates, Result<Workload, ModelError>) {
        let namespace = workload.namespace().unwrap_or_default();
        let class = match (&workload.spec.priority, &workload.spec.priority_class_ref) {
            (None, Some(r)) => Some(match (&r.group, &r.kind) {
                (PriorityClassGroup::Kueue, PriorityClassKind::WorkloadPriorityClass) => {
                    ClassRef::Workload(r.name.clone())
                }
                _ => ClassRef::Pod(r.name.clone()),
            }),
            _ => None,
        };
        let templates = PodTemplates::of(workload);
        let defaults = WorkloadDefaults {
            creation: fallback.creation,
            uid: fallback.uid,
            class_priority: class.as_ref().and_then(|c| self.class_value(c)),
            resources: self.resource_context(&namespace, &templates),
        };
        let reclaim = self.engine.features().enabled(Feature::ReclaimablePods);
        let gated = self.engine.features().enabled(Feature::AdmissionGatedBy);
        let ordering = QueueOrdering {
            requeuing_timestamp: self.engine.requeuing_timestamp(),
            priority_sorting_within_cohort: self
                .engine
                .features()
                .enabled(Feature::PrioritySortingWithinCohort),
        };
        let converted =
            admission_input::workload(workload, defaults, &ordering).map(|mut model| {
                if reclaim {
                    without_reclaimable(&mut model, workload);
                }
                if !gated {
                    model.admission_gated_by = None;
                }
                model
            });
        (class, templates, converted)
    }

    /// Makes the engine hold `workload` exactly as the object says even when the cache has it
    /// unchanged: a decision the engine made that could not be written is undone this way.
    pub fn restore_workload(&mut self, workload: &api::Workload, fallback: Fallback) {
        self.workloads.delete(&WorkloadKey::of(workload));
        self.apply_workload(workload, fallback);
    }

    /// Forgets the Workload at `key`; its quota is released.
    pub fn delete_workload(&mut self, key: &WorkloadKey) {
        if self.workloads.delete(key) {
            self.engine.remove_workload(key);
        }
    }

    /// A WorkloadPriorityClass.
    pub fn apply_workload_priority_class(&mut self, class: &api::WorkloadPriorityClass) {
        let name = class.name_any();
        if let Applied::Changed(_) = self
            .workload_priority_classes
            .apply(name.clone(), Ok(class.spec.value))
        {
            self.reprioritise(&ClassRef::Workload(name));
        }
    }

    pub fn delete_workload_priority_class(&mut self, name: &str) {
        if self.workload_priority_classes.delete(name) {
            self.reprioritise(&ClassRef::Workload(name.to_string()));
        }
    }

    /// A PriorityClass; the global default also gives pods without a class their priority when
    /// the Workload was built.
    pub fn apply_priority_class(&mut self, class: &PriorityClass) {
        let name = class.name_any();
        let value = (class.value, class.global_default.unwrap_or(false));
        if let Applied::Changed(_) = self.priority_classes.apply(name.clone(), Ok(value)) {
            self.reprioritise(&ClassRef::Pod(name));
        }
    }

    pub fn delete_priority_class(&mut self, name: &str) {
        if self.priority_classes.delete(name) {
            self.reprioritise(&ClassRef::Pod(name.to_string()));
        }
    }

    fn class_value(&self, class: &ClassRef) -> Option<i32> {
        match class {
            ClassRef::Workload(name) => self.workload_priority_classes.get(name).copied(),
            ClassRef::Pod(name) => self.priority_classes.get(name).map(|(value, _)| *value),
        }
    }

    /// Gives every workload that takes its priority from `class` the class's value now.
    fn reprioritise(&mut self, class: &ClassRef) {
        let priority = self.class_value(class).unwrap_or(0);
        let affected: Vec<WorkloadKey> = self
            .workloads
            .iter()
            .filter(|(_, w)| w.class.as_deref() == Some(class) && w.priority != priority)
            .map(|(key, _)| key.clone())
            .collect();
        for key in affected {
            let Some(mut cached) = self.workloads.get(&key).cloned() else {
                continue;
            };
            match self.engine.set_priority(&key, priority) {
                // A valid cached Workload is always in the engine: a refused upsert sets it aside.
                Ok(false) => continue,
                Ok(true) => {}
                Err(error) => {
                    tracing::warn!(workload = %key, %error, "priority change not applied");
                }
            }
            cached.priority = priority;
            self.workloads.apply(key, Ok(cached));
        }
    }
}

/// Kueue's pods still needed: each pod set's count less its reclaimable pods (never below zero,
/// and `minCount` no higher), so a waiting Workload asks only for those and an admitted one holds
/// quota only for those.
fn without_reclaimable(model: &mut Workload, workload: &api::Workload) {
    let reclaimable = workload
        .status
        .iter()
        .flat_map(|s| s.reclaimable_pods.iter());
    for pods in reclaimable {
        if let Some(pod_set) = model.pod_sets.iter_mut().find(|p| p.name == pods.name) {
            pod_set.count = pod_set.count.saturating_sub(pods.count.max(0)).max(0);
            pod_set.min_count = pod_set.min_count.map(|min| min.min(pod_set.count));
        }
    }
}

#[cfg(test)]
mod tests;
