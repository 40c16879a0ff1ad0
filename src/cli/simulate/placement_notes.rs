//! The lines the table prints under a TAS Workload: its domains with pod counts, the placement
//! quality (domains used at each level, lowest common level), and what hot swap did; and the
//! same quality as an annotation on the printed Workloads.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use kube::ResourceExt;

use super::objects::Objects;
use crate::api::keys::annotations::PLACEMENT_QUALITY;
use crate::api::{ObjectKey, Workload};
use crate::engine::topology::model::{DomainAssignment, HOSTNAME_LABEL};
use crate::engine::topology::node_health::HotSwap;
use crate::engine::topology::{PlacementQuality, decode};
use crate::state::topology_input;

/// At most this many domains are listed per pod set; the rest are counted.
const LISTED_DOMAINS: usize = 12;

/// Extra table lines per Workload.
pub type Notes = BTreeMap<ObjectKey, Vec<String>>;

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

/// One TAS pod set of an admitted Workload: its domains' full paths with pod counts, and the
/// placement quality they give.
struct PlacedPodSet {
    name: String,
    paths: Vec<(Vec<String>, u32)>,
    quality: PlacementQuality,
}

/// The TAS pod sets of `workload`'s admission.
fn placed_pod_sets(lookup: &Lookup, workload: &Workload) -> Vec<PlacedPodSet> {
    let admission = workload.status.as_ref().and_then(|s| s.admission.as_ref());
    let mut placed = Vec::new();
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
        let quality = PlacementQuality::from_paths(levels, paths.iter().map(|(p, _)| p.as_slice()));
        placed.push(PlacedPodSet {
            name: assignment.name.clone(),
            paths,
            quality,
        });
    }
    placed
}

/// The Workloads with the placement quality of their TAS pod sets in the
/// `kuota.dev/placement-quality` annotation (`<pod set>: <quality>`, `; `-separated), so the
/// yaml and json outputs carry it and stay valid Workloads.
pub fn annotated(objects: &Objects, workloads: &[Workload]) -> Vec<Workload> {
    let lookup = Lookup::new(objects);
    workloads
        .iter()
        .map(|workload| {
            let placed = placed_pod_sets(&lookup, workload);
            let mut workload = workload.clone();
            if !placed.is_empty() {
                let summary: Vec<String> = placed
                    .iter()
                    .map(|p| format!("{}: {}", p.name, p.quality))
                    .collect();
                workload
                    .annotations_mut()
                    .insert(PLACEMENT_QUALITY.to_string(), summary.join("; "));
            }
            workload
        })
        .collect()
}

/// The notes of every Workload: TAS assignments and quality, replacements and evictions.
pub fn notes(
    objects: &Objects,
    workloads: &[Workload],
    swaps: &BTreeMap<ObjectKey, HotSwap>,
) -> Notes {
    let lookup = Lookup::new(objects);
    let mut notes = Notes::new();
    for workload in workloads {
        let key = ObjectKey::of(workload);
        let mut lines = Vec::new();
        for placed in placed_pod_sets(&lookup, workload) {
            lines.push(format!("{}: {}", placed.name, domains_text(&placed.paths)));
            lines.push(format!("{} placement: {}", placed.name, placed.quality));
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
