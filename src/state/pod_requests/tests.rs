use super::*;
use k8s_openapi::api::core::v1::ResourceRequirements;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

fn container(
    requests: &[(&str, &str)],
    limits: &[(&str, &str)],
    restart: Option<&str>,
) -> Container {
    let list = |pairs: &[(&str, &str)]| {
        (!pairs.is_empty()).then(|| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), K8sQuantity(v.to_string())))
                .collect()
        })
    };
    Container {
        name: "c".into(),
        resources: Some(ResourceRequirements {
            requests: list(requests),
            limits: list(limits),
            ..Default::default()
        }),
        restart_policy: restart.map(Into::into),
        ..Default::default()
    }
}

fn q(s: &str) -> Quantity {
    s.parse().unwrap()
}

#[test]
fn sums_containers_and_uses_limits_for_missing_requests() {
    let spec = PodSpec {
        containers: vec![
            container(&[("cpu", "500m")], &[("memory", "1Gi")], None),
            container(&[("cpu", "1")], &[], None),
        ],
        ..Default::default()
    };
    let requests = pod_requests(&spec).unwrap();
    assert_eq!(requests["cpu"], q("1500m"));
    assert_eq!(requests["memory"], q("1Gi"));
}

#[test]
fn init_containers_set_a_floor_and_sidecars_add() {
    let spec = PodSpec {
        containers: vec![container(&[("cpu", "1")], &[], None)],
        init_containers: Some(vec![
            container(&[("cpu", "250m")], &[], Some("Always")),
            container(&[("cpu", "3")], &[], None),
        ]),
        overhead: Some([("cpu".to_string(), K8sQuantity("100m".into()))].into()),
        ..Default::default()
    };
    // max(1 + 0.25, 0.25 + 3) + 0.1 overhead
    assert_eq!(pod_requests(&spec).unwrap()["cpu"], q("3350m"));
}

#[test]
fn names_the_field_of_a_bad_quantity() {
    let spec = PodSpec {
        containers: vec![container(&[("cpu", "lots")], &[], None)],
        ..Default::default()
    };
    let error = pod_requests(&spec).unwrap_err();
    assert_eq!(error.field, "containers[0].resources.requests.cpu");
}

#[test]
fn pod_level_requests_stand_for_the_pod_for_cpu_memory_and_hugepages() {
    let resources = container(
        &[("cpu", "2"), ("example.com/gpu", "4")],
        &[("memory", "4Gi"), ("hugepages-2Mi", "64Mi")],
        None,
    )
    .resources;
    let spec = PodSpec {
        containers: vec![
            container(&[("cpu", "500m"), ("example.com/gpu", "1")], &[], None),
            container(&[("memory", "1Gi")], &[], None),
        ],
        resources,
        overhead: Some([("cpu".to_string(), K8sQuantity("100m".into()))].into()),
        ..Default::default()
    };
    let requests = pod_requests(&spec).unwrap();
    // The pod's own cpu request, then its memory and hugepages limits as missing requests; the
    // extended resource is still the containers' sum (pods cannot request it as a whole).
    assert_eq!(requests["cpu"], q("2100m"));
    assert_eq!(requests["memory"], q("4Gi"));
    assert_eq!(requests["hugepages-2Mi"], q("64Mi"));
    assert_eq!(requests["example.com/gpu"], q("1"));
}

#[test]
fn names_the_field_of_a_bad_pod_level_quantity() {
    let spec = PodSpec {
        containers: vec![container(&[("cpu", "1")], &[], None)],
        resources: container(&[], &[("memory", "much")], None).resources,
        ..Default::default()
    };
    assert_eq!(
        pod_requests(&spec).unwrap_err().field,
        "resources.limits.memory"
    );
}
