//! The lines the table prints under a TAS Workload: its domains with pod counts, the placement
//! quality (domains used at each level), and what hot swap did.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use kube::ResourceExt;

use super::objects::Objects;
use crate::api::Workload;
use crate::engine::topology::decode;
use crate::engine::topology::model::{DomainAssignment, HOSTNAME_LABEL};
use crate::engine::topology::node_health::HotSwap;
use crate::state::topology_input;

/// At most this many domains are listed per pod set; the rest are counted.
const LISTED_DOMAINS: usize = 12;

/// Extra table lines per Workload (`namespace/name`).
pub type Notes = BTreeMap<String, Vec<String>>;

/// The short plural name of a level key: `cloud.provider.com/topology-rack` → `racks`,
/// `kubernetes.io/hostname` → `hosts`.
fn level_name(key: &str) -> String {
    let last = key.rsplit('/').next().unwrap_or(key);
    let short = last.strip_prefix("topology-").unwrap_or(last);
    match short {
        "hostname" => "hosts".to_string(),
        other => format!("{other}s"),
    }
}

struct Lookup {
    /// Flavor name → Topology levels.
    levels: HashMap<String, Vec<String>>,
    /// Hostname → node labels.
    labels: HashMap<String, BTreeMap<String, String>>,
}

impl Lookup {
    fn new(objects: &Objects) -> Self {
        let topologies: HashMap<String, Vec<String>> = objects
            .topologies
            .iter()
            .filter_map(|t| topology_input::topology(&t.object).ok())
            .map(|t| (t.name, t.levels))
            .collect();
        let levels = objects
            .resource_flavors
            .iter()
            .filter_map(|f| topology_input::tas_flavor(&f.object))
            .filter_map(|f| Some((f.name, topologies.get(&f.topology_name)?.clone())))
            .collect();
        let labels = objects
            .nodes
            .iter()
            .map(|n| {
                let labels = n.object.labels().clone();
                let host = labels
                    .get(HOSTNAME_LABEL)
                    .cloned()
                    .unwrap_or_else(|| n.object.name_any());
                (host, labels)
            })
            .collect();
        Lookup { levels, labels }
    }

    /// A domain's full path over `levels` (hostname domains are looked up among the nodes).
    fn path(
        &self,
        levels: &[String],
        assignment_levels: &[String],
        domain: &DomainAssignment,
    ) -> Vec<String> {
        if assignment_levels.len() == levels.len() {
            return domain.values.clone();
        }
        let host = domain.values.last().cloned().unwrap_or_default();
        match self.labels.get(&host) {
            Some(labels) => levels
                .iter()
                .map(|l| labels.get(l).cloned().unwrap_or_else(|| "?".into()))
                .collect(),
            None => vec![host],
        }
    }
}

fn domains_text(paths: &[(Vec<String>, u32)]) -> String {
    let mut text: Vec<String> = paths
        .iter()
        .take(LISTED_DOMAINS)
        .map(|(path, count)| format!("{} ×{count}", path.join("/")))
        .collect();
    if paths.len() > LISTED_DOMAINS {
        text.push(format!("… {} more", paths.len() - LISTED_DOMAINS));
    }
    text.join(", ")
}

/// The notes of every Workload: TAS assignments and quality, replacements and evictions.
pub fn notes(
    objects: &Objects,
    workloads: &[Workload],
    swaps: &BTreeMap<String, HotSwap>,
) -> Notes {
    let lookup = Lookup::new(objects);
    let mut notes = Notes::new();
    for workload in workloads {
        let key = format!(
            "{}/{}",
            workload.namespace().unwrap_or_default(),
            workload.name_any()
        );
        let mut lines = Vec::new();
        let admission = workload.status.as_ref().and_then(|s| s.admission.as_ref());
        for assignment in admission.iter().flat_map(|a| &a.pod_set_assignments) {
            let Some(list) = assignment
                .topology_assignment
                .as_ref()
                .and_then(|t| decode(t, assignment.count.unwrap_or_default()).ok())
            else {
                continue;
            };
            let levels = assignment
                .flavors
                .values()
                .find_map(|f| lookup.levels.get(f))
                .cloned()
                .unwrap_or_else(|| list.levels.clone());
            let paths: Vec<(Vec<String>, u32)> = list
                .domains
                .iter()
                .map(|d| (lookup.path(&levels, &list.levels, d), d.count))
                .collect();
            lines.push(format!("{}: {}", assignment.name, domains_text(&paths)));
            let quality: Vec<String> = levels
                .iter()
                .enumerate()
                .map(|(depth, level)| {
                    let used: BTreeSet<&[String]> = paths
                        .iter()
                        .filter(|(p, _)| p.len() == levels.len())
                        .map(|(p, _)| &p[..=depth])
                        .collect();
                    format!("{} {}", level_name(level), used.len())
                })
                .collect();
            lines.push(format!(
                "{} placement: {}",
                assignment.name,
                quality.join(", ")
            ));
        }
        match swaps.get(&key) {
            Some(HotSwap::Replaced { pod_sets, .. }) => {
                for replaced in pod_sets {
                    let mut line = format!("{}: replaced node(s) ", replaced.pod_set);
                    let removed: Vec<String> = replaced
                        .removed
                        .iter()
                        .map(|d| format!("{} ×{}", d.values.join("/"), d.count))
                        .collect();
                    let added: Vec<String> = replaced
                        .added
                        .iter()
                        .map(|d| format!("{} ×{}", d.values.join("/"), d.count))
                        .collect();
                    let _ = write!(line, "{} by {}", removed.join(", "), added.join(", "));
                    lines.push(line);
                }
            }
            Some(HotSwap::Evicted(why)) => {
                let (message, detail) = (why.message(), why.detail());
                lines.push(format!("evicted (NodeFailures): {message}; {detail}"));
            }
            None => {}
        }
        if !lines.is_empty() {
            notes.insert(key, lines);
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::level_name;

    #[test]
    fn level_names_are_short_plurals() {
        assert_eq!(level_name("cloud.provider.com/topology-block"), "blocks");
        assert_eq!(level_name("cloud.provider.com/topology-rack"), "racks");
        assert_eq!(level_name("kubernetes.io/hostname"), "hosts");
        assert_eq!(level_name("topology.kubernetes.io/zone"), "zones");
    }
}
