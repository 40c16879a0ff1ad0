//! What the API server keeps: the CRDs' `status.storedVersions`, and the version each object is
//! encoded in, read from etcd itself (its JSON gateway; custom resources are stored as JSON).

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, Client};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep};

/// kuota's CRDs, by name.
pub fn kuota_crds() -> Vec<String> {
    kuota::v1beta1::Kind::ALL
        .iter()
        .map(|k| format!("{}.{}", k.plural(), kuota::v1beta1::GROUP))
        .collect()
}

pub async fn stored_versions(client: &Client, crd: &str) -> Result<Vec<String>> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = crds.get(crd).await?;
    Ok(crd
        .status
        .and_then(|s| s.stored_versions)
        .unwrap_or_default())
}

/// Waits until every one of kuota's CRDs lists only `v1beta2` as stored.
pub async fn until_only_v1beta2(client: &Client, timeout: Duration) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut stale = BTreeMap::new();
        for crd in kuota_crds() {
            let versions = stored_versions(client, &crd).await?;
            if versions != ["v1beta2"] {
                stale.insert(crd, versions);
            }
        }
        if stale.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("after {timeout:?} these CRDs still list other stored versions: {stale:?}");
        }
        sleep(Duration::from_secs(1)).await;
    }
}

fn state_dir() -> std::path::PathBuf {
    match std::env::var_os("KUOTA_E2E_STATE") {
        Some(dir) if !dir.is_empty() => dir.into(),
        _ => crate::support::repo_root().join("e2e/.state"),
    }
}

/// The `apiVersion` of every object stored under `/registry/kueue.x-k8s.io/`, by etcd key.
pub fn stored_api_versions() -> Result<BTreeMap<String, String>> {
    let ports: Value = serde_json::from_slice(
        &std::fs::read(state_dir().join("ports.json")).context("read the cluster's ports.json")?,
    )?;
    let port = ports["etcdClient"]
        .as_u64()
        .context("etcdClient in ports.json")?;
    let prefix = b"/registry/kueue.x-k8s.io/".to_vec();
    let mut end = prefix.clone();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    let request = json!({
        "key": serde_json::to_value(ByteString(prefix))?,
        "range_end": serde_json::to_value(ByteString(end))?,
    });
    let output = Command::new("curl")
        .args(["-sS", "--fail", "-X", "POST", "-d"])
        .arg(request.to_string())
        .arg(format!("http://127.0.0.1:{port}/v3/kv/range"))
        .output()
        .context("run curl")?;
    if !output.status.success() {
        bail!(
            "etcd range request failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let answer: Value = serde_json::from_slice(&output.stdout)?;
    let mut versions = BTreeMap::new();
    for kv in answer["kvs"].as_array().cloned().unwrap_or_default() {
        let key: ByteString = serde_json::from_value(kv["key"].clone())?;
        let value: ByteString = serde_json::from_value(kv["value"].clone())?;
        let object: Value = serde_json::from_slice(&value.0)
            .with_context(|| format!("{} is not JSON", String::from_utf8_lossy(&key.0)))?;
        versions.insert(
            String::from_utf8_lossy(&key.0).into_owned(),
            object["apiVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
    }
    Ok(versions)
}
