//! The ProvisioningRequest admission check on the local control plane, the test playing the
//! cluster autoscaler: the autoscaler's ProvisioningRequest CRD is installed from its Go module
//! (`e2e/operators/crds.sh`), a ClusterQueue requires a `kueue.x-k8s.io/provisioning-request`
//! check, and each test sets the conditions of the requests kuota creates as an autoscaler would.
//!
//! A test binary of its own: its controller starts with the CRD installed, and the other suites'
//! controllers never see a provisioning check.
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)" && e2e/operators/crds.sh
//! cargo test --features e2e --test e2e_provisioning
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, PodTemplate};
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use kuota::api::workload_status::{AdmissionCheckState, CheckState};
use kuota::api::{AdmissionCheck, HasConditions, ProvisioningRequest, Workload};
use serde_json::json;
use tokio::sync::OnceCell;
use tokio::time::{Instant, sleep};

#[path = "provisioning/topology.rs"]
mod topology;

use support::controller::Replica;
use support::nodes::{self, NodeSet};
use support::{TestNamespace, kueue, operators, unique_name, wait};

/// The controller of this binary, started once the CRD is installed.
static CONTROLLER: OnceCell<Replica> = OnceCell::const_new();

/// Label keeping a test's pods on the test's own nodes, through its flavor's nodeLabels.
const TEST_LABEL: &str = "e2e.kuota.dev/test";
/// How long kuota may take to act on a change.
const DECIDED: Duration = Duration::from_secs(45);
/// The class every test's config names.
const CLASS: &str = "queued-provisioning.gke.io";

async fn controller() -> Result<&'static Replica> {
    CONTROLLER
        .get_or_try_init(|| async {
            let client = support::client().await?;
            operators::apply_provisioning_request_crd(&client).await?;
            Replica::spawn_leader(
                "provisioning",
                "integrations: {frameworks: [\"batch/job\"]}\n",
            )
            .await
        })
        .await
}

/// One test's namespace, flavor, config, check and queues, named after the test.
struct Fixture {
    client: Client,
    name: String,
    check: String,
    namespace: TestNamespace,
    controller: &'static Replica,
}

impl Fixture {
    /// A flavor whose nodes carry the test's label, a config (`retry` is its `retryStrategy`), a
    /// provisioning check on it, and a ClusterQueue requiring the check, with LocalQueue `lq`.
    async fn create(prefix: &str, retry: &str) -> Result<Self> {
        Self::create_on(prefix, retry, false).await
    }

    /// As [`Fixture::create`]; with `topology`, the flavor is topology-aware over the block, rack
    /// and host labels of [`NodeSet`], through a Topology of the fixture's name.
    async fn create_on(prefix: &str, retry: &str, topology: bool) -> Result<Self> {
        let controller = controller().await?;
        let client = support::client().await?;
        let name = unique_name(prefix);
        let namespace = TestNamespace::create(&client, prefix).await?;
        let check = format!("prov-{name}");
        let (topology_yaml, topology_name) = if topology {
            (
                nodes::topology_yaml(&name),
                format!("  topologyName: {name}\n"),
            )
        } else {
            (String::new(), String::new())
        };
        kueue::apply_yaml(
            &client,
            &namespace.name,
            &format!(
                "{topology_yaml}apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {{name: {name}}}
spec:
  provisioningClassName: {CLASS}
  parameters: {{maxRunDurationSeconds: \"3600\"}}
  retryStrategy: {retry}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: {check}}}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {{apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: {name}}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: {name}}}
spec:
  nodeLabels: {{{TEST_LABEL}: {name}}}
{topology_name}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  admissionChecksStrategy:
    admissionChecks: [{{name: {check}}}]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: {name}
      resources: [{{name: cpu, nominalQuota: \"4\"}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq}}
spec: {{clusterQueue: {name}}}
",
            ),
        )
        .await?;
        let checks: Api<AdmissionCheck> = Api::all(client.clone());
        wait::until(&checks, &check, "be Active", DECIDED, |c| {
            c.condition_is_true("Active")
        })
        .await
        .with_context(|| format!("kuota log:\n{}", controller.log_tail()))?;
        Ok(Self {
            client,
            name,
            check,
            namespace,
            controller,
        })
    }

    fn workloads(&self) -> Api<Workload> {
        Api::namespaced(self.client.clone(), &self.namespace.name)
    }

    fn requests(&self) -> Api<ProvisioningRequest> {
        Api::namespaced(self.client.clone(), &self.namespace.name)
    }

    /// Submits a one-pod Job to `lq` and returns its Workload's name once it exists.
    async fn submit(&self, job: &str) -> Result<String> {
        let spec = kueue::one_pod_job(job, json!({"kueue.x-k8s.io/queue-name": "lq"}))?;
        self.submit_job(spec).await
    }

    /// Submits `spec`, the namespace's only Job, and returns its Workload's name once it exists.
    async fn submit_job(&self, spec: Job) -> Result<String> {
        let job = spec.name_any();
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), &self.namespace.name);
        jobs.create(&PostParams::default(), &spec)
            .await
            .with_context(|| format!("create Job {job}"))?;
        let deadline = Instant::now() + DECIDED;
        loop {
            let listed = self.workloads().list(&ListParams::default()).await?.items;
            if let Some(workload) = listed.first() {
                return Ok(workload.name_any());
            }
            if Instant::now() >= deadline {
                bail!(
                    "no Workload for Job {job}; kuota log:\n{}",
                    self.controller.log_tail()
                );
            }
            sleep(Duration::from_millis(300)).await;
        }
    }

    /// The request of attempt `attempt` for `workload`, once it exists.
    async fn request(&self, workload: &str, attempt: u32) -> Result<ProvisioningRequest> {
        let name = format!("{workload}-{}-{attempt}", self.check);
        wait::until_exists(&self.requests(), &name, DECIDED)
            .await
            .with_context(|| format!("kuota log:\n{}", self.controller.log_tail()))
    }

    /// Sets the request's conditions as the autoscaler would.
    async fn report(&self, request: &str, conditions: &[(&str, &str)]) -> Result<()> {
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        let conditions: Vec<_> = conditions
            .iter()
            .map(|(type_, message)| {
                json!({"type": type_, "status": "True", "reason": type_, "message": message,
                       "lastTransitionTime": now})
            })
            .collect();
        let body = json!({"status": {"conditions": conditions,
                                     "provisioningClassDetails": {"nodepool": "pool-1"}}});
        self.requests()
            .patch_status(request, &PatchParams::default(), &Patch::Merge(&body))
            .await
            .with_context(|| format!("report {conditions:?} on ProvisioningRequest {request}"))?;
        Ok(())
    }

    /// Waits until the Workload's entry for the check satisfies `done`.
    async fn until_entry(
        &self,
        workload: &str,
        what: &str,
        done: impl Fn(&AdmissionCheckState, &Workload) -> bool,
    ) -> Result<Workload> {
        let check = self.check.clone();
        wait::until(&self.workloads(), workload, what, DECIDED, |w| {
            entry(w, &check).is_some_and(|e| done(e, w))
        })
        .await
        .with_context(|| format!("kuota log:\n{}", self.controller.log_tail()))
    }

    async fn delete(self) -> Result<()> {
        self.namespace.delete().await
    }
}

fn entry<'a>(workload: &'a Workload, check: &str) -> Option<&'a AdmissionCheckState> {
    workload
        .status
        .as_ref()?
        .admission_checks
        .iter()
        .find(|e| e.name == check)
}

fn reserved(workload: &Workload) -> bool {
    workload.condition_is_true("QuotaReserved")
}

#[tokio::test]
async fn a_job_waits_for_its_provisioning_request_and_runs_once_it_is_provisioned() -> Result<()> {
    let fixture = Fixture::create("prov-run", "{}").await?;
    let workload = fixture.submit("train").await?;

    // Quota is reserved, the check waits, and the Job stays suspended.
    fixture
        .until_entry(&workload, "reserve quota with the check Pending", |e, w| {
            reserved(w) && e.state == CheckState::Pending
        })
        .await?;
    let request = fixture.request(&workload, 1).await?;
    let admitted = fixture.workloads().get(&workload).await?;
    ensure!(
        !admitted.condition_is_true("Admitted"),
        "admitted before its request was provisioned"
    );
    let jobs: Api<Job> = Api::namespaced(fixture.client.clone(), &fixture.namespace.name);
    let job = jobs.get("train").await?;
    ensure!(
        job.spec.as_ref().and_then(|s| s.suspend) == Some(true),
        "the Job runs before its request was provisioned"
    );

    // The request asks for the Job's pods, described by a PodTemplate it owns, on the flavor.
    ensure!(request.spec.provisioning_class_name == CLASS);
    ensure!(
        request
            .spec
            .parameters
            .get("maxRunDurationSeconds")
            .map(String::as_str)
            == Some("3600")
    );
    ensure!(
        request.spec.pod_sets.len() == 1,
        "{:?}",
        request.spec.pod_sets
    );
    let covered = &request.spec.pod_sets[0];
    ensure!(covered.count == 1);
    let templates: Api<PodTemplate> =
        Api::namespaced(fixture.client.clone(), &fixture.namespace.name);
    let template = wait::until(
        &templates,
        &covered.pod_template_ref.name,
        "be owned by its request",
        DECIDED,
        |t| {
            t.owner_references()
                .iter()
                .any(|o| o.name == request.name_any())
        },
    )
    .await?;
    let selector = template
        .template
        .and_then(|t| t.spec)
        .and_then(|s| s.node_selector)
        .unwrap_or_default();
    ensure!(
        selector.get(TEST_LABEL) == Some(&fixture.name),
        "the PodTemplate is not on the flavor: {selector:?}"
    );

    // The autoscaler makes the nodes and reports the capacity provisioned.
    let mut nodes = NodeSet::new(&fixture.name, 1, 1, 1);
    nodes.labels.insert(TEST_LABEL.into(), fixture.name.clone());
    nodes.create(&fixture.client).await?;
    fixture
        .report(&request.name_any(), &[("Provisioned", "capacity is ready")])
        .await?;
    let ready = fixture
        .until_entry(&workload, "be admitted with the check Ready", |e, w| {
            e.state == CheckState::Ready && w.condition_is_true("Admitted")
        })
        .await?;
    let updates = &entry(&ready, &fixture.check)
        .context("entry")?
        .pod_set_updates;
    ensure!(
        updates.len() == 1
            && updates[0]
                .annotations
                .get("autoscaling.x-k8s.io/consume-provisioning-request")
                == Some(&request.name_any()),
        "pod set updates: {updates:?}"
    );

    // The Job runs its pod on the new node, told which request it consumes.
    let pods: Api<Pod> = Api::namespaced(fixture.client.clone(), &fixture.namespace.name);
    let deadline = Instant::now() + DECIDED;
    loop {
        let listed = pods
            .list(&ListParams::default().labels("job-name=train"))
            .await?
            .items;
        let placed = listed.iter().find(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some()
                && p.annotations()
                    .get("autoscaling.x-k8s.io/consume-provisioning-request")
                    == Some(&request.name_any())
        });
        if placed.is_some() {
            break;
        }
        if Instant::now() >= deadline {
            bail!(
                "the Job's pod did not run on the provisioned node: {:?}\nkuota log:\n{}",
                listed
                    .iter()
                    .map(|p| (
                        p.name_any(),
                        p.annotations().clone(),
                        p.spec.as_ref().and_then(|s| s.node_name.clone())
                    ))
                    .collect::<Vec<_>>(),
                fixture.controller.log_tail()
            );
        }
        sleep(Duration::from_millis(500)).await;
    }
    let client = fixture.client.clone();
    fixture.delete().await?;
    nodes.delete(&client).await
}

/// The retry strategy of the retry tests: one second, then two.
const QUICK_RETRY: &str = "{backoffLimitCount: 2, backoffBaseSeconds: 1, backoffMaxSeconds: 2}";

#[tokio::test]
async fn a_failed_request_is_retried_under_a_new_name() -> Result<()> {
    let fixture = Fixture::create("prov-fail", QUICK_RETRY).await?;
    let workload = fixture.submit("fails").await?;
    let first = fixture.request(&workload, 1).await?;
    fixture
        .report(&first.name_any(), &[("Failed", "out of stock")])
        .await?;

    // Evicted for the check, requeued after its backoff, quota reserved again: attempt 2.
    let second = fixture.request(&workload, 2).await?;
    let retried = fixture
        .until_entry(&workload, "reserve quota again with one retry", |e, w| {
            reserved(w) && e.state == CheckState::Pending && e.retry_count == Some(1)
        })
        .await?;
    ensure!(
        !retried.condition_is_true("Admitted"),
        "admitted without a provisioned request"
    );
    // The failed attempt is deleted.
    wait::until_absent(&fixture.requests(), &first.name_any(), DECIDED).await?;

    fixture
        .report(&second.name_any(), &[("Provisioned", "found it")])
        .await?;
    fixture
        .until_entry(&workload, "be admitted on attempt 2", |e, w| {
            e.state == CheckState::Ready && w.condition_is_true("Admitted")
        })
        .await?;
    fixture.delete().await
}

#[tokio::test]
async fn an_expired_booking_before_admission_is_retried() -> Result<()> {
    let fixture = Fixture::create("prov-expire", QUICK_RETRY).await?;
    let workload = fixture.submit("late").await?;
    let first = fixture.request(&workload, 1).await?;
    // The capacity was booked and released before the Workload could be admitted.
    fixture
        .report(
            &first.name_any(),
            &[
                ("Provisioned", "booked"),
                ("BookingExpired", "booking expired"),
            ],
        )
        .await?;
    let second = fixture.request(&workload, 2).await?;
    let retried = fixture
        .until_entry(&workload, "wait for attempt 2", |e, w| {
            reserved(w) && e.state == CheckState::Pending && e.retry_count == Some(1)
        })
        .await?;
    ensure!(
        !retried.condition_is_true("Admitted"),
        "admitted on an expired booking"
    );
    // The check said why it was retried, on an event of the Workload.
    let events: Api<Event> = Api::namespaced(fixture.client.clone(), &fixture.namespace.name);
    let why = format!(
        "Admission check {} updated state from Pending to Retry with message: \
         Retrying after booking expired: booking expired",
        fixture.check
    );
    let recorded = events.list(&ListParams::default()).await?.items;
    ensure!(
        recorded.iter().any(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(workload.as_str())
                && e.reason.as_deref() == Some("AdmissionCheckUpdated")
                && e.note.as_deref() == Some(why.as_str())
        }),
        "no event {why:?}: {:?}",
        recorded
            .iter()
            .map(|e| (e.reason.clone(), e.note.clone()))
            .collect::<Vec<_>>()
    );
    fixture
        .report(&second.name_any(), &[("Provisioned", "booked again")])
        .await?;
    fixture
        .until_entry(&workload, "be admitted on attempt 2", |e, w| {
            e.state == CheckState::Ready && w.condition_is_true("Admitted")
        })
        .await?;
    fixture.delete().await
}
