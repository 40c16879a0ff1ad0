//! Kueue's manager installed on the local control plane as its release manifests install it, but
//! as a local process: its CRDs with the conversion webhook of its kustomization (ClusterQueue,
//! Cohort, LocalQueue, Workload, MultiKueueCluster) pointed at `kueue-webhook-service` in
//! `kueue-system`, that Service routed to this machine, and a certificate for it from a CA the
//! CRDs trust (Kueue's internal certificate management off, as with cert-manager).

use std::net::{Ipv4Addr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, ensure};
use k8s_openapi::ByteString;
use kube::Client;
use serde_json::{Value, json};

use super::process::{Controller, KueueWebhook, RateLimit, free_port};
use crate::support::{self, kueue::apply_yaml};

pub const NAMESPACE: &str = "kueue-system";
pub const SERVICE: &str = "kueue-webhook-service";
/// The CRDs Kueue's kustomization converts through its webhook.
const CONVERTED: [&str; 5] = [
    "clusterqueues.kueue.x-k8s.io",
    "cohorts.kueue.x-k8s.io",
    "localqueues.kueue.x-k8s.io",
    "workloads.kueue.x-k8s.io",
    "multikueueclusters.kueue.x-k8s.io",
];
/// The Kueue release that still stores `v1beta1` (v0.16 stores `v1beta2`).
pub fn version() -> &'static str {
    support::kueue_build::e2e_version()
}

/// Kueue's build folder for [`version`].
pub fn build_dir() -> Result<PathBuf> {
    support::kueue_build::dir(Some(version()))
}

/// This machine's address the API server reaches the webhook on: an EndpointSlice may not name
/// a loopback address.
pub fn host_address() -> Result<Ipv4Addr> {
    let socket = UdpSocket::bind("0.0.0.0:0")?;
    // No packet is sent: connecting a UDP socket only picks the route and its source address.
    socket.connect("10.255.255.255:1")?;
    match socket.local_addr()?.ip() {
        std::net::IpAddr::V4(ip) if !ip.is_loopback() => Ok(ip),
        other => anyhow::bail!("no non-loopback IPv4 address for the webhook endpoint: {other}"),
    }
}

fn openssl(args: &[&str], dir: &Path) -> Result<()> {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("run openssl")?;
    ensure!(status.success(), "openssl {} failed", args.join(" "));
    Ok(())
}

/// A CA (`ca.crt`) and a serving certificate it signed for the Service (`tls.crt`, `tls.key`).
fn certificates(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let san = format!(
        "subjectAltName=DNS:{SERVICE}.{NAMESPACE}.svc,DNS:{SERVICE}.{NAMESPACE}.svc.cluster.local"
    );
    std::fs::write(dir.join("san.ext"), &san)?;
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=kueue-e2e-ca",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
        ],
        dir,
    )?;
    openssl(
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            &format!("/CN={SERVICE}.{NAMESPACE}.svc"),
            "-keyout",
            "tls.key",
            "-out",
            "tls.csr",
        ],
        dir,
    )?;
    openssl(
        &[
            "x509",
            "-req",
            "-in",
            "tls.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "tls.crt",
        ],
        dir,
    )
}

/// Kueue's CRD manifests from its module, those of its kustomization's conversion patch
/// converting through `SERVICE` with `ca` trusted, written to `out` for `kubectl apply`.
fn crds_with_conversion(kueue_dir: &Path, ca: &[u8], out: &Path) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let bundle = serde_json::to_value(ByteString(ca.to_vec()))?;
    for file in support::apply::manifest_files(&kueue_dir.join("crds"))? {
        let text = std::fs::read_to_string(&file)?;
        let mut crd: Value =
            yaml_serde::from_str(&text).with_context(|| format!("parse {}", file.display()))?;
        let name = crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if CONVERTED.contains(&name.as_str()) {
            crd["spec"]["conversion"] = json!({
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {
                        "service": {"name": SERVICE, "namespace": NAMESPACE, "path": "/convert", "port": 443},
                        "caBundle": bundle,
                    },
                },
            });
        }
        let target = out.join(file.file_name().context("a CRD file name")?);
        std::fs::write(&target, serde_json::to_string(&crd)?)?;
    }
    Ok(())
}

/// Kueue's manager and what routes its webhook; dropping it stops the process.
pub struct Kueue {
    controller: Controller,
}

/// Where this test keeps Kueue's files.
pub struct Installation {
    pub dir: PathBuf,
    pub state: PathBuf,
    pub crds: PathBuf,
    port: u16,
}

impl Installation {
    /// Builds (or finds) Kueue, makes its certificates and its CRD manifests under `state`.
    pub fn prepare(state: &Path) -> Result<Self> {
        let dir = build_dir()?;
        let certs = state.join("kueue-certs");
        certificates(&certs)?;
        let crds = state.join("kueue-crds");
        crds_with_conversion(&dir, &std::fs::read(certs.join("ca.crt"))?, &crds)?;
        Ok(Self {
            dir,
            state: state.to_path_buf(),
            crds,
            port: free_port()?,
        })
    }

    /// The Service and the EndpointSlice sending its port 443 to the manager's webhook port.
    pub async fn route(&self, client: &Client) -> Result<()> {
        let host = host_address()?;
        let port = self.port;
        apply_yaml(
            client,
            NAMESPACE,
            &format!(
                "apiVersion: v1
kind: Namespace
metadata: {{name: {NAMESPACE}}}
---
apiVersion: v1
kind: Service
metadata: {{name: {SERVICE}, namespace: {NAMESPACE}}}
spec:
  ports: [{{name: https, port: 443, protocol: TCP, targetPort: {port}}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: {SERVICE}-local
  namespace: {NAMESPACE}
  labels: {{kubernetes.io/service-name: {SERVICE}, endpointslice.kubernetes.io/managed-by: e2e.kuota.dev}}
addressType: IPv4
endpoints: [{{addresses: [\"{host}\"], conditions: {{ready: true}}}}]
ports: [{{name: https, port: {port}, protocol: TCP}}]
"
            ),
        )
        .await
    }

    /// Starts the manager; returns once it is ready.
    pub async fn start(&self) -> Result<Kueue> {
        let webhook = KueueWebhook {
            host: host_address()?.to_string(),
            port: self.port,
            cert_dir: self.state.join("kueue-certs"),
        };
        let limit = RateLimit {
            qps: 50.0,
            burst: 100,
        };
        // v0.15 has no --visibility-server-port; with VisibilityOnDemand off it serves none.
        let controller =
            Controller::kueue_serving(&self.dir, &self.state, limit, &webhook, &[]).await?;
        Ok(Kueue { controller })
    }
}

impl Kueue {
    /// SIGTERM, as Kubernetes stops its pod.
    pub async fn stop(self) -> Result<()> {
        self.controller.stop().await
    }

    pub fn log(&self) -> &Path {
        &self.controller.log
    }
}
