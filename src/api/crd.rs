//! The nine CustomResourceDefinitions, made structural and ready to apply.
//!
//! kube derives a schema per kind; [`crds`] then applies the rules the derive cannot express
//! (object-level CEL, an optional `spec` where Kueue allows omitting it) and normalises the schema so
//! a kube-apiserver accepts it as structural.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::Value;

use super::{
    AdmissionCheck, ClusterQueue, Cohort, LocalQueue, ProvisioningRequestConfig, ResourceFlavor,
    Topology, Workload, WorkloadPriorityClass,
};

/// Why a CRD could not be produced or rendered.
#[derive(Debug, thiserror::Error)]
pub enum CrdError {
    /// The CRD could not be converted to or from JSON.
    #[error("CRD {name}: {source}")]
    Json {
        /// The CRD's name.
        name: String,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// The CRD could not be rendered as YAML.
    #[error("CRD {name}: rendering YAML: {source}")]
    Yaml {
        /// The CRD's name.
        name: String,
        /// The underlying error.
        source: yaml_serde::Error,
    },
}

/// Every CRD kuota serves, ordered by name, with its `v1beta2` version only
/// (`crate::v1beta1::crds` adds `v1beta1` and the conversion webhook).
pub fn crds() -> Result<Vec<CustomResourceDefinition>, CrdError> {
    let derived = [
        AdmissionCheck::crd(),
        ClusterQueue::crd(),
        Cohort::crd(),
        LocalQueue::crd(),
        ProvisioningRequestConfig::crd(),
        ResourceFlavor::crd(),
        Topology::crd(),
        WorkloadPriorityClass::crd(),
        Workload::crd(),
    ];
    let mut crds = derived
        .into_iter()
        .map(finish)
        .collect::<Result<Vec<_>, _>>()?;
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(crds)
}

/// The file name a CRD is committed under in `crds/`.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}_{}.yaml", crd.spec.group, crd.spec.names.plural)
}

/// Renders one CRD as a YAML document.
pub fn to_yaml(crd: &CustomResourceDefinition) -> Result<String, CrdError> {
    let name = crd_name(crd);
    yaml_serde::to_string(crd).map_err(|source| CrdError::Yaml { name, source })
}

/// Renders CRDs as one multi-document YAML stream, each document starting with `---`.
pub fn render_all(crds: &[CustomResourceDefinition]) -> Result<String, CrdError> {
    let mut out = String::new();
    for crd in crds {
        out.push_str("---\n");
        out.push_str(&to_yaml(crd)?);
    }
    Ok(out)
}

fn crd_name(crd: &CustomResourceDefinition) -> String {
    crd.metadata.name.clone().unwrap_or_default()
}

/// Applies the per-kind fixes and the structural normalisation to a derived CRD.
fn finish(crd: CustomResourceDefinition) -> Result<CustomResourceDefinition, CrdError> {
    let name = crd_name(&crd);
    let json_err = |source| CrdError::Json {
        name: name.clone(),
        source,
    };
    let kind = crd.spec.names.kind.clone();
    let mut value = serde_json::to_value(&crd).map_err(json_err)?;
    if let Some(versions) = value
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    {
        for version in versions {
            if let Some(root) = version.pointer_mut("/schema/openAPIV3Schema") {
                super::crd_schema::normalise(root);
                super::crd_schema::apply_kind_rules(&kind, root);
            }
        }
    }
    serde_json::from_value(value).map_err(json_err)
}
