//! End-to-end tests against real Kubernetes components: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler and kwok, started by `e2e/cluster up`.
//!
//! Built only with `--features e2e`, so a plain `cargo test` never needs a cluster:
//!
//! ```text
//! e2e/cluster up && eval "$(e2e/cluster env)"
//! cargo test --features e2e --test e2e
//! e2e/cluster down
//! ```

mod chart;
mod controller;
mod smoke;
mod support;
