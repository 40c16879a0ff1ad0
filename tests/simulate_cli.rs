//! `kuota simulate` as a user runs it: the binary, its output formats and its handling of bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn kuota(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kuota"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // kuota may refuse its arguments before reading standard input; a closed pipe is fine then.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

const QUEUES: &str = r#"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: "4"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: team}
"#;

fn workload(name: &str, cpu: &str) -> String {
    format!(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: {name}, namespace: ns}}\n\
         spec:\n  queueName: q\n  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n        \
         containers:\n        - name: c\n          resources: {{requests: {{cpu: \"{cpu}\"}}}}\n"
    )
}

#[test]
fn json_output_is_a_list_of_workloads_with_status() {
    let input = format!("{QUEUES}{}{}", workload("small", "3"), workload("big", "3"));
    let out = kuota(
        &[
            "simulate",
            "-f",
            "-",
            "-o",
            "json",
            "--now",
            "2026-01-01T00:00:00Z",
        ],
        &input,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    assert_eq!(
        items.len(),
        4,
        "two Workloads, then the ClusterQueue and LocalQueue"
    );
    let queue = &items[2];
    assert_eq!(queue["kind"], "ClusterQueue");
    assert_eq!(queue["status"]["admittedWorkloads"], 1);
    assert_eq!(queue["status"]["pendingWorkloads"], 1);
    assert_eq!(queue["status"]["conditions"][0]["reason"], "Ready");
    assert_eq!(items[3]["kind"], "LocalQueue");
    assert_eq!(items[3]["status"]["admittedWorkloads"], 1);
    let admission = &items[0]["status"]["admission"];
    assert_eq!(admission["clusterQueue"], "team");
    assert_eq!(
        admission["podSetAssignments"][0]["flavors"]["cpu"],
        "default"
    );
    assert_eq!(
        admission["podSetAssignments"][0]["resourceUsage"]["cpu"],
        "3"
    );
    let pending = &items[1]["status"]["conditions"][0];
    assert_eq!(
        (pending["type"].as_str(), pending["status"].as_str()),
        (Some("QuotaReserved"), Some("False"))
    );
    assert_eq!(pending["reason"], "WaitingForQuota");
    assert_eq!(pending["lastTransitionTime"], "2026-01-01T00:00:00Z");
}

#[test]
fn yaml_and_table_outputs_describe_the_same_run() {
    let input = format!("{QUEUES}{}", workload("only", "1"));
    let yaml = kuota(&["simulate", "-f", "-", "-o", "yaml"], &input);
    let text = String::from_utf8(yaml.stdout).unwrap();
    assert!(
        text.contains("kind: List") && text.contains("clusterQueue: team"),
        "{text}"
    );
    let table = kuota(&["simulate", "-f", "-"], &input);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("ClusterQueue team: 1 admitted, 0 pending"),
        "{text}"
    );
    assert!(
        text.contains("ns/only") && text.contains("main ×1: cpu=default"),
        "{text}"
    );
}

#[test]
fn reads_files_and_folders() {
    let dir = std::env::temp_dir().join(format!("kuota-simulate-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("nested")).unwrap();
    std::fs::write(dir.join("queues.yaml"), QUEUES).unwrap();
    std::fs::write(dir.join("nested/work.yaml"), workload("w", "1")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a manifest").unwrap();
    let out = kuota(&["simulate", "-f", dir.to_str().unwrap(), "-o", "json"], "");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        list["items"][0]["status"]["admission"]["clusterQueue"],
        "team"
    );
}

fn assert_bad_input(input: &str, expected: &str) {
    let out = kuota(&["simulate", "-f", "-", "-o", "json"], input);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "printed a result: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(expected),
        "expected {expected:?} in {stderr:?}"
    );
}

#[test]
fn bad_input_names_file_document_object_and_field_and_exits_2() {
    assert_bad_input(
        &format!(
            "{QUEUES}{}",
            workload("w", "1").replace("count: 1", "count: 1\n    cuont: 2")
        ),
        "<stdin>, document 4: Workload ns/w: field spec.podSets[0].cuont: unknown field",
    );
    assert_bad_input(
        &format!("{QUEUES}{}", workload("w", "lots")),
        "<stdin>, document 4: Workload \"ns/w\": field spec.podSets[0].template.spec.containers[0].resources.requests.cpu",
    );
    assert_bad_input(
        &QUEUES.replace("nominalQuota: \"4\"", "nominalQuota: \"-4\""),
        "ClusterQueue \"team\": field spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: must not be negative",
    );
    assert_bad_input("kind: [", "<stdin>, document 1: not valid YAML or JSON");
}

#[test]
fn a_missing_file_is_an_input_error() {
    let out = kuota(&["simulate", "-f", "/nonexistent/kuota.yaml"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/kuota.yaml: cannot read"));
}

#[test]
fn unknown_feature_gates_are_refused() {
    let out = kuota(
        &["simulate", "-f", "-", "--feature-gates", "NoSuchGate=true"],
        QUEUES,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("feature gate \"NoSuchGate\" is unknown")
    );
}

/// Errors found after decoding (a duplicate across documents, a ClusterQueue rule, a Workload
/// rule, an admission the topology cannot hold) name the file and document, and the object once.
#[test]
fn errors_after_decoding_name_file_document_and_object_once() {
    let duplicate = format!(
        "{QUEUES}---{}",
        QUEUES.replace("kind: ResourceFlavor", "kind: Cohort")
    );
    assert_bad_input(
        &duplicate,
        "<stdin>, document 5: ClusterQueue team appears more than once (first in <stdin>, document 2)",
    );
    let borrowing = QUEUES.replace(
        "{name: cpu, nominalQuota: \"4\"}",
        "{name: cpu, nominalQuota: \"4\", borrowingLimit: \"1\"}",
    );
    assert_bad_input(
        &borrowing,
        "<stdin>, document 2: ClusterQueue \"team\": field spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: borrowingLimit must be nil when cohortName is empty",
    );
    let reserved = workload("w", "1").replace("cpu: \"1\"", "cpu: \"1\", pods: \"1\"");
    assert_bad_input(
        &format!("{QUEUES}{reserved}"),
        "<stdin>, document 4: Workload \"ns/w\": field spec.podSets[0].template.spec.containers[0].resources.requests.pods: the key is reserved for internal kueue use",
    );
    for input in [duplicate, borrowing] {
        let out = kuota(&["simulate", "-f", "-"], &input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.matches("ClusterQueue").count(), 1, "{stderr}");
    }
}
