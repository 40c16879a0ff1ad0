//! An API server brownout on the local control plane, made by the API server's priority and
//! fairness: the controller's requests (a FlowSchema matching its ServiceAccount) go to a priority
//! level with no seats and `limitResponse: Reject`, whose one request allowed at a time (APF lets
//! one through while none runs) is held by a holder's request that waits on a webhook that never
//! answers. The API server rejects the controller's requests with 429 and `Retry-After`. Jobs
//! created meanwhile are admitted once the brownout ends, and the controller was refused about
//! once per `Retry-After`, not at its budget.
//!
//! A test binary of its own: its controller runs under a ServiceAccount of the test's, as its
//! only controller (the suite's shared one, under the admin's certificate, would admit the same
//! Jobs unthrottled).
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e_pacing -- --nocapture
//! ```

// Shared with the e2e suite, of which this binary uses a part.
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use kuota::api::Workload;
use tokio::time::{Instant, sleep};

use support::controller::{Replica, state_dir};
use support::{TestNamespace, kueue, unique_name};

/// Jobs created during the brownout.
const JOBS: usize = 40;
/// How long the API server rejects the controller's requests.
const BROWNOUT: Duration = Duration::from_secs(30);
/// Requests the controller may have sent before the first rejection came back: the Jobs are
/// created one by one, so the first Workload's creation is refused before most Jobs are seen.
const IN_FLIGHT: u64 = 8;
/// How soon after the brownout every Job is admitted: the probe finds the API server serving
/// again within a second, and the writes held for it go at once.
const RECOVERED: Duration = Duration::from_secs(20);

#[tokio::test]
async fn during_a_brownout_requests_wait_as_the_api_server_asks_and_jobs_are_admitted_after()
-> Result<()> {
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "pacing").await?;
    let identity = unique_name("pacing");
    let kubeconfig = service_account_kubeconfig(&client, &ns.name, &identity).await?;
    let controller = Replica::spawn_leader_as(
        "pacing",
        "integrations: {frameworks: [\"batch/job\"]}\n",
        &kubeconfig,
    )
    .await?;
    let (cq, flavor) = (unique_name("cq"), unique_name("rf"));
    kueue::queue(&client, &ns.name, &cq, &flavor, &JOBS.to_string(), "").await?;

    // The holder: a user of its own whose ConfigMaps wait on a webhook that accepts connections
    // and never answers, for the webhook's whole timeout.
    let hold = std::net::TcpListener::bind("127.0.0.1:0")?;
    let holder = format!("{identity}-holder");
    let holder_kubeconfig = service_account_kubeconfig(&client, &ns.name, &holder).await?;
    kueue::apply_yaml(
        &client,
        &ns.name,
        &brownout(&identity, &holder, &ns.name, hold.local_addr()?.port()),
    )
    .await?;
    let holding = tokio::spawn(hold_the_seat(
        client_of(&holder_kubeconfig).await?,
        ns.name.clone(),
    ));
    until_rejected(&kubeconfig, &ns.name).await?;
    let before = rejected(&client, &identity).await?;
    let started = Instant::now();
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    for i in 0..JOBS {
        let job = kueue::one_pod_job(
            &format!("job-{i}"),
            serde_json::json!({"kueue.x-k8s.io/queue-name": format!("lq-{cq}")}),
        )?;
        jobs.create(&PostParams::default(), &job).await?;
    }
    sleep(BROWNOUT.saturating_sub(started.elapsed())).await;
    let refused = rejected(&client, &identity).await? - before;
    let window = started.elapsed();
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    let made = workloads.list(&ListParams::default()).await?.items.len();
    holding.abort();
    lift(&client, &identity, &holder).await?;
    drop(hold);

    let deadline = Instant::now() + RECOVERED;
    loop {
        let suspended = jobs
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|j| j.spec.as_ref().and_then(|s| s.suspend) != Some(false))
            .count();
        if suspended == 0 {
            break;
        }
        if Instant::now() >= deadline {
            bail!(
                "{suspended} of {JOBS} Jobs still suspended {RECOVERED:?} after the brownout; \
                 log {}:\n{}",
                controller.log.display(),
                controller.log_tail()
            );
        }
        sleep(Duration::from_millis(500)).await;
    }
    let recovered = started.elapsed() - window;
    println!(
        "brownout of {:.1}s: {refused} requests of the controller rejected, {made} Workloads \
         made during it; all {JOBS} Jobs admitted {:.1}s after it ended",
        window.as_secs_f64(),
        recovered.as_secs_f64()
    );
    // The API server asks `Retry-After: 1` while rejections are few (and doubles it, up to 32 s,
    // when they are more than 3 per second asked), so one probe per second at most follows the
    // first rejections, and the end of the brownout is seen within a second.
    let allowed = IN_FLIGHT + window.as_secs() + 1;
    ensure!(
        refused <= allowed,
        "the controller was rejected {refused} times in {:.1}s, more than the {allowed} that \
         honouring Retry-After allows",
        window.as_secs_f64()
    );
    ensure!(
        refused > 0,
        "the brownout rejected nothing of the controller"
    );
    ns.delete().await?;
    let bindings: Api<ClusterRoleBinding> = Api::all(client);
    for name in [&identity, &holder] {
        bindings.delete(name, &DeleteParams::default()).await?;
    }
    Ok(())
}

/// A ServiceAccount `name` in `namespace` bound to `cluster-admin`, and a kubeconfig in the
/// state folder that talks to the cluster with a token of it.
async fn service_account_kubeconfig(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<PathBuf> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let account: ServiceAccount = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
    }))?;
    accounts.create(&PostParams::default(), &account).await?;
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }))?;
    Api::<ClusterRoleBinding>::all(client.clone())
        .create(&PostParams::default(), &binding)
        .await?;
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: vec!["https://kubernetes.default.svc.cluster.local".to_string()],
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let token = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await?
        .status
        .context("a TokenRequest answered without a token")?
        .token;
    let admin = Kubeconfig::read_from(support::kubeconfig_path())?;
    let cluster = admin
        .clusters
        .first()
        .and_then(|c| c.cluster.as_ref())
        .context("the kubeconfig names no cluster")?;
    let server = cluster
        .server
        .clone()
        .context("the cluster has no server")?;
    let ca = cluster
        .certificate_authority_data
        .clone()
        .context("the cluster has no CA data")?;
    let path = state_dir().join(format!("{name}.kubeconfig"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: kuota-e2e
  cluster: {{server: {server:?}, certificate-authority-data: {ca:?}}}
users:
- name: {name}
  user: {{token: {token:?}}}
contexts:
- name: kuota-e2e
  context: {{cluster: kuota-e2e, user: {name}}}
current-context: kuota-e2e
"
        ),
    )?;
    Ok(path)
}

/// A priority level with no seats that rejects at once; flow schemas sending it the requests of
/// ServiceAccount `controller` for the API groups kuota admits and reports through (not its
/// Lease, so it keeps leading) and those of `holder`; a webhook at `port` for the holder's
/// ConfigMaps.
fn brownout(controller: &str, holder: &str, namespace: &str, port: u16) -> String {
    format!(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: {controller}}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 0
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {{type: Reject}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: {controller}}}
spec:
  priorityLevelConfiguration: {{name: {controller}}}
  matchingPrecedence: 500
  distinguisherMethod: {{type: ByUser}}
  rules:
  - subjects: [{{kind: ServiceAccount, serviceAccount: {{namespace: {namespace}, name: {controller}}}}}]
    resourceRules:
    - verbs: [\"*\"]
      apiGroups: [\"\", batch, kueue.x-k8s.io, events.k8s.io]
      resources: [\"*\"]
      clusterScope: true
      namespaces: [\"*\"]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: {holder}}}
spec:
  priorityLevelConfiguration: {{name: {controller}}}
  matchingPrecedence: 500
  distinguisherMethod: {{type: ByUser}}
  rules:
  - subjects: [{{kind: ServiceAccount, serviceAccount: {{namespace: {namespace}, name: {holder}}}}}]
    resourceRules:
    - verbs: [\"*\"]
      apiGroups: [\"\"]
      resources: [configmaps]
      namespaces: [\"*\"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: {holder}}}
webhooks:
- name: hold.pacing.e2e.kuota.dev
  clientConfig: {{url: \"https://127.0.0.1:{port}/hold\"}}
  rules: [{{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [configmaps]}}]
  namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {namespace}}}}}
  objectSelector: {{matchLabels: {{e2e.kuota.dev/hold: \"true\"}}}}
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1]
  timeoutSeconds: 30
"
    )
}

/// Keeps one ConfigMap creation of the holder in the API server, each waiting out the webhook's
/// timeout, until aborted.
async fn hold_the_seat(holder: Client, namespace: String) {
    let configmaps: Api<ConfigMap> = Api::namespaced(holder, &namespace);
    let held: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"generateName": "hold-", "labels": {"e2e.kuota.dev/hold": "true"}},
    }))
    .unwrap_or_default();
    loop {
        if configmaps
            .create(&PostParams::default(), &held)
            .await
            .is_err()
        {
            // Rejected: a request of the controller holds the seat for a moment.
            sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A client with the credentials of `kubeconfig` that gives a refusal back at once (kube's own
/// retry would wait it out).
async fn client_of(kubeconfig: &Path) -> Result<Client> {
    let mut config = Config::from_custom_kubeconfig(
        Kubeconfig::read_from(kubeconfig)?,
        &KubeConfigOptions::default(),
    )
    .await?;
    config.default_retry = false;
    Ok(Client::try_from(config)?)
}

/// Waits until the API server rejects the controller's ServiceAccount (the flow schemas are read
/// by its priority-and-fairness controller a moment after they are stored, and the holder has
/// to take the seat).
async fn until_rejected(kubeconfig: &Path, namespace: &str) -> Result<()> {
    let workloads: Api<Workload> = Api::namespaced(client_of(kubeconfig).await?, namespace);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match workloads.list(&ListParams::default()).await {
            Err(kube::Error::Api(status)) if status.code == 429 => return Ok(()),
            _ if Instant::now() >= deadline => bail!("the flow schema rejected nothing in 30s"),
            _ => sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Deletes the webhook, the flow schemas and their priority level: the controller's requests
/// are served again.
async fn lift(client: &Client, controller: &str, holder: &str) -> Result<()> {
    use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
    let schemas: Api<FlowSchema> = Api::all(client.clone());
    schemas.delete(controller, &DeleteParams::default()).await?;
    schemas.delete(holder, &DeleteParams::default()).await?;
    Api::<PriorityLevelConfiguration>::all(client.clone())
        .delete(controller, &DeleteParams::default())
        .await?;
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .delete(holder, &DeleteParams::default())
        .await?;
    Ok(())
}

/// The requests of flow schema `name` the API server rejected so far, from its `/metrics`.
async fn rejected(client: &Client, name: &str) -> Result<u64> {
    let request = http::Request::get("/metrics").body(Vec::new())?;
    let metrics = client.request_text(request).await?;
    let label = format!("flow_schema=\"{name}\"");
    let mut total = 0.0;
    for line in metrics.lines() {
        if line.starts_with("apiserver_flowcontrol_rejected_requests_total{")
            && line.contains(&label)
        {
            let value = line.rsplit(' ').next().unwrap_or_default();
            total += value
                .parse::<f64>()
                .with_context(|| format!("a metric line without a number: {line}"))?;
        }
    }
    Ok(total as u64)
}
