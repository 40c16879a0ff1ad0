//! LimitRanges summarized and the resource rules of an adjusted pod template, as Kueue's
//! `limitrange` package and `workload.ValidateResources` decide them.

use k8s_openapi::api::core::v1::{LimitRange, PodSpec};
use k8s_openapi::api::node::v1::RuntimeClass;

use super::*;
use crate::state::pod_requests::Adjustments;

fn q(s: &str) -> Quantity {
    s.parse().unwrap()
}

fn requests(pairs: &[(&str, &str)]) -> Requests {
    pairs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
}

fn range(yaml: &str) -> LimitRangeLimits {
    let object: LimitRange = yaml_serde::from_str(yaml).unwrap();
    limit_range(&object).unwrap()
}

fn pod(yaml: &str) -> PodResources {
    let spec: PodSpec = yaml_serde::from_str(yaml).unwrap();
    PodResources::read(&spec).unwrap()
}

/// The lowest max, the highest min and the first default of each resource, across ranges and
/// their items; items of other types are left out.
#[test]
fn summarizes_the_tightest_bounds_and_the_first_defaults() {
    let first = range(
        "metadata: {name: a, namespace: ns}
spec:
  limits:
  - type: Container
    max: {cpu: \"4\"}
    min: {cpu: 100m}
    defaultRequest: {cpu: 500m}
  - type: PersistentVolumeClaim
    max: {storage: 1Gi}",
    );
    let second = range(
        "metadata: {name: b, namespace: ns}
spec:
  limits:
  - type: Container
    max: {cpu: \"2\", memory: 1Gi}
    min: {cpu: 200m}
    defaultRequest: {cpu: \"1\", memory: 256Mi}
    default: {memory: 512Mi}
  - type: Pod
    max: {cpu: \"3\"}",
    );
    let summary = summarize([&first, &second]).unwrap();
    let container = summary.container.unwrap();
    assert_eq!(container.max, requests(&[("cpu", "2"), ("memory", "1Gi")]));
    assert_eq!(container.min, requests(&[("cpu", "200m")]));
    assert_eq!(
        container.default_request,
        requests(&[("cpu", "500m"), ("memory", "256Mi")])
    );
    assert_eq!(container.default, requests(&[("memory", "512Mi")]));
    assert_eq!(summary.pod.unwrap().max, requests(&[("cpu", "3")]));
    assert_eq!(summarize([]), None);
}

#[test]
fn a_limit_range_with_a_bad_quantity_names_its_field() {
    let object: LimitRange = yaml_serde::from_str(
        "metadata: {name: a, namespace: ns}
spec: {limits: [{type: Container, max: {cpu: lots}}]}",
    )
    .unwrap();
    let error = limit_range(&object).unwrap_err().to_string();
    assert!(
        error.contains("LimitRange") && error.contains("ns/a"),
        "{error}"
    );
    assert!(error.contains("spec.limits[0].max.cpu"), "{error}");
}

#[test]
fn a_runtime_class_gives_its_fixed_pod_overhead() {
    let class: RuntimeClass = yaml_serde::from_str(
        "metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}",
    )
    .unwrap();
    assert_eq!(
        runtime_class_overhead(&class).unwrap(),
        requests(&[("cpu", "250m"), ("memory", "120Mi")])
    );
}

/// Kueue's order: a container's defaults come first, so a `defaultRequest` wins over its own
/// limit, and a limit alone (set or defaulted) stands in for the request.
#[test]
fn defaults_fill_what_containers_leave_unset() {
    let summary = summarize([&range(
        "metadata: {name: a, namespace: ns}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: \"1\"}
    default: {memory: 1Gi}",
    )])
    .unwrap();
    let mut resources = pod("containers:
- {name: none}
- {name: limit, resources: {limits: {cpu: \"2\"}}}
- {name: own, resources: {requests: {cpu: 300m, memory: 100Mi}}}");
    resources.adjust(Adjustments {
        container_defaults: summary.container_defaults(),
        runtime_class_overhead: None,
    });
    assert_eq!(
        resources.containers[0].requests,
        requests(&[("cpu", "1"), ("memory", "1Gi")])
    );
    assert_eq!(
        resources.containers[1].requests,
        requests(&[("cpu", "1"), ("memory", "1Gi")])
    );
    assert_eq!(
        resources.containers[2].requests,
        requests(&[("cpu", "300m"), ("memory", "100Mi")])
    );
    assert_eq!(
        resources.total(),
        requests(&[("cpu", "2300m"), ("memory", "2148Mi")])
    );
}

/// The RuntimeClass's overhead counts once per pod, unless the template sets its own.
#[test]
fn runtime_class_overhead_counts_unless_the_template_sets_one() {
    let overhead = requests(&[("cpu", "250m")]);
    let adjust = |yaml: &str| {
        let mut resources = pod(yaml);
        resources.adjust(Adjustments {
            container_defaults: None,
            runtime_class_overhead: Some(&overhead),
        });
        resources.total()
    };
    let containers = "containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]";
    assert_eq!(adjust(containers), requests(&[("cpu", "1250m")]));
    assert_eq!(
        adjust(&format!("{containers}\noverhead: {{cpu: 100m}}")),
        requests(&[("cpu", "1100m")])
    );
}

fn violations_of(spec: &str, limits: &str) -> Vec<Violation> {
    let summary = summarize([&range(limits)]);
    let mut resources = pod(spec);
    resources.adjust(Adjustments {
        container_defaults: summary.as_ref().and_then(LimitSummary::container_defaults),
        runtime_class_overhead: None,
    });
    violations(&resources, summary.as_ref())
}

#[test]
fn containers_and_pods_outside_the_limit_range_break_it() {
    let limits = "metadata: {name: a, namespace: ns}
spec:
  limits:
  - {type: Container, max: {cpu: \"2\"}, min: {memory: 64Mi}}
  - {type: Pod, max: {cpu: 2500m}}";
    let found = violations_of(
        "initContainers: [{name: i, resources: {requests: {cpu: \"1\", memory: 32Mi}}}]
containers:
- {name: a, resources: {requests: {cpu: \"1\"}, limits: {cpu: \"3\"}}}
- {name: b, resources: {requests: {cpu: \"2\", memory: 1Gi}}}",
        limits,
    );
    let at = |field: &str, resources: &[&str], rule| Violation {
        field: field.into(),
        resources: resources.iter().map(|r| r.to_string()).collect(),
        rule,
    };
    assert_eq!(
        found,
        vec![
            at(
                "initContainers[0]",
                &["memory"],
                ResourceRule::BelowLimitRangeMin
            ),
            at("containers[0]", &["cpu"], ResourceRule::AboveLimitRangeMax),
            at("", &["cpu"], ResourceRule::AboveLimitRangeMax),
        ]
    );
    assert_eq!(
        found[1].render("spec.podSets[0].template.spec"),
        "spec.podSets[0].template.spec.containers[0]: Invalid value: [\"cpu\"]: \
         requests must not be above the limitRange max"
    );
    assert_eq!(
        found[2].render("spec.podSets[0].template.spec"),
        "spec.podSets[0].template.spec: Invalid value: [\"cpu\"]: \
         requests must not be above the limitRange max"
    );
}

#[test]
fn requests_above_limits_break_the_rules_without_a_limit_range() {
    let mut resources =
        pod("containers: [{name: a, resources: {requests: {cpu: \"3\"}, limits: {cpu: \"2\"}}}]");
    resources.adjust(Adjustments::default());
    assert_eq!(
        violations(&resources, None),
        vec![Violation {
            field: "containers[0]".into(),
            resources: vec!["cpu".into()],
            rule: ResourceRule::RequestsAboveLimits,
        }]
    );
}

#[test]
fn a_template_within_its_limit_range_breaks_nothing() {
    let found = violations_of(
        "containers: [{name: a, resources: {requests: {cpu: \"2\"}, limits: {cpu: \"3\"}}}]",
        "metadata: {name: a, namespace: ns}
spec: {limits: [{type: Container, max: {cpu: \"4\"}, min: {cpu: \"1\"}}]}",
    );
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn pod_level_requests_above_pod_level_limits_break_the_rules() {
    let mut resources = pod("containers: [{name: a}]
resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}");
    resources.adjust(Adjustments::default());
    let found = violations(&resources, None);
    assert_eq!(
        found,
        vec![Violation {
            field: "resources".into(),
            resources: vec!["memory".into()],
            rule: ResourceRule::RequestsAboveLimits,
        }]
    );
    assert_eq!(
        found[0].render("spec.podSets[0].template.spec"),
        "spec.podSets[0].template.spec.resources: Invalid value: [\"memory\"]: \
         requests must not exceed its limits"
    );
}
