//! Where a job's Workload takes its priority from, given the priority classes that exist.

use std::collections::BTreeMap;

use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::keys::{condition_types, labels};
use crate::api::workload::{PriorityClassGroup, PriorityClassKind, PriorityClassRef};
use crate::api::{Workload, WorkloadPriorityClass};
use crate::status::conditions::is_true;

/// Kueue's `WorkloadPriorityClassDefaulting`: the WorkloadPriorityClass a job naming none is
/// labelled with, when it exists.
pub const DEFAULT_WORKLOAD_PRIORITY_CLASS: &str = "default";

/// Labels `meta` (a job, pod or Deployment as its webhook receives it) with the `default`
/// WorkloadPriorityClass when it names no class and `default_exists`; returns whether it did. The
/// label then wins over a pod PriorityClass and the global default, as in Kueue, which sets it
/// whatever the pod template names. The caller checks the feature gate and that no owner
/// managed by kuota takes care of the object.
pub fn default_workload_priority_class(meta: &mut ObjectMeta, default_exists: bool) -> bool {
    let named = meta
        .labels
        .as_ref()
        .and_then(|all| all.get(labels::PRIORITY_CLASS))
        .is_some_and(|name| !name.is_empty());
    if named || !default_exists {
        return false;
    }
    meta.labels.get_or_insert_default().insert(
        labels::PRIORITY_CLASS.to_owned(),
        DEFAULT_WORKLOAD_PRIORITY_CLASS.to_owned(),
    );
    true
}

/// The priority classes a job's Workload may name: WorkloadPriorityClasses, pod PriorityClasses,
/// and which PriorityClass is the global default. The caller fills it from its cache or input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriorityLookup {
    workload_priority_classes: BTreeMap<String, i32>,
    priority_classes: BTreeMap<String, i32>,
    global_defaults: BTreeMap<String, i32>,
}

/// The priority a Workload gets and the class it came from, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResolvedPriority {
    pub(crate) class: Option<PriorityClassRef>,
    pub(crate) value: i32,
}

impl PriorityLookup {
    /// An empty lookup: no classes, no global default.
    pub fn new() -> Self {
        Self::default()
    }

    /// A lookup holding the given objects.
    pub fn from_objects<'a>(
        workload_priority_classes: impl IntoIterator<Item = &'a WorkloadPriorityClass>,
        priority_classes: impl IntoIterator<Item = &'a PriorityClass>,
    ) -> Self {
        let mut lookup = Self::new();
        for class in workload_priority_classes {
            if let Some(name) = &class.metadata.name {
                lookup.add_workload_priority_class(name.clone(), class.spec.value);
            }
        }
        for class in priority_classes {
            if let Some(name) = &class.metadata.name {
                lookup.add_priority_class(
                    name.clone(),
                    class.value,
                    class.global_default.unwrap_or(false),
                );
            }
        }
        lookup
    }

    /// Records a WorkloadPriorityClass and its value.
    pub fn add_workload_priority_class(&mut self, name: impl Into<String>, value: i32) {
        self.workload_priority_classes.insert(name.into(), value);
    }

    /// Records a pod PriorityClass, its value and whether it is marked `globalDefault`.
    pub fn add_priority_class(
        &mut self,
        name: impl Into<String>,
        value: i32,
        global_default: bool,
    ) {
        let name = name.into();
        if global_default {
            self.global_defaults.insert(name.clone(), value);
        } else {
            self.global_defaults.remove(&name);
        }
        self.priority_classes.insert(name, value);
    }

    /// The value of the named WorkloadPriorityClass, if it exists.
    pub fn workload_priority_class(&self, name: &str) -> Option<i32> {
        self.workload_priority_classes.get(name).copied()
    }

    /// The value of the named PriorityClass, if it exists.
    fn priority_class(&self, name: &str) -> Option<i32> {
        self.priority_classes.get(name).copied()
    }

    /// The global-default PriorityClass. The API server allows only one, but two can slip in
    /// through concurrent creation; as Kubernetes does, the one with the lowest value wins
    /// (ties go to the first name, so the answer does not depend on insertion order).
    pub fn global_default(&self) -> Option<(&str, i32)> {
        self.global_defaults
            .iter()
            .min_by_key(|(_, value)| **value)
            .map(|(name, value)| (name.as_str(), *value))
    }
}

/// A priority class a job names that does not exist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MissingClass {
    WorkloadPriorityClass(String),
    PriorityClass(String),
}

/// The class as an error names it: `WorkloadPriorityClass "high"`.
impl std::fmt::Display for MissingClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MissingClass::WorkloadPriorityClass(name) => {
                write!(f, "WorkloadPriorityClass {name:?}")
            }
            MissingClass::PriorityClass(name) => write!(f, "PriorityClass {name:?}"),
        }
    }
}

impl PriorityLookup {
    /// The priority of a Workload whose job names `workload_priority_class` (its label) and whose
    /// first pod template names `pod_priority_class`: the WorkloadPriorityClass wins, then the
    /// PriorityClass, then the global default, else 0 with no class. A named class that does not
    /// exist is an error, never a fallback: Kueue waits for the class to appear.
    pub(crate) fn resolve(
        &self,
        workload_priority_class: Option<&str>,
        pod_priority_class: Option<&str>,
    ) -> Result<ResolvedPriority, MissingClass> {
        if let Some(name) = workload_priority_class {
            let value = self
                .workload_priority_class(name)
                .ok_or_else(|| MissingClass::WorkloadPriorityClass(name.to_owned()))?;
            return Ok(ResolvedPriority {
                class: Some(workload_priority_class_ref(name)),
                value,
            });
        }
        if let Some(name) = pod_priority_class {
            let value = self
                .priority_class(name)
                .ok_or_else(|| MissingClass::PriorityClass(name.to_owned()))?;
            return Ok(ResolvedPriority {
                class: Some(priority_class_ref(name)),
                value,
            });
        }
        Ok(match self.global_default() {
            Some((name, value)) => ResolvedPriority {
                class: Some(priority_class_ref(name)),
                value,
            },
            None => ResolvedPriority {
                class: None,
                value: 0,
            },
        })
    }
}

/// Kueue's `UpdateWorkloadPriority` for one existing Workload of a job whose
/// `kueue.x-k8s.io/priority-class` label is `job_class`: the priority to write when the Workload
/// names another WorkloadPriorityClass than the label (or none while the label names one), in
/// any state. A Workload whose priority comes from a pod PriorityClass does not follow the label,
/// and one that reserved quota without a class keeps it that way (the API server refuses to add
/// a `priorityClassRef` then). `None`: nothing to change.
pub(crate) fn priority_change(
    workload: &Workload,
    job_class: Option<&str>,
    lookup: &PriorityLookup,
) -> Result<Option<ResolvedPriority>, MissingClass> {
    let current = workload.spec.priority_class_ref.as_deref();
    let follows_label = match current {
        None => !quota_reserved(workload),
        Some(class) => is_workload_priority_class(class),
    };
    let current_name = current.map_or("", |class| class.name.as_str());
    if !follows_label || current_name == job_class.unwrap_or_default() {
        return Ok(None);
    }
    let pod_priority_class = workload.spec.pod_sets.iter().find_map(|ps| {
        ps.template
            .spec
            .as_ref()?
            .priority_class_name
            .as_deref()
            .filter(|name| !name.is_empty())
    });
    let resolved = lookup.resolve(job_class, pod_priority_class)?;
    let unchanged =
        workload.spec.priority == Some(resolved.value) && current == resolved.class.as_ref();
    Ok((!unchanged).then_some(resolved))
}

/// [`priority_change`] for the job whose metadata is `job`, read from its
/// `kueue.x-k8s.io/priority-class` label: the Workload as it is to be written, if it changes.
pub(crate) fn follow_priority_label(
    job: &ObjectMeta,
    workload: &Workload,
    lookup: &PriorityLookup,
) -> Result<Option<Workload>, MissingClass> {
    let class = job
        .labels
        .as_ref()
        .and_then(|all| all.get(labels::PRIORITY_CLASS))
        .map(String::as_str)
        .filter(|name| !name.is_empty());
    Ok(priority_change(workload, class, lookup)?.map(|resolved| {
        let mut changed = workload.clone();
        changed.spec.priority_class_ref = resolved.class.map(Box::new);
        changed.spec.priority = Some(resolved.value);
        changed
    }))
}

fn is_workload_priority_class(class: &PriorityClassRef) -> bool {
    class.group == PriorityClassGroup::Kueue
        && class.kind == PriorityClassKind::WorkloadPriorityClass
}

fn quota_reserved(workload: &Workload) -> bool {
    workload
        .status
        .as_ref()
        .is_some_and(|status| is_true(&status.conditions, condition_types::QUOTA_RESERVED))
}

/// A reference to a WorkloadPriorityClass.
fn workload_priority_class_ref(name: &str) -> PriorityClassRef {
    PriorityClassRef {
        group: PriorityClassGroup::Kueue,
        kind: PriorityClassKind::WorkloadPriorityClass,
        name: name.to_owned(),
    }
}

/// A reference to a pod PriorityClass.
fn priority_class_ref(name: &str) -> PriorityClassRef {
    PriorityClassRef {
        group: PriorityClassGroup::Scheduling,
        kind: PriorityClassKind::PriorityClass,
        name: name.to_owned(),
    }
}

#[cfg(test)]
mod tests;
