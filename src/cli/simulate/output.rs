//! Printing the simulated Workloads: a `v1` `List` as JSON or YAML, or a table per ClusterQueue.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kube::ResourceExt;
use serde_json::json;

use super::placement_notes::Notes;
use crate::api::keys::condition_types;
use crate::api::workload_status::CheckState;
use crate::api::{HasConditions, ObjectKey, Workload};
use crate::engine::Event;
use crate::engine::Structure;

/// `-o` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Yaml,
    Json,
}

/// The Workloads, then the ClusterQueues and LocalQueues, as one `v1` `List`.
pub fn list(workloads: &[Workload], queues: &[serde_json::Value]) -> serde_json::Value {
    let mut items: Vec<serde_json::Value> = workloads
        .iter()
        .map(|w| serde_json::to_value(w).unwrap_or_default())
        .collect();
    items.extend_from_slice(queues);
    json!({ "apiVersion": "v1", "kind": "List", "items": items })
}

/// A readable summary: one block per ClusterQueue, each Workload with its outcome.
pub fn table(structure: &Structure, workloads: &[Workload], notes: &Notes) -> String {
    if workloads.is_empty() {
        return "No Workloads or managed Jobs in the input.\n".to_string();
    }
    let cluster_queue_of = |w: &Workload| -> String {
        if let Some(admission) = w.status.as_ref().and_then(|s| s.admission.as_ref()) {
            return admission.cluster_queue.clone();
        }
        let namespace = w.namespace().unwrap_or_default();
        let queue = w.spec.queue_name.clone().unwrap_or_default();
        structure
            .local_queues
            .get(&ObjectKey::new(namespace, queue))
            .map_or_else(
                || "(no ClusterQueue)".to_string(),
                |q| q.cluster_queue.clone(),
            )
    };
    let mut by_queue: BTreeMap<String, Vec<&Workload>> = BTreeMap::new();
    for workload in workloads {
        by_queue
            .entry(cluster_queue_of(workload))
            .or_default()
            .push(workload);
    }
    let mut out = String::new();
    for (queue, members) in by_queue {
        let cohort = structure
            .cluster_queues
            .get(&queue)
            .and_then(|q| q.cohort.clone())
            .map_or_else(String::new, |c| format!(" (cohort {c})"));
        let reserved = members.iter().filter(|w| admission_of(w).is_some()).count();
        let admitted = members.iter().filter(|w| is_admitted(w)).count();
        let checking = match reserved - admitted {
            0 => String::new(),
            n => format!(", {n} waiting for admission checks"),
        };
        let _ = writeln!(
            out,
            "ClusterQueue {queue}{cohort}: {admitted} admitted{checking}, {} pending",
            members.len() - reserved
        );
        let rows: Vec<[String; 4]> = members.iter().map(|w| row(w)).collect();
        let keys: Vec<ObjectKey> = members.iter().map(|w| ObjectKey::of(*w)).collect();
        let widths: Vec<usize> = (0..3)
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].len())
                    .chain([HEADER[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |out: &mut String, cells: [&str; 4]| {
            let _ = writeln!(
                out,
                "  {:w0$}  {:w1$}  {:w2$}  {}",
                cells[0],
                cells[1],
                cells[2],
                cells[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            );
        };
        line(&mut out, HEADER);
        for (r, key) in rows.iter().zip(&keys) {
            line(&mut out, [&r[0], &r[1], &r[2], &r[3]]);
            for note in notes.get(key).into_iter().flatten() {
                let _ = writeln!(out, "      {note}");
            }
        }
        out.push('\n');
    }
    out
}

/// Who preempted whom, under both Workloads: the conditions only carry the preemptor's UID.
pub fn add_preemption_notes(notes: &mut Notes, events: &[Event]) {
    for event in events {
        if let Event::Preempted {
            cycle,
            victim,
            preemptor,
            reason,
            ..
        } = event
        {
            notes.entry(victim.clone()).or_default().push(format!(
                "preempted by {preemptor} ({reason}) in cycle {cycle}"
            ));
            notes
                .entry(preemptor.clone())
                .or_default()
                .push(format!("preempted {victim} ({reason}) in cycle {cycle}"));
        }
    }
}

const HEADER: [&str; 4] = ["WORKLOAD", "PRIORITY", "STATUS", "DETAIL"];

fn admission_of(w: &Workload) -> Option<&crate::api::workload_status::Admission> {
    w.status.as_ref().and_then(|s| s.admission.as_ref())
}

fn is_admitted(w: &Workload) -> bool {
    admission_of(w).is_some() && w.condition_is_true(condition_types::ADMITTED)
}

/// `name (State)` for every admission check that has not said Ready.
fn checks_waited_on(w: &Workload) -> String {
    let checks = w
        .status
        .as_ref()
        .map_or(&[][..], |s| &s.admission_checks[..]);
    checks
        .iter()
        .filter(|c| c.state != CheckState::Ready)
        .map(|c| format!("{} ({})", c.name, c.state.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn row(w: &Workload) -> [String; 4] {
    let name = format!("{}/{}", w.namespace().unwrap_or_default(), w.name_any());
    let priority = w.spec.priority.unwrap_or(0).to_string();
    let conditions = w
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    let find = |t: &str| conditions.iter().find(|c| c.type_ == t);
    if let Some(admission) = admission_of(w) {
        let detail = admission
            .pod_set_assignments
            .iter()
            .map(|a| {
                let flavors: Vec<String> =
                    a.flavors.iter().map(|(r, f)| format!("{r}={f}")).collect();
                let count = a.count.map_or_else(String::new, |c| format!(" ×{c}"));
                let mut text = format!("{}{count}: {}", a.name, flavors.join(","));
                if let Some(topology) = &a.topology_assignment {
                    let domains: i32 = topology.slices.iter().map(|s| s.domain_count).sum();
                    let _ = write!(
                        text,
                        " in {domains} domain(s) of {}",
                        topology.levels.join("/")
                    );
                }
                text
            })
            .collect::<Vec<_>>()
            .join("; ");
        if !is_admitted(w) {
            let detail = format!("{detail}; waiting for {}", checks_waited_on(w));
            return [name, priority, "QuotaReserved".into(), detail];
        }
        return [name, priority, "Admitted".into(), detail];
    }
    let pending = find(condition_types::QUOTA_RESERVED)
        .map_or_else(String::new, |c| format!("{}: {}", c.reason, c.message));
    [name, priority, "Pending".into(), pending]
}
