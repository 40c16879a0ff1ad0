//! Running `kuota simulate` in-process on the example manifests, and reading the Workloads it
//! prints: shared by the scenario tests (`simulate_admission`, `simulate_fair_sharing`).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kuota::cli::simulate::{Format, SimulateArgs, simulate};
use serde_json::Value;

/// Fixed so that every condition carries the same, known time.
pub const NOW: &str = "2026-01-01T10:00:00Z";

pub fn example(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(relative)
}

pub fn args(relative: &str, fair_sharing: bool, output: Format) -> SimulateArgs {
    SimulateArgs {
        files: vec![example(relative)],
        output,
        feature_gates: String::new(),
        fair_sharing,
        now: Some(NOW.to_string()),
        config: None,
    }
}

/// Every simulated Workload of one run, by `namespace/name`.
pub struct Run {
    pub file: String,
    pub workloads: BTreeMap<String, Value>,
    /// The conditions the input Workloads already had, by `namespace/name`.
    pub input_conditions: BTreeMap<String, Vec<Value>>,
}

/// The conditions of every Workload in the input manifests, by `namespace/name`.
fn input_conditions(arguments: &SimulateArgs) -> BTreeMap<String, Vec<Value>> {
    let documents = kuota::cli::simulate::documents::read_all(&arguments.files).unwrap();
    documents
        .into_iter()
        .filter(|d| d.value["kind"] == "Workload")
        .map(|d| {
            let metadata = &d.value["metadata"];
            let key = format!(
                "{}/{}",
                metadata["namespace"].as_str().unwrap_or("default"),
                metadata["name"].as_str().unwrap_or_default()
            );
            let conditions = d.value["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            (key, conditions)
        })
        .collect()
}

pub fn run(relative: &str, fair_sharing: bool) -> Run {
    run_args(relative, &args(relative, fair_sharing, Format::Json))
}

/// Runs simulate with `arguments` (JSON output) and indexes the Workloads by `namespace/name`.
pub fn run_args(relative: &str, arguments: &kuota::cli::simulate::SimulateArgs) -> Run {
    let text = simulate(arguments).unwrap_or_else(|e| panic!("simulate {relative}: {e}"));
    let list: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(list["kind"], "List", "{relative}: output is not a v1 List");
    let workloads = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["kind"] == "Workload")
        .map(|w| {
            let key = format!(
                "{}/{}",
                w["metadata"]["namespace"].as_str().unwrap(),
                w["metadata"]["name"].as_str().unwrap()
            );
            (key, w.clone())
        })
        .collect();
    Run {
        file: relative.to_string(),
        workloads,
        input_conditions: input_conditions(arguments),
    }
}

/// A condition as the tests read it.
#[derive(Debug)]
pub struct Condition {
    pub status: String,
    pub reason: String,
    pub message: String,
}

/// What an admitted Workload got.
#[derive(Debug)]
pub struct Admitted {
    pub cluster_queue: String,
    /// Per pod set, resource → flavor.
    pub flavors: Vec<BTreeMap<String, String>>,
    /// Per pod set, the pods admitted.
    pub counts: Vec<i64>,
    /// Per pod set, resource → total quantity.
    pub usage: Vec<BTreeMap<String, String>>,
}

impl Run {
    pub fn workload(&self, key: &str) -> &Value {
        self.workloads
            .get(key)
            .unwrap_or_else(|| panic!("{}: no workload {key} in the output", self.file))
    }

    /// Fails unless the output holds exactly these Workloads, so no scenario goes unchecked.
    pub fn expect_workloads(&self, keys: &[&str]) {
        let got: BTreeSet<&str> = self.workloads.keys().map(String::as_str).collect();
        let want: BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(got, want, "{}: simulated workloads", self.file);
    }

    pub fn condition(&self, key: &str, type_: &str) -> Option<Condition> {
        self.workload(key)["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == type_)
            .map(|c| {
                // A condition whose status is the input's keeps the input's time, unless it
                // changed and changed back during the run (evicted, then admitted again).
                let kept = self
                    .input_conditions
                    .get(key)
                    .into_iter()
                    .flatten()
                    .find(|input| input["type"] == type_ && input["status"] == c["status"]);
                let time = &c["lastTransitionTime"];
                assert!(
                    time == NOW || kept.is_some_and(|input| input["lastTransitionTime"] == *time),
                    "{}: {key} condition {type_} is stamped {time}, neither --now nor kept from \
                     the input",
                    self.file
                );
                Condition {
                    status: c["status"].as_str().unwrap_or_default().to_string(),
                    reason: c["reason"].as_str().unwrap_or_default().to_string(),
                    message: c["message"].as_str().unwrap_or_default().to_string(),
                }
            })
    }

    pub fn status_dump(&self, key: &str) -> String {
        serde_json::to_string_pretty(&self.workload(key)["status"]).unwrap()
    }

    /// Asserts that the Workload holds quota in `cluster_queue` (QuotaReserved and Admitted True)
    /// and returns its admission.
    pub fn admitted(&self, key: &str, cluster_queue: &str) -> Admitted {
        let status = &self.workload(key)["status"];
        let admission = &status["admission"];
        assert!(
            admission.is_object(),
            "{}: {key} should be admitted, status: {}",
            self.file,
            self.status_dump(key)
        );
        let reserved = self.condition(key, "QuotaReserved").unwrap();
        assert_eq!(
            (reserved.status.as_str(), reserved.reason.as_str()),
            ("True", "QuotaReserved"),
            "{}: {key} QuotaReserved",
            self.file
        );
        assert_eq!(
            reserved.message,
            format!("Quota reserved in ClusterQueue {cluster_queue}"),
            "{}: {key} QuotaReserved message",
            self.file
        );
        let admitted = self.condition(key, "Admitted").unwrap();
        assert_eq!(
            (admitted.status.as_str(), admitted.reason.as_str()),
            ("True", "Admitted"),
            "{}: {key} Admitted",
            self.file
        );
        for type_ in ["Evicted", "Preempted"] {
            if let Some(c) = self.condition(key, type_) {
                assert_eq!(
                    c.status, "False",
                    "{}: {key} is admitted but {type_}",
                    self.file
                );
            }
        }
        let assignments = admission["podSetAssignments"].as_array().unwrap();
        let strings = |v: &Value| -> BTreeMap<String, String> {
            v.as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        };
        let got = Admitted {
            cluster_queue: admission["clusterQueue"].as_str().unwrap().to_string(),
            flavors: assignments.iter().map(|a| strings(&a["flavors"])).collect(),
            counts: assignments
                .iter()
                .map(|a| a["count"].as_i64().unwrap())
                .collect(),
            usage: assignments
                .iter()
                .map(|a| strings(&a["resourceUsage"]))
                .collect(),
        };
        assert_eq!(
            got.cluster_queue, cluster_queue,
            "{}: {key} admitted by the wrong ClusterQueue",
            self.file
        );
        got
    }

    /// Asserts an admission of one pod set, `count` pods, every resource on `flavor`.
    pub fn admitted_on(
        &self,
        key: &str,
        cluster_queue: &str,
        flavor: &str,
        count: i64,
    ) -> Admitted {
        let got = self.admitted(key, cluster_queue);
        assert_eq!(got.counts, [count], "{}: {key} admitted pods", self.file);
        assert!(
            !got.flavors[0].is_empty() && got.flavors[0].values().all(|f| f == flavor),
            "{}: {key} should be admitted on flavor {flavor}, got {:?}",
            self.file,
            got.flavors
        );
        got
    }

    /// Asserts that the Workload holds no quota and waits with `reason`; returns the message.
    pub fn pending(&self, key: &str, reason: &str) -> String {
        let status = &self.workload(key)["status"];
        assert!(
            status["admission"].is_null(),
            "{}: {key} should be pending, status: {}",
            self.file,
            self.status_dump(key)
        );
        let reserved = self.condition(key, "QuotaReserved").unwrap_or_else(|| {
            panic!(
                "{}: {key} has no QuotaReserved condition: {}",
                self.file,
                self.status_dump(key)
            )
        });
        assert_eq!(
            (reserved.status.as_str(), reserved.reason.as_str()),
            ("False", reason),
            "{}: {key} QuotaReserved ({})",
            self.file,
            reserved.message
        );
        if let Some(admitted) = self.condition(key, "Admitted") {
            assert_eq!(admitted.status, "False", "{}: {key} Admitted", self.file);
        }
        reserved.message
    }

    /// Asserts a pending Workload waiting for quota of `resource` in `flavor`.
    pub fn waiting_for_quota(&self, key: &str, resource: &str, flavor: &str) {
        let message = self.pending(key, "WaitingForQuota");
        assert!(
            message.contains(resource) && message.contains(flavor),
            "{}: {key} WaitingForQuota message should name {resource} and {flavor}: {message}",
            self.file
        );
    }

    /// Asserts a pending Workload larger than the most its ClusterQueue could ever give.
    pub fn exceeds_max_quota(&self, key: &str, resource: &str, flavor: &str, maximum: &str) {
        let message = self.pending(key, "ExceedsMaxQuota");
        assert!(
            message.contains(resource) && message.contains(flavor) && message.contains(maximum),
            "{}: {key} ExceedsMaxQuota message should name {resource}, {flavor} and the maximum \
             {maximum}: {message}",
            self.file
        );
    }

    /// Asserts that the Workload was preempted with `reason` by the preemptor whose UID is
    /// `preemptor_uid`, along the given cohort paths (Kueue's preemption message), was requeued and lost its
    /// admission.
    pub fn preempted(
        &self,
        key: &str,
        reason: &str,
        preemptor_uid: &str,
        preemptor_path: &str,
        preemptee_path: &str,
    ) {
        let evicted = self.condition(key, "Evicted").unwrap_or_else(|| {
            panic!(
                "{}: {key} should be evicted: {}",
                self.file,
                self.status_dump(key)
            )
        });
        assert_eq!(
            (evicted.status.as_str(), evicted.reason.as_str()),
            ("True", "Preempted"),
            "{}: {key} Evicted",
            self.file
        );
        let preempted = self.condition(key, "Preempted").unwrap_or_else(|| {
            panic!(
                "{}: {key} should carry Preempted: {}",
                self.file,
                self.status_dump(key)
            )
        });
        assert_eq!(
            (preempted.status.as_str(), preempted.reason.as_str()),
            ("True", reason),
            "{}: {key} Preempted",
            self.file
        );
        for message in [&evicted.message, &preempted.message] {
            let expected_start =
                format!("Preempted to accommodate a workload (UID: {preemptor_uid}");
            assert!(
                message.starts_with(&expected_start),
                "{}: {key} preemption message should start with {expected_start:?}: {message}",
                self.file
            );
            let expected_end =
                format!("; preemptor path: {preemptor_path}; preemptee path: {preemptee_path}");
            assert!(
                message.ends_with(&expected_end),
                "{}: {key} preemption message should end with {expected_end:?}: {message}",
                self.file
            );
        }
        let requeued = self.condition(key, "Requeued").unwrap();
        assert_eq!(
            (requeued.status.as_str(), requeued.reason.as_str()),
            ("True", "Preempted"),
            "{}: {key} Requeued",
            self.file
        );
        let admitted = self.condition(key, "Admitted").unwrap();
        assert_eq!(
            (admitted.status.as_str(), admitted.reason.as_str()),
            ("False", "NoReservation"),
            "{}: {key} Admitted after eviction",
            self.file
        );
    }

    /// Asserts that the Workload was never evicted.
    pub fn not_preempted(&self, key: &str) {
        for type_ in ["Evicted", "Preempted"] {
            if let Some(c) = self.condition(key, type_) {
                assert_ne!(c.status, "True", "{}: {key} must not be {type_}", self.file);
            }
        }
    }
}
