//! Topology-aware scheduling (TAS): where the pods of a workload go, from node labels
//! (Kueue v1beta2 behaviour, C.7 and C.8 of the reference), as pure synchronous code.
//!
//! # Public API
//!
//! - [`TopologySnapshot`]: every node once, one domain tree per TAS flavor, and the usage that
//!   reduces free capacity. Build it from objects, then keep it current with events; each event
//!   costs O(levels) per flavor tree holding the node, independent of cluster size:
//!   `upsert_topology`, `upsert_flavor`, `upsert_node` / `remove_node`, `upsert_pod` /
//!   `remove_pod` (bound pods; only running non-TAS pods use capacity), `admit` / `release`
//!   (admitted TAS usage, from decoded assignments).
//! - [`place`]`(&snapshot, &[PodSetRequest], &FeatureGates) -> Result<Vec<PodSetPlacement>,
//!   PlacementFailure>`: places a workload's TAS pod sets one after another (a pod-set group's two
//!   pod sets together). A failure carries `fits_empty_cluster`: false means even an empty cluster
//!   would not fit (`TopologyPlacementFailed`, preemption cannot help). Its `Display` is the
//!   message for the workload's condition.
//! - [`place_with`] with [`CapacityView::EmptyCluster`]: the placement as if no TAS workload
//!   were admitted, to reserve capacity for a workload waiting on preemptions.
//! - [`PlacementQuality`]: on every placement, the domains used per level and the lowest level
//!   all pods share; [`PlacementQuality::from_paths`] rebuilds it for an admitted assignment.
//! - [`encode`] / [`decode`]: the compact `topologyAssignment` of `status.admission` (A.6.3).
//! - [`SnapshotPlacer`]: the admission engine's `TopologyPlacer` over a snapshot (implied TAS,
//!   flavor/pod-set TAS mismatches, "not now" versus "never", released victims, several pod sets).
//! - [`replace_failed_nodes`]: hot swap; new domains for the pods of one or several failed nodes,
//!   inside the original required domain and slices, against current usage, or why none exists.
//!
//! ```
//! use kuota::engine::features::FeatureGates;
//! use kuota::engine::topology::{PlacementMode, PodSetRequest, TopologySnapshot, decode, encode, place, synthetic};
//!
//! let mut snapshot = TopologySnapshot::new();
//! snapshot.upsert_topology(synthetic::topology()).unwrap();
//! snapshot.upsert_flavor(synthetic::flavor()).unwrap();
//! snapshot.upsert_node(synthetic::node("host-1", "zone-a", "block-1", "rack-1", 8));
//! let gates = FeatureGates::default();
//! let request = PodSetRequest::new(
//!     "main", "tas", 6, synthetic::resources(&[("cpu", 1)]),
//!     PlacementMode::Required(synthetic::RACK.into()),
//! );
//! let placed = place(&snapshot, &[request], &gates).unwrap();
//! let assignment = encode(&placed[0].assignment, &gates);
//! assert_eq!(decode(&assignment, 6).unwrap(), placed[0].assignment);
//! assert_eq!(placed[0].quality.domains_per_level, vec![1, 1, 1, 1]);
//! assert_eq!(placed[0].quality.lowest_common_level(), Some(3));
//! ```
//!
//! # Placement as Kueue does it
//!
//! Placement follows Kueue's algorithms: BestFit for required and preferred requests (most
//! slices first, then fewest free pods, then level values; the last domain swapped for the
//! tightest one that holds the rest), least free capacity for unconstrained, implied and
//! slice-only requests (fewest slices first, same ties, filled in turn), BestFit descent over
//! the pooled children of every chosen domain down to the slice level, Kueue's balanced
//! placement behind `TASBalancedPlacement` ([`placement::balanced`], pod-set groups included),
//! pod-set groups whose workers may use slices, and `pods` allocatable counted for every pod.
//! The tests in `tests/` (`tie_break_tests`, `balanced_tests`, `balanced_group_tests`,
//! `group_tests`, `capacity_tests`) replay Kueue's own scenarios.
//!
//! # Intended differences from Kueue (each shown by a test in `tests/`)
//!
//! Each one uses no more domains than Kueue at any level, or keeps a guarantee Kueue lacks.
//!
//! - Among domains that fit a required or preferred request, the one whose pods need the fewest
//!   domains at every lower level wins before the tightest fit: 8 pods on one 8-CPU host rather
//!   than eight 1-CPU hosts (`required_prefers_fewer_hosts_over_tighter_rack`).
//! - Below the slice level a slice's pods go to the largest child first, with the tightest
//!   one for the rest; Kueue orders those children by free pods, smallest first, so a slice of 4
//!   takes one 4-CPU host in kuota and four 1-CPU hosts in Kueue
//!   (`below_the_slice_level_the_largest_host_goes_first`). With balanced placement this can
//!   move pods between the same hosts (`four_levels_with_slices_below_the_balanced_level`).
//! - Balanced shares descend with the children of each share pooled down to the slice level,
//!   as unbalanced placements do, where Kueue descends parent by parent: never more domains.
//! - Without balanced placement, a pod-set group's leader goes to the node where it costs the
//!   workers the fewest pods (slices, when the workers use them), first in value order, and the
//!   workers then fill the domain largest first; Kueue fills the domain with the leader's first.
//!   Both keep leader and workers in one domain of the requested level with as many hosts
//!   (`a_group_with_sliced_workers_is_placed_together`,
//!   `a_group_that_cannot_meet_the_threshold_falls_back_to_best_fit`).
//! - Lowest-level domains pooling several nodes count pods per node, and every node is checked for
//!   taints, selectors and affinity in every topology
//!   (`usage_on_lowest_domains_without_hostname_level`).
//! - Several failed nodes are replaced at once, broken slices are completed in their own domain,
//!   and preferred replacements stay near the remaining pods
//!   (`several_failed_nodes_are_replaced_at_once`, `a_broken_slice_is_completed_inside_its_rack`,
//!   `preferred_replacements_stay_near_the_remaining_pods`).
//! - The encoder keeps topology (rank) order, so consecutive ranks share racks after decoding.
//! - Placement is all or nothing: a workload gets a whole placement or a failure, never part of
//!   one (no half-placed gangs).
//!
//! # Modules
//!
//! [`model`] (input objects), [`request`] (the pod-set request and its resolution), [`nodes`] and
//! [`tree`] (node columns and per-flavor domain trees), [`snapshot`], [`capacity`] (pods that
//! fit per domain), [`placement`] (best fit, least free, balanced, slices, groups), [`quality`]
//! (domains used per level), [`encoding`], [`replacement`], [`synthetic`] (regular clusters for
//! tests, benchmarks and demos).

pub mod admission_placer;
pub mod capacity;
pub mod encoding;
pub mod model;
pub mod node_failure;
pub mod node_health;
pub mod nodes;
pub mod placement;
pub mod quality;
pub mod replacement;
pub mod request;
pub mod resources;
pub mod snapshot;
pub mod synthetic;
pub mod tree;

pub use admission_placer::SnapshotPlacer;
pub use capacity::CapacityView;
pub use encoding::{DecodeError, decode, encode};
pub use placement::{FailureReason, PlacementFailure, PodSetPlacement, place, place_with};
pub use quality::PlacementQuality;
pub use replacement::{Replacement, ReplacementError, replace_failed_nodes};
pub use request::{PlacementMode, PodSetRequest, SliceLayer};
pub use snapshot::{SnapshotError, TopologySnapshot};

#[cfg(test)]
mod tests;
