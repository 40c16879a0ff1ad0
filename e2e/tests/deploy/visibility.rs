//! Kueue's visibility API (`visibility.kueue.x-k8s.io`, v1beta2 and v1beta1) through the installed
//! chart: the API server proxies it through the chart's APIServices and Service to kuota, which
//! lists a ClusterQueue's and a LocalQueue's pending Workloads with their positions, as Kueue's
//! pkg/visibility does, in the order it admits them; Kueue's own `kubectl kueue list workload`
//! (built from its Go module by e2e/kueue-build.sh) shows the same positions.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::{Workload, WorkloadPriorityClass};
use serde_json::{Value, json};

use super::release::Release;
use crate::support::kueue::{self, apply_yaml};
use crate::support::{self, TestNamespace, unique_name, wait};

const GROUP: &str = "visibility.kueue.x-k8s.io";
const VERSIONS: [&str; 2] = ["v1beta2", "v1beta1"];

/// A Job submitted to the ClusterQueue and the Workload kuota made for it.
struct Submitted {
    job: String,
    local_queue: String,
    priority: i32,
    workload: Workload,
    /// The Job as the visibility API names a Workload's owner: apiVersion, kind, name, uid.
    owner: Value,
}

impl Submitted {
    fn workload_name(&self) -> String {
        self.workload.name_any()
    }

    /// The entry Kueue's pkg/visibility lists for this Workload at these positions.
    fn pending_item(&self, in_cluster_queue: usize, in_local_queue: usize) -> Value {
        json!({
            "metadata": {
                "name": self.workload_name(),
                "namespace": self.workload.namespace(),
                "creationTimestamp": self.workload.metadata.creation_timestamp,
                "ownerReferences": [self.owner],
            },
            "priority": self.priority,
            "localQueueName": self.local_queue,
            "positionInClusterQueue": in_cluster_queue,
            "positionInLocalQueue": in_local_queue,
        })
    }
}

/// The pending entries Kueue's pkg/visibility lists for `queue` in this order: positions in
/// the ClusterQueue from 0, and in each LocalQueue from 0 among that LocalQueue's Workloads.
fn expected_items(queue: &[&Submitted]) -> Vec<Value> {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    queue
        .iter()
        .enumerate()
        .map(|(index, submitted)| {
            let in_local = counts.entry(submitted.local_queue.as_str()).or_default();
            let item = submitted.pending_item(index, *in_local);
            *in_local += 1;
            item
        })
        .collect()
}

/// One ClusterQueue with quota for one Job, LocalQueues `a` and `b` in one namespace, Jobs of
/// three WorkloadPriorityClasses: the first is admitted and the others wait, listed by priority
/// and then creation; each time the admitted Job is deleted, the Workload listed first is the
/// one admitted next.
pub async fn pending_workloads_are_listed_in_admission_order(
    client: &Client,
    release: &Release,
) -> Result<()> {
    let ns = TestNamespace::create(client, "deploy-vis").await?;
    let classes = [
        (unique_name("vis-high"), 300),
        (unique_name("vis-mid"), 200),
        (unique_name("vis-low"), 100),
    ];
    for (name, value) in &classes {
        apply_yaml(
            client,
            &ns.name,
            &format!(
                "apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {{name: {name}}}
value: {value}
"
            ),
        )
        .await?;
    }
    let listed = listed_in_admission_order(client, release, &ns.name, &classes).await;
    let priority_classes: Api<WorkloadPriorityClass> = Api::all(client.clone());
    for (name, _) in &classes {
        priority_classes
            .delete(name, &DeleteParams::default())
            .await
            .with_context(|| format!("delete WorkloadPriorityClass {name}"))?;
    }
    listed?;
    ns.delete().await
}

async fn listed_in_admission_order(
    client: &Client,
    release: &Release,
    namespace: &str,
    classes: &[(String, i32); 3],
) -> Result<()> {
    let cq = unique_name("deploy-vis-cq");
    let flavor = unique_name("deploy-vis-rf");
    kueue::queue(client, namespace, &cq, &flavor, "1", "").await?;
    let lq_a = format!("lq-{cq}");
    let lq_b = format!("lq-b-{cq}");
    apply_yaml(
        client,
        namespace,
        &format!(
            "apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: {lq_b}, namespace: {namespace}}}
spec: {{clusterQueue: {cq}}}
"
        ),
    )
    .await?;
    let [high, mid, low] = classes;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);

    let running = submit(client, namespace, "running", &lq_a, high).await?;
    kueue::until_admitted(&workloads, &running.workload_name())
        .await
        .with_context(|| format!("kuota log:\n{}", release.log_tail()))?;
    // Creation order breaks ties of priority; creation timestamps have whole seconds.
    let mut waiting = Vec::new();
    for (job, queue, class) in [
        ("a-low", &lq_a, low),
        ("b-mid", &lq_b, mid),
        ("a-high", &lq_a, high),
        ("b-low", &lq_b, low),
        ("a-mid", &lq_a, mid),
    ] {
        tokio::time::sleep(Duration::from_millis(1100)).await;
        waiting.push(submit(client, namespace, job, queue, class).await?);
    }
    for submitted in &waiting {
        wait::until(
            &workloads,
            &submitted.workload_name(),
            "wait for quota",
            kueue::DECIDED,
            |w| kueue::pending_reason(w).is_some(),
        )
        .await
        .with_context(|| format!("kuota log:\n{}", release.log_tail()))?;
    }
    // Higher priority first, then earlier creation, as Kueue's queue orders them.
    let by_job = |name: &str| waiting.iter().find(|s| s.job == name);
    let mut queue: Vec<&Submitted> = ["a-high", "b-mid", "a-mid", "a-low", "b-low"]
        .into_iter()
        .filter_map(by_job)
        .collect();
    ensure!(
        queue.len() == waiting.len(),
        "the expected order names every waiting Job"
    );

    let api = VisibilityApi::new()?;
    api.until_cluster_queue_lists(&cq, queue.len()).await?;
    pending_workloads_listed(&api, namespace, &cq, &[&lq_a, &lq_b], &queue).await?;
    not_found_answered(&api, namespace, &cq).await?;
    discovery_lists_the_resources(&api)?;
    kubectl_kueue_shows_positions(&api, namespace, &running, &queue)?;

    // Deleting the admitted Job frees the quota: the Workload listed first is admitted.
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let mut admitted = &running;
    while !queue.is_empty() {
        jobs.delete(&admitted.job, &DeleteParams::background())
            .await
            .with_context(|| format!("delete Job {}", admitted.job))?;
        let next = queue.remove(0);
        kueue::until_admitted(&workloads, &next.workload_name())
            .await
            .with_context(|| {
                format!(
                    "the Workload listed first was not admitted once Job {} was deleted\n\
                     kuota log:\n{}",
                    admitted.job,
                    release.log_tail()
                )
            })?;
        for other in &queue {
            let workload = workloads.get(&other.workload_name()).await?;
            ensure!(
                !kueue::admitted(&workload),
                "Workload {} was admitted before {}, which was listed before it",
                other.workload_name(),
                next.workload_name()
            );
        }
        let summary = api.until_cluster_queue_lists(&cq, queue.len()).await?;
        let expected = expected_items(&queue);
        ensure!(
            summary["items"].as_array() == Some(&expected),
            "after {} was admitted, ClusterQueue {cq} lists {}; expected {}",
            next.workload_name(),
            summary["items"],
            Value::Array(expected.clone())
        );
        admitted = next;
    }
    Ok(())
}

/// Creates Job `job` in LocalQueue `queue` with WorkloadPriorityClass `class` and returns it
/// with the Workload kuota made for it.
async fn submit(
    client: &Client,
    namespace: &str,
    job: &str,
    queue: &str,
    (class, priority): &(String, i32),
) -> Result<Submitted> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), namespace);
    let mut object = kueue::one_pod_job(
        job,
        json!({"kueue.x-k8s.io/queue-name": queue, "kueue.x-k8s.io/priority-class": class}),
    )?;
    // The pod runs until the Job is deleted (kwok's stage for Job pods reads this).
    if let Some(spec) = object.spec.as_mut() {
        spec.template.metadata.get_or_insert_default().annotations =
            Some([("e2e.kuota.dev/run-duration".to_string(), "1h".to_string())].into());
    }
    let created = jobs
        .create(&PostParams::default(), &object)
        .await
        .with_context(|| format!("create Job {job}"))?;
    let uid = created.uid().context("a stored Job has a UID")?;
    let workloads: Api<Workload> = Api::namespaced(client.clone(), namespace);
    let selector = ListParams::default().labels(&format!("kueue.x-k8s.io/job-uid={uid}"));
    let deadline = tokio::time::Instant::now() + kueue::DECIDED;
    let workload = loop {
        if let Some(workload) = workloads.list(&selector).await?.items.into_iter().next() {
            break workload;
        }
        if tokio::time::Instant::now() >= deadline {
            bail!("no Workload for Job {namespace}/{job}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    Ok(Submitted {
        job: job.to_string(),
        local_queue: queue.to_string(),
        priority: *priority,
        workload,
        owner: json!({"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": uid}),
    })
}

/// Both versions list the ClusterQueue's and each LocalQueue's pending Workloads, whole and
/// through `limit` and `offset`.
async fn pending_workloads_listed(
    api: &VisibilityApi,
    namespace: &str,
    cq: &str,
    local_queues: &[&String],
    queue: &[&Submitted],
) -> Result<()> {
    let all = expected_items(queue);
    for version in VERSIONS {
        let path = format!("/apis/{GROUP}/{version}/clusterqueues/{cq}/pendingworkloads");
        api.summary_is(&path, version, &all)?;
        // Positions stay those of the whole queue; in the LocalQueue too, counted from its head.
        api.summary_is(&format!("{path}?limit=2&offset=1"), version, &all[1..3])?;
        api.summary_is(&format!("{path}?offset=4"), version, &all[4..])?;
        api.summary_is(&format!("{path}?offset=9"), version, &[])?;
        for lq in local_queues {
            let mine: Vec<Value> = queue
                .iter()
                .zip(&all)
                .filter(|(s, _)| &&s.local_queue == lq)
                .map(|(_, item)| item.clone())
                .collect();
            ensure!(
                mine.len() >= 2,
                "LocalQueue {lq} holds two Workloads or more"
            );
            let path = format!(
                "/apis/{GROUP}/{version}/namespaces/{namespace}/localqueues/{lq}/pendingworkloads"
            );
            api.summary_is(&path, version, &mine)?;
            api.summary_is(&format!("{path}?limit=1"), version, &mine[..1])?;
            api.summary_is(&format!("{path}?offset=1&limit=1"), version, &mine[1..2])?;
        }
    }
    Ok(())
}

/// An unknown ClusterQueue or LocalQueue is a NotFound Status, as Kueue's storage answers.
async fn not_found_answered(api: &VisibilityApi, namespace: &str, cq: &str) -> Result<()> {
    let missing = format!("{cq}-missing");
    for version in VERSIONS {
        let error = api.get_raw_error(&format!(
            "/apis/{GROUP}/{version}/clusterqueues/{missing}/pendingworkloads"
        ))?;
        let expected =
            format!("Error from server (NotFound): clusterqueue.{GROUP} \"{missing}\" not found");
        ensure!(
            error.trim() == expected,
            "unknown ClusterQueue in {version}: expected {expected:?}, kubectl said {error:?}"
        );
        let error = api.get_raw_error(&format!(
            "/apis/{GROUP}/{version}/namespaces/{namespace}/localqueues/{missing}/pendingworkloads"
        ))?;
        let expected =
            format!("Error from server (NotFound): localqueue.{GROUP} \"{missing}\" not found");
        ensure!(
            error.trim() == expected,
            "unknown LocalQueue in {version}: expected {expected:?}, kubectl said {error:?}"
        );
    }
    Ok(())
}

/// Each version's discovery document names Kueue's four resources, the `pendingworkloads`
/// subresources readable; `kubectl api-versions` lists both versions, and `kubectl api-resources`
/// reads the group without a discovery failure.
fn discovery_lists_the_resources(api: &VisibilityApi) -> Result<()> {
    for version in VERSIONS {
        let list = api.get_raw(&format!("/apis/{GROUP}/{version}"))?;
        ensure!(
            list["groupVersion"] == format!("{GROUP}/{version}"),
            "discovery of {GROUP}/{version}: {list}"
        );
        let mut resources: Vec<(String, bool, Value)> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["name"].as_str().unwrap_or_default().to_string(),
                    r["namespaced"].as_bool().unwrap_or_default(),
                    r["verbs"].clone(),
                )
            })
            .collect();
        resources.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<(&str, bool)> = resources
            .iter()
            .map(|(name, namespaced, _)| (name.as_str(), *namespaced))
            .collect();
        ensure!(
            names
                == [
                    ("clusterqueues", false),
                    ("clusterqueues/pendingworkloads", false),
                    ("localqueues", true),
                    ("localqueues/pendingworkloads", true),
                ],
            "discovery of {GROUP}/{version} lists {names:?}"
        );
        for (name, _, verbs) in &resources {
            ensure!(
                !name.ends_with("/pendingworkloads") || *verbs == json!(["get"]),
                "{GROUP}/{version} {name}: verbs {verbs}, expected [\"get\"]"
            );
        }
    }
    let output = api.kubectl(&["api-versions"])?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    for version in VERSIONS {
        ensure!(
            output.status.success() && stdout.lines().any(|l| l == format!("{GROUP}/{version}")),
            "kubectl api-versions does not list {GROUP}/{version}: {}\n{stdout}",
            output.status
        );
    }
    // Kueue lists the parents with no verb and kubectl leaves such resources out, so the group
    // shows no row; what matters is that reading its discovery does not fail.
    let output = api.kubectl(&[
        "api-resources",
        &format!("--api-group={GROUP}"),
        "-o",
        "name",
    ])?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(
        output.status.success() && stderr.trim().is_empty() && output.stdout.is_empty(),
        "kubectl api-resources --api-group={GROUP}: {}\n{}{stderr}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    Ok(())
}

/// `kubectl kueue list workload` shows each waiting Workload's position in its LocalQueue, as
/// the visibility API gives it, and none for the admitted one.
fn kubectl_kueue_shows_positions(
    api: &VisibilityApi,
    namespace: &str,
    admitted: &Submitted,
    queue: &[&Submitted],
) -> Result<()> {
    let plugin =
        support::kueue_build::dir(Some(support::kueue_build::e2e_version()))?.join("kubectl-kueue");
    ensure!(
        plugin.exists(),
        "{} is missing: build it with e2e/kueue-build.sh",
        plugin.display()
    );
    let output = Command::new(&plugin)
        .args(["list", "workload", "--namespace", namespace, "--kubeconfig"])
        .arg(&api.kubeconfig)
        .output()
        .with_context(|| format!("run {}", plugin.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    ensure!(
        output.status.success(),
        "kubectl-kueue list workload: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let positions = table_column(&stdout, "POSITION IN QUEUE")?;
    let mut expected: Vec<(String, String)> = expected_items(queue)
        .iter()
        .map(|item| {
            (
                item["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                item["positionInLocalQueue"].to_string(),
            )
        })
        .collect();
    expected.push((admitted.workload_name(), String::new()));
    expected.sort();
    ensure!(
        positions == expected,
        "kubectl-kueue list workload shows positions {positions:?}; expected {expected:?}\n{stdout}"
    );
    Ok(())
}

/// Each row's NAME with its cell in `column` of a table kubectl's printer aligned: every cell
/// starts where its header does.
fn table_column(table: &str, column: &str) -> Result<Vec<(String, String)>> {
    let mut lines = table.lines();
    let header = lines.next().context("an empty table")?;
    let start = header
        .find(column)
        .with_context(|| format!("no column {column:?} in {header:?}"))?;
    let end = header[start + column.len()..]
        .find(|c: char| !c.is_whitespace())
        .map_or(usize::MAX, |offset| start + column.len() + offset);
    let mut rows: Vec<(String, String)> = lines
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let name = line.split_whitespace().next().unwrap_or_default();
            let cell = line.get(start..end.min(line.len())).unwrap_or_default();
            (name.to_string(), cell.trim().to_string())
        })
        .collect();
    rows.sort();
    Ok(rows)
}

/// The visibility API read with the pinned kubectl, as a user reads it.
struct VisibilityApi {
    kubectl: PathBuf,
    kubeconfig: PathBuf,
}

impl VisibilityApi {
    fn new() -> Result<Self> {
        let script = support::repo_root().join("e2e/build.sh");
        let output = Command::new(&script)
            .arg("--dir")
            .output()
            .with_context(|| format!("run {} --dir", script.display()))?;
        ensure!(output.status.success(), "{} --dir failed", script.display());
        let dir = String::from_utf8(output.stdout)?;
        Ok(Self {
            kubectl: PathBuf::from(dir.trim()).join("kubectl"),
            kubeconfig: support::kubeconfig_path(),
        })
    }

    fn kubectl(&self, args: &[&str]) -> Result<Output> {
        Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .with_context(|| format!("run kubectl {}", args.join(" ")))
    }

    fn get_raw(&self, path: &str) -> Result<Value> {
        let output = self.kubectl(&["get", "--raw", path])?;
        ensure!(
            output.status.success(),
            "kubectl get --raw {path}: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).with_context(|| {
            format!(
                "kubectl get --raw {path} printed no JSON: {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }

    /// What kubectl says of a `get --raw` the server refuses.
    fn get_raw_error(&self, path: &str) -> Result<String> {
        let output = self.kubectl(&["get", "--raw", path])?;
        ensure!(
            !output.status.success(),
            "kubectl get --raw {path} succeeded: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        Ok(String::from_utf8_lossy(&output.stderr).into_owned())
    }

    /// The PendingWorkloadsSummary at `path` holds exactly `items`.
    fn summary_is(&self, path: &str, version: &str, items: &[Value]) -> Result<()> {
        let summary = self.get_raw(path)?;
        ensure!(
            summary["kind"] == "PendingWorkloadsSummary"
                && summary["apiVersion"] == format!("{GROUP}/{version}"),
            "{path}: not a {GROUP}/{version} PendingWorkloadsSummary: {summary}"
        );
        ensure!(
            summary["items"].as_array().map(Vec::as_slice) == Some(items),
            "{path} lists {}; expected {}",
            summary["items"],
            Value::Array(items.to_vec())
        );
        Ok(())
    }

    /// Polls the ClusterQueue's v1beta2 summary until it lists `count` Workloads: the queue
    /// learns of new and admitted Workloads from its watch.
    async fn until_cluster_queue_lists(&self, cq: &str, count: usize) -> Result<Value> {
        let path = format!("/apis/{GROUP}/v1beta2/clusterqueues/{cq}/pendingworkloads");
        let deadline = tokio::time::Instant::now() + kueue::DECIDED;
        loop {
            let summary = self.get_raw(&path)?;
            if summary["items"].as_array().map(Vec::len) == Some(count) {
                return Ok(summary);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("{path} does not list {count} Workloads: {summary}");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}
