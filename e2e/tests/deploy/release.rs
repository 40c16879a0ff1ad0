//! The Helm release `e2e/cluster deploy` installs, seen from a test: where its controller logs,
//! the identity it runs under, and its removal.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use kuota::api::ClusterQueue;

use super::support::{self, unique_name};

pub struct Release {
    pub name: String,
    pub namespace: String,
    /// The chart's fullname, the prefix of every object it installs.
    pub fullname: String,
    state: PathBuf,
}

fn state_dir() -> PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => support::repo_root().join("e2e/.state"),
    }
}

/// Runs `e2e/cluster` on release `name` in `namespace`.
fn cluster(name: &str, namespace: &str, args: &[&str]) -> Result<()> {
    let script = support::repo_root().join("e2e/cluster");
    let status = Command::new(&script)
        .args(args)
        .env("KUOTA_BIN", env!("CARGO_BIN_EXE_kuota"))
        .env("KUOTA_RELEASE", name)
        .env("KUOTA_NAMESPACE", namespace)
        .env("KUOTA_E2E_STATE", state_dir())
        .status()
        .with_context(|| format!("run {} {}", script.display(), args.join(" ")))?;
    ensure!(
        status.success(),
        "e2e/cluster {} failed: {status}",
        args.join(" ")
    );
    Ok(())
}

impl Release {
    /// Installs the chart as release `name` in `namespace` with `helm_args` and starts its
    /// controller; returns once `deploy` says the controller is ready.
    pub async fn deploy(name: &str, namespace: &str, helm_args: &[&str]) -> Result<Release> {
        let mut args = vec!["deploy"];
        args.extend_from_slice(helm_args);
        cluster(name, namespace, &args)?;
        // The chart's fullname: the release name when it says kuota or kueue, else suffixed.
        let fullname = if name.contains("kuota") || name.contains("kueue") {
            name.to_string()
        } else {
            format!("{name}-kuota")
        };
        Ok(Release {
            name: name.to_string(),
            namespace: namespace.to_string(),
            fullname,
            state: state_dir(),
        })
    }

    /// `helm uninstall` and the controller stopped.
    pub fn undeploy(&self) -> Result<()> {
        cluster(&self.name, &self.namespace, &["undeploy"])
    }

    /// `e2e/cluster rollout`: a new replica replaces the serving one, as a rolling update of
    /// the chart's Deployment does; returns once the old replica has exited.
    pub fn rollout(&self) -> Result<()> {
        cluster(&self.name, &self.namespace, &["rollout"])
    }

    /// The serving replica's log: `deploy`'s, or the one the last `rollout` started.
    fn log_path(&self) -> PathBuf {
        std::fs::read_to_string(self.state.join("deploy/replica.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|state| state["log"].as_str().map(PathBuf::from))
            .unwrap_or_else(|| self.state.join("logs/kuota.log"))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// The serving replica's process id, from the record `deploy` and `rollout` keep.
    pub fn controller_pid(&self) -> Result<u32> {
        let path = self.state.join("pids/kuota.pid");
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
        text.lines()
            .next()
            .and_then(|pid| pid.trim().parse().ok())
            .with_context(|| format!("{}: no pid in {text:?}", path.display()))
    }

    /// The controller log's last lines, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    pub fn log_contains(&self, needle: &str) -> bool {
        self.log().contains(needle)
    }

    /// The port the controller serves webhooks on: the chart's configuration file's
    /// `webhook.port`, 9443 when it names none.
    pub fn webhook_port(&self) -> Result<u16> {
        let path = self.state.join("deploy/config.yaml");
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
        let config: serde_json::Value =
            yaml_serde::from_str(&text).with_context(|| format!("parse {}", path.display()))?;
        match config.pointer("/webhook/port") {
            None => Ok(9443),
            Some(port) => port
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .with_context(|| format!("{}: webhook.port {port} is not a port", path.display())),
        }
    }

    /// The port the controller serves metrics on: the port of the chart's configuration file's
    /// `metrics.bindAddress`, Kueue's `:8443` when it names none.
    pub fn metrics_port(&self) -> Result<u16> {
        self.bind_port("/metrics/bindAddress", ":8443")
    }

    /// The port the controller serves its probes on: the port of the chart's configuration
    /// file's `health.healthProbeBindAddress`, Kueue's `:8081` when it names none.
    pub fn health_port(&self) -> Result<u16> {
        self.bind_port("/health/healthProbeBindAddress", ":8081")
    }

    /// The port of the bind address at `pointer` in the chart's configuration file, `default`
    /// when it names none.
    fn bind_port(&self, pointer: &str, default: &str) -> Result<u16> {
        let path = self.state.join("deploy/config.yaml");
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
        let config: serde_json::Value =
            yaml_serde::from_str(&text).with_context(|| format!("parse {}", path.display()))?;
        let address = config
            .pointer(pointer)
            .and_then(|a| a.as_str())
            .unwrap_or(default);
        address
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .with_context(|| format!("{}: {pointer} {address:?} names no port", path.display()))
    }

    /// A client with the token the controller runs under: the chart's ServiceAccount.
    pub async fn service_account_client(&self) -> Result<Client> {
        let path = self.state.join("deploy/kubeconfig");
        let kubeconfig =
            Kubeconfig::read_from(&path).with_context(|| format!("read {}", path.display()))?;
        let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .with_context(|| format!("invalid kubeconfig {}", path.display()))?;
        Client::try_from(config).context("build the ServiceAccount's client")
    }

    /// `helm uninstall` (through `undeploy`) stops kuota and removes its webhooks, and keeps the
    /// CRDs and every Kueue object users made: the chart ships its CRDs in `crds/`.
    pub async fn uninstall_keeps_objects(self, client: &Client) -> Result<()> {
        let queues: Api<ClusterQueue> = Api::all(client.clone());
        let name = unique_name("kept-cq");
        let queue: ClusterQueue = serde_json::from_value(serde_json::json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"namespaceSelector": {}},
        }))?;
        queues
            .create(&PostParams::default(), &queue)
            .await
            .with_context(|| format!("create ClusterQueue {name}"))?;
        self.undeploy()?;
        let webhooks: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
        let webhook = format!("{}-validating-webhook-configuration", self.fullname);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while webhooks.get_opt(&webhook).await?.is_some() {
            if tokio::time::Instant::now() >= deadline {
                bail!("{webhook} still exists after undeploy");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        for crd in ["clusterqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"] {
            ensure!(
                crds.get_opt(crd).await?.is_some(),
                "CRD {crd} was removed with the release"
            );
        }
        let kept = queues
            .get_opt(&name)
            .await?
            .with_context(|| format!("ClusterQueue {name} was removed with the release"))?;
        ensure!(
            kept.metadata.deletion_timestamp.is_none(),
            "ClusterQueue {name} is being deleted after the release was removed"
        );
        // Nothing removes the finalizer while kuota is gone; the test cleans up after itself.
        queues
            .patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}})),
            )
            .await
            .with_context(|| format!("clear the finalizers of ClusterQueue {name}"))?;
        queues
            .delete(&name, &Default::default())
            .await
            .with_context(|| format!("delete ClusterQueue {name}"))?;
        Ok(())
    }
}
