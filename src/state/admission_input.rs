//! Kueue API objects → the admission engine's input model.
//!
//! Each function reads one object and returns its engine form, or a [`ModelError`] that names the
//! kind, the object, the field and the reason. Defaults are applied here exactly as the API server
//! would apply them, so the engine never sees an unset policy.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace as K8sNamespace;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use kube::ResourceExt;

use super::limit_ranges::Violation;
use super::queue_order::QueueOrdering;
use super::syntax;
use super::workload_resources::{ResourceContext, inadmissible_message, pod_set_resources};
use crate::api::ConditionEntry;
use crate::api::cluster_queue::{
    BorrowWithinCohortPolicy as ApiBorrowPolicy, FlavorFungibilityPolicy,
    FlavorFungibilityPreference, PreemptionPolicy as ApiPreemption,
    QueueingStrategy as ApiQueueing,
};
use crate::api::common::StopPolicy as ApiStopPolicy;
use crate::api::quota::ResourceGroup as ApiResourceGroup;
use crate::api::rule_messages::TOPOLOGY_NEEDS_NODE_LABELS;
use crate::api::workload::PodSet as ApiPodSet;
use crate::api::workload_status::Admission as ApiAdmission;
use crate::api::{self, keys};
use crate::engine::ModelError;
use crate::engine::model::{
    Admission, AdmissionCheckState, BorrowWithinCohort, BorrowWithinCohortPolicy, ClusterQueue,
    Cohort, FlavorFungibility, FlavorQuotas, FungibilityPolicy, FungibilityPreference, KnownCheck,
    LocalQueue, Namespace, PodSet, PodSetAssignment, PreemptionPolicy, QueueCheck,
    QueueingStrategy, ReclaimWithinCohort, ResourceFlavor, ResourceGroup, ResourceQuota, Shown,
    StopPolicy, TopologyRequest, WithinClusterQueue, Workload,
};
use crate::engine::quantity::Quantity;
use crate::engine::validate;
use crate::small_map::SmallMap;

fn quantity(
    kind: &'static str,
    name: &str,
    field: &str,
    value: &K8sQuantity,
) -> Result<Quantity, ModelError> {
    value
        .0
        .parse()
        .map_err(|e: crate::engine::quantity::QuantityError| {
            ModelError::invalid(kind, name, field, e.to_string())
        })
}

fn non_negative(
    kind: &'static str,
    name: &str,
    field: &str,
    value: &K8sQuantity,
) -> Result<Quantity, ModelError> {
    let amount = quantity(kind, name, field, value)?;
    if amount < Quantity::ZERO {
        return Err(ModelError::invalid(
            kind,
            name,
            field,
            format!("must not be negative, got {}", value.0),
        ));
    }
    Ok(amount)
}

fn stop_policy(policy: ApiStopPolicy) -> StopPolicy {
    match policy {
        ApiStopPolicy::None => StopPolicy::None,
        ApiStopPolicy::Hold => StopPolicy::Hold,
        ApiStopPolicy::HoldAndDrain => StopPolicy::HoldAndDrain,
    }
}

/// A `ResourceFlavor`, refused where Kueue's schema and webhook refuse it: more than 8 node labels,
/// taints or tolerations, a node label, taint key or value, or toleration key that is not label
/// syntax, a taint or toleration effect Kubernetes does not know, two taints with one key and
/// effect, an `Exists` toleration with a value, or a `topologyName` without node labels.
pub fn resource_flavor(flavor: &api::ResourceFlavor) -> Result<ResourceFlavor, ModelError> {
    const KIND: &str = "ResourceFlavor";
    const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
    let name = flavor.name_any();
    let spec = &flavor.spec;
    let invalid = |field: String, reason: String| ModelError::invalid(KIND, &name, field, reason);
    for (field, len) in [
        ("spec.nodeLabels", spec.node_labels.len()),
        ("spec.nodeTaints", spec.node_taints.len()),
        ("spec.tolerations", spec.tolerations.len()),
    ] {
        if len > 8 {
            return Err(invalid(
                field.into(),
                format!("must have at most 8 entries, found {len}"),
            ));
        }
    }
    syntax::labels(KIND, &name, "spec.nodeLabels", &spec.node_labels)?;
    let mut taints = std::collections::BTreeSet::new();
    for (i, taint) in spec.node_taints.iter().enumerate() {
        let at = |leaf: &str| format!("spec.nodeTaints[{i}].{leaf}");
        syntax::label_key(KIND, &name, &at("key"), &taint.key)?;
        syntax::label_value(
            KIND,
            &name,
            &at("value"),
            taint.value.as_deref().unwrap_or_default(),
        )?;
        if !EFFECTS.contains(&taint.effect.as_str()) {
            let reason = format!("must be one of {EFFECTS:?}, found {:?}", taint.effect);
            return Err(invalid(at("effect"), reason));
        }
        if !taints.insert((&taint.key, &taint.effect)) {
            let reason = format!(
                "taints must be unique by key and effect pair ({:?} with effect {} appears twice)",
                taint.key, taint.effect
            );
            return Err(invalid(format!("spec.nodeTaints[{i}]"), reason));
        }
    }
    for (i, toleration) in spec.tolerations.iter().enumerate() {
        let at = |leaf: &str| format!("spec.tolerations[{i}].{leaf}");
        if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty()) {
            syntax::label_key(KIND, &name, &at("key"), key)?;
        }
        if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
            && !EFFECTS.contains(&effect)
        {
            return Err(invalid(
                at("effect"),
                format!("must be one of {EFFECTS:?}, found {effect:?}"),
            ));
        }
        match toleration.operator.as_deref() {
            None | Some("Equal") => {}
            Some("Exists") if toleration.value.as_deref().unwrap_or_default().is_empty() => {}
            Some("Exists") => {
                return Err(invalid(
                    at("value"),
                    "must be empty when operator is Exists".into(),
                ));
            }
            Some(other) => {
                return Err(invalid(
                    at("operator"),
                    format!("must be Equal or Exists, found {other:?}"),
                ));
            }
        }
    }
    if spec.topology_name.is_some() && spec.node_labels.is_empty() {
        return Err(invalid(
            "spec.nodeLabels".into(),
            TOPOLOGY_NEEDS_NODE_LABELS.into(),
        ));
    }
    Ok(ResourceFlavor {
        name: name.clone(),
        node_labels: spec.node_labels.clone(),
        node_taints: spec.node_taints.clone(),
        tolerations: spec.tolerations.clone(),
        topology_name: spec.topology_name.clone(),
        topology_missing: false,
    })
}

fn resource_groups(
    kind: &'static str,
    name: &str,
    groups: &[ApiResourceGroup],
) -> Result<Vec<ResourceGroup>, ModelError> {
    groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            for (j, resource) in group.covered_resources.iter().enumerate() {
                let field = format!("spec.resourceGroups[{g}].coveredResources[{j}]");
                syntax::label_key(kind, name, &field, resource)?;
            }
            let flavors = group
                .flavors
                .iter()
                .enumerate()
                .map(|(f, flavor)| {
                    let resources = flavor
                        .resources
                        .iter()
                        .enumerate()
                        .map(|(r, quota)| {
                            let field = |leaf: &str| {
                                format!(
                                    "spec.resourceGroups[{g}].flavors[{f}].resources[{r}].{leaf}"
                                )
                            };
                            let limit = |leaf: &str, value: &Option<K8sQuantity>| {
                                value
                                    .as_ref()
                                    .map(|v| quantity(kind, name, &field(leaf), v))
                                    .transpose()
                            };
                            Ok(ResourceQuota {
                                name: quota.name.clone(),
                                nominal_quota: quantity(
                                    kind,
                                    name,
                                    &field("nominalQuota"),
                                    &quota.nominal_quota,
                                )?,
                                borrowing_limit: limit("borrowingLimit", &quota.borrowing_limit)?,
                                lending_limit: limit("lendingLimit", &quota.lending_limit)?,
                            })
                        })
                        .collect::<Result<_, ModelError>>()?;
                    Ok(FlavorQuotas {
                        name: flavor.name.clone(),
                        resources,
                    })
                })
                .collect::<Result<_, ModelError>>()?;
            Ok(ResourceGroup {
                covered_resources: group.covered_resources.clone(),
                flavors,
            })
        })
        .collect()
}

fn weight(
    kind: &'static str,
    name: &str,
    fair_sharing: &Option<api::common::FairSharing>,
) -> Result<Option<Quantity>, ModelError> {
    match fair_sharing.as_ref().and_then(|f| f.weight.as_ref()) {
        Some(w) => quantity(kind, name, "spec.fairSharing.weight", w).map(Some),
        None => Ok(None),
    }
}

/// A `ClusterQueue`, with the API defaults applied.
pub fn cluster_queue(queue: &api::ClusterQueue) -> Result<ClusterQueue, ModelError> {
    const KIND: &str = "ClusterQueue";
    let name = queue.name_any();
    let spec = &queue.spec;
    let cohort = spec.cohort_name.clone().filter(|c| !c.is_empty());
    let fungibility = spec.flavor_fungibility.clone().unwrap_or_default();
    let policy = |p: FlavorFungibilityPolicy| match p {
        FlavorFungibilityPolicy::MayStopSearch => FungibilityPolicy::MayStopSearch,
        FlavorFungibilityPolicy::TryNextFlavor => FungibilityPolicy::TryNextFlavor,
    };
    let preemption = spec.preemption.clone().unwrap_or_default();
    let within_cluster_queue = match preemption.within_cluster_queue.unwrap_or_default() {
        ApiPreemption::Never => WithinClusterQueue::Never,
        ApiPreemption::LowerPriority => WithinClusterQueue::LowerPriority,
        ApiPreemption::LowerOrNewerEqualPriority => WithinClusterQueue::LowerOrNewerEqualPriority,
        ApiPreemption::Any => {
            return Err(ModelError::invalid(
                KIND,
                &name,
                "spec.preemption.withinClusterQueue",
                "must be one of Never, LowerPriority, LowerOrNewerEqualPriority",
            ));
        }
    };
    let reclaim_within_cohort = match preemption.reclaim_within_cohort.unwrap_or_default() {
        ApiPreemption::Never => ReclaimWithinCohort::Never,
        ApiPreemption::LowerPriority => ReclaimWithinCohort::LowerPriority,
        ApiPreemption::Any => ReclaimWithinCohort::Any,
        ApiPreemption::LowerOrNewerEqualPriority => {
            return Err(ModelError::invalid(
                KIND,
                &name,
                "spec.preemption.reclaimWithinCohort",
                "must be one of Never, LowerPriority, Any",
            ));
        }
    };
    let borrow = preemption.borrow_within_cohort.unwrap_or_default();
    let borrow_policy = match borrow.policy.unwrap_or_default() {
        ApiBorrowPolicy::Never => BorrowWithinCohortPolicy::Never,
        ApiBorrowPolicy::LowerPriority => BorrowWithinCohortPolicy::LowerPriority,
    };
    if let Some(selector) = &spec.namespace_selector {
        syntax::label_selector(KIND, &name, "spec.namespaceSelector", selector)?;
    }
    let admission_checks = spec
        .admission_checks_strategy
        .iter()
        .flat_map(|s| &s.admission_checks)
        .map(|rule| QueueCheck {
            name: rule.name.clone(),
            on_flavors: rule.on_flavors.clone(),
            state: AdmissionCheckState::NotFound,
            provisioning: false,
        })
        .collect();
    let model = ClusterQueue {
        admission_checks,
        resource_groups: resource_groups(KIND, &name, &spec.resource_groups)?,
        cohort,
        namespace_selector: spec.namespace_selector.clone(),
        queueing_strategy: match spec.queueing_strategy.unwrap_or_default() {
            ApiQueueing::StrictFifo => QueueingStrategy::StrictFifo,
            ApiQueueing::BestEffortFifo => QueueingStrategy::BestEffortFifo,
        },
        flavor_fungibility: FlavorFungibility {
            when_can_borrow: policy(fungibility.effective_when_can_borrow()),
            when_can_preempt: policy(fungibility.effective_when_can_preempt()),
            preference: fungibility.preference.map(|p| match p {
                FlavorFungibilityPreference::BorrowingOverPreemption => {
                    FungibilityPreference::BorrowingOverPreemption
                }
                FlavorFungibilityPreference::PreemptionOverBorrowing => {
                    FungibilityPreference::PreemptionOverBorrowing
                }
            }),
        },
        preemption: PreemptionPolicy {
            within_cluster_queue,
            reclaim_within_cohort,
            borrow_within_cohort: BorrowWithinCohort {
                policy: borrow_policy,
                max_priority_threshold: borrow.max_priority_threshold,
            },
        },
        stop_policy: stop_policy(spec.effective_stop_policy()),
        fair_sharing_weight: weight(KIND, &name, &spec.fair_sharing)?,
        terminating: queue.metadata.deletion_timestamp.is_some(),
        name,
    };
    validate::cluster_queue(&model)?;
    Ok(model)
}

/// A `Cohort`.
pub fn cohort(cohort: &api::Cohort) -> Result<Cohort, ModelError> {
    const KIND: &str = "Cohort";
    let name = cohort.name_any();
    let parent = cohort.spec.parent_name.clone().filter(|p| !p.is_empty());
    let model = Cohort {
        resource_groups: resource_groups(KIND, &name, &cohort.spec.resource_groups)?,
        parent,
        fair_sharing_weight: weight(KIND, &name, &cohort.spec.fair_sharing)?,
        name,
    };
    validate::cohort(&model)?;
    Ok(model)
}

/// An `AdmissionCheck`: whether its controller reports it `Active`. One without a
/// `spec.controllerName` is refused.
pub fn admission_check(check: &api::AdmissionCheck) -> Result<KnownCheck, ModelError> {
    if check.spec.controller_name.is_empty() {
        return Err(ModelError::invalid(
            "AdmissionCheck",
            check.name_any(),
            "spec.controllerName",
            "must not be empty",
        ));
    }
    let active = check.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == keys::condition_types::ACTIVE && c.is_true())
    });
    Ok(KnownCheck {
        state: if active {
            AdmissionCheckState::Active
        } else {
            AdmissionCheckState::Inactive
        },
        provisioning: check.spec.controller_name == keys::provisioning::CONTROLLER_NAME,
    })
}

/// A `LocalQueue`.
pub fn local_queue(queue: &api::LocalQueue) -> LocalQueue {
    LocalQueue {
        namespace: queue.namespace().unwrap_or_default(),
        name: queue.name_any(),
        cluster_queue: queue.spec.cluster_queue.clone(),
        stop_policy: stop_policy(queue.spec.effective_stop_policy()),
    }
}

/// A `Namespace` and its labels (the API server always adds `kubernetes.io/metadata.name`).
pub fn namespace(namespace: &K8sNamespace) -> Namespace {
    let name = namespace.name_any();
    let mut labels = namespace.labels().clone();
    labels.insert("kubernetes.io/metadata.name".into(), name.clone());
    Namespace { name, labels }
}

/// Where a Workload's queue position and identity come from when the object does not say. The
/// default (all unknown) is enough to validate a Workload, as the admission webhook does.
#[derive(Clone, Debug, Default)]
pub struct WorkloadDefaults {
    /// Used when `metadata.creationTimestamp` is absent (milliseconds on the same clock).
    pub creation: i64,
    /// Used when `metadata.uid` is absent.
    pub uid: String,
    /// Used when `spec.priority` is absent: the value of the class `priorityClassRef` names.
    pub class_priority: Option<i32>,
    /// The LimitRanges and RuntimeClasses the pod templates are adjusted by.
    pub resources: ResourceContext,
}

/// What `status`'s conditions show that the engine acts on.
fn shown(status: Option<&api::WorkloadStatus>) -> Shown {
    let conditions = status.map_or(&[][..], |s| &s.conditions[..]);
    let on_hold = conditions.iter().any(|c| {
        c.type_ == keys::condition_types::QUOTA_RESERVED
            && c.is_false()
            && c.reason == keys::quota_reserved_reasons::ON_HOLD
    });
    let admitted = conditions
        .iter()
        .any(|c| c.type_ == keys::condition_types::ADMITTED && c.is_true());
    match (on_hold, admitted) {
        (true, _) => Shown::OnHold,
        (false, true) => Shown::Admitted,
        (false, false) => Shown::Neither,
    }
}

/// A `Workload`. Its `status.admission`, when set, is quota the workload holds; `ordering` gives
/// its queue-order time.
pub fn workload(
    workload: &api::Workload,
    defaults: WorkloadDefaults,
    ordering: &QueueOrdering,
) -> Result<Workload, ModelError> {
    let namespace = workload.namespace().unwrap_or_default();
    let name = workload.name_any();
    let label = format!("{namespace}/{name}");
    let mut violations = Vec::with_capacity(workload.spec.pod_sets.len());
    let pod_sets = workload
        .spec
        .pod_sets
        .iter()
        .enumerate()
        .map(|(i, pod_set)| {
            let (pod_set, found) = self::pod_set(&label, i, pod_set, &defaults.resources)?;
            violations.push(found);
            Ok(pod_set)
        })
        .collect::<Result<Vec<_>, ModelError>>()?;
    let invalid_resources = inadmissible_message(violations.iter().map(Vec::as_slice));
    let status = workload.status.as_ref();
    let admission = status
        .and_then(|s| s.admission.as_ref())
        .map(|a| admission(&label, a, &pod_sets))
        .transpose()?;
    let condition_true = |type_: &str| {
        status.and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == type_ && c.is_true())
        })
    };
    let annotations = workload.annotations();
    // Kueue orders preemption candidates by this condition's time; an admission without one was
    // reserved at creation.
    let quota_reserved_at = condition_true(keys::condition_types::QUOTA_RESERVED)
        .map(|c| c.last_transition_time.0.as_millisecond());
    let fair_share_shield = annotations
        .get(keys::kuota_annotations::FAIR_SHARE_SHIELD)
        .map(|list| {
            list.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Workload {
        uid: workload.metadata.uid.clone().unwrap_or(defaults.uid),
        job_uid: workload
            .labels()
            .get(keys::labels::JOB_UID)
            .map(|uid| Arc::from(uid.as_str())),
        queue_name: workload.spec.queue_name.clone().unwrap_or_default(),
        priority: workload
            .spec
            .priority
            .or(defaults.class_priority)
            .unwrap_or(0),
        creation: ordering.time(
            status,
            workload
                .metadata
                .creation_timestamp
                .as_ref()
                .map_or(defaults.creation, |t| t.0.as_millisecond()),
        ),
        active: workload.spec.is_active(),
        // Kueue reads an empty value as no gate.
        admission_gated_by: annotations
            .get(keys::annotations::ADMISSION_GATED_BY)
            .filter(|gates| !gates.is_empty())
            .map(|gates| Arc::new(gates.clone())),
        shown: shown(status),
        pod_sets,
        admission,
        quota_reserved_at,
        finished: condition_true(keys::condition_types::FINISHED).is_some(),
        preemption_credit_spent: annotations
            .get(keys::kuota_annotations::PREEMPTION_CREDIT_SPENT)
            .is_some_and(|v| v == "true"),
        fair_share_shield,
        invalid_resources,
        namespace,
        name,
    })
    .and_then(|w| validate::workload(&w).map(|()| w))
}

/// One pod set and the resource rules its template breaks.
fn pod_set(
    workload: &str,
    index: usize,
    pod_set: &ApiPodSet,
    context: &ResourceContext,
) -> Result<(PodSet, Vec<Violation>), ModelError> {
    const KIND: &str = "Workload";
    let field = |leaf: &str| format!("spec.podSets[{index}].{leaf}");
    let spec = pod_set.template.spec.clone().unwrap_or_default();
    syntax::pod_resources(KIND, workload, &field("template.spec"), &spec)?;
    let resources = pod_set_resources(workload, index, &spec, context)?;
    let required_node_affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .clone()
        });
    let pod_set = PodSet {
        name: pod_set.name.clone(),
        count: pod_set.count,
        min_count: pod_set.min_count,
        requests: resources.requests.into_iter().collect(),
        node_selector: spec.node_selector.clone().unwrap_or_default(),
        tolerations: spec.tolerations.clone().unwrap_or_default(),
        required_node_affinity,
        topology_request: pod_set.topology_request.as_ref().map(|t| {
            Box::new(TopologyRequest {
                required: t.required.clone(),
                preferred: t.preferred.clone(),
                unconstrained: t.unconstrained,
                pod_index_label: t.pod_index_label.clone(),
                sub_group_index_label: t.sub_group_index_label.clone(),
                sub_group_count: t.sub_group_count,
                pod_set_group_name: t.pod_set_group_name.clone(),
                slice_required_topology: t.pod_set_slice_required_topology.clone(),
                slice_size: t.pod_set_slice_size,
                slice_required_topology_constraints: t
                    .podset_slice_required_topology_constraints
                    .iter()
                    .flatten()
                    .map(|c| (c.topology.clone(), c.size))
                    .collect(),
            })
        }),
    };
    Ok((pod_set, resources.violations))
}

/// An admission read back from status. `count` is optional there; absent, the pod set's own count is
/// what was admitted.
fn admission(
    workload: &str,
    admission: &ApiAdmission,
    pod_sets: &[PodSet],
) -> Result<Admission, ModelError> {
    let pod_set_assignments = admission
        .pod_set_assignments
        .iter()
        .enumerate()
        .map(|(i, assignment)| {
            let resource_usage = assignment
                .resource_usage
                .iter()
                .map(|(resource, amount)| {
                    let field =
                        format!("status.admission.podSetAssignments[{i}].resourceUsage.{resource}");
                    non_negative("Workload", workload, &field, amount)
                        .map(|q| (resource.clone(), q))
                })
                .collect::<Result<SmallMap<_, _>, _>>()?;
            Ok(PodSetAssignment {
                name: assignment.name.clone(),
                flavors: assignment.flavors.clone(),
                resource_usage,
                count: assignment.count.unwrap_or_else(|| {
                    pod_sets
                        .iter()
                        .find(|p| p.name == assignment.name)
                        .map_or(0, |p| p.count)
                }),
                topology_assignment: assignment.topology_assignment.as_deref().cloned(),
                delayed_topology: assignment.delayed_topology_request,
            })
        })
        .collect::<Result<_, ModelError>>()?;
    Ok(Admission {
        cluster_queue: admission.cluster_queue.clone(),
        pod_set_assignments,
    })
}
