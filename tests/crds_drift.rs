//! The committed `crds/` are exactly what the code generates, and every kind is served as
//! `kueue.x-k8s.io/v1beta2` (stored) and `v1beta1`.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use kuota::api::crd;

const REGENERATE: &str = "regenerate with: cargo run -- crds --out-dir crds";

fn crds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crds")
}

#[test]
fn committed_crds_match_generated_ones() {
    let crds = kuota::v1beta1::crds().unwrap();
    let mut expected_files = Vec::new();
    for one in &crds {
        let name = crd::file_name(one);
        let path = crds_dir().join(&name);
        let committed = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; {REGENERATE}", path.display()));
        let generated = crd::to_yaml(one).unwrap();
        assert!(
            committed == generated,
            "crds/{name} differs from the generated CRD; {REGENERATE}"
        );
        expected_files.push(name);
    }
    let mut present: Vec<String> = fs::read_dir(crds_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    present.sort();
    expected_files.sort();
    assert_eq!(
        present, expected_files,
        "stray or missing files in crds/; {REGENERATE}"
    );
}

#[test]
fn kuota_crds_prints_the_committed_files() {
    let output = Command::new(env!("CARGO_BIN_EXE_kuota"))
        .arg("crds")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut expected = String::new();
    for one in kuota::v1beta1::crds().unwrap() {
        expected.push_str("---\n");
        expected.push_str(&fs::read_to_string(crds_dir().join(crd::file_name(&one))).unwrap());
    }
    assert!(
        String::from_utf8(output.stdout).unwrap() == expected,
        "`kuota crds` differs from crds/; {REGENERATE}"
    );
}

#[test]
fn all_nine_kinds_are_served_as_v1beta2_and_v1beta1_and_stored_as_v1beta2() {
    let crds = kuota::v1beta1::crds().unwrap();
    let mut kinds: Vec<&str> = crds.iter().map(|c| c.spec.names.kind.as_str()).collect();
    kinds.sort_unstable();
    assert_eq!(
        kinds,
        [
            "AdmissionCheck",
            "ClusterQueue",
            "Cohort",
            "LocalQueue",
            "ProvisioningRequestConfig",
            "ResourceFlavor",
            "Topology",
            "Workload",
            "WorkloadPriorityClass"
        ]
    );
    for one in &crds {
        let kind = &one.spec.names.kind;
        assert_eq!(one.spec.group, "kueue.x-k8s.io");
        let versions: Vec<(&str, bool, bool)> = one
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage))
            .collect();
        assert_eq!(
            versions,
            [("v1beta2", true, true), ("v1beta1", true, false)],
            "{kind}"
        );
        // Certificate management writes the conversion webhook into the CRDs it serves.
        assert!(one.spec.conversion.is_none(), "{kind}");
    }
}

#[test]
fn the_kinds_whose_fields_differ_convert_through_the_webhook() {
    assert_eq!(
        kuota::v1beta1::conversion_crd_names(),
        [
            "admissionchecks.kueue.x-k8s.io",
            "clusterqueues.kueue.x-k8s.io",
            "cohorts.kueue.x-k8s.io",
            "localqueues.kueue.x-k8s.io",
            "workloads.kueue.x-k8s.io",
        ]
    );
}

#[test]
fn scopes_short_names_and_subresources_match_the_reference() {
    let expected: [(&str, &str, &[&str], bool); 9] = [
        ("AdmissionCheck", "Cluster", &["ac"], true),
        ("ClusterQueue", "Cluster", &["cq"], true),
        ("Cohort", "Cluster", &["co"], true),
        ("LocalQueue", "Namespaced", &["queue", "queues", "lq"], true),
        ("ProvisioningRequestConfig", "Cluster", &["prc"], false),
        (
            "ResourceFlavor",
            "Cluster",
            &["flavor", "flavors", "rf"],
            false,
        ),
        ("Topology", "Cluster", &["topo"], false),
        (
            "Workload",
            "Namespaced",
            &["kwl", "kueueworkload", "kueueworkloads"],
            true,
        ),
        ("WorkloadPriorityClass", "Cluster", &["wpc"], false),
    ];
    let crds = kuota::v1beta1::crds().unwrap();
    for (kind, scope, short, status) in expected {
        let one = crds.iter().find(|c| c.spec.names.kind == kind).unwrap();
        assert_eq!(one.spec.scope, scope, "{kind}");
        assert_eq!(
            one.spec.names.short_names.as_deref().unwrap_or_default(),
            short,
            "{kind}"
        );
        let has_status = one.spec.versions[0]
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some());
        assert_eq!(has_status, status, "{kind} status subresource");
    }
}

#[test]
fn printer_columns_and_selectable_fields_match_the_reference() {
    let crds = kuota::v1beta1::crds().unwrap();
    let columns = |kind: &str| -> Vec<(String, String, i32)> {
        let one = crds.iter().find(|c| c.spec.names.kind == kind).unwrap();
        one.spec.versions[0]
            .additional_printer_columns
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|c| (c.name, c.json_path, c.priority.unwrap_or(0)))
            .collect()
    };
    let col = |n: &str, p: &str, prio: i32| (n.to_owned(), p.to_owned(), prio);
    assert_eq!(
        columns("ClusterQueue"),
        [
            col("Cohort", ".spec.cohortName", 0),
            col("Strategy", ".spec.queueingStrategy", 1),
            col("Pending Workloads", ".status.pendingWorkloads", 0),
            col("Admitted Workloads", ".status.admittedWorkloads", 1),
        ]
    );
    assert_eq!(
        columns("LocalQueue"),
        [
            col("ClusterQueue", ".spec.clusterQueue", 0),
            col("Pending Workloads", ".status.pendingWorkloads", 0),
            col("Admitted Workloads", ".status.admittedWorkloads", 0),
        ]
    );
    assert_eq!(
        columns("Workload"),
        [
            col("Queue", ".spec.queueName", 0),
            col("Reserved in", ".status.admission.clusterQueue", 0),
            col(
                "Admitted",
                ".status.conditions[?(@.type=='Admitted')].status",
                0
            ),
            col(
                "Finished",
                ".status.conditions[?(@.type=='Finished')].status",
                0
            ),
            col("Age", ".metadata.creationTimestamp", 0),
        ]
    );
    assert_eq!(
        columns("WorkloadPriorityClass"),
        [col("Value", ".value", 0)]
    );
    for kind in [
        "Cohort",
        "ResourceFlavor",
        "Topology",
        "AdmissionCheck",
        "ProvisioningRequestConfig",
    ] {
        assert!(columns(kind).is_empty(), "{kind} has printer columns");
    }
    let workload = crds
        .iter()
        .find(|c| c.spec.names.kind == "Workload")
        .unwrap();
    let selectable: Vec<String> = workload.spec.versions[0]
        .selectable_fields
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.json_path)
        .collect();
    assert_eq!(selectable, [".status.admission.clusterQueue"]);
}
