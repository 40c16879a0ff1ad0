//! The LimitRanges and RuntimeClasses of [`ClusterState`]: what Kueue adjusts a Workload's pod
//! templates by before counting them. A change counts again the Workloads it concerns that wait
//! (Kueue's Workload controller requeues the pending Workloads of the LimitRange's namespace, or
//! those naming the RuntimeClass); an admitted Workload keeps the quota its admission records.

use k8s_openapi::api::core::v1::{LimitRange, PodSpec};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::ResourceExt;

use super::cache::Applied;
use super::cluster::{CachedWorkload, ClusterState};
use super::limit_ranges::{limit_range, runtime_class_overhead, summarize};
use super::pod_templates::PodTemplates;
use super::workload_resources::{ResourceContext, inadmissible_message, pod_set_resources};
use crate::api::ObjectKey;
use crate::engine::model::Workload;
use crate::engine::{ModelError, WorkloadKey};

impl ClusterState {
    /// A LimitRange: the waiting Workloads of its namespace are counted again.
    pub fn apply_limit_range(&mut self, range: &LimitRange) {
        let key = ObjectKey::of(range);
        let namespace = key.namespace.clone();
        if changed(self.limit_ranges.apply(key, limit_range(range))) {
            self.recount_namespace(&namespace);
        }
    }

    pub fn delete_limit_range(&mut self, key: &ObjectKey) {
        if self.limit_ranges.delete(key) {
            self.recount_namespace(&key.namespace);
        }
    }

    /// A RuntimeClass: the waiting Workloads whose templates name it are counted again.
    pub fn apply_runtime_class(&mut self, class: &RuntimeClass) {
        let name = class.name_any();
        if changed(
            self.runtime_classes
                .apply(name.clone(), runtime_class_overhead(class)),
        ) {
            self.recount_naming(&name);
        }
    }

    pub fn delete_runtime_class(&mut self, name: &str) {
        if self.runtime_classes.delete(name) {
            self.recount_naming(name);
        }
    }

    /// What the Workloads of `namespace` with `templates` are adjusted by now.
    pub(super) fn resource_context(
        &self,
        namespace: &str,
        templates: &PodTemplates,
    ) -> ResourceContext {
        ResourceContext {
            limits: summarize(self.limit_ranges.in_namespace(namespace).map(|(_, l)| l)),
            runtime_class_overheads: templates
                .runtime_class_names()
                .filter_map(|name| Some((name.clone(), self.runtime_classes.get(name)?.clone())))
                .collect(),
            counting: self.counting.clone(),
        }
    }

    fn recount_namespace(&mut self, namespace: &str) {
        let keys = self
            .workloads
            .in_namespace(namespace)
            .map(|(k, _)| k.clone());
        self.recount_waiting(keys.collect());
    }

    fn recount_naming(&mut self, runtime_class: &str) {
        let keys = self
            .workloads
            .iter()
            .filter(|(_, w)| w.templates.names_runtime_class(runtime_class))
            .map(|(k, _)| k.clone());
        self.recount_waiting(keys.collect());
    }

    /// Counts again the pod sets of the Workloads at `keys` that the engine holds waiting. An
    /// admitted one (also one admitted in memory, its write not landed yet) is left as it is:
    /// its quota is what its admission records.
    fn recount_waiting(&mut self, keys: Vec<WorkloadKey>) {
        for key in keys {
            let Some(cached) = self.workloads.get(&key).cloned() else {
                continue;
            };
            let Some(mut model) = self.engine.workload(&key) else {
                continue;
            };
            if model.admission.is_some() || model.finished {
                continue;
            }
            let context = self.resource_context(&key.namespace, &cached.templates);
            let recounted = recount(&key.to_string(), &mut model, &cached.templates, &context)
                .and_then(|changed| match changed {
                    true => self.engine.upsert_workload(model.clone()).map(|()| true),
                    false => Ok(false),
                });
            match recounted {
                Ok(false) => {}
                Ok(true) => {
                    let fingerprint = super::cluster::fingerprint(&model);
                    self.workloads.apply(
                        key,
                        Ok(CachedWorkload {
                            fingerprint,
                            ..cached
                        }),
                    );
                }
                Err(error) => {
                    self.workloads.apply(key.clone(), Err(error));
                    self.engine.remove_workload(&key);
                }
            }
        }
    }
}

fn changed<T>(applied: Applied<'_, T>) -> bool {
    matches!(
        applied,
        Applied::Changed(_) | Applied::SetAside { had_valid: true }
    )
}

/// Sets each pod set's requests and the Workload's resource message from its templates in
/// `context`; returns whether anything changed.
fn recount(
    label: &str,
    model: &mut Workload,
    templates: &PodTemplates,
    context: &ResourceContext,
) -> Result<bool, ModelError> {
    let empty = PodSpec::default();
    let mut violations = Vec::with_capacity(model.pod_sets.len());
    let mut changed = false;
    for (index, (pod_set, template)) in model.pod_sets.iter_mut().zip(templates.iter()).enumerate()
    {
        let spec = template.spec.as_ref().unwrap_or(&empty);
        let resources = pod_set_resources(label, index, spec, context)?;
        let requests = resources.requests.into_iter().collect();
        if pod_set.requests != requests {
            pod_set.requests = requests;
            changed = true;
        }
        violations.push(resources.violations);
    }
    let message = inadmissible_message(violations.iter().map(Vec::as_slice));
    if model.invalid_resources != message {
        model.invalid_resources = message;
        changed = true;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests;
