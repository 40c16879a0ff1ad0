#!/usr/bin/env bash
# The test command: every unit, property and integration test, benchmark compilation, and the
# end-to-end suite against a real local control plane. The benchmarks are built in the test profile,
# on the dependencies `cargo test` just built: a release build of them would add a quarter of an
# hour to a run on a fresh machine and find nothing the test build does not.
set -euo pipefail
cd "$(dirname "$0")/.."

# Kueue's manager and kubectl plugin, for e2e_deploy and e2e_switchover, built from its Go module
# (cached by version) while the Rust tests build and run; those tests wait for it, and build it
# themselves if this failed.
KUEUE_VERSION="$(cat e2e/kueue.version)" e2e/kueue-build.sh >/dev/null 2>&1 &

cargo test
cargo test --benches --no-run

# End-to-end suite against a real local control plane (e2e/cluster builds the pinned Kubernetes
# components if they are missing); once up, the cluster is stopped whatever happens. A failed `up`
# stops what it started itself, and leaves alone a cluster that was already running.
(cd e2e && GOTOOLCHAIN=local go test -buildvcs=false ./cmd/...)
# The job kinds' own operators (JobSet, LWS, Kubeflow, MPI, KubeRay, AppWrapper), cached by pins.
e2e/operators/build.sh >/dev/null
# CRDs no operator here serves, copied from their Go modules (the autoscaler's ProvisioningRequest).
e2e/operators/crds.sh >/dev/null
e2e/cluster up
trap 'e2e/cluster undeploy >/dev/null 2>&1 || true; e2e/cluster down' EXIT
KUBECONFIG="$(e2e/cluster env | sed -n 's/^export KUBECONFIG=//p')"
export KUBECONFIG
cargo test --features e2e --test e2e
# Leader election runs its own replicas, after the suite's controller has stopped.
cargo test --features e2e --test e2e_leader
# waitForPodsReady with a short timeout: a controller of its own, after the others have stopped.
cargo test --features e2e --test e2e_pods_ready
# manageJobsWithoutQueueName with a namespace selector: a controller of its own as well.
cargo test --features e2e --test e2e_unqueued_jobs
# objectRetentionPolicies: finished Workloads deleted after a period; a controller of its own.
cargo test --features e2e --test e2e_retention
# Every kind watched once per process, counted by the API server: a controller of its own.
cargo test --features e2e --test e2e_watches
# An API server brownout (priority and fairness rejecting the controller's ServiceAccount):
# requests paced by Retry-After; a controller of its own.
cargo test --features e2e --test e2e_pacing
# The provisioning admission check, the test playing the cluster autoscaler; a controller of its own.
cargo test --features e2e --test e2e_provisioning
# The job kinds' operators run their objects' pods on this control plane, without kuota.
cargo test --features e2e --test e2e_operators
# The framework kinds kuota manages (JobSet, the Kubeflow jobs) queued, admitted, preempted and
# placed by topology against those operators; a controller of its own.
cargo test --features e2e --test e2e_frameworks
# The chaos suite: controller kills, a leader takeover, API server restarts and TAS kills during
# storms, with invariant checkers that must report zero violations (controllers of its own).
cargo test --features e2e --test e2e_chaos -- --nocapture
# kuota installed with Helm (e2e/cluster deploy) under the chart's RBAC, its webhooks called by
# the API server; last, because the chart's webhooks see every Kueue object while installed.
cargo test --features e2e --test e2e_deploy
# The switch from Kueue's manager (v0.15, built by e2e/kueue-build.sh) to kuota's chart and back,
# nothing lost, the objects Kueue stored as v1beta1 re-stored by kuota; after e2e_deploy, as it
# installs the chart on the same fixed ports.
cargo test --features e2e --test e2e_switchover
