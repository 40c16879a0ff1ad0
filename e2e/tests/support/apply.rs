//! Reading manifests and applying them with server-side apply and strict field validation, the
//! way a user's `kubectl apply --server-side` would, so that the API server's schema checks run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::discovery::{self, Scope};
use kube::{Api, Client};
use serde::Deserialize;
use tokio::time::{Instant, sleep};

use super::wait;

/// The field manager of every object the tests apply.
pub const FIELD_MANAGER: &str = "kuota-e2e";

/// One YAML document of a manifest file.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// `file#document` for messages.
    pub source: String,
    pub gvk: GroupVersionKind,
    pub object: DynamicObject,
}

impl Manifest {
    /// The manifest's name; empty when it only has a generateName.
    pub fn name(&self) -> &str {
        self.object.metadata.name.as_deref().unwrap_or_default()
    }

    /// `Kind name` (with the namespace when the manifest sets one), for messages.
    pub fn describe(&self) -> String {
        let name = match self.name() {
            "" => format!(
                "{}*",
                self.object
                    .metadata
                    .generate_name
                    .as_deref()
                    .unwrap_or_default()
            ),
            name => name.to_string(),
        };
        match &self.object.metadata.namespace {
            Some(ns) => format!("{} {ns}/{name} ({})", self.gvk.kind, self.source),
            None => format!("{} {name} ({})", self.gvk.kind, self.source),
        }
    }
}

/// Why an apply failed: the API server's answer is kept whole so tests can assert on it.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{object}: the API server rejected it: HTTP {code} {reason}: {message}")]
    Rejected {
        object: String,
        code: u16,
        reason: String,
        message: String,
    },
    #[error("{object}: {source:#}")]
    Other {
        object: String,
        source: anyhow::Error,
    },
}

/// Parses every non-empty YAML document of `text`; each needs apiVersion, kind and a name.
pub fn parse(text: &str, source: &str) -> Result<Vec<Manifest>> {
    let mut manifests = Vec::new();
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let doc_source = format!("{source}#{index}");
        let value = serde_json::Value::deserialize(document)
            .with_context(|| format!("{doc_source}: not valid YAML"))?;
        if value.is_null() {
            continue;
        }
        let object: DynamicObject = serde_json::from_value(value)
            .with_context(|| format!("{doc_source}: not a Kubernetes object"))?;
        let types = object
            .types
            .clone()
            .with_context(|| format!("{doc_source}: apiVersion and kind are required"))?;
        let gvk = GroupVersionKind::try_from(&types)
            .with_context(|| format!("{doc_source}: bad apiVersion {:?}", types.api_version))?;
        let named = |v: &Option<String>| v.as_deref().is_some_and(|n| !n.is_empty());
        if !named(&object.metadata.name) && !named(&object.metadata.generate_name) {
            bail!("{doc_source}: metadata.name or metadata.generateName is required");
        }
        manifests.push(Manifest {
            source: doc_source,
            gvk,
            object,
        });
    }
    Ok(manifests)
}

/// Every `*.yaml` / `*.yml` file in the folders below `dir` (not `dir` itself), sorted by path.
pub fn nested_manifest_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            files.extend(manifest_files(&path)?);
            files.extend(nested_manifest_files(&path)?);
        }
    }
    files.sort();
    Ok(files)
}

/// Every `*.yaml` / `*.yml` file of `dir`, sorted by path.
pub fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let is_yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        if path.is_file() && is_yaml {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Reads and parses one manifest file.
pub fn read(path: &Path) -> Result<Vec<Manifest>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Applies one manifest (server-side, forced, strict field validation). A namespaced object
/// without a namespace goes to `default_namespace`. A manifest with only `generateName` (meant
/// for `kubectl create`) is applied under a fresh name made from it, since server-side apply
/// needs a name.
pub async fn apply(
    client: &Client,
    manifest: &Manifest,
    default_namespace: &str,
) -> Result<DynamicObject, ApplyError> {
    apply_with(client, manifest, default_namespace, false).await
}

/// As [`apply`]; with `dry_run`, the API server validates and admits the object (defaults,
/// schema, CEL rules, admission plugins) but stores nothing.
pub async fn apply_with(
    client: &Client,
    manifest: &Manifest,
    default_namespace: &str,
    dry_run: bool,
) -> Result<DynamicObject, ApplyError> {
    let other = |source: anyhow::Error| ApplyError::Other {
        object: manifest.describe(),
        source,
    };
    let (resource, namespaced) = resolve(client, &manifest.gvk).await.map_err(other)?;
    let api: Api<DynamicObject> = if namespaced {
        let ns = manifest
            .object
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(default_namespace);
        Api::namespaced_with(client.clone(), ns, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    };
    let mut object = manifest.object.clone();
    if manifest.name().is_empty() {
        let prefix = object.metadata.generate_name.take().unwrap_or_default();
        object.metadata.name = Some(super::unique_name(prefix.trim_end_matches('-')));
    }
    let name = object.metadata.name.clone().unwrap_or_default();
    let mut params = PatchParams::apply(FIELD_MANAGER)
        .force()
        .validation_strict();
    params.dry_run = dry_run;
    api.patch(&name, &params, &Patch::Apply(&object))
        .await
        .map_err(|e| match e {
            kube::Error::Api(status) => ApplyError::Rejected {
                object: manifest.describe(),
                code: status.code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
            e => other(e.into()),
        })
}

/// Finds the resource serving `gvk`. A kind whose CRD was just established may take a moment
/// to appear in discovery, so a missing kind is retried for a while.
async fn resolve(
    client: &Client,
    gvk: &GroupVersionKind,
) -> Result<(kube::api::ApiResource, bool)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match discovery::pinned_kind(client, gvk).await {
            Ok((resource, caps)) => return Ok((resource, caps.scope == Scope::Namespaced)),
            Err(e) if Instant::now() >= deadline => {
                return Err(anyhow::Error::new(e).context(format!(
                    "the API server serves no {}/{} {}",
                    gvk.group, gvk.version, gvk.kind
                )));
            }
            Err(_) => sleep(Duration::from_millis(250)).await,
        }
    }
}

/// Waits until the CustomResourceDefinition is Established, so its kinds can be used.
pub async fn wait_established(client: &Client, name: &str, timeout: Duration) -> Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    wait::until(&crds, name, "be Established", timeout, |crd| {
        crd.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            })
    })
    .await?;
    Ok(())
}
