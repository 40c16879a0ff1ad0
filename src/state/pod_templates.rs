//! A Workload's pod templates as [`super::ClusterState`] keeps them, to count them again when a
//! LimitRange or RuntimeClass changes.

use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;

use crate::api;

/// A Workload's pod templates, the ones the object read holds (so not a copy). Equal when they
/// are the same templates: the watch makes equal ones the same.
#[derive(Clone, Debug, Default)]
pub(super) struct PodTemplates(Box<[Arc<PodTemplateSpec>]>);

impl PartialEq for PodTemplates {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl PodTemplates {
    pub(super) fn of(workload: &api::Workload) -> Self {
        PodTemplates(
            workload
                .spec
                .pod_sets
                .iter()
                .map(|p| p.template.clone())
                .collect(),
        )
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<PodTemplateSpec>> {
        self.0.iter()
    }

    pub(super) fn names_runtime_class(&self, class: &str) -> bool {
        self.runtime_class_names().any(|name| name == class)
    }

    pub(super) fn runtime_class_names(&self) -> impl Iterator<Item = &String> {
        self.0
            .iter()
            .filter_map(|t| t.spec.as_ref()?.runtime_class_name.as_ref())
    }
}
