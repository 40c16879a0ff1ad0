//! `kuota controller` on the real control plane: Workloads created directly (as Kueue's own
//! integration tests do) are admitted, preempted and reported by the controller process that
//! `support::controller` starts, and the API server holds what it wrote.

mod admission;
mod admission_checks;
mod admission_gated;
mod copied_labels;
mod deletion;
mod execution_time;
mod job_workloads;
mod jobs;
mod limits;
mod node_health;
mod observability;
mod pods;
mod prebuilt;
mod priority;
mod reclaimable;
mod tas;
mod versus_simulate;
