//! The Helm chart `charts/kuota` stays in step with the code without running Helm: its CRDs are
//! the committed `crds/`, its version is the crate's, its default configuration loads with
//! kuota's own loader, and its Grafana dashboard queries only metrics kuota exposes.
//! (`e2e/tests/chart/` renders the chart with Helm.)

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;

use kuota::config::Framework;
use kuota::controllers::metrics::{
    BuildInfo, ClusterQueueGauge, CohortGauge, LocalQueueGauge, Metrics, MetricsOptions,
    QueueGauges, ReplicaRole, ResourceGauge, WorkloadLabels,
};

const SYNC_CRDS: &str = "sync with: cargo run -- crds --out-dir crds && \
     rm -f charts/kuota/crds/*.yaml && cp crds/*.yaml charts/kuota/crds/";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chart() -> PathBuf {
    repo().join("charts/kuota")
}

fn yaml_files(dir: &str) -> BTreeMap<String, String> {
    fs::read_dir(repo().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect()
}

#[test]
fn chart_crds_are_the_committed_crds() {
    let committed = yaml_files("crds");
    let in_chart = yaml_files("charts/kuota/crds");
    assert!(!committed.is_empty(), "crds/ is empty");
    assert_eq!(
        in_chart.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>(),
        "charts/kuota/crds/ holds other files than crds/; {SYNC_CRDS}"
    );
    for (name, text) in &committed {
        assert!(
            in_chart[name] == *text,
            "charts/kuota/crds/{name} differs from crds/{name}; {SYNC_CRDS}"
        );
    }
}

fn chart_yaml() -> serde_json::Value {
    let text = fs::read_to_string(chart().join("Chart.yaml")).unwrap();
    yaml_serde::from_str(&text).unwrap()
}

fn values_yaml() -> serde_json::Value {
    let text = fs::read_to_string(chart().join("values.yaml")).unwrap();
    yaml_serde::from_str(&text).unwrap()
}

#[test]
fn chart_version_and_app_version_are_the_crates() {
    let chart = chart_yaml();
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(chart["name"], "kuota");
    assert_eq!(chart["version"], version, "Chart.yaml version");
    assert_eq!(chart["appVersion"], version, "Chart.yaml appVersion");
}

#[test]
fn default_configuration_loads_with_kuotas_loader() {
    let values = values_yaml();
    let text = values["managerConfig"]["controllerManagerConfigYaml"]
        .as_str()
        .expect("managerConfig.controllerManagerConfigYaml is text");
    let loaded = kuota::config::parse(text, "", "kuota-system")
        .unwrap_or_else(|e| panic!("values.yaml's configuration does not load: {e}"));
    let config = loaded.config;
    assert!(config.leader_election.leader_elect);
    assert_eq!(
        config.leader_election.resource_name,
        "c1f6bfd2.kueue.x-k8s.io"
    );
    assert_eq!(config.health.health_probe_bind_address, ":8081");
    assert_eq!(config.metrics.bind_address, ":8443");
    assert_eq!(config.webhook.port, 9443);
    assert_eq!(config.namespace, "kuota-system");
    // Kueue's chart's default list: every framework but the training-operator v1 kinds, each
    // of them managed.
    let left_out = [
        Framework::PyTorchJob,
        Framework::TfJob,
        Framework::XgBoostJob,
        Framework::PaddleJob,
        Framework::JaxJob,
    ];
    let kueues_default: BTreeSet<Framework> = kuota::config::MANAGED_FRAMEWORKS
        .iter()
        .copied()
        .filter(|f| !left_out.contains(f))
        .collect();
    assert_eq!(
        config.integrations.frameworks, kueues_default,
        "the chart enables Kueue's default frameworks"
    );
}

#[test]
fn default_image_is_kuota_at_the_app_version() {
    let values = values_yaml();
    let image = &values["controllerManager"]["manager"]["image"];
    assert_eq!(image["repository"], "ghcr.io/kuota/kuota");
    assert_eq!(
        image["tag"], "",
        "an empty tag means the chart's appVersion"
    );
    assert_eq!(values["controllerManager"]["replicas"], 2);
}

/// A registry in which every family kuota defines has at least one series.
fn every_metric_name() -> BTreeSet<String> {
    let options = MetricsOptions {
        local_queue_metrics: true,
        local_queue_selector: None,
        cluster_queue_resources: true,
        fair_sharing: true,
    };
    let metrics = Metrics::new(ReplicaRole::Leader, options, BuildInfo::current());
    let no_labels = BTreeMap::new();
    let workload = WorkloadLabels {
        cluster_queue: "cq",
        local_queue_namespace: "ns",
        local_queue: "lq",
        priority_class: "",
        local_queue_labels: Some(&no_labels),
    };
    metrics.admission_attempt(true, 0.1);
    metrics.quota_reserved(&workload, 1.0);
    metrics.admitted(&workload, 1.0, 0.0, &["cohort"]);
    metrics.evicted(&workload, "Preempted", "", true);
    metrics.preempted("cq", "InClusterQueue");
    metrics.finished(&workload);
    metrics.placement_quality("cq", 2, Some("rack"));
    let resource = ResourceGauge {
        flavor: "default".into(),
        resource: "cpu".into(),
        nominal: 10.0,
        ..ResourceGauge::default()
    };
    let unadmitted = BTreeMap::from([(("Pending".to_string(), "Waiting".to_string()), 1)]);
    metrics.set_queues(&QueueGauges {
        cluster_queues: vec![ClusterQueueGauge {
            name: "cq".into(),
            parent_cohort: "cohort".into(),
            root_cohort: "cohort".into(),
            status: "active",
            unadmitted: unadmitted.clone(),
            resources: vec![resource],
            weighted_share: Some(0.5),
            ..ClusterQueueGauge::default()
        }],
        local_queues: vec![LocalQueueGauge {
            namespace: "ns".into(),
            name: "lq".into(),
            cluster_queue: "cq".into(),
            labels: Some(BTreeMap::new()),
            active: "True",
            unadmitted,
            resources: vec![("default".into(), "cpu".into(), 1.0, 1.0)],
            ..LocalQueueGauge::default()
        }],
        cohorts: vec![CohortGauge {
            name: "cohort".into(),
            quota: BTreeMap::from([(("default".into(), "cpu".into()), 10.0)]),
            reservations: BTreeMap::from([(("default".into(), "cpu".into()), 1.0)]),
            weighted_share: Some(0.5),
            ..CohortGauge::default()
        }],
    });
    let mut names = BTreeSet::new();
    for line in metrics.encode().lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(kind)) = (words.next(), words.next()) else {
            continue;
        };
        if kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{name}{suffix}"));
            }
        }
        names.insert(name.to_string());
    }
    names
}

/// Every `kueue_*` / `kuota_*` name in a PromQL expression.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &expr[i..];
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if boundary && (rest.starts_with("kueue_") || rest.starts_with("kuota_")) {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(rest[..len].to_string());
            i += len;
        } else {
            i += 1;
        }
    }
    names
}

fn dashboard_queries(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("expr" | "definition", serde_json::Value::String(q)) => out.push(q.clone()),
                    _ => dashboard_queries(inner, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| dashboard_queries(i, out)),
        _ => {}
    }
}

#[test]
fn grafana_dashboard_queries_only_metrics_kuota_exposes() {
    let text = fs::read_to_string(chart().join("files/grafana-dashboard.json")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut queries = Vec::new();
    dashboard_queries(&dashboard, &mut queries);
    let exposed = every_metric_name();
    let mut used = BTreeSet::new();
    for query in &queries {
        for name in metric_names(query) {
            assert!(
                exposed.contains(&name),
                "the dashboard queries {name}, which kuota does not expose: {query}"
            );
            used.insert(name);
        }
    }
    for family in [
        "kueue_admission_attempts_total",
        "kueue_pending_workloads",
        "kueue_admitted_active_workloads",
        "kueue_cluster_queue_resource_usage",
        "kuota_tas_placement_domains_bucket",
        "kuota_tas_placements_total",
    ] {
        assert!(
            used.contains(family),
            "the dashboard has no panel on {family}"
        );
    }
}

#[test]
fn metric_names_are_read_from_promql() {
    assert_eq!(
        metric_names(
            "histogram_quantile(0.9, sum by (le) (rate(kuota_tas_placement_domains_bucket{a=\"kueue_x\"}[5m]))) / kueue_y"
        ),
        ["kuota_tas_placement_domains_bucket", "kueue_x", "kueue_y"]
    );
}
