//! AppWrappers against the AppWrapper operator.

use anyhow::{Context, Result, ensure};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, ResourceExt};
use kuota::api::Workload;
use serde_json::Value;

use crate::support::kueue::{self, apply_yaml};
use crate::support::nodes::NodeSet;
use crate::support::{self, TestNamespace, unique_name};
use crate::{RUNS, TEST_LABEL, controllers, queue, until, workload_of};

/// A suspended AppWrapper in LocalQueue `lq` wrapping one Job of one pod of 1 cpu, running 5 s.
fn appwrapper_yaml(name: &str) -> String {
    format!(
        "apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: {name}
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  suspend: true
  components:
  - podSets: [{{replicas: 1, path: template.spec.template}}]
    template:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: {name}-job}}
      spec:
        template:
          metadata:
            annotations: {{e2e.kuota.dev/run-duration: \"5s\"}}
          spec:
            restartPolicy: Never
            containers:
            - {{name: main, image: busybox, resources: {{requests: {{cpu: \"1\"}}}}}}
"
    )
}

fn suspended(wrapper: &DynamicObject) -> bool {
    wrapper.data.pointer("/spec/suspend") == Some(&Value::Bool(true))
}

/// Two AppWrappers each needing the whole quota: the first is admitted and resumed with its
/// flavor's node selector on the wrapped pod template, the operator deploys and runs it, and
/// its Workload finishes; the second waits suspended until then, then runs too.
#[tokio::test]
async fn appwrappers_run_one_after_another_within_quota() -> Result<()> {
    let client = support::client().await?;
    let running = controllers(&client).await?;
    let ns = TestNamespace::create(&client, "appwrapper").await?;
    let mut nodes = NodeSet::new(&unique_name("aw"), 1, 1, 1);
    queue(&client, &ns.name, &mut nodes, "1", false).await?;
    let gvk = GroupVersionKind::gvk("workload.codeflare.dev", "v1beta2", "AppWrapper");
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns.name,
        &ApiResource::from_gvk_with_plural(&gvk, "appwrappers"),
    );
    let workloads: Api<Workload> = Api::namespaced(client.clone(), &ns.name);
    apply_yaml(&client, &ns.name, &appwrapper_yaml("first")).await?;
    apply_yaml(&client, &ns.name, &appwrapper_yaml("second")).await?;
    let uids = [
        api.get("first").await?.uid().context("a UID")?,
        api.get("second").await?.uid().context("a UID")?,
    ];
    let (resumed, waiting) = until(
        "one AppWrapper resumed while the other waits",
        kueue::DECIDED,
        async || Ok((api.get("first").await?, api.get("second").await?)),
        |(first, second)| suspended(first) != suspended(second),
    )
    .await
    .with_context(|| running.kuota.log_tail())?;
    let started = if suspended(&resumed) {
        waiting
    } else {
        resumed
    };
    let selector = started
        .data
        .pointer("/spec/components/0/template/spec/template/spec/nodeSelector");
    ensure!(
        selector.and_then(|s| s.get(TEST_LABEL)) == Some(&Value::from(nodes.prefix.clone())),
        "resumed with the flavor's node label on the wrapped pod template: {selector:?}"
    );
    for uid in &uids {
        until(
            "both AppWrappers' Workloads finished in turn",
            RUNS,
            async || workload_of(&workloads, uid).await,
            |w| {
                w.as_ref()
                    .is_some_and(|w| kueue::has(w, "Finished", "Succeeded"))
            },
        )
        .await
        .with_context(|| running.appwrapper.log_tail())?;
    }
    ns.delete().await?;
    nodes.delete(&client).await
}
