//! Support for end-to-end tests against the local control plane that `e2e/cluster up` starts.
//!
//! Tests connect with the kubeconfig that `e2e/cluster env` exports (or, when KUBECONFIG is
//! unset, the one in `e2e/.state/`), work in namespaces and on nodes of their own, and wait for
//! conditions with a deadline whose failure names the object and the last state seen.

pub mod apply;
pub mod controller;
pub mod kueue;
// Used by the benchmark against Kueue's manager and the visibility API's tests.
#[allow(dead_code)]
pub mod kueue_build;
pub mod nodes;
// Used by the binaries that run the job kinds' own controllers.
#[allow(dead_code)]
pub mod operators;
pub mod wait;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

use self::apply::Manifest;

/// The repository root, where `crds/`, `examples/` and `e2e/` live: cargo tells the test at run
/// time, so a test binary built in another checkout still reads this one's manifests.
pub fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The kubeconfig path: `$KUBECONFIG` as `e2e/cluster env` prints it, else the cluster's own.
pub fn kubeconfig_path() -> PathBuf {
    match std::env::var_os("KUBECONFIG") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => repo_root().join("e2e/.state/kubeconfig"),
    }
}

/// A client connected to the local control plane.
pub async fn client() -> Result<Client> {
    let path = kubeconfig_path();
    let kubeconfig = Kubeconfig::read_from(&path).with_context(|| {
        format!(
            "cannot read kubeconfig {}: start the cluster with `e2e/cluster up` and \
             `eval \"$(e2e/cluster env)\"`",
            path.display()
        )
    })?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("invalid kubeconfig {}", path.display()))?;
    Client::try_from(config).context("cannot build a Kubernetes client")
}

/// A unique name for one test's objects: `prefix` plus a suffix from the clock and pid, short
/// enough for a label value and a DNS-1123 name.
pub fn unique_name(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!(
        "{prefix}-{:x}{:05x}",
        std::process::id() & 0xfff,
        nanos & 0xfffff
    )
}

/// A namespace created for one test, ready for pods once its default ServiceAccount exists.
pub struct TestNamespace {
    pub name: String,
    client: Client,
}

impl TestNamespace {
    pub async fn create(client: &Client, prefix: &str) -> Result<Self> {
        let name = unique_name(prefix);
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.clone());
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .with_context(|| format!("create namespace {name}"))?;
        // The ServiceAccount admission plugin rejects pods until the controller made this.
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &name);
        wait::until_exists(&accounts, "default", Duration::from_secs(30)).await?;
        Ok(Self {
            name,
            client: client.clone(),
        })
    }

    /// Deletes the namespace and waits until the namespace controller has removed it and its
    /// pods (kwok confirms pod deletions only while their nodes exist, so delete nodes after).
    pub async fn delete(self) -> Result<()> {
        let namespaces: Api<Namespace> = Api::all(self.client);
        namespaces
            .delete(&self.name, &DeleteParams::default())
            .await
            .with_context(|| format!("delete namespace {}", self.name))?;
        wait::until_absent(&namespaces, &self.name, Duration::from_secs(60)).await
    }
}

/// Applies every CRD in crds/ and waits until each is Established; fails if there is none.
pub async fn apply_crds(client: &Client) -> Result<Vec<Manifest>> {
    let dir = repo_root().join("crds");
    let mut crds = Vec::new();
    for file in apply::manifest_files(&dir)? {
        crds.extend(apply::read(&file)?);
    }
    ensure!(!crds.is_empty(), "no CRD manifests in {}", dir.display());
    for crd in &crds {
        ensure!(
            crd.gvk.kind == "CustomResourceDefinition",
            "{} is not a CustomResourceDefinition",
            crd.describe()
        );
        apply::apply(client, crd, "default").await?;
    }
    for crd in &crds {
        apply::wait_established(client, crd.name(), CRD_TIMEOUT).await?;
    }
    Ok(crds)
}

/// How long a CRD may take to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);
