//! kuota: a Kubernetes admission-and-quota controller that serves the Kueue `v1beta2` API.
//!
//! The crate is split by who owns what (see `docs/architecture.md`):
//! - [`api`]: the Kueue `v1beta2` types, well-known keys and CRD generation.
//! - [`engine`]: pure, synchronous admission and placement decisions.
//! - [`jobs`]: the Workload each job integration creates for a job.
//! - [`checks`]: the admission checks kuota runs, as pure rules (the provisioning request check).
//! - [`state`]: Kubernetes objects reduced to the engine's input.
//! - [`status`]: engine decisions written as API status.
//! - [`config`]: Kueue's manager configuration file.
//! - [`controllers`]: the controller process: watches, the admission loop, the one API writer.
//! - [`webhooks`]: the admission webhook server: Kueue's defaulting and validating webhooks.
//! - [`tls`]: the webhook server's certificate: issued, stored, trusted and rotated in process.
//! - [`visibility`]: Kueue's visibility API: the pending Workloads of a queue, in order.
//! - [`cli`]: the `kuota` subcommands.
//! - [`pacing`]: how fast the controller's client asks the API server, as its answers allow.
//! - [`backoff`]: capped exponential backoff with jitter, for every retry.
//! - [`clock`]: the one place the time is read; everything else is handed a [`clock::Clock`].
//! - [`name_table`]: the hash table of entries found by the namespace and name they lead to.
//! - [`small_map`]: the compact sorted map of a pod set's requests, flavors and usage.

pub mod api;
pub mod backoff;
pub mod checks;
pub mod cli;
pub mod clock;
pub mod config;
pub mod controllers;
pub mod engine;
pub mod jobs;
pub mod name_table;
pub mod pacing;
pub mod small_map;
pub mod state;
pub mod status;
pub mod tls;
pub mod v1beta1;
pub mod visibility;
pub mod webhooks;
