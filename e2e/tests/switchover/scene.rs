//! One side of a switch-over: a flavor on kwok nodes of its own, a ClusterQueue of 2 cpu in a
//! cohort and its LocalQueue, two WorkloadPriorityClasses, two one-cpu Jobs admitted and running
//! and three waiting for quota (two low-priority, then a high-priority one), and what must hold
//! across the switch: the admitted Workloads unchanged, their Jobs never suspended and their pods
//! the same, the waiting ones admitted by priority then creation as the running Jobs finish.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::Workload;
use serde_json::{Value, json};
use tokio::time::{Instant, sleep};

use crate::support::kueue::{admitted, apply_yaml, condition, pending_reason};
use crate::support::nodes::NodeSet;
use crate::support::{TestNamespace, unique_name};

/// How long a controller may take to admit, or to start after a switch.
const SETTLE: Duration = Duration::from_secs(90);
/// The running Jobs' pods: kwok ends them after this, long after the test.
const RUN_DURATION: &str = "2h";
const POOL_LABEL: &str = "switchover.e2e.kuota.dev/pool";

/// The Jobs, by the order the test creates them.
pub const RUNNING: [&str; 2] = ["run-1", "run-2"];
/// Created in this order; admitted as `ADMISSION_ORDER` says.
pub const WAITING: [&str; 3] = ["low-1", "low-2", "high"];
pub const ADMISSION_ORDER: [&str; 3] = ["high", "low-1", "low-2"];

pub struct Scene {
    pub namespace: TestNamespace,
    pub queue: String,
    pub cohort: String,
    pub flavor: String,
    high: String,
    low: String,
    nodes: NodeSet,
}

/// An admitted Workload and its Job as they were before the switch.
#[derive(Debug, PartialEq)]
pub struct AdmittedState {
    pub workload: String,
    pub workload_uid: String,
    pub admission: Value,
    pub quota_reserved_at: String,
    pub admitted_at: String,
    pub job_generation: i64,
    pub pods: Vec<String>,
}

impl Scene {
    /// The nodes, namespace and queue objects, written in `api_version` (`v1beta1` as Kueue's
    /// users wrote them, or `v1beta2`).
    pub async fn create(client: &Client, prefix: &str, api_version: &str) -> Result<Self> {
        let namespace = TestNamespace::create(client, prefix).await?;
        let (queue, cohort, flavor) = (
            unique_name(&format!("{prefix}-cq")),
            unique_name(&format!("{prefix}-co")),
            unique_name(&format!("{prefix}-rf")),
        );
        let (high, low) = (
            unique_name(&format!("{prefix}-high")),
            unique_name(&format!("{prefix}-low")),
        );
        let mut nodes = NodeSet::new(&unique_name(prefix), 1, 1, 1);
        nodes.labels.insert(POOL_LABEL.into(), flavor.clone());
        nodes.create(client).await?;
        // v1beta1 names the ClusterQueue's cohort `cohort`, v1beta2 `cohortName`.
        let cohort_field = if api_version == "v1beta1" {
            "cohort"
        } else {
            "cohortName"
        };
        apply_yaml(
            client,
            &namespace.name,
            &format!(
                "apiVersion: kueue.x-k8s.io/{api_version}
kind: ResourceFlavor
metadata: {{name: {flavor}}}
spec: {{nodeLabels: {{{POOL_LABEL}: {flavor}}}}}
---
apiVersion: kueue.x-k8s.io/{api_version}
kind: Cohort
metadata: {{name: {cohort}}}
---
apiVersion: kueue.x-k8s.io/{api_version}
kind: ClusterQueue
metadata: {{name: {queue}}}
spec:
  {cohort_field}: {cohort}
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {flavor}
      resources: [{{name: cpu, nominalQuota: \"2\"}}]
---
apiVersion: kueue.x-k8s.io/{api_version}
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {queue}}}
---
apiVersion: kueue.x-k8s.io/{api_version}
kind: WorkloadPriorityClass
metadata: {{name: {high}}}
value: 1000
---
apiVersion: kueue.x-k8s.io/{api_version}
kind: WorkloadPriorityClass
metadata: {{name: {low}}}
value: 10
"
            ),
        )
        .await?;
        Ok(Self {
            namespace,
            queue,
            cohort,
            flavor,
            high,
            low,
            nodes,
        })
    }

    fn jobs(&self, client: &Client) -> Api<Job> {
        Api::namespaced(client.clone(), &self.namespace.name)
    }

    fn workloads(&self, client: &Client) -> Api<Workload> {
        Api::namespaced(client.clone(), &self.namespace.name)
    }

    async fn create_job(&self, client: &Client, name: &str, class: &str) -> Result<()> {
        let job: Job = serde_json::from_value(json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "labels": {
                "kueue.x-k8s.io/queue-name": "lq",
                "kueue.x-k8s.io/priority-class": class,
            }},
            "spec": {"suspend": true, "parallelism": 1, "completions": 1, "template": {
                "metadata": {"annotations": {"e2e.kuota.dev/run-duration": RUN_DURATION}},
                "spec": {"restartPolicy": "Never", "containers": [{
                    "name": "c", "image": "busybox",
                    "resources": {"requests": {"cpu": "1"}},
                }]},
            }},
        }))?;
        self.jobs(client)
            .create(&PostParams::default(), &job)
            .await
            .with_context(|| format!("create Job {}/{name}", self.namespace.name))?;
        Ok(())
    }

    /// Two Jobs admitted with their pods running, then three waiting for quota, created a
    /// second apart so that their creation times order them.
    pub async fn fill(&self, client: &Client) -> Result<()> {
        for name in RUNNING {
            self.create_job(client, name, &self.low).await?;
        }
        for name in RUNNING {
            self.until_running(client, name).await?;
        }
        for name in WAITING {
            let class = if name == "high" {
                &self.high
            } else {
                &self.low
            };
            self.create_job(client, name, class).await?;
            sleep(Duration::from_millis(1100)).await;
        }
        for name in WAITING {
            self.until_waiting(client, name).await?;
        }
        Ok(())
    }

    /// The one Workload the Job owns (failing when there are several).
    pub async fn workload_of(&self, client: &Client, job: &str) -> Result<Option<Workload>> {
        let uid = match self.jobs(client).get_opt(job).await? {
            Some(job) => job.uid().unwrap_or_default(),
            None => return Ok(None),
        };
        let owned: Vec<Workload> = self
            .workloads(client)
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|w| w.owner_references().iter().any(|o| o.uid == uid))
            .collect();
        match owned.len() {
            0 => Ok(None),
            1 => Ok(owned.into_iter().next()),
            n => bail!(
                "Job {}/{job} owns {n} Workloads: {:?}",
                self.namespace.name,
                owned.iter().map(|w| w.name_any()).collect::<Vec<_>>()
            ),
        }
    }

    async fn until<F>(&self, client: &Client, job: &str, what: &str, done: F) -> Result<Workload>
    where
        F: Fn(&Workload, &Job) -> bool,
    {
        let deadline = Instant::now() + SETTLE;
        loop {
            let workload = self.workload_of(client, job).await?;
            let current = self.jobs(client).get_opt(job).await?;
            if let (Some(w), Some(j)) = (workload.as_ref(), current.as_ref())
                && done(w, j)
            {
                return Ok(w.clone());
            }
            if Instant::now() >= deadline {
                bail!(
                    "Job {}/{job} did not {what} within {SETTLE:?}; its Workload: {}",
                    self.namespace.name,
                    serde_json::to_string(&workload.map(|w| w.status)).unwrap_or_default()
                );
            }
            sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits until the Job's Workload is admitted, the Job started and its pod running.
    pub async fn until_running(&self, client: &Client, job: &str) -> Result<()> {
        self.until(client, job, "start", |w, j| {
            admitted(w) && j.spec.as_ref().and_then(|s| s.suspend) == Some(false)
        })
        .await?;
        let deadline = Instant::now() + SETTLE;
        while self.running_pods(client, job).await?.is_empty() {
            ensure!(
                Instant::now() < deadline,
                "Job {}/{job} has no running pod after {SETTLE:?}",
                self.namespace.name
            );
            sleep(Duration::from_millis(500)).await;
        }
        Ok(())
    }

    pub async fn until_waiting(&self, client: &Client, job: &str) -> Result<()> {
        self.until(client, job, "wait for quota", |w, _| {
            pending_reason(w).is_some() && !admitted(w)
        })
        .await
        .map(|_| ())
    }

    async fn running_pods(&self, client: &Client, job: &str) -> Result<Vec<String>> {
        let pods: Api<Pod> = Api::namespaced(client.clone(), &self.namespace.name);
        let selector = format!("batch.kubernetes.io/job-name={job}");
        let mut uids: Vec<String> = pods
            .list(&ListParams::default().labels(&selector))
            .await?
            .items
            .into_iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .filter_map(|p| p.uid())
            .collect();
        uids.sort();
        Ok(uids)
    }

    /// The admitted Workloads and their Jobs, by Job name.
    pub async fn admitted_states(
        &self,
        client: &Client,
    ) -> Result<BTreeMap<String, AdmittedState>> {
        let mut states = BTreeMap::new();
        for job in RUNNING.iter().chain(WAITING.iter()) {
            let Some(workload) = self.workload_of(client, job).await? else {
                continue;
            };
            if !admitted(&workload) {
                continue;
            }
            let current = self.jobs(client).get(job).await?;
            let at = |type_: &str| {
                condition(&workload, type_)
                    .map(|c| c.last_transition_time.clone())
                    .map(|t| serde_json::to_string(&t).unwrap_or_default())
                    .unwrap_or_default()
            };
            states.insert(
                job.to_string(),
                AdmittedState {
                    workload: workload.name_any(),
                    workload_uid: workload.uid().unwrap_or_default(),
                    admission: serde_json::to_value(
                        workload.status.as_ref().and_then(|s| s.admission.as_ref()),
                    )?,
                    quota_reserved_at: at("QuotaReserved"),
                    admitted_at: at("Admitted"),
                    job_generation: current.metadata.generation.unwrap_or_default(),
                    pods: self.running_pods(client, job).await?,
                },
            );
        }
        Ok(states)
    }

    /// The Workloads of the namespace that were evicted or preempted at some point.
    pub async fn evicted(&self, client: &Client) -> Result<Vec<String>> {
        let workloads = self.workloads(client).list(&ListParams::default()).await?;
        Ok(workloads
            .items
            .iter()
            .filter(|w| {
                ["Evicted", "Preempted", "Requeued"]
                    .iter()
                    .any(|t| condition(w, t).is_some_and(|c| c.status == "True"))
            })
            .map(|w| w.name_any())
            .collect())
    }

    /// Ends a running Job: a deadline already passed makes the Job controller fail it, which
    /// finishes its Workload and frees its quota.
    pub async fn finish(&self, client: &Client, job: &str) -> Result<()> {
        self.jobs(client)
            .patch(
                job,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"activeDeadlineSeconds": 1}})),
            )
            .await
            .with_context(|| format!("end Job {}/{job}", self.namespace.name))?;
        self.until(client, job, "finish", |w, _| {
            condition(w, "Finished").is_some_and(|c| c.status == "True")
        })
        .await
        .map(|_| ())
    }

    /// The waiting Jobs admitted one at a time, in [`ADMISSION_ORDER`], as the running ones
    /// finish: each finish frees room for exactly one.
    pub async fn drain_in_order(&self, client: &Client) -> Result<()> {
        let mut finishing: Vec<&str> = RUNNING.to_vec();
        for (i, next) in ADMISSION_ORDER.iter().enumerate() {
            self.finish(client, finishing[i]).await?;
            self.until_running(client, next).await?;
            for later in &ADMISSION_ORDER[i + 1..] {
                let workload = self.workload_of(client, later).await?;
                ensure!(
                    workload.as_ref().is_some_and(|w| !admitted(w)),
                    "Job {later} was admitted before {next} had its turn (order {ADMISSION_ORDER:?})"
                );
            }
            finishing.push(next);
        }
        for job in &finishing[ADMISSION_ORDER.len()..] {
            self.finish(client, job).await?;
        }
        Ok(())
    }

    /// The namespace and cluster-scoped objects deleted while a controller still runs (it
    /// removes their finalizers), then the nodes.
    pub async fn delete(self, client: &Client) -> Result<()> {
        self.namespace.delete().await?;
        let objects = [
            format!("clusterqueues.kueue.x-k8s.io/{}", self.queue),
            format!("cohorts.kueue.x-k8s.io/{}", self.cohort),
            format!("resourceflavors.kueue.x-k8s.io/{}", self.flavor),
            format!("workloadpriorityclasses.kueue.x-k8s.io/{}", self.high),
            format!("workloadpriorityclasses.kueue.x-k8s.io/{}", self.low),
        ];
        for object in &objects {
            crate::kubectl(&["delete", "--ignore-not-found", "--timeout=60s", object])?;
        }
        self.nodes.delete(client).await
    }
}
