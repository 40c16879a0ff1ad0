//! The controller decides as `kuota simulate` does: a scenario from `examples/` is applied to the
//! cluster, the controller settles, every object is read back, and `kuota simulate` on exactly
//! those objects (their UIDs and creation times included, so queue order and tie-breaks are the
//! same) must give every Workload the admission and conditions the controller wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::core::v1::{Namespace, Node};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use kuota::api::{
    ClusterQueue, Cohort, LocalQueue, ResourceFlavor, Topology, Workload, WorkloadPriorityClass,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::{Instant, sleep};

use crate::support::kueue::{DECIDED, apply_yaml, condition};
use crate::support::nodes::{KWOK_ANNOTATION, schedulable};
use crate::support::{self, TestNamespace, controller, unique_name, wait};

/// Kinds a scenario brings that the controller reads; Jobs wait for the job integration.
const KINDS: [&str; 10] = [
    "Namespace",
    "PriorityClass",
    "WorkloadPriorityClass",
    "Topology",
    "ResourceFlavor",
    "Node",
    "Cohort",
    "ClusterQueue",
    "LocalQueue",
    "Workload",
];
const CLUSTER_SCOPED: [&str; 8] = [
    "Namespace",
    "PriorityClass",
    "WorkloadPriorityClass",
    "Topology",
    "ResourceFlavor",
    "Node",
    "Cohort",
    "ClusterQueue",
];
/// Conditions the admission decides.
const DECIDED_CONDITIONS: [&str; 4] = ["QuotaReserved", "Admitted", "Evicted", "Preempted"];

fn kind(doc: &Value) -> &str {
    doc["kind"].as_str().unwrap_or_default()
}

fn name(doc: &Value) -> String {
    doc["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Every string value equal to a renamed name takes the new name (keys are left alone), so
/// references stay consistent.
fn rename(value: &mut Value, names: &BTreeMap<String, String>) {
    match value {
        Value::String(s) => {
            if let Some(new) = names.get(s.as_str()) {
                *s = new.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename(v, names)),
        Value::Object(map) => map.values_mut().for_each(|v| rename(v, names)),
        _ => {}
    }
}

/// The scenario's documents of the kinds the controller reads, with cluster-scoped names and
/// namespaces made unique to this run.
fn scenario(path: &str, suffix: &str) -> Result<Vec<Value>> {
    let text = std::fs::read_to_string(support::repo_root().join(path))
        .with_context(|| format!("read {path}"))?;
    let mut docs = Vec::new();
    for document in yaml_serde::Deserializer::from_str(&text) {
        let doc = <Value as serde::Deserialize>::deserialize(document)?;
        if KINDS.contains(&kind(&doc)) {
            docs.push(doc);
        }
    }
    let mut names = BTreeMap::new();
    for doc in &docs {
        if CLUSTER_SCOPED.contains(&kind(doc)) {
            names.insert(name(doc), format!("{}-{suffix}", name(doc)));
        }
        if let Some(ns) = doc["metadata"]["namespace"].as_str() {
            names.insert(ns.to_string(), format!("{ns}-{suffix}"));
        }
        // A flavor's node labels select this run's nodes only.
        for value in doc["spec"]["nodeLabels"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
        {
            if let Some(value) = value.as_str() {
                names.insert(value.to_string(), format!("{value}-{suffix}"));
            }
        }
        for cohort in [&doc["spec"]["cohortName"], &doc["spec"]["parentName"]] {
            if let Some(cohort) = cohort.as_str() {
                names.insert(cohort.to_string(), format!("{cohort}-{suffix}"));
            }
        }
    }
    // Namespaces are rarely written out next to queues: make the ones the scenario uses.
    let given: BTreeSet<String> = docs
        .iter()
        .filter(|d| kind(d) == "Namespace")
        .map(name)
        .collect();
    let used: BTreeSet<String> = docs
        .iter()
        .filter_map(|d| d["metadata"]["namespace"].as_str().map(str::to_string))
        .collect();
    for ns in used.difference(&given) {
        docs.push(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns},
        }));
    }
    for doc in &mut docs {
        rename(doc, &names);
        if kind(doc) == "Workload" {
            if let Some(map) = doc.as_object_mut() {
                map.remove("status");
            }
            if let Some(meta) = doc["metadata"].as_object_mut() {
                meta.remove("creationTimestamp");
                meta.remove("uid");
            }
        }
    }
    Ok(docs)
}

async fn create(client: &Client, docs: &[Value], which: &str) -> Result<()> {
    for doc in docs.iter().filter(|d| kind(d) == which) {
        match which {
            "Namespace" => {
                let api: Api<Namespace> = Api::all(client.clone());
                let ns: Namespace = serde_json::from_value(doc.clone())?;
                api.create(&PostParams::default(), &ns).await?;
            }
            "Node" => {
                // A node's status is kept when it is created; kwok then plays its kubelet.
                let api: Api<Node> = Api::all(client.clone());
                let mut node: Node = serde_json::from_value(doc.clone())?;
                node.annotations_mut()
                    .insert(KWOK_ANNOTATION.to_string(), "fake".to_string());
                api.create(&PostParams::default(), &node).await?;
                wait::until(&api, &node.name_any(), "be Ready", DECIDED, schedulable).await?;
            }
            _ => apply_yaml(client, "default", &yaml_serde::to_string(doc)?).await?,
        }
    }
    Ok(())
}

/// Waits until every Workload has been decided on and nothing has changed for a while.
async fn settle(api: &Api<Workload>, names: &[String]) -> Result<()> {
    let quiet = Duration::from_secs(3);
    let deadline = Instant::now() + DECIDED;
    let mut last: Option<Vec<String>> = None;
    let mut since = Instant::now();
    loop {
        let mut versions = Vec::new();
        let mut decided = true;
        for name in names {
            let w = api.get(name).await?;
            decided &= condition(&w, "QuotaReserved").is_some();
            versions.push(w.resource_version().unwrap_or_default());
        }
        if last.as_ref() != Some(&versions) {
            last = Some(versions);
            since = Instant::now();
        } else if decided && since.elapsed() >= quiet {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("workloads {names:?} did not settle");
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// The object as a document for `kuota simulate`.
fn document<K: Resource<DynamicType = ()> + Serialize>(mut object: K) -> Result<Value> {
    object.meta_mut().managed_fields = None;
    let mut value = serde_json::to_value(&object)?;
    value["apiVersion"] = Value::String(K::api_version(&()).to_string());
    value["kind"] = Value::String(K::kind(&()).to_string());
    Ok(value)
}

async fn read_back<K>(api: Api<K>, names: &BTreeSet<String>, out: &mut Vec<Value>) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    for name in names {
        out.push(document(api.get(name).await?)?);
    }
    Ok(())
}

/// (admission, [(type, status, reason)]) of a Workload document.
fn decision(workload: &Value) -> (Value, Vec<(String, String, String)>) {
    let status = &workload["status"];
    let mut conditions: Vec<(String, String, String)> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| DECIDED_CONDITIONS.contains(&c["type"].as_str().unwrap_or_default()))
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (field("type"), field("status"), field("reason"))
        })
        .collect();
    conditions.sort();
    (status["admission"].clone(), conditions)
}

async fn compare(client: &Client, path: &str) -> Result<()> {
    let suffix = unique_name("vs");
    let docs = scenario(path, &suffix)?;
    for which in KINDS
        .iter()
        .filter(|k| !matches!(**k, "LocalQueue" | "Workload"))
    {
        create(client, &docs, which).await?;
    }
    create(client, &docs, "Workload").await?;
    // LocalQueues last: the workloads wait for them, then are decided on together, as simulate
    // decides on them.
    create(client, &docs, "LocalQueue").await?;

    let workloads: Vec<(String, String)> = docs
        .iter()
        .filter(|d| kind(d) == "Workload")
        .map(|d| {
            (
                d["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                name(d),
            )
        })
        .collect();
    let by_namespace: BTreeMap<String, Vec<String>> =
        workloads.iter().fold(BTreeMap::new(), |mut m, (ns, n)| {
            m.entry(ns.clone()).or_default().push(n.clone());
            m
        });
    for (ns, names) in &by_namespace {
        settle(&Api::namespaced(client.clone(), ns), names).await?;
    }

    let names_of = |which: &str| -> BTreeSet<String> {
        docs.iter().filter(|d| kind(d) == which).map(name).collect()
    };
    let mut dump = Vec::new();
    let namespaces: BTreeSet<String> = by_namespace.keys().cloned().collect();
    read_back::<Namespace>(Api::all(client.clone()), &namespaces, &mut dump).await?;
    read_back::<PriorityClass>(
        Api::all(client.clone()),
        &names_of("PriorityClass"),
        &mut dump,
    )
    .await?;
    read_back::<WorkloadPriorityClass>(
        Api::all(client.clone()),
        &names_of("WorkloadPriorityClass"),
        &mut dump,
    )
    .await?;
    read_back::<Topology>(Api::all(client.clone()), &names_of("Topology"), &mut dump).await?;
    read_back::<ResourceFlavor>(
        Api::all(client.clone()),
        &names_of("ResourceFlavor"),
        &mut dump,
    )
    .await?;
    read_back::<Node>(Api::all(client.clone()), &names_of("Node"), &mut dump).await?;
    read_back::<Cohort>(Api::all(client.clone()), &names_of("Cohort"), &mut dump).await?;
    read_back::<ClusterQueue>(
        Api::all(client.clone()),
        &names_of("ClusterQueue"),
        &mut dump,
    )
    .await?;
    let mut written = BTreeMap::new();
    for (ns, names) in &by_namespace {
        let lqs: Api<LocalQueue> = Api::namespaced(client.clone(), ns);
        for lq in lqs.list(&ListParams::default()).await? {
            dump.push(document(lq)?);
        }
        let api: Api<Workload> = Api::namespaced(client.clone(), ns);
        for name in names {
            let mut w = document(api.get(name).await?)?;
            written.insert(format!("{ns}/{name}"), decision(&w));
            if let Some(map) = w.as_object_mut() {
                map.remove("status");
            }
            dump.push(w);
        }
    }

    let file = std::env::temp_dir().join(format!("kuota-{suffix}.yaml"));
    let text: Vec<String> = dump
        .iter()
        .map(yaml_serde::to_string)
        .collect::<Result<_, _>>()?;
    std::fs::write(&file, text.join("---\n"))?;
    let output = Command::new(env!("CARGO_BIN_EXE_kuota"))
        .args(["simulate", "-o", "yaml", "-f"])
        .arg(&file)
        .output()
        .context("run kuota simulate")?;
    ensure!(
        output.status.success(),
        "kuota simulate on {}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let list: Value = yaml_serde::from_slice(&output.stdout)?;
    let mut simulated = BTreeMap::new();
    for item in list["items"].as_array().into_iter().flatten() {
        if kind(item) == "Workload" {
            let ns = item["metadata"]["namespace"].as_str().unwrap_or_default();
            simulated.insert(format!("{ns}/{}", name(item)), decision(item));
        }
    }
    ensure!(!written.is_empty(), "{path}: no workloads");
    for (key, controller_decision) in &written {
        let simulated_decision = simulated
            .get(key)
            .with_context(|| format!("{path}: simulate printed no {key}"))?;
        ensure!(
            controller_decision == simulated_decision,
            "{path}: {key} differs\n controller: {controller_decision:?}\n simulate:   {simulated_decision:?}"
        );
    }
    println!("{path}: {} workloads decided alike", written.len());
    let _ = std::fs::remove_file(&file);
    for node in names_of("Node") {
        support::nodes::delete(client, &node).await?;
    }
    Ok(())
}

#[tokio::test]
async fn the_controller_decides_as_simulate_does() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    // A namespace of its own only to follow the suite's conventions; the scenarios bring theirs.
    let ns = TestNamespace::create(&client, "versus").await?;
    for path in [
        "examples/admission/queue-order.yaml",
        "examples/admission/flavor-matching.yaml",
        "examples/tas/required-rack.yaml",
        "examples/tas/taints-and-selectors.yaml",
    ] {
        compare(&client, path).await?;
    }
    ns.delete().await
}
