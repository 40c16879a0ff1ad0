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
