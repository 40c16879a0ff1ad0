//! `integrations.labelKeysToCopy` on the real control plane: the suite's controller copies one
//! label of a Job onto the Workload it creates for it, and no other label of the Job.

use anyhow::{Result, ensure};

use super::jobs::{job_yaml, tas_queue, workload_of};
use crate::support::controller::COPIED_LABEL;
use crate::support::kueue::apply_yaml;
use crate::support::nodes::NodeSet;
use crate::support::{self, TestNamespace, controller, unique_name};

#[tokio::test]
async fn a_jobs_listed_label_is_copied_onto_its_workload() -> Result<()> {
    controller::ensure_running().await?;
    let client = support::client().await?;
    let ns = TestNamespace::create(&client, "copied").await?;
    let mut nodes = NodeSet::new(&unique_name("cl"), 1, 1, 1);
    tas_queue(&client, &ns.name, &mut nodes, "2", "").await?;
    let job = job_yaml("labelled", 1, "1", "1s", "", "").replacen(
        "labels: {kueue.x-k8s.io/queue-name: lq}",
        &format!(
            "labels: {{kueue.x-k8s.io/queue-name: lq, {COPIED_LABEL}: ml, e2e.kuota.dev/other: x}}"
        ),
        1,
    );
    apply_yaml(&client, &ns.name, &job).await?;
    let workload = workload_of(&client, &ns.name, "labelled").await?;
    let labels = workload.metadata.labels.unwrap_or_default();
    ensure!(
        labels.get(COPIED_LABEL).map(String::as_str) == Some("ml")
            && !labels.contains_key("e2e.kuota.dev/other"),
        "the Workload's labels: {labels:?}"
    );
    ns.delete().await?;
    nodes.delete(&client).await
}
