use super::*;

const CQ: &str = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads";

fn window(offset: usize, limit: usize) -> Window {
    Window { offset, limit }
}

#[test]
fn a_cluster_queue_call_defaults_to_kueues_window() {
    let request = parse(CQ, None).unwrap();
    assert_eq!(request.version, "v1beta2");
    assert_eq!(request.queue, Queue::Cluster("team".into()));
    assert_eq!(request.window, window(0, 1000));
}

#[test]
fn a_local_queue_call_names_its_namespace() {
    let path =
        "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/ns/localqueues/lq/pendingworkloads";
    let request = parse(path, Some("limit=5&offset=2")).unwrap();
    assert_eq!(request.version, "v1beta1");
    assert_eq!(request.queue, Queue::Local(ObjectKey::new("ns", "lq")));
    assert_eq!(request.window, window(2, 5));
}

#[test]
fn the_window_is_bounded_as_kueue_bounds_it() {
    let bounded = |query| parse(CQ, Some(query)).unwrap().window;
    assert_eq!(bounded("offset=-4&limit=-1"), window(0, 0));
    assert_eq!(bounded("limit=1000000"), window(0, 100_000));
    assert_eq!(bounded("watch=true&limit=3"), window(0, 3));
}

#[test]
fn a_bad_number_is_named() {
    assert_eq!(
        parse(CQ, Some("limit=ten")),
        Err(RequestError::NotAnInteger {
            parameter: "limit",
            value: "ten".into()
        })
    );
}

#[test]
fn other_paths_are_not_served() {
    for path in [
        "/apis/visibility.kueue.x-k8s.io/v1alpha1/clusterqueues/team/pendingworkloads",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues//pendingworkloads",
        "/apis/visibility.kueue.x-k8s.io/v1beta2/localqueues/lq/pendingworkloads",
        "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/team/pendingworkloads",
    ] {
        assert_eq!(parse(path, None), Err(RequestError::NoSuchPath), "{path}");
    }
}
