//! The conversion of a whole object: its kind's differing fields, its `apiVersion`.

use serde_json::Value;

use super::error::ConversionError;
use super::fields::{self, FieldGroup};
use super::version::{GROUP, Version};
use super::{queues, workload};
use crate::engine::features::FeatureGates;

/// The kinds both versions serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    AdmissionCheck,
    ClusterQueue,
    Cohort,
    LocalQueue,
    ProvisioningRequestConfig,
    ResourceFlavor,
    Topology,
    Workload,
    WorkloadPriorityClass,
}

impl Kind {
    /// Every kind, in name order.
    pub const ALL: [Kind; 9] = [
        Kind::AdmissionCheck,
        Kind::ClusterQueue,
        Kind::Cohort,
        Kind::LocalQueue,
        Kind::ProvisioningRequestConfig,
        Kind::ResourceFlavor,
        Kind::Topology,
        Kind::Workload,
        Kind::WorkloadPriorityClass,
    ];

    /// The kind's name, as in `kind`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AdmissionCheck => "AdmissionCheck",
            Kind::ClusterQueue => "ClusterQueue",
            Kind::Cohort => "Cohort",
            Kind::LocalQueue => "LocalQueue",
            Kind::ProvisioningRequestConfig => "ProvisioningRequestConfig",
            Kind::ResourceFlavor => "ResourceFlavor",
            Kind::Topology => "Topology",
            Kind::Workload => "Workload",
            Kind::WorkloadPriorityClass => "WorkloadPriorityClass",
        }
    }

    /// The kind's plural resource name.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::AdmissionCheck => "admissionchecks",
            Kind::ClusterQueue => "clusterqueues",
            Kind::Cohort => "cohorts",
            Kind::LocalQueue => "localqueues",
            Kind::ProvisioningRequestConfig => "provisioningrequestconfigs",
            Kind::ResourceFlavor => "resourceflavors",
            Kind::Topology => "topologies",
            Kind::Workload => "workloads",
            Kind::WorkloadPriorityClass => "workloadpriorityclasses",
        }
    }

    /// Whether the kind's fields differ between the versions, so its CRD converts through kuota's
    /// webhook (Kueue's: ClusterQueue, Cohort, LocalQueue and Workload; kuota also keeps an
    /// AdmissionCheck's `retryDelayMinutes`, which Kueue's `None` conversion prunes).
    pub fn converts_by_webhook(self) -> bool {
        matches!(
            self,
            Kind::AdmissionCheck
                | Kind::ClusterQueue
                | Kind::Cohort
                | Kind::LocalQueue
                | Kind::Workload
        )
    }

    /// The kind a `kind` names, if both versions serve it.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind's differing fields in `object`; ResourceFlavor, Topology, WorkloadPriorityClass
    /// and ProvisioningRequestConfig are the same in both versions.
    pub(super) fn groups(self, object: &Value) -> Vec<FieldGroup> {
        match self {
            Kind::AdmissionCheck => queues::admission_check(),
            Kind::ClusterQueue => queues::cluster_queue(),
            Kind::Cohort => queues::cohort(),
            Kind::LocalQueue => queues::local_queue(),
            Kind::Workload => workload::groups(object),
            Kind::ProvisioningRequestConfig
            | Kind::ResourceFlavor
            | Kind::Topology
            | Kind::WorkloadPriorityClass => Vec::new(),
        }
    }
}

/// Converts a Kueue object to `desired`, as Kueue's conversion webhook does, keeping what
/// `desired` cannot hold in an annotation. An object already at `desired` is returned as it is.
/// `gates` choose the `v1beta2` topology-assignment encoding, as they do Kueue's.
pub fn convert(
    mut object: Value,
    desired: Version,
    gates: &FeatureGates,
) -> Result<Value, ConversionError> {
    let described = describe(&object);
    let named = |e: ConversionError| ConversionError {
        object: described.clone(),
        ..e
    };
    if !object.is_object() {
        return Err(named(ConversionError::field("", "must be an object")));
    }
    let api_version = object.get("apiVersion").and_then(Value::as_str);
    let from = api_version
        .and_then(Version::from_api_version)
        .ok_or_else(|| {
            named(ConversionError::field(
                "apiVersion",
                format!(
                    "{:?} is not {} nor {}",
                    api_version.unwrap_or_default(),
                    Version::V1beta1.api_version(),
                    Version::V1beta2.api_version()
                ),
            ))
        })?;
    let kind_name = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = Kind::from_name(kind_name).ok_or_else(|| {
        named(ConversionError::field(
            "kind",
            format!("{kind_name:?} is not a kind kuota serves in {GROUP}"),
        ))
    })?;
    if from == desired {
        return Ok(object);
    }
    let groups = kind.groups(&object);
    let result = fields::convert_groups(&mut object, &groups, from, gates);
    result.map_err(named)?;
    object["apiVersion"] = Value::String(desired.api_version());
    Ok(object)
}

/// `Kind namespace/name`, or as much of it as `object` has.
fn describe(object: &Value) -> String {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let kind = text("/kind").unwrap_or("object");
    let name = text("/metadata/name").unwrap_or("<unnamed>");
    match text("/metadata/namespace") {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    }
}
